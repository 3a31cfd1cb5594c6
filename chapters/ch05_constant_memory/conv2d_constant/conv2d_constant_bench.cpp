// The student's constant-mask filter against the course's identical filter reading its mask
// from global memory, on an 8192 x 8192 image for a 5x5 (radius 2) and a 15x15 (radius 7) mask,
// all measured in the same run. Rates are effective bandwidth (image read + image written); a
// float4 copy of the image is reported for context (radius 2 is close to memory-bound, radius 7
// is bound by the loads and multiply-adds inside the SM). Every call's output is checked, and
// every other call has one pixel changed, so an output remembered from an earlier call (far
// cheaper than the radius-7 filter) is caught.
#include "conv2d_constant.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "conv2d_constant_baseline.h"
#include "conv2d_constant_reference.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/parallel.h"
#include "course/random.h"

namespace {

constexpr int kWidth = 8192, kHeight = 8192;  // 256 MiB per image: far beyond the L2

// Rows the CPU recomputes to check the course's kernel: both borders, their neighbours, and
// rows inside. Every column of them is checked, so the left and right borders are covered.
const int kCheckedRows[] = {0, 1, 2, 7, 8, 4095, 4100, kHeight - 3, kHeight - 2, kHeight - 1};

// The course kernel's output compared with the double-precision reference on kCheckedRows.
course::Comparison compare_checked_rows(const std::vector<float>& in,
                                        const std::vector<float>& out,
                                        const std::vector<float>& mask, int radius) {
  const std::size_t count = std::size(kCheckedRows) * kWidth;
  std::vector<float> expected(count), actual(count);
  // The cores share the pixels (81920 of them, up to 225 terms each).
  course::parallel_chunks(count, 1 << 12, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const int y = kCheckedRows[i / kWidth];
      const int x = static_cast<int>(i % kWidth);
      expected[i] = static_cast<float>(
          conv2d_constant_reference_at(in, kWidth, kHeight, mask, radius, x, y));
      actual[i] = out[static_cast<std::size_t>(y) * kWidth + x];
    }
  });
  const course::CompareOptions options{{std::size(kCheckedRows), kWidth}, "out (checked rows)"};
  return course::compare_close(expected, actual, conv2d_constant_tolerance(radius), options);
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t pixels = static_cast<std::size_t>(kWidth) * kHeight;
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(pixels);
  course::DeviceBuffer<float> in(pixels), out(pixels);
  course::fill_hashed(in.data(), pixels, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto in_host = in.download();
  // Adding 1 to one pixel changes the output around it (the mask's weights are not zero).
  const auto one_pixel_changed = course::alternate_element(
      in.data(), course::run_seed() % pixels, [](float value) { return value + 1.0f; });

  bench.copy_ceiling(pixels * sizeof(float), "copy");
  // Host copies of out for every check: a fresh 256 MiB array each time costs more than the
  // copy into it.
  std::vector<float> expected(pixels), actual(pixels);

  for (const int radius : {2, 7}) {
    const std::string suffix = "_r" + std::to_string(radius);
    // Weights from the run seed, past the image's indices so they differ from its pixels.
    const int side = 2 * radius + 1;
    std::vector<float> mask(static_cast<std::size_t>(side) * side);
    for (std::size_t k = 0; k < mask.size(); ++k)
      mask[k] = course::hashed_float(pixels + 1000 * radius + k, course::run_seed());
    const course::DeviceBuffer<float> device_mask(mask);
    const course::TimedIo writes_out{
        {course::close_output(out, conv2d_constant_tolerance(radius), "out")},
        one_pixel_changed};

    out.fill_bytes(course::kPoisonByte);
    bench.time(
        "conv2d_global_mask" + suffix, bytes, course::Unit::GBps,
        [&](cudaStream_t s) {
          conv2d_constant_global_mask(in.data(), out.data(), kWidth, kHeight, device_mask.data(),
                                      radius, s);
        },
        writes_out);
    // The course kernel, checked on the CPU row by row, is the reference for the whole of the
    // student's timed output.
    out.download_into(expected);
    bench.check("conv2d_global_mask" + suffix,
                compare_checked_rows(in_host, expected, mask, radius));

    conv2d_constant_set_mask(mask.data(), radius);
    out.fill_bytes(course::kPoisonByte);
    bench.time(
        "conv2d_constant" + suffix, bytes, course::Unit::GBps,
        [&](cudaStream_t s) {
          conv2d_constant(in.data(), out.data(), kWidth, kHeight, radius, s);
        },
        writes_out);
    out.download_into(actual);
    bench.check("conv2d_constant" + suffix,
                course::compare_close(expected, actual,
                                      conv2d_constant_tolerance(radius),
                                      {{kHeight, kWidth}, "out (height x width)"}));
  }
}
