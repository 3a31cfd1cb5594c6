// run_pipeline (16 chunks over 4 worker streams) against the course's sequential version
// (upload everything, transform everything, download everything, on one stream), on the same
// 2^26 floats in the same run.
//
// The workload is balanced in the run: the upload of all n floats is timed first, then the
// course's kernel at two trial iteration counts (its time is a fixed cost plus a cost per
// iteration), and `iterations` is chosen so that the kernel takes as long as the upload. With
// the download as long as the upload too (a symmetric link), the sequential version takes
// about 3 upload-times, and that is where overlap pays most.
//
// Expected ratio and thresholds (reasoned first, then measured on an H100: 2.23x to 2.40x in
// five runs on 2026-11-23, with three copy engines):
//   * ideal: with one engine per kind of work (upload copies, the SMs, download copies) and
//     16 equal chunks, the slowest stage sets the pace once the pipeline is full, and filling
//     and draining it costs one chunk of each of the other two: 1 + 2/16 upload-times, so
//     3 / 1.125 = 2.67;
//   * losses: uploads and downloads at the same time share the PCIe link's protocol overhead
//     and the host's memory (both directions together usually reach 1.6 to 1.9 times one
//     direction, not 2), consecutive chunks' kernels overlap only at their tails, and the
//     download need not be exactly as fast as the upload: the solution should reach 2.1 to
//     2.5 (it does);
//   * full marks at 1.8, below that range with room for a slower host link;
//   * zero at 1.2: no overlap at all (everything on one stream, on the legacy default stream,
//     or copies from pageable memory, which wait for their stream) scores about 1.0, and
//     overlapping the kernel with one copy direction only about 1.5.
//
// Every call is checked (TimedIo): dev_in and dev_out are poisoned before each call and
// compared with the first call's; the calls alternate between the input and the input with
// one element changed (copied into the page-locked host_in on the stream, so it is ordered
// with the calls); and before every call a few elements of host_out are poisoned the same
// way, so a pipeline that stops downloading after its first calls leaves poison that the
// comparison of host_out at the end finds. That comparison is exact, against the course's
// sequential output, which is itself checked against the CPU at sampled indices.
//
// The chapter README's timeline picture comes from scripts/instructor/pipeline_timeline.cu
// (the course's own pipeline with every stage timed: a worked answer, so not in the student
// template), on the same workload.
#include "overlap_pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "course/testing_common.h"
#include "overlap_pipeline_baseline.h"

namespace {

constexpr std::size_t kElements = std::size_t{1} << 26;  // 256 MiB each way
constexpr int kChunks = 16;
constexpr int kWorkers = 4;
constexpr int kShortTrial = 256;
constexpr int kLongTrial = 2048;
constexpr int kMaxIterations = 1 << 16;
constexpr int kPoisonedOutputs = 16;  // host_out elements poisoned before every call
constexpr int kCheckedSamples = 1024;

using HostArray = course::testing::Owned<float[], free_host>;

// TimedIo::vary for a pipeline on page-locked host arrays: version 0 is host_in as it is,
// version 1 changes host_in[n / 3] to a value whose transform differs; every call also
// poisons kPoisonedOutputs elements spread over host_out. All of it by one-element copies
// from device memory on the call's stream, so each is ordered after the previous call's join
// and before this call's fork, and is asynchronous into page-locked memory.
std::function<void(cudaStream_t, int)> host_versions(float* host_in, float* host_out,
                                                     std::size_t n, int iterations) {
  const std::size_t varied = n / 3;
  const float original = host_in[varied];
  float changed = -original;
  for (int attempt = 0; attempt < 64 && pipeline_transform(changed, iterations) ==
                                            pipeline_transform(original, iterations);
       ++attempt)
    changed = 0.5f * changed + 0.25f;  // stays in [-1, 1]
  const float poison = course::testing::poison_value<float>();
  auto sources =
      std::make_shared<course::DeviceBuffer<float>>(std::vector<float>{original, changed, poison});
  std::vector<std::size_t> poisoned;
  for (int k = 0; k < kPoisonedOutputs; ++k)
    poisoned.push_back(n / kPoisonedOutputs * static_cast<std::size_t>(k) + n / 37);
  return [sources, host_in, host_out, varied, poisoned](cudaStream_t stream, int call) {
    CUDA_CHECK(cudaMemcpyAsync(host_in + varied, sources->data() + call % 2, sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
    for (const std::size_t at : poisoned)
      CUDA_CHECK(cudaMemcpyAsync(host_out + at, sources->data() + 2, sizeof(float),
                                 cudaMemcpyDeviceToHost, stream));
  };
}

// host_out against the CPU at kCheckedSamples spread indices and both ends of every chunk.
course::Comparison sampled_check(const float* host_in, const float* host_out, std::size_t n,
                                 int iterations, const std::string& what) {
  std::vector<std::size_t> indices;
  for (int k = 0; k < kCheckedSamples; ++k)
    indices.push_back(n / kCheckedSamples * static_cast<std::size_t>(k) + k % 7);
  for (int c = 1; c <= kChunks; ++c) {
    const std::size_t boundary = n / kChunks * static_cast<std::size_t>(c);
    indices.push_back(boundary - 1);
    if (boundary < n) indices.push_back(boundary);
  }
  std::vector<float> expected, actual;
  for (const std::size_t i : indices) {
    expected.push_back(pipeline_transform(host_in[i], iterations));
    actual.push_back(host_out[i]);
  }
  return course::compare_exact(expected, actual, {{}, what + " at sampled indices"});
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = kElements;
  const std::size_t bytes = n * sizeof(float);
  course::DeviceBuffer<float> dev_in(n), dev_out(n);
  course::PinnedBuffer<float> course_in(n), course_out(n);
  course::fill_hashed(dev_in.data(), n, course::run_seed(), bench.stream(), -1.0f, 1.0f);
  CUDA_CHECK(cudaMemcpyAsync(course_in.data(), dev_in.data(), bytes, cudaMemcpyDeviceToHost,
                             bench.stream()));
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const course::TimedIo device_arrays{
      {course::exact_output(dev_in, "dev_in"), course::exact_output(dev_out, "dev_out")}};

  // The copies, one direction at a time, on the course's page-locked memory.
  const course::Measurement& upload = bench.time(
      "h2d", static_cast<double>(bytes), course::Unit::GBps,
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(dev_in.data(), course_in.data(), bytes,
                                   cudaMemcpyHostToDevice, s));
      },
      course::TimedIo{{course::exact_output(dev_in, "dev_in")}});
  bench.time("d2h", static_cast<double>(bytes), course::Unit::GBps, [&](cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(course_out.data(), dev_out.data(), bytes, cudaMemcpyDeviceToHost,
                               s));
  });
  if (!upload.valid) {
    bench.fail("the upload could not be timed, so the workload cannot be balanced: " +
               upload.problem);
    return;
  }

