// Throughput (values per second) of the student's histogram against global atomics and CUB's
// DeviceHistogram::HistogramEven, on uniform and skewed data, all measured in the same run.
// Every call's bins are checked, and every other call has one value moved to the next bin, so
// bins remembered from an earlier call are caught.
#include "histogram.h"

#include <string>
#include <utility>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/parallel.h"
#include "course/random.h"
#include "histogram_baseline.h"

namespace {

// The cores share the values (2^26 of them), each range counting into its own bins; the
// counts are then added, exactly, in range order.
std::vector<unsigned> host_histogram(const std::vector<unsigned>& values, int num_bins) {
  constexpr std::size_t kPerThread = 1 << 20;
  std::vector<std::vector<unsigned>> parts(course::chunk_count(values.size(), kPerThread));
  course::parallel_chunks(values.size(), kPerThread, [&](std::size_t chunk, std::size_t begin,
                                                         std::size_t end) {
    std::vector<unsigned> bins(num_bins, 0u);
    for (std::size_t i = begin; i < end; ++i) ++bins[values[i]];
    parts[chunk] = std::move(bins);
  });
  std::vector<unsigned> bins(num_bins, 0u);
  for (const std::vector<unsigned>& part : parts)
    for (int b = 0; b < num_bins; ++b) bins[b] += part[b];
  return bins;
}

// `values` is the host copy of the input, reused by every case: a fresh 256 MiB array each time
// costs more than the copy into it.
void run_case(course::Benchmark& bench, const std::string& label, int num_bins, bool skewed,
              bool with_cub, std::vector<unsigned>& values) {
  const std::size_t n = std::size_t{1} << 26;  // 256 MiB of values
  course::DeviceBuffer<unsigned> in(n), bins(num_bins);
  histogram_fill(in.data(), n, num_bins, skewed, static_cast<unsigned>(num_bins / 3),
                 course::run_seed() + num_bins + (skewed ? 1 : 0), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  in.download_into(values);
  const auto expected = host_histogram(values, num_bins);
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
  if (with_cub) {
    course::DeviceBuffer<unsigned char> temp(histogram_cub_temp_bytes(n, num_bins));
    measure("cub_" + label, [&](cudaStream_t s) {
      histogram_cub(in.data(), n, bins.data(), num_bins, temp.data(), temp.bytes(), s);
    });
  }
  measure("global_" + label, [&](cudaStream_t s) {
    histogram_global_atomics(in.data(), n, bins.data(), num_bins, s);
  });
  measure("histogram_" + label, [&](cudaStream_t s) {
    histogram(in.data(), n, bins.data(), num_bins, s);
  });
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  std::vector<unsigned> values;
  run_case(bench, "uniform_256", 256, false, true, values);
  run_case(bench, "skewed_256", 256, true, true, values);
  run_case(bench, "uniform_4096", 4096, false, false, values);
}
