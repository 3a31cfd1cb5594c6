#include "device_symbols.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;

std::vector<float> nan_filled(std::size_t n) {
  return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

// Fills the whole symbol through the API under test; every case starts from fresh values.
std::vector<float> fill_all(std::mt19937_64& rng) {
  auto values = course::random_floats(kCoefficientCount, -8.f, 8.f, rng);
  set_coefficients(values.data(), 0, kCoefficientCount);
  return values;
}

TEST(DeviceSymbols, SetThenGetRoundTrips) {
  auto rng = course::testing::case_rng();
  const auto values = fill_all(rng);
  auto back = nan_filled(kCoefficientCount);
  get_coefficients(back.data(), 0, kCoefficientCount);
  EXPECT_TRUE(course::testing::equal(values, back, {{}, "d_coefficients read back"}));
}

TEST(DeviceSymbols, OffsetsAreCountedInElements) {
  // A partial set must land at element `first` and leave the rest alone: the symbol API
  // takes its offset in bytes, so forgetting sizeof(float) shows up here.
  auto rng = course::testing::case_rng();
  auto expected = fill_all(rng);
  std::uniform_int_distribution<int> pick(1, kCoefficientCount - 2);
  const int first = pick(rng);
  const int count = std::uniform_int_distribution<int>(1, kCoefficientCount - first)(rng);
  const auto patch = course::random_floats(count, 100.f, 200.f, rng);
  set_coefficients(patch.data(), first, count);
  std::copy(patch.begin(), patch.end(), expected.begin() + first);

  auto back = nan_filled(kCoefficientCount);
  get_coefficients(back.data(), 0, kCoefficientCount);
  EXPECT_TRUE(course::testing::equal(expected, back,
                                     {{}, "d_coefficients after a set at first=" +
                                              std::to_string(first)}));

  // And a partial get reads from `first` into host[0..count).
  auto part = nan_filled(count);
  get_coefficients(part.data(), first, count);
  EXPECT_TRUE(course::testing::equal(patch, part, {{}, "partial get"}));
}

TEST(DeviceSymbols, CountZeroChangesNothing) {
  auto rng = course::testing::case_rng();
  const auto values = fill_all(rng);
  const float ignored = 42.f;
  set_coefficients(&ignored, 3, 0);
  float untouched = -1.f;
  get_coefficients(&untouched, 5, 0);
  EXPECT_EQ(untouched, -1.f);
  auto back = nan_filled(kCoefficientCount);
  get_coefficients(back.data(), 0, kCoefficientCount);
  EXPECT_TRUE(course::testing::equal(values, back, {{}, "d_coefficients"}));
}

TEST(DeviceSymbols, AddressSeesTheSameMemory) {
  auto rng = course::testing::case_rng();
  const auto values = fill_all(rng);
  float* address = coefficients_address();
  ASSERT_NE(address, nullptr) << "coefficients_address() returned nullptr";
  cudaPointerAttributes attributes{};
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, address));
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice) << "not a device address";

  // Reading through the raw pointer sees what the symbol copy wrote...
  std::vector<float> through_pointer(kCoefficientCount);
  CUDA_CHECK(cudaMemcpy(through_pointer.data(), address, kCoefficientCount * sizeof(float),
                        cudaMemcpyDeviceToHost));
  EXPECT_TRUE(course::testing::equal(values, through_pointer, {{}, "read through the pointer"}));

  // ...and writing through it is seen by the symbol copy.
  const auto fresh = course::random_floats(kCoefficientCount, -1.f, 1.f, rng);
  CUDA_CHECK(cudaMemcpy(address, fresh.data(), kCoefficientCount * sizeof(float),
                        cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
  auto back = nan_filled(kCoefficientCount);
  get_coefficients(back.data(), 0, kCoefficientCount);
  EXPECT_TRUE(course::testing::equal(fresh, back, {{}, "symbol after a write through the pointer"}));
}

void check_apply(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto coefficients = fill_all(rng);
  const auto in_host = course::random_floats(n, -50.f, 50.f, rng);
  GuardedInput<float> in(in_host);
  auto out = course::testing::poisoned_output<float>(n);
  apply_coefficients(in.data(), out.data(), static_cast<int>(n), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> expected(n);
  for (std::size_t i = 0; i < n; ++i)
    expected[i] = in_host[i] * coefficients[i % kCoefficientCount];
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out"}));
  EXPECT_TRUE(in.unchanged("in"));
}

class ApplyCoefficients : public ::testing::TestWithParam<std::size_t> {};
TEST_P(ApplyCoefficients, MatchesReference) { check_apply(GetParam()); }

using course::testing::size_name;
// The adversarial sizes; 1024 is also the coefficient count, 4099 wraps it four times.
INSTANTIATE_TEST_SUITE_P(Small, ApplyCoefficients,
                         ::testing::ValuesIn(course::testing::small_sizes({4099})), size_name);
INSTANTIATE_TEST_SUITE_P(Large, ApplyCoefficients,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 24) + 1})),
                         size_name);

std::vector<float> apply_reference(const std::vector<float>& in,
                                   const std::vector<float>& coefficients) {
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i] * coefficients[i % kCoefficientCount];
  return out;
}

TEST(DeviceSymbolsStream, ApplyRunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while apply_coefficients returns: a launch anywhere
  // else (the default stream, a stream of its own) writes out meanwhile, and waiting on the
  // stream is reported.
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto coefficients = fill_all(rng);
  const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> in(in_host);
  auto out = course::testing::poisoned_output<float>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { apply_coefficients(in.data(), out.data(), n, s); },
      {{out.data(), n * sizeof(float), "out"}}));
  EXPECT_TRUE(
      course::testing::equal(apply_reference(in_host, coefficients), out.download(), {{}, "out"}));
}

TEST(DeviceSymbolsStream, ApplyCallsAgainWithNewInputs) {
  // Same buffers, new contents and new coefficients: a launcher that remembers its last
  // answer by pointer or by size returns the first call's out the second time.
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(n), out(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto coefficients = fill_all(rng);
    const auto in_host = course::random_floats(n, -50.f, 50.f, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    apply_coefficients(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(apply_reference(in_host, coefficients), out.download(),
                                       {{}, "out after the " + call}));
  }
}

}  // namespace