  // The kernel: time = fixed + per_iteration * iterations, from two trials.
  const auto kernel_ms = [&](const std::string& name, int iterations) {
    const course::Measurement& m = bench.time(
        name, 2.0 * static_cast<double>(n) * iterations, course::Unit::TFLOPs,
        [&](cudaStream_t s) {
          overlap_pipeline_course_transform(dev_in.data(), dev_out.data(), n, iterations, s);
        },
        course::TimedIo{{course::exact_output(dev_out, "dev_out")}});
    return m.valid ? m.median_ms : 0.0;
  };
  const double short_ms = kernel_ms("kernel_trial_short", kShortTrial);
  const double long_ms = kernel_ms("kernel_trial_long", kLongTrial);
  if (short_ms <= 0.0 || long_ms <= 0.0) {
    bench.fail("the course's kernel could not be timed, so the workload cannot be balanced");
    return;
  }
  double per_iteration_ms = (long_ms - short_ms) / (kLongTrial - kShortTrial);
  double fixed_ms = short_ms - per_iteration_ms * kShortTrial;
  if (per_iteration_ms <= 0.0) {  // noise swamped the difference: proportional instead
    per_iteration_ms = long_ms / kLongTrial;
    fixed_ms = 0.0;
  }
  const double wanted = (upload.median_ms - std::max(fixed_ms, 0.0)) / per_iteration_ms;
  const int iterations =
      static_cast<int>(std::clamp(std::lround(wanted), 1L, static_cast<long>(kMaxIterations)));
  const double balanced_ms = kernel_ms("kernel", iterations);
  std::printf("balance: upload %.3f ms, kernel %.3f ms at %d iterations (%.3f + %.6f per "
              "iteration in the trials)\n",
              upload.median_ms, balanced_ms, iterations, fixed_ms, per_iteration_ms);

  // The sequential version on the course's page-locked memory.
  {
    course::TimedIo io = device_arrays;
    io.vary = host_versions(course_in.data(), course_out.data(), n, iterations);
    bench.time(
        "sequential", static_cast<double>(n), course::Unit::Gelems,
        [&](cudaStream_t s) {
          overlap_pipeline_sequential(course_in.data(), course_out.data(), dev_in.data(),
                                      dev_out.data(), n, iterations, s);
        },
        io);
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check("sequential",
                sampled_check(course_in.data(), course_out.data(), n, iterations, "host_out"));
  }

  // The student's pipeline on the student's host memory, with the caller's worker streams.
  std::vector<std::unique_ptr<course::Stream>> owned_workers;
  std::vector<cudaStream_t> workers;
  for (int w = 0; w < kWorkers; ++w) {
    owned_workers.push_back(std::make_unique<course::Stream>(cudaStreamNonBlocking));
    workers.push_back(owned_workers.back()->get());
  }
  {
    HostArray host_in(alloc_host(n)), host_out(alloc_host(n));
    if (host_in == nullptr || host_out == nullptr) {
      bench.fail("alloc_host(" + std::to_string(n) + ") returned nullptr");
      return;
    }
    std::memcpy(host_in.get(), course_in.data(), bytes);
    std::memset(host_out.get(), course::kPoisonByte, bytes);
    course::TimedIo io = device_arrays;
    io.vary = host_versions(host_in.get(), host_out.get(), n, iterations);
    // No held call at this size: 48 copies and launches of 16 MiB chunks queued behind a
    // stream held shut fill the driver's queues, and enqueueing then blocks (the reference
    // solution was reported as waiting for the device on an H100). Work off the stream is
    // still caught: by the wall-time check here, and by the tests' held cases, which hold the
    // stream and each worker at test sizes.
    io.waits_for_stream = true;
    bench.time(
        "run_pipeline", static_cast<double>(n), course::Unit::Gelems,
        [&](cudaStream_t s) {
          run_pipeline(host_in.get(), host_out.get(), dev_in.data(), dev_out.data(), n,
                       iterations, kChunks, workers.data(), kWorkers, s);
        },
        io);
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check("run_pipeline",
                course::compare_exact(course_out.data(), host_out.get(), n,
                                      {{}, "host_out after run_pipeline (against the "
                                           "sequential version's)"}));
    bench.check("run_pipeline",
                course::compare_exact(course_in.data(), host_in.get(), n,
                                      {{}, "host_in after run_pipeline (must not be modified)"}));
  }
}
