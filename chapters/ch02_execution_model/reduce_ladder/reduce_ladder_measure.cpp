// ReduceLadderInput (reduce_ladder_measure.h).
#include "reduce_ladder_measure.h"

#include "course/device_random.h"
#include "course/random.h"
#include "reduce_ladder.h"

namespace {

std::uint64_t input_seed() {
  auto rng = course::make_rng("reduce_ladder_bench");
  return rng();
}

}  // namespace

ReduceLadderInput::ReduceLadderInput(course::Benchmark& bench)
    : bench_(bench),
      bytes_(static_cast<double>(sizeof(int)) * kCount),
      seed_(input_seed()),
      in_(kCount),
      out_(1) {
  course::fill_hashed(in_.data(), kCount, seed_, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  expected_ = {course::hashed_int_sum(kCount, seed_)};
  // Flipping the lowest bit of one element moves the sum by one.
  sums_in_ = course::TimedIo{
      {course::exact_output(out_, "sum")},
      course::alternate_element(in_.data(), static_cast<std::size_t>(seed_ % kCount),
                                [](int value) { return value ^ 1; })};
}

void ReduceLadderInput::time_rung(const std::string& label, Launcher launch, int block_size,
                                  const std::string& shared_key) {
  course::DeviceBuffer<long long> partial(reduce_partial_capacity(kCount, block_size));
  out_.fill_bytes(course::kPoisonByte);
  const auto run = [&](cudaStream_t s) {
    launch(in_.data(), kCount, block_size, partial.data(), out_.data(), s);
  };
  if (shared_key.empty())
    bench_.time(label, bytes_, course::Unit::GBps, run, sums_in_);
  else
    bench_.shared(shared_key, label, bytes_, course::Unit::GBps, run, sums_in_);
  bench_.check(label, course::compare_exact(expected_, out_.download(), {{}, "sum"}));
}

void ReduceLadderInput::time_course_baselines() {
  const std::string shape = ":" + std::to_string(kCount);
  {
    const std::size_t temp_bytes = cub_reduce_sum_temp_bytes(kCount);
    course::DeviceBuffer<unsigned char> temp(temp_bytes);
    out_.fill_bytes(course::kPoisonByte);
    bench_.shared(
        "reduce_ladder/cub_reduce_sum" + shape, "cub_reduce_sum", bytes_, course::Unit::GBps,
        [&](cudaStream_t s) {
          cub_reduce_sum(in_.data(), kCount, out_.data(), temp.data(), temp_bytes, s);
        },
        sums_in_);
    bench_.check("cub_reduce_sum",
                 course::compare_exact(expected_, out_.download(), {{}, "CUB sum"}));
  }
  time_rung("course_v1_neighbored", course_reduce_v1_neighbored, 512,
            "reduce_ladder/course_v1_neighbored_b512" + shape);
  time_rung("course_v5_unroll8_b1024", course_reduce_v5_unroll8, 1024,
            "reduce_ladder/course_v5_unroll8_b1024" + shape);
  time_rung("course_v6_unroll_last_warp_b1024", course_reduce_v6_unroll_last_warp, 1024,
            "reduce_ladder/course_v6_unroll_last_warp_b1024" + shape);
}
