#include "smem_reduction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;

struct Case {
  int n;
  int block_size;
};

using course::testing::host_sum;

// Sums n random ints over the whole int range (the exact sum needs 64 bits), starting
// `offset` ints into the allocation so that vectorised loads must handle misalignment.
void check_sum(int n, int block_size, int offset, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(static_cast<std::size_t>(n) + offset, INT_MIN,
                                           INT_MAX, rng));
  auto out = course::testing::poisoned_output<long long>(1);
  smem_reduction(in.data() + offset, n, block_size, out.data(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(in.host(), offset, n)},
                                     out.download(), {{}, "*out (the sum)"}));
  EXPECT_TRUE(in.unchanged("in"));
}

class SmemReduction : public ::testing::TestWithParam<Case> {};

TEST_P(SmemReduction, ExactSum) { check_sum(GetParam().n, GetParam().block_size, 0, nullptr); }

TEST_P(SmemReduction, ExactSumFromUnalignedStart) {
  check_sum(GetParam().n, GetParam().block_size, 1, nullptr);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return "n" + std::to_string(info.param.n) + "_block" + std::to_string(info.param.block_size);
}

// Sizes at and around a warp, a block and twice a block for the block sizes used, primes, and
// block sizes from one warp to 1024 threads (the shared array's size changes with each).
INSTANTIATE_TEST_SUITE_P(Small, SmemReduction,
                         ::testing::Values(Case{1, 256}, Case{7, 32}, Case{31, 32}, Case{32, 32},
                                           Case{33, 32}, Case{255, 256}, Case{256, 256},
                                           Case{257, 256}, Case{511, 256}, Case{513, 256},
                                           Case{1023, 1024}, Case{1025, 1024},
                                           Case{4099, 64}, Case{65537, 128}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(SmallEveryBlockSize, SmemReduction,
                         ::testing::Values(Case{100003, 32}, Case{100003, 64},
                                           Case{100003, 128}, Case{100003, 256},
                                           Case{100003, 512}, Case{100003, 1024}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Large, SmemReduction,
                         ::testing::Values(Case{(1 << 24) + 3, 256}, Case{(1 << 24) - 1, 1024},
                                           Case{(1 << 25) + 1001, 32}, Case{50000017, 512}),
                         case_name);

TEST(SmemReductionEdge, EmptyInputWritesZero) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(16, INT_MIN, INT_MAX, rng));
  auto out = course::testing::poisoned_output<long long>(1);
  smem_reduction(in.data(), 0, 256, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{0}, out.download(),
                                     {{}, "*out after n = 0"}));
  // Then a real call into the same output, so writing 0 unconditionally does not pass.
  smem_reduction(in.data(), 16, 32, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(in.host(), 0, 16)},
                                     out.download(), {{}, "*out after n = 16"}));
}

TEST(SmemReductionEdge, RejectsUnsupportedBlockSizes) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(100, -100, 100, rng));
  auto out = course::testing::poisoned_output<long long>(1);
  for (int bad : {0, 16, 48, 100, 2048})
    EXPECT_THROW(smem_reduction(in.data(), 100, bad, out.data(), nullptr), std::invalid_argument)
        << "block_size " << bad;
  // The supported sizes still work after the rejected ones.
  smem_reduction(in.data(), 100, 64, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(in.host(), 0, 100)},
                                     out.download(), {{}, "*out after n = 100"}));
}

TEST(SmemReductionEdge, RunsOnTheGivenStream) {
  constexpr int n = 1000003;
  constexpr int kOffset = 3;  // a misaligned start, as in ExactSumFromUnalignedStart
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(n + kOffset, INT_MIN, INT_MAX, rng));
  auto out = course::testing::poisoned_output<long long>(1);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { smem_reduction(in.data() + kOffset, n, 256, out.data(), s); },
      {course::testing::watched(out, "*out")}));
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(in.host(), kOffset, n)},
                                     out.download(), {{}, "*out (the sum)"}));
}

// Each block size's launches recorded into a graph instead of run: the shared array must be
// sized at launch from the caller's block size (the third launch parameter), which the sums
// cannot show: a static array big enough for 1024 threads gives the same sums. So the kernel
// that runs with block_size threads has dynamic shared memory, and more of it for 1024
// threads than for 32. One ordinary call first loads the kernel outside the recording.
TEST(SmemReductionEdge, SizesSharedMemoryAtLaunchFromTheBlockSize) {
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(course::random_ints(n, INT_MIN, INT_MAX, rng));
  course::DeviceBuffer<long long> out(1);
  course::Stream stream;
  std::vector<unsigned int> bytes_by_size;
  for (const int block_size : {32, 64, 128, 256, 512, 1024}) {
    smem_reduction(in.data(), n, block_size, out.data(), stream);
    stream.synchronize();
    course::testing::RecordedGraph recorded(
        stream, [&](cudaStream_t s) { smem_reduction(in.data(), n, block_size, out.data(), s); });
    ASSERT_TRUE(recorded.problem().empty()) << "smem_reduction: " << recorded.problem();
    unsigned int most = 0;
    std::string seen;
    bool found = false;
    for (const auto& launch : recorded.launches()) {
      seen += "; " + course::testing::describe(launch);
      if (launch.block.x * launch.block.y * launch.block.z != static_cast<unsigned>(block_size))
        continue;
      found = true;
      most = std::max(most, launch.dynamic_shared_bytes);
    }
    ASSERT_TRUE(found) << "block_size " << block_size << ": no kernel was launched with "
                       << block_size << " threads a block, the caller's block size; found "
                       << recorded.census() << seen;
    EXPECT_GT(most, 0u) << "block_size " << block_size << ": the kernel with " << block_size
                        << " threads a block was launched with no dynamic shared memory: size "
                        << "the extern __shared__ array with the third launch parameter"
                        << seen;
    bytes_by_size.push_back(most);
  }
  EXPECT_GT(bytes_by_size.back(), bytes_by_size.front())
      << "the dynamic shared memory does not grow with the block size (" << bytes_by_size.front()
      << " bytes for 32 threads, " << bytes_by_size.back() << " for 1024): it must be sized "
      << "from block_size at launch";
}

TEST(SmemReductionEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a sum remembered from the first call (by pointer or by size)
  // fails the second check.
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n);
  auto out = course::testing::poisoned_output<long long>(1);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_ints(n, INT_MIN, INT_MAX, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    smem_reduction(in.data(), n, 256, out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(in_host, 0, n)},
                                       out.download(), {{}, "*out after the " + call}));
  }
}

}  // namespace
