// The student's recursive quicksort against CUB's radix sort, both on the same 2^22 random
// ints (full 32-bit range) in the same run. Both rates count keys sorted per second, so their
// ratio is how many times slower the device-side recursion is than the library sort.
//
// Why 2^22 keys: 16 MiB, enough for CUB to run at a good fraction of its speed and for the
// quicksort to go through its whole life: a top partition of ~2000 blocks, then segments
// halving level after level (about 15 levels of partitions above the 4096-key leaves of the
// default params, and ~2000 leaf grids at the bottom). Far larger inputs take the quicksort
// longer without teaching more; much smaller ones are all launch latency.
//
// Thresholds (the manifest's), from the first H100 run (2026-11-23): CUB 0.165 ms, the
// solution 3.067 ms, a ratio of 0.05. The quicksort reads and writes every key once per level,
// at full width only near the top; below, its time goes to launches: one device-side launch
// per segment (a fire-and-forget launch from a device thread took 6-7 us on the H100, a level
// waiting on the one above it 11-12 us), thousands of small grids (a GPU runs at most 128
// grids at once, so tiny grids leave it mostly idle), and a chain of ~15 dependent levels.
// full_at = 0.03 leaves the solution's design (a grid of many blocks per large partition, one
// global atomicAdd per block and side, the last block launching both sides, leaves sorted in
// shared memory) room for run-to-run noise and for an H200, whose faster memory speeds CUB up
// but not the launches, so the ratio should drop there (H200 to be confirmed). zero_at =
// 0.005 (200 times slower than CUB) is where designs that waste the GPU end up: one block per
// partition, a launch per key, leaves sorted by one thread.
//
// Every call is checked: keys_out is poisoned before each call, and every other call has one
// key changed (TimedIo::vary), so a sort that remembers its last result is caught.
#include "recursive_quicksort.h"

#include <algorithm>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "recursive_quicksort_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = std::size_t{1} << 22;
  const QuicksortParams params;  // the header's defaults
  // Before any sort: it may resize the device runtime's launch pool.
  prepare_recursive_quicksort(n, params);

  course::DeviceBuffer<int> keys(n), out(n), scratch(quicksort_scratch_ints(n));
  course::fill_hashed(keys.data(), n, course::run_seed() ^ 0x5157u, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  auto expected = keys.download();
  std::sort(expected.begin(), expected.end());
  const double sorted_keys = static_cast<double>(n);

  const course::TimedIo sorts{
      {course::exact_output(out, "keys_out")},
      course::alternate_element(keys.data(), course::run_seed() % n,
                                [](int key) { return key ^ 1; })};

  course::DeviceBuffer<unsigned char> temp(cub_radix_sort_temp_bytes(n));
  bench.time(
      "cub_radix_sort", sorted_keys, course::Unit::Gelems,
      [&](cudaStream_t s) {
        cub_radix_sort(keys.data(), out.data(), n, temp.data(), temp.bytes(), s);
      },
      sorts);
  bench.check("cub_radix_sort", course::compare_exact(expected, out.download(),
                                                      {{}, "keys_out of CUB's radix sort"}));

  bench.time(
      "recursive_quicksort", sorted_keys, course::Unit::Gelems,
      [&](cudaStream_t s) {
        recursive_quicksort(keys.data(), out.data(), scratch.data(), n, params, s);
      },
      sorts);
  bench.check("recursive_quicksort",
              course::compare_exact(expected, out.download(),
                                    {{}, "keys_out of recursive_quicksort"}));
}
