// The timeline picture of chapter 06's README: the course's own copy-compute-copy job on 2^26
// floats, once on one stream (upload everything, transform everything, download everything)
// and once as a pipeline of 16 chunks over 4 streams, with a timing event before and after
// every stage. Prints one line per stage,
//   timeline <variant> <stream> <stage> <chunk> <start_ms> <end_ms>
// which scripts/draw_timeline.py turns into an SVG of both variants on one time axis.
//
// It is a worked pipeline, so it lives in an instructor folder, which the student template
// leaves out. The workload is balanced the way overlap_pipeline's benchmark balances it: the
// kernel (the course's own, from the exercise's baseline) runs the iteration count that makes
// it take as long as the upload.
//
// Build and draw, on a machine with a GPU, from the repository root:
//   nvcc -std=c++17 -O2 -arch=native -Isupport/include -Ichapters/ch06_streams/overlap_pipeline \
//        scripts/instructor/pipeline_timeline.cu \
//        chapters/ch06_streams/overlap_pipeline/overlap_pipeline_baseline.cu \
//        support/src/check.cpp support/src/device.cpp -o build/pipeline_timeline
//   build/pipeline_timeline | python3 scripts/draw_timeline.py -o docs/ch06_streams/pipeline_timeline.svg
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "course/buffers.h"
#include "course/check.h"
#include "course/device.h"
#include "overlap_pipeline.h"
#include "overlap_pipeline_baseline.h"

namespace {

constexpr std::size_t kElements = std::size_t{1} << 26;
constexpr int kChunks = 16;
constexpr int kWorkers = 4;

// The median of `repeats` event-timed runs of work(stream).
template <class Work>
double median_ms(cudaStream_t stream, int repeats, Work work) {
  std::vector<double> times;
  course::Event start, stop;
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    work();
    stop.record(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// One stage of one chunk, in ms from its variant's first event.
struct PipelineStageTime {
  std::string variant;  // "sequential" or "pipelined"
  int stream;           // the worker's index; 0 for the sequential variant's one stream
  std::string stage;    // "h2d", "kernel" or "d2h"
  int chunk;
  double start_ms;
  double end_ms;
};

// First element of chunk c when n elements are cut into `chunks` chunks whose sizes differ by
// at most one (written without n * c, which could overflow).
std::size_t chunk_begin(std::size_t n, int chunks, int c) {
  const std::size_t size = n / static_cast<std::size_t>(chunks);
  const std::size_t extra = n % static_cast<std::size_t>(chunks);
  return size * static_cast<std::size_t>(c) + std::min(static_cast<std::size_t>(c), extra);
}

// One stage between its two timing events.
struct TimedStage {
  TimedStage(int stream_index, const char* stage_name, int chunk_index)
      : stream(stream_index), stage(stage_name), chunk(chunk_index) {}
  int stream;
  const char* stage;
  int chunk;
  course::Event start;
  course::Event stop;
};

// Enqueues work() on `s` between a new stage's two events. A deque, because events neither
// copy nor move.
template <class Work>
void timed_stage(std::deque<TimedStage>& stages, int stream_index, const char* stage,
                 int chunk, cudaStream_t s, Work work) {
  TimedStage& timed = stages.emplace_back(stream_index, stage, chunk);
  timed.start.record(s);
  work();
  timed.stop.record(s);
}

// The three stages of one chunk on `s`.
void timed_chunk(std::deque<TimedStage>& stages, int stream_index, int chunk,
                 const float* host_in, float* host_out, float* dev_in, float* dev_out,
                 std::size_t count, int iterations, cudaStream_t s) {
  const std::size_t bytes = count * sizeof(float);
  timed_stage(stages, stream_index, "h2d", chunk, s, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dev_in, host_in, bytes, cudaMemcpyHostToDevice, s));
  });
  timed_stage(stages, stream_index, "kernel", chunk, s,
              [&] { overlap_pipeline_course_transform(dev_in, dev_out, count, iterations, s); });
  timed_stage(stages, stream_index, "d2h", chunk, s, [&] {
    CUDA_CHECK(cudaMemcpyAsync(host_out, dev_out, bytes, cudaMemcpyDeviceToHost, s));
  });
}

