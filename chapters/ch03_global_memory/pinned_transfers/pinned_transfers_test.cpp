#include "pinned_transfers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using Pinned = course::testing::Owned<float[], free_pinned>;

Pinned pinned(std::size_t n) {
  return course::testing::owned_result<Pinned>(alloc_pinned(n), n == 0,
                                               "alloc_pinned(" + std::to_string(n) + ")");
}

TEST(PinnedTransfers, AllocPinnedReturnsPageLockedMemory) {
  const std::size_t n = 12345;
  Pinned p = pinned(n);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(course::testing::page_locked(p.get()));
  // The whole range is usable from the host.
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1.f, 1.f, rng);
  std::copy(values.begin(), values.end(), p.get());
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(p.get(), p.get() + n)));
}

TEST(PinnedTransfers, AllocZeroGivesNullptr) {
  float* p = alloc_pinned(0);
  EXPECT_EQ(p, nullptr);
  free_pinned(p);  // must accept nullptr
  Pinned q = pinned(3);
  EXPECT_NE(q, nullptr);
}

void check_round_trip(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
  Pinned src = pinned(n), dst = pinned(n);
  ASSERT_TRUE(src != nullptr && dst != nullptr);
  std::copy(values.begin(), values.end(), src.get());
  std::memset(dst.get(), course::kPoisonByte, n * sizeof(float));
  auto dev = course::testing::poisoned_output<float>(n);
  course::Stream stream;
  round_trip(src.get(), dev.data(), dst.get(), n, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(values, dev.download(), {{}, "device copy"}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(dst.get(), dst.get() + n),
                                     {{}, "dst after the round trip"}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(src.get(), src.get() + n),
                                     {{}, "src (must not be modified)"}));
}

void check_staged(std::size_t n, std::size_t staging_count) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
  Pinned staging = pinned(staging_count);
  ASSERT_NE(staging, nullptr);
  course::testing::GuardedOutput<float> dev(n);
  course::Stream stream;
  staged_upload(values.data(), dev.data(), n, staging.get(), staging_count, stream);
  // staged_upload returns once the data is on the device: no synchronisation here, and the
  // staging buffer is overwritten at once, as a caller reusing it would.
  std::memset(staging.get(), 0, staging_count * sizeof(float));
  EXPECT_TRUE(course::testing::equal(values, dev.download(),
                                     {{}, "device buffer after staged_upload"}));
  EXPECT_TRUE(dev.guards_intact("device buffer after staged_upload"));
}

// staged_upload must move the data through the pinned staging buffer: a cudaMemcpy straight
// from the pageable source (the driver staging it in a buffer of its own) puts the same data on
// the device. So the staging buffer, poisoned before the call, must afterwards hold data of the
// source (the last chunks staged), and nothing else.
TEST(PinnedTransfers, StagedUploadGoesThroughTheStagingBuffer) {
  const std::size_t n = 100003;
  const std::size_t staging_count = 4096;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
  Pinned staging = pinned(staging_count);
  ASSERT_NE(staging, nullptr);
  std::memset(staging.get(), course::kPoisonByte, staging_count * sizeof(float));
  course::DeviceBuffer<float> dev(n);
  course::Stream stream;
  staged_upload(values.data(), dev.data(), n, staging.get(), staging_count, stream);
  ASSERT_TRUE(course::testing::equal(values, dev.download(), {{}, "device buffer"}));

  std::vector<std::uint32_t> source_bits(n);
  std::memcpy(source_bits.data(), values.data(), n * sizeof(float));
  std::sort(source_bits.begin(), source_bits.end());
  const std::uint32_t poison = course::testing::poison_values<std::uint32_t>(1)[0];
  std::size_t staged = 0, foreign = 0;
  for (std::size_t i = 0; i < staging_count; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, staging.get() + i, sizeof bits);
    if (bits == poison) continue;
    ++staged;
    if (!std::binary_search(source_bits.begin(), source_bits.end(), bits)) ++foreign;
  }
  EXPECT_GT(staged, 0u) << "staged_upload of " << n << " floats left all " << staging_count
                        << " floats of the staging buffer untouched: copy each chunk of src "
                        << "into staging (memcpy on the host), then from staging to the device";
  EXPECT_EQ(foreign, 0u) << foreign << " of the " << staged << " floats written to the staging "
                         << "buffer are not values of src";
}

