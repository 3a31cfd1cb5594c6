#include "concurrent_kernels.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

using Pool = course::testing::Owned<StreamPool, destroy_stream_pool>;

Pool make_pool(int count) {
  return course::testing::owned_result<Pool>(create_stream_pool(count), false,
                                             "create_stream_pool(" + std::to_string(count) + ")");
}

std::vector<float> reference(const std::vector<float>& in, int iterations) {
  return course::testing::host_map(in, [=](float x) { return task_chain(x, iterations); });
}

// Every task's input and output in buffers of their own, the outputs between poisoned guards,
// and the host arrays of device pointers run_tasks takes.
struct Tasks {
  Tasks(int tasks, std::size_t n_each, std::mt19937_64& rng) {
    for (int t = 0; t < tasks; ++t) {
      host_inputs.push_back(course::random_floats(n_each, -1.f, 1.f, rng));
      inputs.push_back(std::make_unique<GuardedInput<float>>(host_inputs.back()));
      outputs.push_back(std::make_unique<GuardedOutput<float>>(n_each));
      input_pointers.push_back(inputs.back()->data());
      output_pointers.push_back(outputs.back()->data());
    }
  }

  // Outputs against the CPU reference, their guards, and the inputs left as they were.
  void expect_results(int iterations, const std::string& when) const {
    for (std::size_t t = 0; t < outputs.size(); ++t) {
      const std::string name = "outputs[" + std::to_string(t) + "]" + when;
      EXPECT_TRUE(course::testing::equal(reference(host_inputs[t], iterations),
                                         outputs[t]->download(), {{}, name}));
      EXPECT_TRUE(outputs[t]->guards_intact(name));
      EXPECT_TRUE(inputs[t]->unchanged("inputs[" + std::to_string(t) + "]"));
    }
  }

  std::vector<std::vector<float>> host_inputs;
  std::vector<std::unique_ptr<GuardedInput<float>>> inputs;
  std::vector<std::unique_ptr<GuardedOutput<float>>> outputs;
  std::vector<const float*> input_pointers;
  std::vector<float*> output_pointers;
};

// `count` tasks of `n_each` floats, a pool of `streams` streams, and the run_tasks call on
// them: what the edge cases below start from.
struct TaskRun {
  TaskRun(int count, std::size_t n_each, int iterations, int streams)
      : count(count), n_each(n_each), iterations(iterations), rng(course::testing::case_rng()),
        tasks(count, n_each, rng), pool(make_pool(streams)) {}

  void operator()(cudaStream_t stream) const {
    run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), n_each,
              count, iterations, stream);
  }

  const int count;
  const std::size_t n_each;
  const int iterations;
  std::mt19937_64 rng;
  Tasks tasks;
  Pool pool;
};

struct Shape {
  int pool;
  int tasks;
  std::size_t n_each;
  int iterations;
};

class ConcurrentKernels : public ::testing::TestWithParam<Shape> {};

TEST_P(ConcurrentKernels, MatchesReference) {
  const Shape shape = GetParam();
  auto rng = course::testing::case_rng();
  Tasks tasks(shape.tasks, shape.n_each, rng);
  Pool pool = make_pool(shape.pool);
  ASSERT_NE(pool, nullptr);
  course::Stream stream;
  run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), shape.n_each,
            shape.tasks, shape.iterations, stream);
  // Only the given stream: the join must have made it wait for every task.
  stream.synchronize();
  tasks.expect_results(shape.iterations, "");
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  const Shape& s = info.param;
  return "pool_" + std::to_string(s.pool) + "_tasks_" + std::to_string(s.tasks) + "_n_" +
         std::to_string(s.n_each) + "_steps_" + std::to_string(s.iterations);
}

// Tasks that do not divide among the streams, fewer tasks than streams, one stream, one task,
// odd and one-element tasks, tasks larger than one block, and zero steps (output = 2 * input).
INSTANTIATE_TEST_SUITE_P(Small, ConcurrentKernels,
                         ::testing::Values(Shape{4, 10, 1, 17}, Shape{4, 10, 7, 17},
                                           Shape{8, 32, 129, 50}, Shape{8, 3, 255, 20},
                                           Shape{1, 5, 33, 9}, Shape{5, 1, 1000, 30},
                                           Shape{3, 7, 4097, 5}, Shape{2, 4, 128, 0},
                                           Shape{6, 6, 1025, 100}),
                         shape_name);
