// The check every vector_add case makes, shared by the public tests (vector_add_test.cpp) and
// the instructor's hidden ones: random inputs in [-range, range) starting `misalign` floats past
// an aligned address, the output as far from alignment inside poisoned guards, then the result
// against the CPU reference, the guards and the untouched inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "course/testing.h"
#include "vector_add.h"
#include "vector_add_reference.h"

inline void check_vector_add(std::size_t n, int misalign, float range) {
  using course::testing::GuardedInput;
  using course::testing::GuardedOutput;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(n + misalign, -range, range, rng);
  const auto b_host = course::random_floats(n + misalign, -range, range, rng);
  GuardedInput<float> a(a_host), b(b_host);
  // misalign more floats of front guard put c as far from an aligned address as a and b.
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
