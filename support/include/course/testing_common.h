// Test helpers without GoogleTest, for the exercises' tests and benchmarks alike: what a
// never-written element holds, exact host sums, ownership of what an exercise's function
// allocated, the time between two recorded events. course/testing.h includes this header;
// a benchmark includes it alone. A chapter test uses these instead of a copy of its own
// (tests/test_test_helpers.py fails on a copy).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "course/check.h"
#include "course/compare.h"

namespace course::testing {

// What one element of an output the kernel never touched holds: every byte kPoisonByte
// (-1 for a signed integer, a NaN for a float).
template <class T>
T poison_value() {
  static_assert(std::is_trivially_copyable_v<T>, "poison_value needs a trivially copyable T");
  T value;
  std::memset(static_cast<void*>(&value), kPoisonByte, sizeof value);
  return value;
}

// What an output the kernel never touched holds: every byte kPoisonByte.
template <class T>
std::vector<T> poison_values(std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>, "poison_values needs a trivially copyable T");
  std::vector<T> values(count);
  std::memset(static_cast<void*>(values.data()), kPoisonByte, count * sizeof(T));
  return values;
}

// The sum of values[first, first + count) (to the end when count reaches past it), added in
// order in Sum: long long by default, so an int reduction's reference neither overflows nor
// depends on an order of additions.
template <class Sum = long long, class T>
Sum host_sum(const std::vector<T>& values, std::size_t first = 0,
             std::size_t count = static_cast<std::size_t>(-1)) {
  Sum sum = 0;
  if (first >= values.size()) return sum;
  const std::size_t last = count < values.size() - first ? first + count : values.size();
  for (std::size_t i = first; i < last; ++i) sum += values[i];
  return sum;
}

// `f` applied to every element of `in`, in order: the host reference of an elementwise kernel
// whose per-element function the exercise's header shares (urgent_response, task_chain).
template <class T, class F>
auto host_map(const std::vector<T>& in, F f) {
  std::vector<std::decay_t<decltype(f(std::declval<const T&>()))>> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = f(in[i]);
  return out;
}

// A std::unique_ptr deleter that hands the pointer to `Free`, the exercise's function that
// releases what another of its functions returned (free_pinned, free_host,
// destroy_stream_pool): the test owns the result and still frees it the student's way.
template <auto Free>
struct FreeWith {
  template <class P>
  void operator()(P* pointer) const {
    Free(pointer);
  }
};

// What an exercise's function returned, freed with `Free` when it goes out of scope:
// Owned<float[], free_pinned>, Owned<StreamPool, destroy_stream_pool>.
template <class T, auto Free>
using Owned = std::unique_ptr<T, FreeWith<Free>>;

// Milliseconds between two recorded events (cudaEventElapsedTime), for a measurement that
// needs events on more than one stream; course::GpuTimer times one stream.
inline float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  return ms;
}

}  // namespace course::testing
