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
#include "vector_add_check.h"

namespace {

struct Shape {
  std::size_t n;
  int misalign;
};

class HiddenVectorAdd : public ::testing::TestWithParam<Shape> {};

TEST_P(HiddenVectorAdd, MatchesReference) {
  check_vector_add(GetParam().n, GetParam().misalign, 1000.f);
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return "n_" + std::to_string(info.param.n) + "_shift_" + std::to_string(info.param.misalign);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenVectorAdd,
                         ::testing::Values(Shape{2, 2}, Shape{12289, 3}, Shape{99991, 2},
                                           Shape{262147, 3}),
                         shape_name);

}  // namespace
