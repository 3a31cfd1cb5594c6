// mirror_sum on 8100 x 8192 floats (rows of 32400 bytes, padded by the pitch), rated on the
// useful bytes: two floats read and one written per element.
#include "pitched_2d.h"

#include <vector>

#include "course/bench.h"
#include "course/check.h"
#include "course/parallel.h"
#include "course/random.h"
#include "pitched_2d_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int w = 8100;
  const int h = 8192;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  auto rng = course::make_rng("pitched_2d_bench");
  // A 1 Mi-float seeded draw tiled over the image keeps the host generation quick.
  const auto tile = course::random_floats(std::size_t{1} << 20, -1.f, 1.f, rng);
  std::vector<float> values(n);
  // The cores share the 66 million elements.
  course::parallel_chunks(n, 1 << 18, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) values[i] = tile[(i * 2654435761u) % tile.size()];
  });

  Pitched in = pitched_alloc(w, h);
  Pitched out = pitched_alloc(w, h);
  struct Release {
    Pitched p;
    ~Release() {
      if (p.ptr != nullptr) pitched_free(p);
    }
  } release_in{in}, release_out{out};
  if (in.ptr == nullptr || out.ptr == nullptr) {
    bench.fail("pitched_alloc returned nullptr");
    return;
  }
  pitched_upload(in, values.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  bench.copy_ceiling(n * sizeof(float));
  // Every row of out with its padding, which stays poisoned in every call.
  const std::size_t out_bytes = out.pitch_bytes * static_cast<std::size_t>(h);
  bench.time(
      "mirror_sum", 3.0 * sizeof(float) * n, course::Unit::GBps,
      [&](cudaStream_t s) { mirror_sum(in, out, s); },
      course::TimedIo{{course::exact_output(out.ptr, out_bytes, "out")}});
  std::vector<float> got(n);
  pitched_download(got.data(), out, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  bench.check("mirror_sum", course::compare_exact(mirror_sum_reference(values, w, h), got,
                                                  {{static_cast<std::size_t>(h),
                                                    static_cast<std::size_t>(w)},
                                                   "out"}));
}
