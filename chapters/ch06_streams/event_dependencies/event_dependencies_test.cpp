#include "event_dependencies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "course/stream_gate.h"
#include "course/testing.h"
#include "event_dependencies_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// The streams a case holds shut (course::StreamGate) while run_dag is called.
struct Held {
  bool a = false;
  bool b = false;
  bool c = false;
};

std::string names_of(bool a, bool b, bool c) {
  std::string out;
  for (const auto& [held, name] : {std::pair{a, "stream_a"}, {b, "stream_b"}, {c, "stream_c"}})
    if (held) out += (out.empty() ? "" : " and ") + std::string(name);
  return out;
}

struct Inputs {
  std::vector<float> x, y;
};

Inputs random_inputs(std::size_t n, std::mt19937_64& rng) {
  return {course::random_floats(n, -4.f, 4.f, rng), course::random_floats(n, -4.f, 4.f, rng)};
}

struct Output {
  const float* data;
  std::size_t n;
  const char* name;
};

// Waits for the default streams, then looks at the outputs for about 10 ms: the name of the
// first one no longer all poison, or "" when none changed. These tests have the GPU to
// themselves (event_dependencies.toml), and work that does not wait for a held stream starts
// within microseconds, so 10 ms is ample.
std::string first_written(const std::vector<Output>& outputs) {
  course::drain_other_streams(1.0);
  constexpr int kPolls = 5;
  for (int poll = 0; poll <= kPolls; ++poll) {
    if (poll > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    for (const Output& out : outputs)
      if (!course::holds_only(out.data, out.n * sizeof(float), course::kPoisonByte))
        return out.name;
  }
  return "";
}

const char* const kConsumerHint =
    " Record an event on each producer's stream right after its kernel, make stream_c wait for "
    "both (cudaStreamWaitEvent), and only then launch the consumer on stream_c.";

// Calls run_dag on three fresh non-blocking streams with the streams in `held` shut. While a
// stream is shut, what depends on it must not run: the consumer (c) while any is, producer A
// (a) while stream_a is, producer B (b) while stream_b is; and the producers of open streams
// must finish, since they wait for nothing but their own stream. The gates then open one at a
// time, stream_c's first, and the consumer must keep waiting until the last one has opened.
// Finally only stream_c is synchronised, and a, b and c must hold the reference.
void check_dag(std::size_t n, Held held) {
  auto rng = course::testing::case_rng();
  const Inputs in = random_inputs(n, rng);
  GuardedInput<float> x(in.x), y(in.y);
  GuardedOutput<float> a(n), b(n), c(n);
  const DagReference expected = run_dag_reference(in.x, in.y);
  // The poison lands (legacy stream) before anything on the non-blocking streams can run.
  CUDA_CHECK(cudaDeviceSynchronize());

  course::Stream stream_a, stream_b, stream_c;
  // Declared after the streams, so they are destroyed (opened and drained) first.
  std::optional<course::StreamGate> gate_a, gate_b, gate_c;
  if (held.a) gate_a.emplace(stream_a);
  if (held.b) gate_b.emplace(stream_b);
  if (held.c) gate_c.emplace(stream_c);
  run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), n, stream_a, stream_b, stream_c);

  const std::string all_held = names_of(held.a, held.b, held.c);
  if (!all_held.empty()) {
    std::vector<Output> watched{{c.data(), n, "c"}};
    if (held.a) watched.push_back({a.data(), n, "a"});
    if (held.b) watched.push_back({b.data(), n, "b"});
    const std::string written = first_written(watched);
    EXPECT_NE(written, "c") << "c was written while " << all_held << " was held shut: the "
                            << "consumer ran before "
                            << (held.c ? "the work already on stream_c"
                                       : "the producer it depends on")
                            << " had finished." << kConsumerHint;
    EXPECT_NE(written, "a") << "a was written while stream_a was held shut: producer A must "
                               "run on stream_a, after the work already there.";
    EXPECT_NE(written, "b") << "b was written while stream_b was held shut: producer B must "
                               "run on stream_b, after the work already there.";
    // The producers of open streams finish while the gates stay shut (a second is ample for
    // any size here).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    bool a_done = held.a, b_done = held.b;
    while (!(a_done && b_done) && std::chrono::steady_clock::now() < deadline) {
      if (!a_done) a_done = course::testing::device_copy(a.data(), n) == expected.a;
      if (!b_done) b_done = course::testing::device_copy(b.data(), n) == expected.b;
      if (!(a_done && b_done)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_TRUE(a_done) << "producer A did not finish while " << all_held
                        << " was held shut: it must wait only for the work on stream_a";
    EXPECT_TRUE(b_done) << "producer B did not finish while " << all_held
                        << " was held shut: it must wait only for the work on stream_b";

    // One gate at a time, stream_c's first, then stream_a's: until the last held producer's
    // gate opens, the consumer still has something to wait for. (Skipped once something was
    // written too early: c is no longer poison to watch.)
    const auto consumer_still_waits = [&](const char* opened, const std::string& still_held) {
      const bool waits = first_written({{c.data(), n, "c"}}).empty();
      EXPECT_TRUE(waits) << "c was written once " << opened << " opened, while " << still_held
                         << " was still held shut: the consumer ran before the producer on "
                         << still_held << " had finished." << kConsumerHint;
      return waits;
    };
    bool poison_left = written.empty();
    if (poison_left && held.c && (held.a || held.b)) {
      gate_c->open();
      poison_left = consumer_still_waits("stream_c", names_of(held.a, held.b, false));
    }
    if (poison_left && held.a && held.b) {
      gate_a->open();
      consumer_still_waits("stream_a", "stream_b");
    }
  }
  for (auto* gate : {&gate_a, &gate_b, &gate_c}) {
    if (!gate->has_value()) continue;
    (*gate)->open();
    EXPECT_FALSE((*gate)->gave_up())
        << "run_dag did not return while " << all_held << " was held shut: it waited for work "
           "on the streams (cudaDeviceSynchronize, cudaStreamSynchronize, "
           "cudaEventSynchronize). Order the streams with cudaStreamWaitEvent and return at "
           "once; the caller decides when to wait.";
  }
  // Only stream_c: everything run_dag enqueued must be behind it.
  stream_c.synchronize();
  EXPECT_TRUE(course::testing::equal(expected.c, course::testing::device_copy(c.data(), n),
                                     {{}, "c after synchronising stream_c only"}));
  EXPECT_TRUE(course::testing::equal(expected.a, course::testing::device_copy(a.data(), n),
                                     {{}, "a after synchronising stream_c only"}));
  EXPECT_TRUE(course::testing::equal(expected.b, course::testing::device_copy(b.data(), n),
                                     {{}, "b after synchronising stream_c only"}));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(x.unchanged("x"));
  EXPECT_TRUE(y.unchanged("y"));
  EXPECT_TRUE(a.guards_intact("a"));
  EXPECT_TRUE(b.guards_intact("b"));
  EXPECT_TRUE(c.guards_intact("c"));
}

class RunDag : public ::testing::TestWithParam<std::size_t> {};

// No stream held: the result alone (the only cases run under compute-sanitizer).
TEST_P(RunDag, MatchesReference) { check_dag(GetParam(), {}); }
// A producer held up by earlier work on its stream: the consumer must wait for it.
TEST_P(RunDag, WaitsForProducerA) { check_dag(GetParam(), {true, false, false}); }
TEST_P(RunDag, WaitsForProducerB) { check_dag(GetParam(), {false, true, false}); }
TEST_P(RunDag, WaitsForBothProducers) { check_dag(GetParam(), {true, true, false}); }
// stream_c held up: the producers run, the consumer waits behind the earlier work.
TEST_P(RunDag, WaitsForWorkOnStreamC) { check_dag(GetParam(), {false, false, true}); }
TEST_P(RunDag, WaitsForEverything) { check_dag(GetParam(), {true, true, true}); }

using course::testing::size_name;

INSTANTIATE_TEST_SUITE_P(Small, RunDag, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, RunDag,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 22) + 3})),
                         size_name);

