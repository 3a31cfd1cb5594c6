// Instructor-only cases (grader/hidden.py): compiled in with -Dhidden_tests=true (grade
// --hidden), never copied into the student template. Their suite names start with "Hidden",
// so reports count them without naming them.
//
// Sizes and misalignments the public cases do not use: pointers 2 and 3 floats past an
// aligned address (a vectorised kernel assuming 16-byte alignment fails here even where it
// passed the 1-float shift), and sizes that are neither warp multiples nor public primes.
#include "vector_add.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"
#include "vector_add_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Shape {
  std::size_t n;
  int misalign;
};

class HiddenVectorAdd : public ::testing::TestWithParam<Shape> {};

TEST_P(HiddenVectorAdd, MatchesReference) {
  const auto [n, misalign] = GetParam();
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(n + misalign, -1000.f, 1000.f, rng);
  const auto b_host = course::random_floats(n + misalign, -1000.f, 1000.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  GuardedOutput<float> c(n, GuardedOutput<float>::kGuard + misalign);

  vector_add(a.data() + misalign, b.data() + misalign, c.data(), static_cast<int>(n), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> a_used(a_host.begin() + misalign, a_host.end());
  const std::vector<float> b_used(b_host.begin() + misalign, b_host.end());
  EXPECT_TRUE(course::testing::equal(vector_add_reference(a_used, b_used), c.download(),
                                     {{}, "c"}));
  EXPECT_TRUE(c.guards_intact("c"));
  EXPECT_TRUE(a.unchanged("a"));
  EXPECT_TRUE(b.unchanged("b"));
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return "n_" + std::to_string(info.param.n) + "_shift_" + std::to_string(info.param.misalign);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenVectorAdd,
                         ::testing::Values(Shape{2, 2}, Shape{12289, 3}, Shape{99991, 2},
                                           Shape{262147, 3}),
                         shape_name);

}  // namespace