// The stages' times from `origin`, once everything has finished. An event before a stage
// completes when its stream reaches the stage, which may be before the engine that runs it
// (the upload copy engine, the SMs, the download copy engine) is free: while another
// stream's stage of the same kind still runs, the stage waits. So a stage is drawn from the
// later of the two, taking the engines to run one stage of a kind at a time in the order the
// streams reached them, which is what the chunk order is.
void append_times(std::vector<PipelineStageTime>& out, const char* variant,
                  const course::Event& origin, const std::deque<TimedStage>& stages) {
  const auto since_origin = [&](const course::Event& event) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, origin, event));
    return static_cast<double>(ms);
  };
  for (const char* kind : {"h2d", "kernel", "d2h"}) {
    double engine_free_ms = 0.0;
    for (const TimedStage& timed : stages) {
      if (std::string(timed.stage) != kind) continue;
      const double end_ms = since_origin(timed.stop);
      const double start_ms = std::min(std::max(since_origin(timed.start), engine_free_ms), end_ms);
      engine_free_ms = std::max(engine_free_ms, end_ms);
      out.push_back({variant, timed.stream, timed.stage, timed.chunk, start_ms, end_ms});
    }
  }
  // Back to chunk order within the variant (stable: a chunk's stages keep h2d, kernel, d2h).
  const auto first = out.end() - static_cast<std::ptrdiff_t>(stages.size());
  std::stable_sort(first, out.end(), [](const PipelineStageTime& a, const PipelineStageTime& b) {
    return a.chunk < b.chunk;
  });
}

}  // namespace

int main() {
  const std::size_t n = kElements;
  const std::size_t bytes = n * sizeof(float);
  course::PinnedBuffer<float> host_in(n), host_out(n);
  for (std::size_t i = 0; i < n; ++i)  // any values in [-1, 1]; the picture is about time
    host_in.data()[i] = static_cast<float>(static_cast<double>(i % 2001) / 1000.0 - 1.0);
  course::DeviceBuffer<float> dev_in(n), dev_out(n);
  course::Stream stream;
  std::vector<course::Stream> owned(kWorkers);
  std::vector<cudaStream_t> workers;
  for (const course::Stream& s : owned) workers.push_back(s.get());

  // Balance: iterations such that the kernel takes as long as the upload.
  const double upload_ms = median_ms(stream, 5, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dev_in.data(), host_in.data(), bytes, cudaMemcpyHostToDevice,
                               stream));
  });
  const auto kernel_ms = [&](int iterations) {
    return median_ms(stream, 5, [&] {
      overlap_pipeline_course_transform(dev_in.data(), dev_out.data(), n, iterations, stream);
    });
  };
  const double short_ms = kernel_ms(256), long_ms = kernel_ms(2048);
  const double per_iteration = std::max((long_ms - short_ms) / (2048 - 256), 1e-9);
  const double fixed = std::max(short_ms - per_iteration * 256, 0.0);
  const int iterations =
      static_cast<int>(std::clamp(std::lround((upload_ms - fixed) / per_iteration), 1L, 65536L));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d copy engines; upload %.3f ms; kernel at %d iterations %.3f ms\n",
              prop.name, prop.asyncEngineCount, upload_ms, iterations, kernel_ms(iterations));

  std::vector<PipelineStageTime> times;
  {
    course::Event origin;
    std::deque<TimedStage> stages;
    origin.record(stream);
    timed_chunk(stages, 0, 0, host_in.data(), host_out.data(), dev_in.data(), dev_out.data(), n,
                iterations, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    append_times(times, "sequential", origin, stages);
  }
  {
    // The origin is also the fork: no worker starts before it.
    course::Event origin;
    std::deque<TimedStage> stages;
    origin.record(stream);
    for (cudaStream_t w : workers) CUDA_CHECK(cudaStreamWaitEvent(w, origin, 0));
    for (int c = 0; c < kChunks; ++c) {
      const std::size_t first = chunk_begin(n, kChunks, c);
      const std::size_t count = chunk_begin(n, kChunks, c + 1) - first;
      const int w = c % kWorkers;
      timed_chunk(stages, w, c, host_in.data() + first, host_out.data() + first,
                  dev_in.data() + first, dev_out.data() + first, count, iterations, workers[w]);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    append_times(times, "pipelined", origin, stages);
  }
  for (const PipelineStageTime& t : times)
    std::printf("timeline %s %d %s %d %.4f %.4f\n", t.variant.c_str(), t.stream, t.stage.c_str(),
                t.chunk, t.start_ms, t.end_ms);
  return 0;
}
