// Throughput (values per second) of the student's cluster histogram against global atomics, the
// way to count a table too large for one block (65,536 bins, 256 KiB) without a cluster, on 2^26
// skewed (nine values in ten in one bin) and uniform values, measured in the same run. The
// student's histogram of a 32,768-bin table (128 KiB, which one block could still hold; a
// cluster of 4) is timed too, unscored, for calibration. Every call's bins are checked, and
// every other call has one value moved to the next bin, so bins remembered from an earlier call
// are caught.
#include "cluster_histogram.h"

#include <string>
#include <vector>

#include "cluster_histogram_baseline.h"
#include "cluster_histogram_reference.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

namespace {

// `values` is the host copy of the input, reused by every case: a fresh 256 MiB array each time
// costs more than the copy into it.
void run_case(course::Benchmark& bench, int num_bins, bool skewed, bool with_baseline,
              std::vector<unsigned>& values) {
  const std::size_t n = std::size_t{1} << 26;  // 256 MiB of values
  const std::string label =
      std::string(skewed ? "skewed_" : "uniform_") + std::to_string(num_bins);
  course::DeviceBuffer<unsigned> in(n), bins(static_cast<std::size_t>(num_bins));
  histogram_fill(in.data(), n, num_bins, skewed, static_cast<unsigned>(num_bins / 3),
                 course::run_seed() + static_cast<unsigned>(num_bins) + (skewed ? 1 : 0),
                 bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  in.download_into(values);
  const auto expected = reference_histogram(values, num_bins);
  const double elems = static_cast<double>(n);
  // num_bins is even, so flipping a value's lowest bit keeps it in range and moves it to the
  // neighbouring bin.
  const course::TimedIo counts_in{
      {course::exact_output(bins, "bins")},
      course::alternate_element(in.data(), course::run_seed() % n,
                                [](unsigned value) { return value ^ 1u; })};

  auto measure = [&](const std::string& name, auto&& run) {
    bins.fill_bytes(course::kPoisonByte);
    bench.time(name, elems, course::Unit::Gelems, run, counts_in);
    bench.check(name, course::compare_exact(expected, bins.download(), {{}, "bins of " + name}));
  };
  if (with_baseline) {
    measure("global_" + label, [&](cudaStream_t s) {
      histogram_global_atomics(in.data(), n, bins.data(), num_bins, s);
    });
  }
  measure("cluster_histogram_" + label, [&](cudaStream_t s) {
    cluster_histogram(in.data(), n, bins.data(), num_bins, s);
  });
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  std::vector<unsigned> values;
  run_case(bench, kClusterHistogramMaxBins, false, true, values);
  run_case(bench, kClusterHistogramMaxBins, true, true, values);
  run_case(bench, kClusterHistogramMaxBins / 2, false, false, values);
}