INSTANTIATE_TEST_SUITE_P(Large, ConcurrentKernels,
                         ::testing::Values(Shape{8, 32, 100003, 3}, Shape{4, 9, 1000003, 2}),
                         shape_name);

TEST(ConcurrentKernelsPool, StreamsAreNonBlockingAndDistinct) {
  for (const int count : {1, 4, 8}) {
    Pool pool = make_pool(count);
    ASSERT_NE(pool, nullptr);
    std::set<cudaStream_t> seen;
    for (int i = 0; i < count; ++i) {
      const cudaStream_t stream = pool_stream(pool.get(), i);
      const std::string which =
          "pool_stream(pool, " + std::to_string(i) + ") of a pool of " + std::to_string(count);
      ASSERT_TRUE(stream != nullptr && stream != cudaStreamLegacy &&
                  stream != cudaStreamPerThread)
          << which << " is a default stream; create the pool's streams with "
          << "cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)";
      unsigned int flags = 0;
      CUDA_CHECK(cudaStreamGetFlags(stream, &flags));
      EXPECT_TRUE(flags & cudaStreamNonBlocking)
          << which << " is a blocking stream: it waits for every launch on the legacy default "
          << "stream. Create it with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking).";
      EXPECT_TRUE(seen.insert(stream).second)
          << which << " is the same stream as an earlier one: tasks on it would run one after "
          << "another";
    }
  }
}

TEST(ConcurrentKernelsPool, TwoPoolsHaveTheirOwnStreams) {
  // A pool handing out streams it keeps in static storage would serialise two callers.
  Pool first = make_pool(3), second = make_pool(3);
  ASSERT_TRUE(first != nullptr && second != nullptr);
  std::set<cudaStream_t> seen;
  for (const StreamPool* pool : {first.get(), second.get()})
    for (int i = 0; i < 3; ++i) seen.insert(pool_stream(pool, i));
  EXPECT_EQ(seen.size(), 6u) << "two pools of 3 streams share streams";
}

TEST(ConcurrentKernelsEdge, NothingToDoWritesNothing) {
  // tasks == 0 and n_each == 0 enqueue nothing and touch nothing; the same buffers then take
  // a real call, so doing nothing at all does not pass.
  const int count = 3;
  const std::size_t n_each = 65;
  auto rng = course::testing::case_rng();
  Tasks tasks(count, n_each, rng);
  Pool pool = make_pool(2);
  ASSERT_NE(pool, nullptr);
  run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), n_each, 0, 5,
            nullptr);
  run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), 0, count, 5,
            nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < count; ++t) {
    const std::string name = "outputs[" + std::to_string(t) + "] after tasks = 0 and n_each = 0";
    EXPECT_TRUE(course::testing::equal(course::testing::poison_values<float>(n_each),
                                       tasks.outputs[t]->download(), {{}, name}));
    EXPECT_TRUE(tasks.outputs[t]->guards_intact(name));
  }
  run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), n_each, count,
            5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  tasks.expect_results(5, " after a real call");
}

TEST(ConcurrentKernelsEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while run_tasks returns: a task that does not wait
  // for the fork event (or runs on the default stream) writes its output meanwhile, and
  // waiting on the host is reported. Only the held stream is synchronised afterwards, so a
  // missing join can leave outputs unfinished.
  const TaskRun run(9, 1000, 300, 4);
  ASSERT_NE(run.pool, nullptr);
  std::vector<course::testing::Watched> watched;
  for (int t = 0; t < run.count; ++t)
    watched.push_back({run.tasks.output_pointers[t], run.n_each * sizeof(float),
                       "outputs[" + std::to_string(t) + "]"});
  ASSERT_TRUE(course::testing::keeps_to_stream([&](cudaStream_t s) { run(s); }, watched));
  run.tasks.expect_results(run.iterations, "");
}

