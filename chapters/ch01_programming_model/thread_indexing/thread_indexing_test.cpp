#include "thread_indexing.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

struct LaunchShape {
  dim3 grid;
  dim3 block;
};

// GoogleTest prints parameters with this instead of a byte dump.
void PrintTo(const LaunchShape& s, std::ostream* os) {
  *os << "grid (" << s.grid.x << ", " << s.grid.y << ", " << s.grid.z << "), block ("
      << s.block.x << ", " << s.block.y << ", " << s.block.z << ")";
}

using Launcher = void (*)(dim3, dim3, int*, int*, cudaStream_t);

struct Expected {
  std::vector<int> block_rank;
  std::vector<int> thread_rank;
  std::vector<std::size_t> shape;  // {depth, height, width}, for coordinates in messages
};

// Walks every block and every thread of the launch, the way the hardware enumerates them,
// and records what each one must write where. Deliberately not the header's closed formula
// run backwards, so a mistake in one does not hide a mistake in the other.
Expected simulate_launch(const LaunchShape& s) {
  const std::size_t width = std::size_t{s.grid.x} * s.block.x;
  const std::size_t height = std::size_t{s.grid.y} * s.block.y;
  const std::size_t depth = std::size_t{s.grid.z} * s.block.z;
  Expected e;
  e.shape = {depth, height, width};
  e.block_rank.assign(width * height * depth, -1);
  e.thread_rank.assign(width * height * depth, -1);
  int block_counter = 0;
  for (unsigned bz = 0; bz < s.grid.z; ++bz)
    for (unsigned by = 0; by < s.grid.y; ++by)
      for (unsigned bx = 0; bx < s.grid.x; ++bx, ++block_counter) {
        int thread_counter = 0;
        for (unsigned tz = 0; tz < s.block.z; ++tz)
          for (unsigned ty = 0; ty < s.block.y; ++ty)
            for (unsigned tx = 0; tx < s.block.x; ++tx, ++thread_counter) {
              const std::size_t x = std::size_t{bx} * s.block.x + tx;
              const std::size_t y = std::size_t{by} * s.block.y + ty;
              const std::size_t z = std::size_t{bz} * s.block.z + tz;
              const std::size_t position = (z * height + y) * width + x;
              e.block_rank[position] = block_counter;
              e.thread_rank[position] = thread_counter;
            }
      }
  return e;
}

void check_launch(Launcher launch, const LaunchShape& s, cudaStream_t stream) {
  const Expected expected = simulate_launch(s);
  const std::size_t count = expected.block_rank.size();
  // Exactly `count` elements: anything written past the end is left to compute-sanitizer.
  auto block_rank = course::testing::poisoned_output<int>(count);
  auto thread_rank = course::testing::poisoned_output<int>(count);

  launch(s.grid, s.block, block_rank.data(), thread_rank.data(), stream);
  if (stream != nullptr) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  course::CompareOptions options;
  options.shape = expected.shape;
  options.what = "block_rank";
  EXPECT_TRUE(course::testing::equal(expected.block_rank, block_rank.download(), options));
  options.what = "thread_rank";
  EXPECT_TRUE(course::testing::equal(expected.thread_rank, thread_rank.download(), options));
}

std::string shape_name(const ::testing::TestParamInfo<LaunchShape>& info) {
  const auto& s = info.param;
  auto dims = [](const dim3& d) {
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
  };
  return "grid_" + dims(s.grid) + "_block_" + dims(s.block);
}

class ThreadRanks1D : public ::testing::TestWithParam<LaunchShape> {};
class ThreadRanks2D : public ::testing::TestWithParam<LaunchShape> {};
class ThreadRanks3D : public ::testing::TestWithParam<LaunchShape> {};

TEST_P(ThreadRanks1D, EveryThreadWritesItsRanks) {
  check_launch(record_thread_ranks_1d, GetParam(), nullptr);
}
TEST_P(ThreadRanks2D, EveryThreadWritesItsRanks) {
  check_launch(record_thread_ranks_2d, GetParam(), nullptr);
}
TEST_P(ThreadRanks3D, EveryThreadWritesItsRanks) {
  check_launch(record_thread_ranks_3d, GetParam(), nullptr);
}

// Single threads and blocks, sizes around the 32-thread warp, the 1024-thread block limit,
// blocks that are not a multiple of a warp, and more blocks than threads per block.
INSTANTIATE_TEST_SUITE_P(Small, ThreadRanks1D,
                         ::testing::Values(LaunchShape{1, 1}, LaunchShape{1, 7},
                                           LaunchShape{3, 31}, LaunchShape{5, 32},
                                           LaunchShape{7, 33}, LaunchShape{2, 1024},
                                           LaunchShape{1023, 1}, LaunchShape{257, 255}),
                         shape_name);