TEST(RunDagEdge, ZeroElementsWritesNothingThenFiveWork) {
  // n = 0 launches nothing and touches nothing; the same buffers then take a real call, so
  // doing nothing at all does not pass this case.
  constexpr std::size_t kCount = 64;
  auto rng = course::testing::case_rng();
  const Inputs in = random_inputs(kCount, rng);
  GuardedInput<float> x(in.x), y(in.y);
  GuardedOutput<float> a(kCount), b(kCount), c(kCount);
  CUDA_CHECK(cudaDeviceSynchronize());
  course::Stream stream_a, stream_b, stream_c;
  run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), 0, stream_a, stream_b, stream_c);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto poison = course::testing::poison_values<float>(kCount);
  EXPECT_TRUE(course::testing::equal(poison, c.download(), {{}, "c after a call with n = 0"}));

  run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), 5, stream_a, stream_b, stream_c);
  stream_c.synchronize();
  const auto five = std::vector<float>(in.x.begin(), in.x.begin() + 5);
  const auto five_y = std::vector<float>(in.y.begin(), in.y.begin() + 5);
  auto expected = run_dag_reference(five, five_y).c;
  expected.insert(expected.end(), poison.begin() + 5, poison.end());
  EXPECT_TRUE(course::testing::equal(expected, course::testing::device_copy(c.data(), kCount),
                                     {{}, "c after a call with n = 5"}));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(c.guards_intact("c after a call with n = 5"));
}