// "Each task is one launch of its own small kernel": one kernel that runs every task in a block
// of its own would look concurrent without using the pool at all. The call is recorded into a
// graph instead of run (the pool's streams join the recording through the fork event), and the
// graph's kernels counted; replaying the graph must then give every task's result.
TEST(ConcurrentKernelsEdge, EachTaskIsALaunchOfItsOwn) {
  const TaskRun run(6, 1000, 7, 4);
  ASSERT_NE(run.pool, nullptr);
  // One ordinary call first, so that one-time set-up (loading the kernel) happens outside the
  // recording.
  run(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  // Poisoned again, so that only the replay below can write the results.
  for (float* output : run.tasks.output_pointers)
    course::testing::fill_device_bytes(output, course::kPoisonByte, run.n_each * sizeof(float));
  CUDA_CHECK(cudaDeviceSynchronize());
  course::Stream stream;
  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) { run(s); });
  ASSERT_TRUE(recorded.problem().empty()) << "run_tasks: " << recorded.problem();
  ASSERT_EQ(recorded.kernels(), run.count)
      << "run_tasks(" << run.count << " tasks) enqueued " << recorded.census()
      << "; each task must be one launch of its own kernel, on a stream of the pool";
  recorded.replay(stream);
  stream.synchronize();
  run.tasks.expect_results(run.iterations, " after replaying the recorded call");
}

TEST(ConcurrentKernelsEdge, JoinsBeforeLaterWorkOnTheStream) {
  // Tasks long enough (about 2^17 FMA latencies each) to be still running when a copy
  // enqueued on the stream right after run_tasks would start without a join: each copy must
  // see its task's finished output.
  const int count = 16;
  const std::size_t n_each = 256;
  const int iterations = 1 << 17;
  auto rng = course::testing::case_rng();
  Tasks tasks(count, n_each, rng);
  std::vector<course::DeviceBuffer<float>> seen;
  for (int t = 0; t < count; ++t) {
    seen.emplace_back(n_each);
    seen.back().fill_bytes(course::kPoisonByte);
  }
  Pool pool = make_pool(4);
  ASSERT_NE(pool, nullptr);
  course::Stream stream;
  run_tasks(pool.get(), tasks.input_pointers.data(), tasks.output_pointers.data(), n_each, count,
            iterations, stream);
  for (int t = 0; t < count; ++t)
    CUDA_CHECK(cudaMemcpyAsync(seen[t].data(), tasks.output_pointers[t], n_each * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < count; ++t) {
    const auto out = tasks.outputs[t]->download();
    // The first and last elements against the CPU (the whole task would take it seconds).
    const std::vector<float> ends = {out.front(), out.back()};
    const auto expected = reference({tasks.host_inputs[t].front(), tasks.host_inputs[t].back()},
                                    iterations);
    EXPECT_TRUE(course::testing::equal(
        expected, ends, {{}, "first and last of outputs[" + std::to_string(t) + "]"}));
    EXPECT_TRUE(course::testing::equal(
        out, seen[t].download(),
        {{},
         "outputs[" + std::to_string(t) + "] as a copy enqueued on the stream right after "
         "run_tasks saw it (it ran before the task finished: join the pool's streams back "
         "into the stream with events)"}));
  }
}

TEST(ConcurrentKernelsEdge, CallsAgainWithNewInputs) {
  // Same pool, same buffers, new contents: a launcher that remembers its last answer by
  // pointer or by size returns the first call's outputs the second time.
  const int count = 5;
  const std::size_t n_each = 10007;
  const int iterations = 20;
  auto rng = course::testing::case_rng();
  std::vector<course::DeviceBuffer<float>> inputs, outputs;
  std::vector<const float*> input_pointers;
  std::vector<float*> output_pointers;
  for (int t = 0; t < count; ++t) {
    inputs.emplace_back(n_each);
    outputs.emplace_back(n_each);
  }
  for (int t = 0; t < count; ++t) {
    input_pointers.push_back(inputs[t].data());
    output_pointers.push_back(outputs[t].data());
  }
  Pool pool = make_pool(3);
  ASSERT_NE(pool, nullptr);
  for (const std::string call : {"first call", "second call"}) {
    std::vector<std::vector<float>> host_inputs;
    for (int t = 0; t < count; ++t) {
      host_inputs.push_back(course::random_floats(n_each, -1.f, 1.f, rng));
      inputs[t].upload(host_inputs.back());
      outputs[t].fill_bytes(course::kPoisonByte);
    }
    run_tasks(pool.get(), input_pointers.data(), output_pointers.data(), n_each, count,
              iterations, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int t = 0; t < count; ++t)
      EXPECT_TRUE(course::testing::equal(
          reference(host_inputs[t], iterations), outputs[t].download(),
          {{}, "outputs[" + std::to_string(t) + "] after the " + call}));
  }
}

}  // namespace
