#include "atomic_scopes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "atomic_scopes_host.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

using HistogramLauncher = void (*)(const unsigned*, int, unsigned*, cudaStream_t);

enum class Spread { Uniform, OneBin };

struct Case {
  Spread spread;
  std::size_t n;
};

// Full-range values, so a kernel that bins by the value instead of its low byte writes far out
// of bounds. OneBin: every low byte is the same random bin and the other bits stay random,
// the most contended input a histogram can get.
std::vector<unsigned> make_values(Spread spread, std::size_t n, std::mt19937_64& rng) {
  auto values = course::random_uints(n, 0u, 0xFFFFFFFFu, rng);
  if (spread == Spread::OneBin) {
    const unsigned hot = scope_bin(static_cast<unsigned>(rng()));
    for (auto& value : values) value = (value - scope_bin(value)) | hot;
  }
  return values;
}

// What the bins hold before a call: the launchers add to it, so it must not be zero.
std::vector<unsigned> starting_counts(std::mt19937_64& rng) {
  return course::random_uints(kScopeBins, 0u, 1u << 20, rng);
}

std::vector<unsigned> plus(std::vector<unsigned> counts, const std::vector<unsigned>& more) {
  for (std::size_t b = 0; b < counts.size(); ++b) counts[b] += more[b];
  return counts;
}

void set_bins(GuardedOutput<unsigned>& bins, const std::vector<unsigned>& counts) {
  CUDA_CHECK(cudaMemcpy(bins.data(), counts.data(), counts.size() * sizeof(unsigned),
                        cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

::testing::AssertionResult bins_hold(const std::vector<unsigned>& expected,
                                     const GuardedOutput<unsigned>& bins,
                                     const std::string& what) {
  return course::testing::equal(expected, bins.download(), {{}, what});
}

// One call on bins that already hold counts: the result is those counts plus this input's.
void check_histogram(HistogramLauncher launch, const Case& c) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c.spread, c.n, rng));
  GuardedOutput<unsigned> bins(kScopeBins);
  const auto before = starting_counts(rng);
  set_bins(bins, before);
  launch(in.data(), static_cast<int>(c.n), bins.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(bins_hold(plus(before, scope_histogram_reference(in.host())), bins,
                        "bins (the counts they held plus this input's)"));
  EXPECT_TRUE(bins.guards_intact("bins"));
  EXPECT_TRUE(in.unchanged("in"));
}

unsigned long long count_in_bin(const std::vector<unsigned>& values, unsigned bin) {
  unsigned long long count = 0;
  for (const unsigned value : values) count += scope_bin(value) == bin ? 1 : 0;
  return count;
}

// The bin of a randomly chosen value, so that the count has to move.
unsigned bin_to_count(const std::vector<unsigned>& values, std::mt19937_64& rng) {
  return scope_bin(values[rng() % values.size()]);
}

// The counter and its neighbour word (which nothing may write) as the host reads them.
::testing::AssertionResult counter_holds(SharedCounter& shared, unsigned long long expected,
                                         unsigned long long neighbour, const std::string& what) {
  const unsigned long long found = *shared.counter();
  if (found != expected)
    return ::testing::AssertionFailure()
           << what << ": *counter is " << found << ", expected " << expected << " ("
           << static_cast<long long>(found - expected) << " off; counter in "
           << shared.describe() << ")";
  if (*shared.neighbour() != neighbour)
    return ::testing::AssertionFailure()
           << what << ": the 8 bytes after *counter were written (" << *shared.neighbour()
           << " instead of " << neighbour << ")";
  return ::testing::AssertionSuccess();
}

void check_system_count(const Case& c) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c.spread, c.n, rng));
  const unsigned bin = bin_to_count(in.host(), rng);
  SharedCounter shared;
  const unsigned long long before = rng() >> 24;
  const unsigned long long neighbour = rng();
  *shared.counter() = before;
  *shared.neighbour() = neighbour;
  count_system_scope(in.data(), static_cast<int>(c.n), bin, shared.counter(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(counter_holds(shared, before + count_in_bin(in.host(), bin), neighbour,
                            "count of bin " + std::to_string(bin) + " added to the counter"));
  EXPECT_TRUE(in.unchanged("in"));
}

class BlockScope : public ::testing::TestWithParam<Case> {};
TEST_P(BlockScope, AddsEveryBin) { check_histogram(histogram_block_scope, GetParam()); }
class DeviceScope : public ::testing::TestWithParam<Case> {};
TEST_P(DeviceScope, AddsEveryBin) { check_histogram(histogram_device_scope, GetParam()); }
class SystemScope : public ::testing::TestWithParam<Case> {};
TEST_P(SystemScope, AddsTheCountOfOneBin) { check_system_count(GetParam()); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.spread == Spread::OneBin ? "one_bin" : "uniform") + "_n_" +
         std::to_string(info.param.n);
}

