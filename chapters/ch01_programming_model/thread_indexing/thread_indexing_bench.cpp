// No performance criteria: times one 3D launch over a large extent and reports the rate at
// which it writes its two outputs, so a student can see what a trivial kernel costs.
#include "thread_indexing.h"

#include <cstddef>

#include "course/bench.h"
#include "course/buffers.h"

void course::run_benchmark(course::Benchmark& bench) {
  const dim3 grid(64, 64, 16);
  const dim3 block(32, 4, 2);
  const std::size_t count = std::size_t{grid.x} * grid.y * grid.z * block.x * block.y * block.z;
  course::DeviceBuffer<int> block_rank(count), thread_rank(count);
  const double bytes_written = 2.0 * sizeof(int) * static_cast<double>(count);
  bench.time(
      "record_thread_ranks_3d", bytes_written, course::Unit::GBps,
      [&](cudaStream_t s) {
        record_thread_ranks_3d(grid, block, block_rank.data(), thread_rank.data(), s);
      },
      course::TimedIo{{course::exact_output(block_rank, "block_rank"),
                       course::exact_output(thread_rank, "thread_rank")}});
  // The last thread of the last block writes the last element of each output.
  int last_block = -1, last_thread = -1;
  CUDA_CHECK(cudaMemcpy(&last_block, block_rank.data() + count - 1, sizeof(int),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&last_thread, thread_rank.data() + count - 1, sizeof(int),
                        cudaMemcpyDeviceToHost));
  const int blocks = static_cast<int>(grid.x * grid.y * grid.z);
  const int threads = static_cast<int>(block.x * block.y * block.z);
  bench.require("last_element", last_block == blocks - 1 && last_thread == threads - 1,
                "the last element must hold the last block's rank and the last thread's rank");
}
