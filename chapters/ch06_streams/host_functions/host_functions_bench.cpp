// Not graded on speed (the manifest has no [[performance]] entry): what matters is that the
// host step sits in the stream without blocking the caller, which the tests check with a held
// stream; the harness's held call and wall-time check below would also flag a launcher that
// waits. Reports the whole job's throughput (pixels per second), for the curious.
#include "host_functions.h"

#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "host_functions_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = std::size_t{1} << 24;
  auto rng = course::make_rng("host_functions_bench");
  const auto levels = course::random_ints(n, 30, 200, rng);
  const std::vector<unsigned char> image(levels.begin(), levels.end());
  course::DeviceBuffer<unsigned char> pixels(image);
  course::DeviceBuffer<float> intensities(n);
  course::DeviceBuffer<unsigned int> block_histograms(
      static_cast<std::size_t>(kHistogramBlocks) * kLevels);
  course::PinnedBuffer<unsigned int> host_block_histograms(
      static_cast<std::size_t>(kHistogramBlocks) * kLevels);
  course::PinnedBuffer<float> host_lut(kLevels);
  course::DeviceBuffer<float> lut(kLevels);
  const EqualiseScratch scratch{block_histograms.data(), host_block_histograms.data(),
                                host_lut.data(), lut.data()};

  bench.time(
      "equalise", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) { equalise(pixels.data(), intensities.data(), n, scratch, s); },
      course::TimedIo{{course::exact_output(intensities, "intensities")}});
  bench.check("equalise", course::compare_exact(equalise_reference(image),
                                                intensities.download(), {{}, "intensities"}));
}
