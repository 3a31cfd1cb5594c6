// Both parts against course baselines measured in the same run, as effective bandwidth (bytes
// read + bytes written):
//  * the gather through the read-only path (readonly_gather) against the same gather with plain
//    loads (gather_plain), on 2^26 elements whose indices stay within 1024 of their position;
//  * the texture resample (texture_resample, the whole call: the copy into the array, the
//    texture, the kernel, the clean-up) against bilinear filtering by hand from global memory
//    (resample_manual), upscaling a 1920x1080 frame to 7680x4320.
// A float4 copy of the gather's size is reported for context. Every call's output is checked;
// texture_resample waits for its stream by its contract, so the check that holds the stream
// shut does not apply to it.
#include "readonly_texture.h"

#include <cstddef>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "readonly_texture_baseline.h"
#include "readonly_texture_reference.h"

namespace {

// Real gathers have locality (neighbouring mesh cells, a banded sparse matrix, sorted
// particles). With indices within +-1024 of their position, the 256 threads of a block read
// from about 2300 consecutive floats, some 72 cache lines, so each line serves several loads
// and the cache in front of the loads matters; indices spread over the whole 256 MiB would
// make every load a DRAM miss whatever path it takes.
constexpr int kGatherCount = 1 << 26;
constexpr int kGatherWindow = 2048;

void bench_gather(course::Benchmark& bench) {
  const int n = kGatherCount;
  const auto count = static_cast<std::size_t>(n);
  // Per element: the index, the gathered value, the output.
  const double bytes = 3.0 * 4.0 * static_cast<double>(n);
  course::DeviceBuffer<float> src(count), out(count);
  course::DeviceBuffer<int> indices(count);
  course::fill_hashed(src.data(), count, course::run_seed(), bench.stream());
  readonly_texture_fill_window_indices(indices.data(), n, kGatherWindow, course::run_seed() + 1,
                                       bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  // Kept and compared on the device, copied back for compare_exact's report only where they
  // differ: two host copies and comparisons of 256 MiB cost more than one upload.
  const course::DeviceBuffer<float> expected(
      readonly_gather_reference(src.download(), indices.download()));
  const course::CompareOptions options{{}, "out"};

  bench.copy_ceiling(count * sizeof(float), "copy");
  const course::TimedIo writes_out{{course::exact_output(out, "out")}};

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "gather_plain", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        readonly_texture_gather_plain(src.data(), indices.data(), out.data(), n, s);
      },
      writes_out);
  bench.check_on_device("gather_plain", expected, out, options);

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "readonly_gather", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { readonly_gather(src.data(), indices.data(), out.data(), n, s); },
      writes_out);
  bench.check_on_device("readonly_gather", expected, out, options);
}

// Upscaling (here by 4 in each direction) is where a texture pays for its set-up: the copy
// into the array costs one pass over the small image, the kernel writes an output 16 times
// larger, and every texel serves about 16 filtered samples from the texture cache.
constexpr int kImageWidth = 1920, kImageHeight = 1080;
constexpr int kOutWidth = 7680, kOutHeight = 4320;

void bench_resample(course::Benchmark& bench) {
  const auto image_count = static_cast<std::size_t>(kImageWidth) * kImageHeight;
  const auto out_count = static_cast<std::size_t>(kOutWidth) * kOutHeight;
  const double bytes = 4.0 * static_cast<double>(image_count + out_count);
  course::DeviceBuffer<float> image(image_count), out(out_count);
  // Texels in [0, 1): the range kResampleTolerance is stated for.
  course::fill_hashed(image.data(), image_count, course::run_seed() + 2, bench.stream(), 0.0f,
                      1.0f);
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto address = ResampleAddress::kClamp;
  const auto expected = texture_resample_reference(image.download(), kImageWidth, kImageHeight,
                                                   kOutWidth, kOutHeight, address);
  const course::CompareOptions options{
      {static_cast<std::size_t>(kOutHeight), static_cast<std::size_t>(kOutWidth)}, "out"};

  const course::TimedOutput resampled = course::close_output(out, kResampleTolerance, "out");
  // out's host copy for both checks: a fresh 127 MiB array each time costs more than the copy.
  std::vector<float> out_host(out_count);
  const auto download_out = [&]() -> const std::vector<float>& {
    out.download_into(out_host);
    return out_host;
  };
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "resample_manual", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        readonly_texture_resample_manual(image.data(), kImageWidth, kImageHeight, out.data(),
                                         kOutWidth, kOutHeight, address, s);
      },
      course::TimedIo{{resampled}});
  bench.check("resample_manual", course::compare_close(expected, download_out(),
                                                       kResampleTolerance, options));

  const bool waits_for_stream = true;  // it destroys its texture before returning
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "texture_resample", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        texture_resample(image.data(), kImageWidth, kImageHeight, out.data(), kOutWidth,
                         kOutHeight, address, s);
      },
      course::TimedIo{{resampled}, {}, waits_for_stream});
  bench.check("texture_resample", course::compare_close(expected, download_out(),
                                                        kResampleTolerance, options));
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  bench_gather(bench);
  bench_resample(bench);
}