class RoundTrip : public ::testing::TestWithParam<std::size_t> {};
TEST_P(RoundTrip, MatchesSource) { check_round_trip(GetParam()); }

struct StagedCase {
  std::size_t n;
  std::size_t staging;
};
class StagedUpload : public ::testing::TestWithParam<StagedCase> {};
TEST_P(StagedUpload, MatchesSource) { check_staged(GetParam().n, GetParam().staging); }

using course::testing::size_name;
std::string staged_name(const ::testing::TestParamInfo<StagedCase>& info) {
  return "n_" + std::to_string(info.param.n) + "_staging_" + std::to_string(info.param.staging);
}

INSTANTIATE_TEST_SUITE_P(Small, RoundTrip, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, RoundTrip,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 24) + 1})),
                         size_name);
// Staging smaller than n, not a divisor of n, exactly n, larger than n, and the minimum 2.
INSTANTIATE_TEST_SUITE_P(Small, StagedUpload,
                         ::testing::Values(StagedCase{1, 2}, StagedCase{7, 2}, StagedCase{33, 8},
                                           StagedCase{1000, 1000}, StagedCase{100, 4096},
                                           StagedCase{4099, 256}),
                         staged_name);
INSTANTIATE_TEST_SUITE_P(Large, StagedUpload,
                         ::testing::Values(StagedCase{(1u << 22) + 3, 1u << 18},
                                           StagedCase{3000017, 65537}),
                         staged_name);

// round_trip's case. staged_upload has none: it returns only once its data is on the device,
// so it waits for its stream, and a stream held shut would never let it return.
TEST(PinnedTransfersEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while round_trip returns: a copy anywhere else (the
  // default stream, a synchronous cudaMemcpy, a stream of its own) writes dev or dst
  // meanwhile, and waiting on the stream is reported.
  const std::size_t n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
  Pinned src = pinned(n), dst = pinned(n);
  ASSERT_TRUE(src != nullptr && dst != nullptr);
  std::copy(values.begin(), values.end(), src.get());
  std::memset(dst.get(), course::kPoisonByte, n * sizeof(float));
  auto dev = course::testing::poisoned_output<float>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { round_trip(src.get(), dev.data(), dst.get(), n, s); },
      {{dev.data(), n * sizeof(float), "dev"}, {dst.get(), n * sizeof(float), "dst"}}));
  EXPECT_TRUE(course::testing::equal(values, dev.download(), {{}, "device copy"}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(dst.get(), dst.get() + n),
                                     {{}, "dst after the round trip"}));
}

TEST(PinnedTransfersEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a round_trip that remembers its last transfer by pointer or
  // by size leaves the first call's values the second time.
  const std::size_t n = 100003;
  auto rng = course::testing::case_rng();
  Pinned src = pinned(n), dst = pinned(n);
  ASSERT_TRUE(src != nullptr && dst != nullptr);
  course::DeviceBuffer<float> dev(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
    std::copy(values.begin(), values.end(), src.get());
    std::memset(dst.get(), course::kPoisonByte, n * sizeof(float));
    dev.fill_bytes(course::kPoisonByte);
    round_trip(src.get(), dev.data(), dst.get(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(
        course::testing::equal(values, dev.download(), {{}, "device copy after the " + call}));
    EXPECT_TRUE(course::testing::equal(values, std::vector<float>(dst.get(), dst.get() + n),
                                       {{}, "dst after the " + call}));
  }
}

TEST(PinnedTransfersEdge, StagedUploadCallsAgainWithNewInputs) {
  // The same pageable source rewritten between calls: every call must copy it afresh.
  const std::size_t n = 100003;
  const std::size_t staging_count = 4099;
  auto rng = course::testing::case_rng();
  Pinned staging = pinned(staging_count);
  ASSERT_NE(staging, nullptr);
  std::vector<float> src(n);
  course::DeviceBuffer<float> dev(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_floats(n, -1e3f, 1e3f, rng);
    std::copy(values.begin(), values.end(), src.begin());
    dev.fill_bytes(course::kPoisonByte);
    // The default stream orders the upload after the poison; staged_upload returns once the
    // data is on the device, so no synchronisation follows.
    staged_upload(src.data(), dev.data(), n, staging.get(), staging_count, nullptr);
    EXPECT_TRUE(course::testing::equal(values, dev.download(),
                                       {{}, "device buffer after the " + call}));
  }
}

}  // namespace
