#include "nested_launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "course/testing.h"
#include "nested_launch_reference.h"

namespace {

struct Tree {
  int blocks;
  int threads;
  int max_depth;
};

std::string describe(const Tree& tree) {
  std::ostringstream out;
  out << tree.blocks << " blocks of " << tree.threads << " threads, max_depth "
      << tree.max_depth;
  return out.str();
}

bool poisoned(const LaunchRecord& r) {
  return r.depth == -1 && r.root_block == -1 && r.block == -1 && r.thread == -1;
}

// Slots [from, to) of `records` that hold something: written by no atomicAdd the call made.
::testing::AssertionResult untouched(const std::vector<LaunchRecord>& records, std::size_t from,
                                     std::size_t to, const std::string& why) {
  for (std::size_t slot = from; slot < to; ++slot)
    if (!poisoned(records[slot]))
      return ::testing::AssertionFailure()
             << "records[" << slot << "] was written, " << why
             << ": a thread writes only the slot its atomicAdd on count returned";
  return ::testing::AssertionSuccess();
}

// What one call left in a record buffer and its count, checked against the reference:
// `start` is where count stood, `capacity` the slots the buffer has.
::testing::AssertionResult tree_matches(const Tree& tree, const std::vector<LaunchRecord>& records,
                                        int start, int count_after, const std::string& what) {
  const auto expected = nested_launch_reference(tree.blocks, tree.threads, tree.max_depth);
  const std::size_t capacity = records.size();
  if (count_after < start)
    return ::testing::AssertionFailure()
           << what << " (" << describe(tree) << "): count went from " << start << " down to "
           << count_after << ": the call only adds to *count (atomicAdd), it never resets it";
  const auto end = std::min<std::size_t>(static_cast<std::size_t>(count_after), capacity);
  std::string problems;
  if (static_cast<std::size_t>(count_after) > capacity)
    problems += "count reached " + std::to_string(count_after) + ", past the " +
                std::to_string(capacity) + " slots this test gave (twice the tree): far too "
                "many records, and those past the buffer were written out of bounds\n";
  problems += describe_record_differences(
      expected, std::vector<LaunchRecord>(records.begin() + start, records.begin() + end),
      tree.max_depth);
  if (!problems.empty())
    return ::testing::AssertionFailure() << what << " (" << describe(tree) << "): " << problems;
  if (auto before = untouched(records, 0, static_cast<std::size_t>(start),
                              "below the count the call started from");
      !before)
    return before << " (" << what << ")";
  if (auto after = untouched(records, end, capacity, "past the slots the call took"); !after)
    return after << " (" << what << ")";
  return ::testing::AssertionSuccess();
}

// One call on a fresh buffer with room for twice the tree (so surplus records are counted
// rather than written out of bounds), count starting at `start`.
void check_tree(const Tree& tree, int start) {
  const std::size_t expected = nested_launch_record_count(tree.blocks, tree.threads,
                                                          tree.max_depth);
  course::testing::GuardedOutput<LaunchRecord> records(start + 2 * expected);
  course::DeviceBuffer<int> count(std::vector<int>{start});
  course::Stream stream;
  CUDA_CHECK(cudaDeviceSynchronize());  // the poison and the count land first
  record_nested_launches(records.data(), count.data(), tree.blocks, tree.threads,
                         tree.max_depth, stream);
  stream.synchronize();
  EXPECT_TRUE(tree_matches(tree, records.download(), start, count.download()[0],
                           "records of one call"));
  EXPECT_TRUE(records.guards_intact("records"));
}

Tree random_tree(std::mt19937_64& rng) {
  return Tree{std::uniform_int_distribution<int>(1, 8)(rng),
              std::uniform_int_distribution<int>(2, 1024)(rng),
              std::uniform_int_distribution<int>(1, 12)(rng)};
}

class NestedLaunch : public ::testing::TestWithParam<Tree> {};

TEST_P(NestedLaunch, RecordsTheWholeTree) { check_tree(GetParam(), 0); }

std::vector<Tree> trees(std::initializer_list<int> thread_counts) {
  std::vector<Tree> out;
  for (const int threads : thread_counts)
    for (const int blocks : {1, 2, 5})
      // 30 is deeper than any chain gets: the thread count reaching 0 must end it, since
      // nothing else would (the H100 ran chains of 1000 device launches).
      for (const int max_depth : {0, 1, 3, 30}) out.push_back(Tree{blocks, threads, max_depth});
  return out;
}

std::string tree_name(const ::testing::TestParamInfo<Tree>& info) {
  return "blocks" + std::to_string(info.param.blocks) + "_threads" +
         std::to_string(info.param.threads) + "_depth" + std::to_string(info.param.max_depth);
}

// One thread (no child at all), a warp, one past a warp (33: halving rounds down, 16 8 4 2 1),
// then full blocks: 1024 halves to 1 at depth 10, 1000 at depth 9 through odd counts.
INSTANTIATE_TEST_SUITE_P(Small, NestedLaunch, ::testing::ValuesIn(trees({1, 8, 32, 33})),
                         tree_name);
INSTANTIATE_TEST_SUITE_P(Large, NestedLaunch, ::testing::ValuesIn(trees({1000, 1024})),
                         tree_name);

TEST(NestedLaunchEdge, AppendsAfterTheCountItIsGiven) {
  // count starts where earlier records left it: the call's records go after them, and the
  // slots before stay as they were.
  auto rng = course::testing::case_rng();
  const int start = std::uniform_int_distribution<int>(1, 1000)(rng);
  check_tree(Tree{3, std::uniform_int_distribution<int>(2, 64)(rng), 30}, start);
}

TEST(NestedLaunchEdge, CallsAgainWithNewInputs) {
  // The same buffers and stream for two trees of other shapes: a launcher that remembers the
  // first call's shape, or a kernel that keeps state between calls, fails the second.
  auto rng = course::testing::case_rng();
  const Tree first = random_tree(rng);
  Tree second = random_tree(rng);
  while (second.threads == first.threads) second = random_tree(rng);
  const std::size_t capacity =
      2 * std::max(nested_launch_record_count(first.blocks, first.threads, first.max_depth),
                   nested_launch_record_count(second.blocks, second.threads, second.max_depth));
  course::DeviceBuffer<LaunchRecord> records(capacity);
  course::DeviceBuffer<int> count(1);
  course::Stream stream;
  for (const auto& [tree, call] : {std::pair{first, "first call"}, {second, "second call"}}) {
    records.fill_bytes(course::kPoisonByte);
    count.upload(std::vector<int>{0});
    CUDA_CHECK(cudaDeviceSynchronize());
    record_nested_launches(records.data(), count.data(), tree.blocks, tree.threads,
                           tree.max_depth, stream);
    stream.synchronize();
    EXPECT_TRUE(tree_matches(tree, records.download(), 0, count.download()[0], call));
  }
}

TEST(NestedLaunchEdge, RunsOnTheGivenStream) {
  // Held behind a shut stream, the whole tree (the host's grid and every child it launches
  // from the device) must wait: nothing may be written until the stream runs.
  auto rng = course::testing::case_rng();
  const Tree tree = random_tree(rng);
  const std::size_t capacity =
      2 * nested_launch_record_count(tree.blocks, tree.threads, tree.max_depth);
  auto records = course::testing::poisoned_output<LaunchRecord>(capacity);
  course::DeviceBuffer<int> count(std::vector<int>{0});
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        record_nested_launches(records.data(), count.data(), tree.blocks, tree.threads,
                               tree.max_depth, s);
      },
      {course::testing::watched(records, "records"), course::testing::watched(count, "count")}));
  EXPECT_TRUE(tree_matches(tree, records.download(), 0, count.download()[0],
                           "records after the held stream ran"));
}

