// Bandwidth of offset_copy for offsets 0..32 and of strided_copy for strides 1..32, like the
// Best Practices Guide's figures. Rates count only the useful bytes (n floats read, n
// written), so wasted sector traffic shows up as lower bandwidth. Each point is its own
// measurement (offset_copy_offset_NN, strided_copy_stride_NN); the same table is printed as
// CSV and written next to the --json file as <json stem>_coalescing.csv.
#include "coalescing.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/parallel.h"
#include "course/random.h"

namespace {

std::string two_digits(int v) {
  char text[16];
  std::snprintf(text, sizeof text, "%02d", v);
  return text;
}

// Spot check of a copy: a few thousand random positions of the pattern plus its ends, all
// below `reach`. Only out's first `reach` elements are copied back, into a buffer every check
// reuses: six fresh downloads of all 256 MiB took about a second.
course::Comparison spot_check(const std::vector<float>& in,
                              const course::DeviceBuffer<float>& out, std::size_t reach,
                              std::vector<float>& out_host,
                              const std::vector<std::size_t>& positions, const char* what) {
  CUDA_CHECK(cudaMemcpy(out_host.data(), out.data(), reach * sizeof(float),
                        cudaMemcpyDeviceToHost));
  std::vector<float> expected, actual;
  for (std::size_t j : positions) {
    expected.push_back(in[j]);
    actual.push_back(out_host[j]);
  }
  return course::compare_exact(expected, actual, {{}, what});
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const int n_offset = 1 << 24;  // 64 MiB copied per offset
  const int n_stride = 1 << 21;  // 8 MiB copied per stride, spread over up to 256 MiB
  const int max_offset = 32;
  const int max_stride = 32;
  const std::size_t span = static_cast<std::size_t>(n_stride) * max_stride;

  // Inputs come from a seeded host draw of a modest size, tiled over the big array.
  auto rng = course::make_rng("coalescing_bench");
  const auto tile = course::random_floats(std::size_t{1} << 20, -1.f, 1.f, rng);
  std::vector<float> in_host(span);
  // The cores share the 2^26 elements.
  course::parallel_chunks(span, 1 << 18, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) in_host[i] = tile[(i * 2654435761u) % tile.size()];
  });
  course::DeviceBuffer<float> in(in_host), out(span);
  std::vector<float> out_host(span);

  bench.copy_ceiling(static_cast<std::size_t>(n_offset) * sizeof(float));

  std::ostringstream csv;
  csv << "pattern,value,GBps\n";
  std::vector<std::size_t> positions;
  for (int offset = 0; offset <= max_offset; ++offset) {
    const std::string name = "offset_copy_offset_" + two_digits(offset);
    out.fill_bytes(course::kPoisonByte);
    // Exactly what the copy writes: out[offset, offset + n).
    const course::TimedIo writes{{course::exact_output(
        out.data() + offset, static_cast<std::size_t>(n_offset) * sizeof(float), "out")}};
    auto& m = bench.time(
        name, 2.0 * sizeof(float) * n_offset, course::Unit::GBps,
        [&](cudaStream_t s) { offset_copy(in.data(), out.data(), n_offset, offset, s); },
        writes);
    if (offset == 0 || offset == 1 || offset == max_offset) {
      positions = {static_cast<std::size_t>(offset),
                   static_cast<std::size_t>(offset) + n_offset - 1};
      for (int k = 0; k < 4096; ++k)
        positions.push_back(offset + (static_cast<std::size_t>(k) * 40503u) % n_offset);
      const std::size_t reach = static_cast<std::size_t>(offset) + n_offset;
      bench.check(name, spot_check(in_host, out, reach, out_host, positions, "out"));
    }
    csv << "offset," << offset << ',' << m.rate << '\n';
  }
  for (int stride = 1; stride <= max_stride; ++stride) {
    const std::string name = "strided_copy_stride_" + two_digits(stride);
    out.fill_bytes(course::kPoisonByte);
    // From out[0] to out[(n - 1) * stride]: the elements between stay poisoned in every call.
    const std::size_t reach = static_cast<std::size_t>(n_stride - 1) * stride + 1;
    const course::TimedIo writes{
        {course::exact_output(out.data(), reach * sizeof(float), "out")}};
    auto& m = bench.time(
        name, 2.0 * sizeof(float) * n_stride, course::Unit::GBps,
        [&](cudaStream_t s) { strided_copy(in.data(), out.data(), n_stride, stride, s); },
        writes);
    if (stride == 1 || stride == 2 || stride == max_stride) {
      positions = {0, static_cast<std::size_t>(n_stride - 1) * stride};
      for (int k = 0; k < 4096; ++k)
        positions.push_back((static_cast<std::size_t>(k) * 40503u) % n_stride * stride);
      bench.check(name, spot_check(in_host, out, reach, out_host, positions, "out"));
    }
    csv << "stride," << stride << ',' << m.rate << '\n';
  }

  std::printf("\n# coalescing: effective bandwidth (useful bytes read + written)\n%s\n",
              csv.str().c_str());
  const std::string json = bench.options().json_path;
  if (!json.empty()) {
    const auto dot = json.rfind(".json");
    const std::string path = (dot == std::string::npos ? json : json.substr(0, dot)) +
                             "_coalescing.csv";
    std::ofstream(path) << csv.str();
    std::printf("CSV written to %s\n", path.c_str());
  }
}
