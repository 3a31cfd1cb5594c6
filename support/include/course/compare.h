// Output comparison with messages a student can act on: how many elements differ, and the
// first few with index (and coordinates, given a shape), expected and actual value. An
// element that still holds the poison pattern is called out as never written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace course {

struct Mismatch {
  std::size_t index;
  std::string expected;
  std::string actual;
  bool unwritten;  // actual still holds the poison pattern
};

struct Comparison {
  bool ok = true;
  std::size_t checked = 0;
  std::size_t mismatches = 0;
  std::vector<Mismatch> first;      // at most max_report entries
  std::vector<std::size_t> shape;   // optional, outermost first, to print coordinates
  std::string what = "output";      // name of the compared array in messages
  std::string summary() const;
};

struct CompareOptions {
  std::vector<std::size_t> shape;  // e.g. {ny, nx}
  std::string what = "output";
  std::size_t max_report = 5;
};

struct Tolerance {
  double rel = 1e-5;
  double abs = 1e-6;
};

template <class T>
Comparison compare_exact(const T* expected, const T* actual, std::size_t n,
                         const CompareOptions& options = {});

// |actual - expected| <= abs + rel * |expected|. NaN or Inf where the reference has a finite
// value, a finite value where it has NaN or Inf, and an Inf of the other sign are mismatches.
// NaN matches NaN, except that an element still holding the poison pattern matches only an
// expected poison (compare_exact follows the same NaN rule; otherwise it is bit-for-bit ==).
template <class T>
Comparison compare_close(const T* expected, const T* actual, std::size_t n, Tolerance tolerance,
                         const CompareOptions& options = {});

// The failed comparison of two arrays of different lengths.
Comparison size_mismatch(std::size_t expected, std::size_t actual, const CompareOptions& options);

template <class T>
Comparison compare_exact(const std::vector<T>& expected, const std::vector<T>& actual,
                         const CompareOptions& options = {}) {
  if (expected.size() != actual.size())
    return size_mismatch(expected.size(), actual.size(), options);
  return compare_exact(expected.data(), actual.data(), expected.size(), options);
}

template <class T>
Comparison compare_close(const std::vector<T>& expected, const std::vector<T>& actual,
                         Tolerance tolerance, const CompareOptions& options = {}) {
  if (expected.size() != actual.size())
    return size_mismatch(expected.size(), actual.size(), options);
  return compare_close(expected.data(), actual.data(), expected.size(), tolerance, options);
}

// Every output buffer is filled with this byte before the student's code runs: 0xFF makes
// floats NaN and signed integers -1, values a correct kernel never leaves behind by accident.
inline constexpr unsigned char kPoisonByte = 0xFF;

template <class T>
bool is_poison(const T& value);

}  // namespace course