std::vector<Case> cases(std::initializer_list<std::size_t> sizes) {
  std::vector<Case> out;
  for (const Spread spread : {Spread::Uniform, Spread::OneBin})
    for (const std::size_t n : sizes) out.push_back({spread, n});
  return out;
}

// Below, at and above a warp and a block of 256 (one thread per bin), a few blocks, a prime;
// then more values than any sensible grid covers in one pass. n = 0 has its own cases below.
const std::vector<Case> kSmall = cases({1, 7, 32, 33, 65, 1000, 4097, 65537});
const std::vector<Case> kLarge = cases({(std::size_t{1} << 20) + 3, (std::size_t{1} << 24) + 1});

INSTANTIATE_TEST_SUITE_P(Small, BlockScope, ::testing::ValuesIn(kSmall), case_name);
INSTANTIATE_TEST_SUITE_P(Large, BlockScope, ::testing::ValuesIn(kLarge), case_name);
INSTANTIATE_TEST_SUITE_P(Small, DeviceScope, ::testing::ValuesIn(kSmall), case_name);
INSTANTIATE_TEST_SUITE_P(Large, DeviceScope, ::testing::ValuesIn(kLarge), case_name);
INSTANTIATE_TEST_SUITE_P(Small, SystemScope, ::testing::ValuesIn(kSmall), case_name);
INSTANTIATE_TEST_SUITE_P(Large, SystemScope, ::testing::ValuesIn(kLarge), case_name);

// n = 0 must leave the bins as they are (no clearing), and a real call after it still adds.
void check_empty_then_counts(HistogramLauncher launch) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(Spread::Uniform, 1000, rng));
  GuardedOutput<unsigned> bins(kScopeBins);
  const auto before = starting_counts(rng);
  set_bins(bins, before);
  launch(in.data(), 0, bins.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(bins_hold(before, bins, "bins after n = 0 (nothing to add, nothing to clear)"));
  launch(in.data(), 1000, bins.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(bins_hold(plus(before, scope_histogram_reference(in.host())), bins,
                        "bins after n = 0, then n = 1000"));
  EXPECT_TRUE(bins.guards_intact("bins"));
}

TEST(AtomicScopesEdge, BlockScopeEmptyInputThenCounts) {
  check_empty_then_counts(histogram_block_scope);
}
TEST(AtomicScopesEdge, DeviceScopeEmptyInputThenCounts) {
  check_empty_then_counts(histogram_device_scope);
}

TEST(AtomicScopesEdge, SystemScopeEmptyInputThenCounts) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(Spread::Uniform, 1000, rng));
  const unsigned bin = bin_to_count(in.host(), rng);
  SharedCounter shared;
  *shared.counter() = 12345;
  count_system_scope(in.data(), 0, bin, shared.counter(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(counter_holds(shared, 12345, 0, "after n = 0"));
  count_system_scope(in.data(), 1000, bin, shared.counter(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(counter_holds(shared, 12345 + count_in_bin(in.host(), bin), 0,
                            "after n = 0, then n = 1000"));
}

// Vector loads are welcome in the block-scope kernel, but in[] may start at any int.
TEST(AtomicScopesEdge, BlockScopeFromMisalignedInput) {
  auto rng = course::testing::case_rng();
  for (const std::size_t n : {1000, 65537}) {
    for (const std::size_t skip : {1, 2, 3}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", in starts " + std::to_string(skip) +
                   " values past a 16-byte boundary");
      GuardedInput<unsigned> in(make_values(Spread::Uniform, n + skip, rng));
      GuardedOutput<unsigned> bins(kScopeBins);
      const auto before = starting_counts(rng);
      set_bins(bins, before);
      histogram_block_scope(in.data() + skip, static_cast<int>(n), bins.data(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<unsigned> used(in.host().begin() + skip, in.host().end());
      EXPECT_TRUE(bins_hold(plus(before, scope_histogram_reference(used)), bins, "bins"));
      EXPECT_TRUE(bins.guards_intact("bins"));
    }
  }
}

// Same buffers, new contents: the counts of both calls add up. A launcher that remembers its
// result by pointer or by size adds the first input twice; one that clears loses the first.
void check_calls_again(HistogramLauncher launch) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned> in(n);
  GuardedOutput<unsigned> bins(kScopeBins);
  auto expected = starting_counts(rng);
  set_bins(bins, expected);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto values = make_values(call == "first call" ? Spread::Uniform : Spread::OneBin, n,
                                    rng);
    in.upload(values);
    launch(in.data(), n, bins.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    expected = plus(expected, scope_histogram_reference(values));
    EXPECT_TRUE(bins_hold(expected, bins, "bins after the " + call));
  }
  EXPECT_TRUE(bins.guards_intact("bins"));
}

TEST(AtomicScopesEdge, BlockScopeCallsAgainWithNewInputs) {
  check_calls_again(histogram_block_scope);
}
TEST(AtomicScopesEdge, DeviceScopeCallsAgainWithNewInputs) {
  check_calls_again(histogram_device_scope);
}

TEST(AtomicScopesEdge, SystemScopeCallsAgainWithNewInputs) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned> in(n);
  SharedCounter shared;
  unsigned long long expected = 0;
  *shared.counter() = expected;
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto values = make_values(Spread::Uniform, n, rng);
    const unsigned bin = bin_to_count(values, rng);
    in.upload(values);
    count_system_scope(in.data(), n, bin, shared.counter(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    expected += count_in_bin(values, bin);
    EXPECT_TRUE(counter_holds(shared, expected, 0, "after the " + call));
  }
}

// keeps_to_stream holds the stream shut while the launcher returns: a launch anywhere else
// (the default stream, a stream of its own) changes the output meanwhile, and waiting for the
// stream is reported.
void check_keeps_to_stream(HistogramLauncher launch) {
  const int n = (1 << 20) + 5;
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(Spread::Uniform, n, rng));
  GuardedOutput<unsigned> bins(kScopeBins);
  const auto before = starting_counts(rng);
  set_bins(bins, before);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { launch(in.data(), n, bins.data(), s); },
      {{bins.data(), kScopeBins * sizeof(unsigned), "bins"}}));
  EXPECT_TRUE(bins_hold(plus(before, scope_histogram_reference(in.host())), bins, "bins"));
}

