// Benchmark shared by every rung of the matrix-product ladder: FP32 throughput of the rung on a
// 4096^3 product against cuBLAS SGEMM (FP32 arithmetic, no TF32) on the same inputs in the same
// run. The rung's output is compared with cuBLAS's in full, and cuBLAS's with a double-precision
// CPU value at sampled positions. A copy of C is far cheaper than the product, so every call's
// C is checked, with one element of A changed in every other call: a C remembered from an
// earlier call is caught. Compiled once per rung with COURSE_EXERCISE (the rung's
// launcher), COURSE_EXERCISE_NAME (its measurement name, a string literal) and
// COURSE_EXERCISE_HEADER defined by the build.
#include <cmath>
#include <cstdio>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "matmul_ladder.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_NAME) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE, COURSE_EXERCISE_NAME and COURSE_EXERCISE_HEADER"
#endif
#include COURSE_EXERCISE_HEADER

void course::run_benchmark(course::Benchmark& bench) {
  const int M = 4096, N = 4096, K = 4096;
  const double flops = 2.0 * M * N * static_cast<double>(K);
  const std::size_t a_n = static_cast<std::size_t>(M) * K;
  const std::size_t b_n = static_cast<std::size_t>(K) * N;
  const std::size_t c_n = static_cast<std::size_t>(M) * N;
  course::DeviceBuffer<float> a(a_n), b(b_n), c_cublas(c_n), c(c_n);
  course::fill_hashed(a.data(), a_n, course::run_seed(), bench.stream());  // [-1, 1)
  course::fill_hashed(b.data(), b_n, course::run_seed() ^ 0x5bd1e995ull, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const course::Tolerance tolerance{1e-4, 1e-2};
  // Adding 1 to one element of A changes a row of C.
  const auto one_element_changed = course::alternate_element(
      a.data(), course::run_seed() % a_n, [](float value) { return value + 1.0f; });

  c_cublas.fill_bytes(course::kPoisonByte);
  bench.time(
      "cublas_sgemm", flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) {
        matmul_ladder_cublas(a.data(), b.data(), c_cublas.data(), M, N, K, s);
      },
      course::TimedIo{{course::close_output(c_cublas, tolerance, "C")}, one_element_changed});
  const auto expected = c_cublas.download();
  {
    const auto a_host = a.download();
    const auto b_host = b.download();
    auto rng = course::make_rng(COURSE_EXERCISE_NAME "_bench_samples");
    std::vector<float> want, got;
    for (int s = 0; s < 256; ++s) {
      const int i = static_cast<int>(rng() % M), j = static_cast<int>(rng() % N);
      want.push_back(static_cast<float>(matmul_ladder_reference_at(a_host, b_host, N, K, i, j)));
      got.push_back(expected[static_cast<std::size_t>(i) * N + j]);
    }
    bench.check("cublas_sgemm", course::compare_close(want, got, tolerance,
                                                      {{}, "cuBLAS C at sampled positions"}));
  }

  c.fill_bytes(course::kPoisonByte);
  bench.time(
      COURSE_EXERCISE_NAME, flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { COURSE_EXERCISE(a.data(), b.data(), c.data(), M, N, K, s); },
      course::TimedIo{{course::close_output(c, tolerance, "C")}, one_element_changed});
  bench.check(COURSE_EXERCISE_NAME,
              course::compare_close(expected, c.download(), tolerance,
                                    {{static_cast<std::size_t>(M),
                                      static_cast<std::size_t>(N)}, "C"}));
}
