// Host->device->host bandwidth of the student's round trip against the course's pinned and
// pageable round trips, all on the same 64 MiB and in the same run. Rates count the bytes
// moved in both directions.
//
// Every call's upload into `dev` is checked (the host buffers the copies end in are not: the
// harness checks device memory). Copies to or from pageable memory, and staged_upload by its
// contract, wait for their stream, so the check that holds the stream shut does not apply to
// them.
#include "pinned_transfers.h"

#include <cstring>
#include <memory>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "course/testing_common.h"

namespace {
// The pageable copies are shown beside the graded ones, not graded: a fraction of a second
// each is enough to tell them apart, where the default budget spent two seconds on them.
constexpr double kNotesBudgetS = 0.3;
}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = std::size_t{1} << 24;  // 64 MiB: copies this long run at the link's full rate
  const double bytes = 2.0 * sizeof(float) * n;
  auto rng = course::make_rng("pinned_transfers_bench");
  const auto values = course::random_floats(n, -1.f, 1.f, rng);
  course::DeviceBuffer<float> dev(n);
  const course::TimedIo uploads{{course::exact_output(dev, "dev")}};
  const bool waits_for_stream = true;
  const course::TimedIo uploads_and_waits{{course::exact_output(dev, "dev")}, {}, waits_for_stream};

  // The ceiling: the course's own pinned buffers and cudaMemcpyAsync both ways.
  {
    course::PinnedBuffer<float> src(n), dst(n);
    std::memcpy(src.data(), values.data(), n * sizeof(float));
    bench.time(
        "pinned_ceiling", bytes, course::Unit::GBps,
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dev.data(), src.data(), n * sizeof(float),
                                     cudaMemcpyHostToDevice, s));
          CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev.data(), n * sizeof(float),
                                     cudaMemcpyDeviceToHost, s));
        },
        uploads);
  }
  // Pageable for comparison (not graded): the driver copies through its own pinned buffer.
  {
    std::vector<float> dst(n);
    bench.time(
        "pageable_round_trip", bytes, course::Unit::GBps,
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dev.data(), values.data(), n * sizeof(float),
                                     cudaMemcpyHostToDevice, s));
          CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev.data(), n * sizeof(float),
                                     cudaMemcpyDeviceToHost, s));
        },
        uploads_and_waits, kNotesBudgetS);
  }
  // The student's.
  {
    using Pinned = course::testing::Owned<float[], free_pinned>;
    Pinned src(alloc_pinned(n)), dst(alloc_pinned(n));
    if (!src || !dst) {
      bench.fail("alloc_pinned returned nullptr");
      return;
    }
    std::memcpy(src.get(), values.data(), n * sizeof(float));
    std::memset(dst.get(), course::kPoisonByte, n * sizeof(float));
    bench.time(
        "round_trip", bytes, course::Unit::GBps,
        [&](cudaStream_t s) { round_trip(src.get(), dev.data(), dst.get(), n, s); }, uploads);
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check("round_trip", course::compare_exact(values.data(), dst.get(), n,
                                                    {{}, "dst after round_trip"}));

    // Staged upload from pageable memory, host->device only (not graded: it shows what a
    // pinned staging buffer buys over handing pageable memory to cudaMemcpy).
    course::PinnedBuffer<float> staging(std::size_t{1} << 22);  // 16 MiB
    dev.fill_bytes(course::kPoisonByte);
    bench.time(
        "staged_upload", sizeof(float) * static_cast<double>(n), course::Unit::GBps,
        [&](cudaStream_t s) {
          staged_upload(values.data(), dev.data(), n, staging.data(), staging.size(), s);
        },
        uploads_and_waits, kNotesBudgetS);
    bench.check("staged_upload", course::compare_exact(values, dev.download(), {{}, "dev"}));
    bench.time(
        "pageable_upload", sizeof(float) * static_cast<double>(n), course::Unit::GBps,
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dev.data(), values.data(), n * sizeof(float),
                                     cudaMemcpyHostToDevice, s));
        },
        uploads_and_waits, kNotesBudgetS);
  }
}