INSTANTIATE_TEST_SUITE_P(Large, ThreadRanks1D,
                         ::testing::Values(LaunchShape{100003, 33}, LaunchShape{(1 << 20) + 1, 1}),
                         shape_name);

// Non-square shapes catch a swapped x and y; block.x = 1 and block.y = 1 catch a formula that
// only works when one dimension dominates.
INSTANTIATE_TEST_SUITE_P(
    Small, ThreadRanks2D,
    ::testing::Values(LaunchShape{dim3(1, 1), dim3(1, 1)}, LaunchShape{dim3(3, 5), dim3(7, 9)},
                      LaunchShape{dim3(1, 1), dim3(32, 32)}, LaunchShape{dim3(5, 3), dim3(33, 31)},
                      LaunchShape{dim3(9, 7), dim3(1, 32)}, LaunchShape{dim3(7, 9), dim3(32, 1)},
                      LaunchShape{dim3(1, 17), dim3(3, 5)}),
    shape_name);
// gridDim.y at its limit of 65535, and a grid far wider than one block.
INSTANTIATE_TEST_SUITE_P(Large, ThreadRanks2D,
                         ::testing::Values(LaunchShape{dim3(2, 65535), dim3(3, 1)},
                                           LaunchShape{dim3(257, 129), dim3(16, 16)}),
                         shape_name);

INSTANTIATE_TEST_SUITE_P(
    Small, ThreadRanks3D,
    ::testing::Values(LaunchShape{dim3(1, 1, 1), dim3(1, 1, 1)},
                      LaunchShape{dim3(2, 3, 4), dim3(5, 6, 7)},
                      LaunchShape{dim3(1, 1, 1), dim3(8, 8, 16)},
                      LaunchShape{dim3(3, 5, 7), dim3(1, 1, 64)},
                      LaunchShape{dim3(7, 3, 2), dim3(4, 2, 3)},
                      LaunchShape{dim3(65, 1, 3), dim3(2, 33, 1)},
                      LaunchShape{dim3(1, 2, 33), dim3(3, 1, 1)}),
    shape_name);
// gridDim.z at its limit of 65535, and a grid with many blocks in every dimension.
INSTANTIATE_TEST_SUITE_P(Large, ThreadRanks3D,
                         ::testing::Values(LaunchShape{dim3(3, 2, 65535), dim3(1, 1, 2)},
                                           LaunchShape{dim3(31, 17, 13), dim3(8, 4, 2)}),
                         shape_name);

// keeps_to_stream holds the given stream shut while the launcher returns: a launch anywhere
// else (the default stream, a stream of its own) writes the ranks meanwhile, and a launcher
// that waits for its stream is reported. Then the ranks must be complete.
void check_keeps_to_stream(Launcher launch, const LaunchShape& s) {
  const Expected expected = simulate_launch(s);
  const std::size_t count = expected.block_rank.size();
  auto block_rank = course::testing::poisoned_output<int>(count);
  auto thread_rank = course::testing::poisoned_output<int>(count);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t stream) {
        launch(s.grid, s.block, block_rank.data(), thread_rank.data(), stream);
      },
      {{block_rank.data(), count * sizeof(int), "block_rank"},
       {thread_rank.data(), count * sizeof(int), "thread_rank"}}));
  course::CompareOptions options;
  options.shape = expected.shape;
  options.what = "block_rank";
  EXPECT_TRUE(course::testing::equal(expected.block_rank, block_rank.download(), options));
  options.what = "thread_rank";
  EXPECT_TRUE(course::testing::equal(expected.thread_rank, thread_rank.download(), options));
}

// The launchers take no input, so there is no CallsAgainWithNewInputs case: the output
// depends on the launch shape alone.
TEST(ThreadRanksStream, RunsOnTheGivenStream) {
  check_keeps_to_stream(record_thread_ranks_1d, LaunchShape{4099, 256});
}
TEST(ThreadRanksStream, Ranks2DRunsOnTheGivenStream) {
  check_keeps_to_stream(record_thread_ranks_2d, LaunchShape{dim3(65, 33), dim3(32, 8)});
}
TEST(ThreadRanksStream, Ranks3DRunsOnTheGivenStream) {
  check_keeps_to_stream(record_thread_ranks_3d, LaunchShape{dim3(9, 5, 3), dim3(8, 4, 4)});
}

}  // namespace