TEST(AtomicScopesEdge, BlockScopeRunsOnTheGivenStream) {
  check_keeps_to_stream(histogram_block_scope);
}
TEST(AtomicScopesEdge, DeviceScopeRunsOnTheGivenStream) {
  check_keeps_to_stream(histogram_device_scope);
}

TEST(AtomicScopesEdge, SystemScopeRunsOnTheGivenStream) {
  const int n = (1 << 20) + 5;
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(Spread::Uniform, n, rng));
  const unsigned bin = bin_to_count(in.host(), rng);
  SharedCounter shared;
  *shared.counter() = 0;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { count_system_scope(in.data(), n, bin, shared.counter(), s); },
      {{shared.counter(), sizeof(unsigned long long), "*counter"}}));
  EXPECT_TRUE(counter_holds(shared, count_in_bin(in.host(), bin), 0, "counter"));
}

// The point of system scope: a host thread adds 1 at a time to the counter for as long as
// three kernels run on the stream, and not one add of either side may be lost.
TEST(AtomicScopesEdge, HostAndDeviceAddTogether) {
  const int n = (1 << 22) + 5;
  auto rng = course::testing::case_rng();
  std::vector<std::vector<unsigned>> inputs;
  std::vector<course::DeviceBuffer<unsigned>> buffers;
  std::vector<unsigned> bins;
  for (const Spread spread : {Spread::OneBin, Spread::Uniform, Spread::OneBin}) {
    inputs.push_back(make_values(spread, n, rng));
    buffers.emplace_back(inputs.back());
    bins.push_back(bin_to_count(inputs.back(), rng));
  }
  SharedCounter shared;
  const unsigned long long before = rng() >> 24;
  *shared.counter() = before;
  unsigned long long device_adds = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) device_adds += count_in_bin(inputs[k], bins[k]);

  course::Stream stream;
  auto launch_all = [&] {
    for (std::size_t k = 0; k < inputs.size(); ++k)
      count_system_scope(buffers[k].data(), n, bins[k], shared.counter(), stream);
  };
  unsigned long long host_adds = 0;
  if (shared.host_may_add_during_kernels()) {
    HostAdder adder(shared.counter());
    // The thread is adding before the first kernel starts and until the last one has ended.
    ASSERT_TRUE(adder.wait_until(4096)) << "the host thread did not get to run";
    launch_all();
    stream.synchronize();
    host_adds = adder.stop();
  } else {
    std::printf("note: %s: the host adds before and after the kernels, not during them\n",
                shared.describe().c_str());
    for (int round = 0; round < 2; ++round) {
      HostAdder adder(shared.counter());
      adder.wait_until(100000);
      host_adds += adder.stop();
      if (round == 0) {
        launch_all();
        stream.synchronize();
      }
    }
  }
  EXPECT_TRUE(counter_holds(shared, before + device_adds + host_adds, 0,
                            "the device's " + std::to_string(device_adds) +
                                " adds (three kernels) and the host thread's " +
                                std::to_string(host_adds)));
}

}  // namespace
