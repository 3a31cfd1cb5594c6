// Effective bandwidth (bytes read + bytes written) of the student's constant-coefficient
// stencil against the float4 copy ceiling and against the course's identical tiled stencil that
// reads its coefficients from global memory, all measured in the same run.
#include "stencil_constant.h"

#include <cstdint>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "stencil_constant_baseline.h"
#include "stencil_constant_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;  // 256 MiB in and out: far beyond the L2
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(n);
  course::DeviceBuffer<float> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  course::fill_hashed(in.data(), static_cast<std::size_t>(n), course::run_seed(), bench.stream());
  // Nine coefficients from the run seed, past the input's indices so they differ from it.
  std::vector<float> coefficients(kStencilConstantTaps);
  for (int k = 0; k < kStencilConstantTaps; ++k)
    coefficients[k] = course::hashed_float(static_cast<std::uint64_t>(n) + k, course::run_seed());
  const course::DeviceBuffer<float> device_coefficients(coefficients);
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto expected = stencil_constant_reference(in.download(), 0, n, coefficients);
  const course::CompareOptions options{{}, "out"};
  const course::Tolerance tolerance{1e-5, 1e-5};

  bench.copy_ceiling(static_cast<std::size_t>(n) * sizeof(float), "copy");
  const course::TimedIo writes_out{{course::close_output(out, tolerance, "out")}};

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "stencil_global_coefficients", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        stencil_constant_global_coefficients(in.data(), out.data(), n,
                                             device_coefficients.data(), s);
      },
      writes_out);
  bench.check("stencil_global_coefficients",
              course::compare_close(expected, out.download(), tolerance, options));

  stencil_constant_set_coefficients(coefficients.data());
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "stencil_constant", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { stencil_constant(in.data(), out.data(), n, s); }, writes_out);
  bench.check("stencil_constant",
              course::compare_close(expected, out.download(), tolerance, options));
}