TEST(NestedLaunchEdge, TheHostLaunchesOnlyDepthZero) {
  // The records alone cannot show who launched each grid: a loop of host launches, one grid
  // per depth, writes the same tree. So the call is recorded into a graph instead of run:
  // the host's part must be ONE grid of `blocks` blocks of `threads` threads (depth 0; the
  // deeper grids are launched from the device, so they are no launch of the host's), while
  // the same call, run, records the whole tree.
  auto rng = course::testing::case_rng();
  const Tree tree = random_tree(rng);
  const std::size_t capacity =
      2 * nested_launch_record_count(tree.blocks, tree.threads, tree.max_depth);
  auto records = course::testing::poisoned_output<LaunchRecord>(capacity);
  course::DeviceBuffer<int> count(std::vector<int>{0});
  course::Stream stream;
  const auto call = [&](cudaStream_t s) {
    record_nested_launches(records.data(), count.data(), tree.blocks, tree.threads,
                           tree.max_depth, s);
  };
  // Run first, which also keeps one-time set-up (loading the kernel) out of the recording.
  call(stream);
  stream.synchronize();
  EXPECT_TRUE(tree_matches(tree, records.download(), 0, count.download()[0],
                           "records of the call that was run"));

  course::testing::RecordedGraph recorded(stream, call);
  ASSERT_TRUE(recorded.problem().empty()) << "record_nested_launches: " << recorded.problem();
  ASSERT_EQ(recorded.kernels(), 1)
      << "record_nested_launches(" << describe(tree) << ") enqueued " << recorded.census()
      << " from the host; it launches ONE grid, depth 0, and every deeper grid is launched "
         "from the device by thread 0 of a block of the grid above it";
  const course::testing::RecordedLaunch& depth0 = recorded.launches().front();
  EXPECT_TRUE(depth0.grid.x == static_cast<unsigned>(tree.blocks) && depth0.grid.y == 1 &&
              depth0.grid.z == 1 && depth0.block.x == static_cast<unsigned>(tree.threads) &&
              depth0.block.y == 1 && depth0.block.z == 1)
      << "the host's grid was launched with " << course::testing::describe(depth0)
      << "; depth 0 of " << describe(tree) << " is a grid of " << tree.blocks << " blocks of "
      << tree.threads << " threads";
}

TEST(NestedLaunchLimits, SixtyFourChainsFromFullBlocks) {
  // The largest call the API allows: 64 chains of 11 grids, 640 device-side launches.
  check_tree(Tree{64, 1024, 30}, 0);
}

}  // namespace
