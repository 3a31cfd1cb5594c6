#include "course/compare.h"

#include "course/parallel.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

namespace course {

template <class T>
bool is_poison(const T& value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  for (unsigned char b : bytes)
    if (b != kPoisonByte) return false;
  return true;
}

namespace {

constexpr std::size_t kComparedPerThread = 1 << 20;

template <class T>
std::string show(const T& value) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) {
    out.precision(std::is_same_v<T, float> ? 9 : 17);
    out << value;
  } else if constexpr (sizeof(T) == 1) {
    out << static_cast<int>(value);
  } else {
    out << value;
  }
  return out.str();
}

std::string coordinates(std::size_t index, const std::vector<std::size_t>& shape) {
  if (shape.size() < 2) return "";
  std::vector<std::size_t> coords(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  std::string text = " (";
  for (std::size_t d = 0; d < coords.size(); ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(coords[d]);
  }
  return text + ")";
}

// Where either side is NaN: a match only when both are, and an output still holding the
// poison pattern (itself a NaN) matches only an expected poison, never a NaN the reference
// computed, so an element the kernel never wrote cannot pass for a NaN result.
template <class T>
bool nan_matches(const T& expected, const T& actual) {
  if (!std::isnan(expected) || !std::isnan(actual)) return false;
  return !is_poison(actual) || is_poison(expected);
}

// The cores share the elements; each range keeps its count and its first few mismatches,
// joined in index order, so the report is the one a single pass would give.
template <class T, class Equal>
Comparison compare_with(const T* expected, const T* actual, std::size_t n,
                        const CompareOptions& options, Equal equal) {
  struct Part {
    std::size_t mismatches = 0;
    std::vector<Mismatch> first;
  };
  std::vector<Part> parts(chunk_count(n, kComparedPerThread));
  parallel_chunks(n, kComparedPerThread, [&](std::size_t chunk, std::size_t begin,
                                             std::size_t end) {
    Part& part = parts[chunk];
    for (std::size_t i = begin; i < end; ++i) {
      if (equal(expected[i], actual[i])) continue;
      if (part.mismatches++ < options.max_report)
        part.first.push_back({i, show(expected[i]), show(actual[i]), is_poison(actual[i])});
    }
  });
  Comparison result;
  result.checked = n;
  result.shape = options.shape;
  result.what = options.what;
  for (Part& part : parts) {
    result.mismatches += part.mismatches;
    for (Mismatch& m : part.first)
      if (result.first.size() < options.max_report) result.first.push_back(std::move(m));
  }
  result.ok = result.mismatches == 0;
  return result;
}

}  // namespace

std::string Comparison::summary() const {
  if (ok) return what + ": all " + std::to_string(checked) + " elements match";
  std::ostringstream out;
  out << what << ": " << mismatches << " of " << checked << " elements differ";
  if (!first.empty()) out << " (first at index " << first.front().index << ")";
  out << ":";
  for (const auto& m : first) {
    out << "\n  [" << m.index << "]" << coordinates(m.index, shape) << " expected " << m.expected
        << ", got " << m.actual;
    if (m.unwritten) out << "  <- never written (still holds the poison pattern)";
  }
  if (mismatches > first.size()) out << "\n  ... and " << (mismatches - first.size()) << " more";
  return out.str();
}

Comparison size_mismatch(std::size_t expected, std::size_t actual, const CompareOptions& options) {
  Comparison c;
  c.ok = false;
  c.what = options.what;
  c.mismatches = 1;
  c.first.push_back({0, "size " + std::to_string(expected), "size " + std::to_string(actual),
                     false});
  return c;
}

template <class T>
Comparison compare_exact(const T* expected, const T* actual, std::size_t n,
                         const CompareOptions& options) {
  return compare_with(expected, actual, n, options, [](const T& e, const T& a) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(e) || std::isnan(a)) return nan_matches(e, a);
    }
    return e == a;
  });
}

template <class T>
Comparison compare_close(const T* expected, const T* actual, std::size_t n, Tolerance tolerance,
                         const CompareOptions& options) {
  static_assert(std::is_floating_point_v<T>, "compare_close is for floating-point outputs");
  return compare_with(expected, actual, n, options, [tolerance](const T& e, const T& a) {
    if (std::isnan(e) || std::isnan(a)) return nan_matches(e, a);
    if (std::isinf(e) || std::isinf(a)) return e == a;
    const double diff = std::fabs(static_cast<double>(a) - static_cast<double>(e));
    return diff <= tolerance.abs + tolerance.rel * std::fabs(static_cast<double>(e));
  });
}

#define COURSE_INSTANTIATE_EXACT(T)                                                       \
  template Comparison compare_exact<T>(const T*, const T*, std::size_t, const CompareOptions&); \
  template bool is_poison<T>(const T&);
COURSE_INSTANTIATE_EXACT(float)
COURSE_INSTANTIATE_EXACT(double)
COURSE_INSTANTIATE_EXACT(int)
COURSE_INSTANTIATE_EXACT(unsigned)
COURSE_INSTANTIATE_EXACT(long long)
COURSE_INSTANTIATE_EXACT(unsigned long long)
COURSE_INSTANTIATE_EXACT(long)
COURSE_INSTANTIATE_EXACT(unsigned long)
COURSE_INSTANTIATE_EXACT(unsigned char)
COURSE_INSTANTIATE_EXACT(signed char)
COURSE_INSTANTIATE_EXACT(short)
COURSE_INSTANTIATE_EXACT(unsigned short)
#undef COURSE_INSTANTIATE_EXACT

template Comparison compare_close<float>(const float*, const float*, std::size_t, Tolerance,
                                         const CompareOptions&);
template Comparison compare_close<double>(const double*, const double*, std::size_t, Tolerance,
                                          const CompareOptions&);

}  // namespace course