TEST(RunDagEdge, OneStreamForEverything) {
  // The same stream three times: the events then order work within one stream, which must
  // still give the right answer.
  const std::size_t n = 4097;
  auto rng = course::testing::case_rng();
  const Inputs in = random_inputs(n, rng);
  GuardedInput<float> x(in.x), y(in.y);
  GuardedOutput<float> a(n), b(n), c(n);
  CUDA_CHECK(cudaDeviceSynchronize());
  course::Stream stream;
  run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), n, stream, stream, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(run_dag_reference(in.x, in.y).c, c.download(), {{}, "c"}));
}

// Every node `node` depends on, directly or through others.
std::set<cudaGraphNode_t> ancestors_of(cudaGraphNode_t node) {
  std::set<cudaGraphNode_t> seen;
  std::vector<cudaGraphNode_t> todo{node};
  while (!todo.empty()) {
    const cudaGraphNode_t next = todo.back();
    todo.pop_back();
    for (cudaGraphNode_t earlier : course::testing::graph_dependencies(next))
      if (seen.insert(earlier).second) todo.push_back(earlier);
  }
  return seen;
}

TEST(RunDagEdge, TheConsumerWaitsThroughEvents) {
  // The held-stream cases show that the consumer waits; this one shows that the waiting is
  // the streams', through events, and not something the kernels do among themselves (a
  // consumer spinning on flags the producers set). The call is recorded into a graph instead
  // of run, stream_a and stream_b forked from stream_c: the recording ends only when both
  // are joined back into stream_c, and in the graph the consumer's kernel must come after
  // both producers' kernels.
  const std::size_t n = 4097;
  auto rng = course::testing::case_rng();
  const Inputs in = random_inputs(n, rng);
  GuardedInput<float> x(in.x), y(in.y);
  GuardedOutput<float> a(n), b(n), c(n);
  CUDA_CHECK(cudaDeviceSynchronize());
  course::Stream stream_a, stream_b, stream_c;
  // Run first, which also keeps one-time set-up (loading the kernels) out of the recording.
  run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), n, stream_a, stream_b, stream_c);
  stream_c.synchronize();
  EXPECT_TRUE(course::testing::equal(run_dag_reference(in.x, in.y).c, c.download(),
                                     {{}, "c of the call that was run"}));

  course::Event fork(cudaEventDisableTiming);
  course::testing::RecordedGraph recorded(stream_c, [&](cudaStream_t s) {
    fork.record(s);
    CUDA_CHECK(cudaStreamWaitEvent(stream_a, fork, 0));
    CUDA_CHECK(cudaStreamWaitEvent(stream_b, fork, 0));
    run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), n, stream_a, stream_b, s);
  });
  ASSERT_TRUE(recorded.problem().empty())
      << "run_dag, recorded with stream_a and stream_b forked from stream_c: "
      << recorded.problem() << ". stream_c must wait for each producer through an event "
      << "recorded on its stream (cudaEventRecord, then cudaStreamWaitEvent on stream_c).";
  ASSERT_EQ(recorded.kernels(), 3)
      << "run_dag enqueued " << recorded.census() << "; expected the two producers and the "
      << "consumer, one kernel each";
  const std::vector<cudaGraphNode_t> kernels =
      course::testing::graph_nodes(recorded.graph(), cudaGraphNodeTypeKernel);
  const bool one_after_both = std::any_of(kernels.begin(), kernels.end(), [&](auto kernel) {
    const auto before = ancestors_of(kernel);
    return std::count_if(kernels.begin(), kernels.end(),
                         [&](auto other) { return before.count(other) > 0; }) == 2;
  });
  EXPECT_TRUE(one_after_both)
      << "in the recorded graph no kernel comes after both of the others: the consumer must "
         "wait for both producers through events (cudaEventRecord on stream_a and on "
         "stream_b after each producer, cudaStreamWaitEvent on stream_c before the consumer)";
}

TEST(RunDagEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a run_dag that remembers its last answer by pointer or by size
  // returns the first call's c the second time.
  const std::size_t n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> x(n), y(n), a(n), b(n), c(n);
  course::Stream stream_a, stream_b, stream_c;
  for (const std::string call : {"first call", "second call"}) {
    const Inputs in = random_inputs(n, rng);
    x.upload(in.x);
    y.upload(in.y);
    a.fill_bytes(course::kPoisonByte);
    b.fill_bytes(course::kPoisonByte);
    c.fill_bytes(course::kPoisonByte);
    CUDA_CHECK(cudaDeviceSynchronize());
    run_dag(x.data(), y.data(), a.data(), b.data(), c.data(), n, stream_a, stream_b, stream_c);
    stream_c.synchronize();
    EXPECT_TRUE(course::testing::equal(run_dag_reference(in.x, in.y).c, course::testing::device_copy(c.data(), n),
                                       {{}, "c after the " + call}));
  }
}

}  // namespace
