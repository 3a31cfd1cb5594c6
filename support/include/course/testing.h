// GoogleTest glue: comparisons as assertion results, per-case generators, input guards.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "course/buffers.h"
#include "course/compare.h"
#include "course/random.h"

namespace course::testing {

// A generator seeded from the run seed and the running test's full name.
std::mt19937_64 case_rng();

inline ::testing::AssertionResult as_assertion(const Comparison& comparison) {
  if (comparison.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << comparison.summary();
}

template <class T>
::testing::AssertionResult equal(const std::vector<T>& expected, const std::vector<T>& actual,
                                 const CompareOptions& options = {}) {
  return as_assertion(compare_exact(expected, actual, options));
}

template <class T>
::testing::AssertionResult close(const std::vector<T>& expected, const std::vector<T>& actual,
                                 Tolerance tolerance, const CompareOptions& options = {}) {
  return as_assertion(compare_close(expected, actual, tolerance, options));
}

// An output buffer already poisoned, so elements the kernel never writes are caught.
template <class T>
DeviceBuffer<T> poisoned_output(std::size_t count) {
  DeviceBuffer<T> buffer(count);
  buffer.fill_bytes(kPoisonByte);
  return buffer;
}

// A device copy of an input that remembers its pristine contents, so a test can check the
// student's code did not write into it.
template <class T>
class GuardedInput {
 public:
  explicit GuardedInput(std::vector<T> host) : host_(std::move(host)), device_(host_) {}
  const T* data() const noexcept { return device_.data(); }
  T* mutable_data() noexcept { return device_.data(); }
  const std::vector<T>& host() const noexcept { return host_; }
  std::size_t size() const noexcept { return host_.size(); }
  ::testing::AssertionResult unchanged(const std::string& name = "input") const {
    CompareOptions options;
    options.what = name + " (inputs must not be modified)";
    return as_assertion(compare_exact(host_, device_.download(), options));
  }

 private:
  std::vector<T> host_;
  DeviceBuffer<T> device_;
};

// Sizes that catch indexing bugs (after CUB's tests): 1, below, at and above a warp and a
// block, primes, and a value over a million that is not a multiple of anything convenient.
std::vector<std::size_t> adversarial_sizes();

}  // namespace course::testing
