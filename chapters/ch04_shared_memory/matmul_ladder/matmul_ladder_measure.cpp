// MatmulLadderInput (matmul_ladder_measure.h).
#include "matmul_ladder_measure.h"

#include <string>

#include "course/device_random.h"
#include "course/random.h"
#include "matmul_ladder.h"

namespace {
constexpr std::size_t kACount = static_cast<std::size_t>(MatmulLadderInput::kM) * MatmulLadderInput::kK;
constexpr std::size_t kBCount = static_cast<std::size_t>(MatmulLadderInput::kK) * MatmulLadderInput::kN;
constexpr std::size_t kCCount = static_cast<std::size_t>(MatmulLadderInput::kM) * MatmulLadderInput::kN;
}  // namespace

MatmulLadderInput::MatmulLadderInput(course::Benchmark& bench) : a(kACount), b(kBCount) {
  course::fill_hashed(a.data(), kACount, course::run_seed(), bench.stream());
  course::fill_hashed(b.data(), kBCount, course::run_seed() ^ 0x5bd1e995ull, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  one_element_changed = course::alternate_element(
      a.data(), course::run_seed() % kACount, [](float value) { return value + 1.0f; });
}

std::vector<float> MatmulLadderInput::time_cublas(course::Benchmark& bench) {
  course::DeviceBuffer<float> reference(kCCount);
  matmul_ladder_device_reference(a.data(), b.data(), reference.data(), kM, kN, kK,
                                 bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  std::vector<float> product = reference.download();

  const bool here = bench.times_shared_here();
  course::DeviceBuffer<float> c(here ? kCCount : 0);
  if (here) c.fill_bytes(course::kPoisonByte);
  const std::string shape = std::to_string(kM) + "x" + std::to_string(kN) + "x" + std::to_string(kK);
  bench.shared(
      "matmul_ladder/cublas_sgemm:" + shape, "cublas_sgemm", kFlops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { matmul_ladder_cublas(a.data(), b.data(), c.data(), kM, kN, kK, s); },
      here ? course::TimedIo{{course::close_output(c, tolerance, "C")}, one_element_changed}
           : course::TimedIo{});
  if (here)
    bench.check("cublas_sgemm",
                course::compare_close(product, c.download(), tolerance,
                                      {{static_cast<std::size_t>(kM), static_cast<std::size_t>(kN)},
                                       "cuBLAS C against the course's reference"}));

  const auto a_host = a.download();
  const auto b_host = b.download();
  auto rng = course::make_rng("matmul_ladder_bench_samples");
  std::vector<float> want, got;
  for (int s = 0; s < 256; ++s) {
    const int i = static_cast<int>(rng() % kM), j = static_cast<int>(rng() % kN);
    want.push_back(static_cast<float>(matmul_ladder_reference_at(a_host, b_host, kN, kK, i, j)));
    got.push_back(product[static_cast<std::size_t>(i) * kN + j]);
  }
  const course::Comparison sampled = course::compare_close(
      want, got, tolerance, {{}, "the course's reference C at sampled positions"});
  bench.require("course_reference", sampled.ok, sampled.ok ? "" : sampled.summary());
  return product;
}
