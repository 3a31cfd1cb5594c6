// compact_if_greater against the course's shared_atomic_compact (the same two passes, with a
// shared-memory atomic per kept element and a per-element prefix sum in shared memory) on the
// same 2^26 ints, about half of them kept, both measured in the same run. Every other call
// has one element moved across the threshold, so its output and count change: an answer
// remembered from an earlier call is caught.
#include "warp_vote.h"

#include <cstdint>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/compare.h"
#include "course/device_random.h"
#include "course/parallel.h"
#include "course/random.h"
#include "warp_vote_baseline.h"

namespace {

constexpr int kThreshold = 0;  // hashed ints cover the whole int range: about half are > 0

using Compact = void (*)(const int*, int, int, int*, int*, int*, cudaStream_t);

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;
  auto rng = course::make_rng("warp_vote_bench");
  course::DeviceBuffer<int> in(n), out(n), count(1), scratch(compact_scratch_ints(n));
  const std::uint64_t seed = rng();
  course::fill_hashed(in.data(), n, seed, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));

  // The kept elements in order. The cores share the input (2^26 ints): each range counts its
  // kept elements, then copies them from where the ranges before it end.
  std::vector<int> expected;
  {
    const std::vector<int> values = in.download();
    constexpr std::size_t kPerThread = 1 << 20;
    std::vector<std::size_t> kept(course::chunk_count(values.size(), kPerThread) + 1, 0);
    course::parallel_chunks(values.size(), kPerThread, [&](std::size_t chunk, std::size_t begin,
                                                           std::size_t end) {
      std::size_t k = 0;
      for (std::size_t i = begin; i < end; ++i)
        if (values[i] > kThreshold) ++k;
      kept[chunk + 1] = k;
    });
    for (std::size_t c = 1; c < kept.size(); ++c) kept[c] += kept[c - 1];
    expected.resize(kept.back());
    course::parallel_chunks(values.size(), kPerThread, [&](std::size_t chunk, std::size_t begin,
                                                           std::size_t end) {
      std::size_t k = kept[chunk];
      for (std::size_t i = begin; i < end; ++i)
        if (values[i] > kThreshold) expected[k++] = values[i];
    });
  }
  // Both checks' host copy of out: only its first expected.size() elements are compared.
  std::vector<int> actual(expected.size());
  const course::TimedIo io{
      {course::exact_output(out, "out"), course::exact_output(count, "count")},
      course::alternate_element(in.data(), static_cast<std::size_t>(seed % n), [](int v) {
        return v > kThreshold ? kThreshold : kThreshold + 1;
      })};

  auto measure = [&](const std::string& name, Compact compact) {
    out.fill_bytes(course::kPoisonByte);
    bench.time(
        name, n, course::Unit::Gelems,
        [&](cudaStream_t s) {
          compact(in.data(), n, kThreshold, out.data(), count.data(), scratch.data(), s);
        },
        io);
    // The last calls ran on the original input: *count first, then the kept elements.
    const int k = count.download()[0];
    const int want = static_cast<int>(expected.size());
    course::Comparison result =
        course::compare_exact(&want, &k, 1, {{}, "count of " + name});
    if (result.ok) {
      CUDA_CHECK(cudaMemcpy(actual.data(), out.data(), actual.size() * sizeof(int),
                            cudaMemcpyDeviceToHost));
      result = course::compare_exact(expected.data(), actual.data(), expected.size(),
                                     {{}, "out of " + name});
    }
    bench.check(name, result);
  };
  measure("shared_atomic_compact", shared_atomic_compact);
  measure("compact_if_greater", compact_if_greater);
}
