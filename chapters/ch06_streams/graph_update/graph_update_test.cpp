#include "graph_update.h"

#include <gtest/gtest.h>

#include <exception>
#include <random>
#include <string>
#include <vector>

#include "course/launch_record.h"
#include "course/testing.h"
#include "graph_update_reference.h"

namespace {

using course::testing::GuardedOutput;

// Destroys the student's pipeline graph when the case ends, passed or not.
class OwnedPipeline {
 public:
  explicit OwnedPipeline(PipelineGraph g) : g_(g) {}
  OwnedPipeline(const OwnedPipeline&) = delete;
  OwnedPipeline& operator=(const OwnedPipeline&) = delete;
  ~OwnedPipeline() {
    try {
      destroy_pipeline_graph(g_);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "destroy_pipeline_graph: " << error.what();
    }
  }
  PipelineGraph& get() { return g_; }

 private:
  PipelineGraph g_;
};

void upload(float* device, const std::vector<float>& host) {
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

// A state in [-1, 1], where every pass keeps it.
std::vector<float> random_state(std::size_t n, std::mt19937_64& rng) {
  return course::random_floats(n, -1.f, 1.f, rng);
}

// Coefficients inside the header's ranges, a new draw for every step. Near rate 2 and gain 1
// the passes are chaotic: a pass left with an earlier step's coefficient, or a value off by
// one rounding, changes every element within a few steps instead of fading away.
StepCoefficients random_coefficients(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> coupling(0.05f, 0.3f), rate(1.85f, 1.99f),
      gain(0.9f, 0.99f);
  StepCoefficients c;
  c.coupling = coupling(rng);
  c.rate = rate(rng);
  c.gain = gain(rng);
  return c;
}

std::vector<StepCoefficients> random_steps(int steps, std::mt19937_64& rng) {
  std::vector<StepCoefficients> out;
  for (int k = 0; k < steps; ++k) out.push_back(random_coefficients(rng));
  return out;
}

StepParams step_params(const float* in, float* out, const StepCoefficients& c) {
  StepParams p;
  p.in = in;
  p.out = out;
  p.coupling = c.coupling;
  p.rate = c.rate;
  p.gain = c.gain;
  return p;
}

// Two buffers a step goes back and forth between: step k reads buffer k % 2 and writes the
// other, so the caller changes the pointers of every pass at every step.
struct PingPong {
  explicit PingPong(std::size_t n) : a(n), b(n) {}
  GuardedOutput<float>& in_of(int step) { return step % 2 == 0 ? a : b; }
  GuardedOutput<float>& out_of(int step) { return step % 2 == 0 ? b : a; }
  static const char* out_name(int step) { return step % 2 == 0 ? "b" : "a"; }
  StepParams params(int step, const StepCoefficients& c) {
    return step_params(in_of(step).data(), out_of(step).data(), c);
  }
  GuardedOutput<float> a, b;
};

std::string after_step(int step, const char* buffer) {
  return std::string(buffer) + " after step " + std::to_string(step);
}

using course::testing::graph_dependencies;
using course::testing::graph_dependents;
using course::testing::graph_nodes;

// Success when `graph` is kPipelineStages kernel nodes and nothing else, each depending on the
// one before.
::testing::AssertionResult is_pipeline_of_kernels(cudaGraph_t graph) {
  if (graph == nullptr)
    return ::testing::AssertionFailure()
           << "PipelineGraph::graph is nullptr: build_pipeline_graph must keep the graph it "
              "instantiated there";
  const auto nodes = graph_nodes(graph);
  const auto kernels = graph_nodes(graph, cudaGraphNodeTypeKernel);
  if (nodes.size() != kPipelineStages || kernels.size() != nodes.size())
    return ::testing::AssertionFailure()
           << "the graph has " << nodes.size() << " nodes (" << kernels.size()
           << " kernel nodes); expected " << kPipelineStages
           << " kernel nodes and nothing else: one per pass (diffuse, react, amplify)";
  int roots = 0;
  for (const cudaGraphNode_t node : nodes) {
    const std::size_t before = graph_dependencies(node).size();
    const std::size_t after = graph_dependents(node).size();
    if (before == 0) ++roots;
    if (before > 1 || after > 1)
      return ::testing::AssertionFailure()
             << "a node has " << before << " dependencies and " << after
             << " dependents; in a chain each pass depends on the one before only, and only "
                "the next depends on it";
  }
  if (roots != 1)
    return ::testing::AssertionFailure()
           << "the graph has " << roots << " nodes that depend on nothing; a chain has one: "
           << "react must depend on diffuse, and amplify on react";
  return ::testing::AssertionSuccess();
}

class PipelineCase : public ::testing::TestWithParam<std::size_t> {};

TEST_P(PipelineCase, EachStepMatchesReference) {
  // Built for step 0, then 8 steps with new buffers and coefficients each, each checked on its
  // own: a pass left with an earlier step's pointer or coefficient shows at the step it fails.
  const std::size_t n = GetParam();
  constexpr int kSteps = 8;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto steps = random_steps(kSteps, rng);
  const auto states = pipeline_states_reference(initial, steps);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  course::Stream stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(0, steps[0]), n, stream));
  EXPECT_TRUE(course::testing::wrote_nothing(buffers.b,
                                             "b after build_pipeline_graph (it runs nothing)"));
  EXPECT_TRUE(course::testing::equal(initial, buffers.a.download(),
                                     {{}, "a after build_pipeline_graph (it runs nothing)"}));
  for (int k = 0; k < kSteps; ++k) {
    buffers.out_of(k).repoison();
    run_pipeline_step(g.get(), buffers.params(k, steps[k]), stream);
    stream.synchronize();
    const auto what = after_step(k, PingPong::out_name(k));
    ASSERT_TRUE(course::testing::equal(states[k], buffers.out_of(k).download(), {{}, what}));
    ASSERT_TRUE(buffers.out_of(k).guards_intact(what));
  }
}

TEST_P(PipelineCase, StepsEnqueuedTogetherMatchReference) {
  // Built for other buffers and coefficients than any step's, then every step enqueued before
  // anything finishes: each update happens while earlier launches are pending, and each
  // launch must keep the parameters it was launched with.
  const std::size_t n = GetParam();
  constexpr int kSteps = 8;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto steps = random_steps(kSteps, rng);
  const auto states = pipeline_states_reference(initial, steps);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  course::Stream stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(1, random_coefficients(rng)), n, stream));
  for (int k = 0; k < kSteps; ++k) run_pipeline_step(g.get(), buffers.params(k, steps[k]), stream);
  stream.synchronize();
  // Step 7 wrote a; b still holds what step 6 wrote.
  EXPECT_TRUE(course::testing::equal(states[kSteps - 1], buffers.a.download(),
                                     {{}, after_step(kSteps - 1, "a")}));
  EXPECT_TRUE(course::testing::equal(states[kSteps - 2], buffers.b.download(),
                                     {{}, after_step(kSteps - 2, "b")}));
  EXPECT_TRUE(buffers.a.guards_intact("a"));
  EXPECT_TRUE(buffers.b.guards_intact("b"));
}

TEST_P(PipelineCase, ExecHoldsTheLastParameters) {
  // After three steps the test launches g.exec itself: the executable graph must now do the
  // last step. One that was never changed (each step run by a graph of its own, or by
  // changing the graph instead of its instantiation) still does build_pipeline_graph's.
  const std::size_t n = GetParam();
  constexpr int kSteps = 3;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto steps = random_steps(kSteps, rng);
  const auto states = pipeline_states_reference(initial, steps);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  course::Stream stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(0, random_coefficients(rng)), n, stream));
  for (int k = 0; k < kSteps; ++k) run_pipeline_step(g.get(), buffers.params(k, steps[k]), stream);
  stream.synchronize();
  ASSERT_TRUE(course::testing::equal(states[kSteps - 1], buffers.b.download(),
                                     {{}, after_step(kSteps - 1, "b")}));
  // Step 2 read a (step 1's state, still there) and wrote b: launched again, it writes the
  // same b.
  buffers.b.repoison();
  ASSERT_NE(g.get().exec, nullptr) << "PipelineGraph::exec is nullptr after the steps";
  CUDA_CHECK(cudaGraphLaunch(g.get().exec, stream));
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(
      states[kSteps - 1], buffers.b.download(),
      {{}, "b after the test launched g.exec on its own after step 2 (the executable graph "
           "must be changed in place to do each step; here it did not do the last one)"}));
  EXPECT_TRUE(buffers.b.guards_intact("b"));
}

INSTANTIATE_TEST_SUITE_P(Small, PipelineCase,
                         ::testing::ValuesIn(course::testing::small_sizes({2, 4096})),
                         course::testing::size_name);
INSTANTIATE_TEST_SUITE_P(Large, PipelineCase,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 22) + 1})),
                         course::testing::size_name);

TEST(GraphUpdateEdge, GraphIsAChainOfThreeKernelNodes) {
  const std::size_t n = 1000;
  auto rng = course::testing::case_rng();
  PingPong buffers(n);
  course::Stream stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(0, random_coefficients(rng)), n, stream));
  stream.synchronize();
  EXPECT_TRUE(is_pipeline_of_kernels(g.get().graph));
  EXPECT_NE(g.get().exec, nullptr)
      << "PipelineGraph::exec is nullptr: build_pipeline_graph must instantiate the graph "
         "once (cudaGraphInstantiate) and keep the executable graph there";
  destroy_pipeline_graph(g.get());
  EXPECT_EQ(g.get().graph, nullptr) << "destroy_pipeline_graph must set graph to nullptr";
  EXPECT_EQ(g.get().exec, nullptr) << "destroy_pipeline_graph must set exec to nullptr";
}

TEST(GraphUpdateEdge, CallsAgainWithNewInputs) {
  // The same buffers and coefficients twice, with a new state in between, then new
  // coefficients: a step that skipped an update it thought unchanged must still read the
  // state as it is when it runs.
  const std::size_t n = 4099;
  auto rng = course::testing::case_rng();
  const StepCoefficients same = random_coefficients(rng);
  const StepCoefficients other = random_coefficients(rng);
  PingPong buffers(n);
  course::Stream stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(0, same), n, stream));
  const struct {
    const char* call;
    StepCoefficients coefficients;
  } calls[] = {{"first call", same}, {"second call (new state)", same},
               {"third call (new state and coefficients)", other}};
  for (const auto& call : calls) {
    const auto state = random_state(n, rng);
    upload(buffers.a.data(), state);
    buffers.b.repoison();
    run_pipeline_step(g.get(), buffers.params(0, call.coefficients), stream);
    stream.synchronize();
    EXPECT_TRUE(course::testing::equal(pipeline_step_reference(state, call.coefficients),
                                       buffers.b.download(),
                                       {{}, std::string("b after the ") + call.call}));
  }
}

TEST(GraphUpdateEdge, TwoPipelinesAtOnce) {
  // Two graphs alive together, of different sizes, stepped in turn on one stream: each step
  // must change and launch its own executable graph.
  const std::size_t n_one = 1000, n_two = 77;
  constexpr int kSteps = 3;
  auto rng = course::testing::case_rng();
  const auto initial_one = random_state(n_one, rng);
  const auto initial_two = random_state(n_two, rng);
  const auto steps_one = random_steps(kSteps, rng);
  const auto steps_two = random_steps(kSteps, rng);
  PingPong one(n_one), two(n_two);
  upload(one.a.data(), initial_one);
  upload(two.a.data(), initial_two);
  course::Stream stream;
  OwnedPipeline g_one(build_pipeline_graph(one.params(0, steps_one[0]), n_one, stream));
  OwnedPipeline g_two(build_pipeline_graph(two.params(0, steps_two[0]), n_two, stream));
  for (int k = 0; k < kSteps; ++k) {
    run_pipeline_step(g_one.get(), one.params(k, steps_one[k]), stream);
    run_pipeline_step(g_two.get(), two.params(k, steps_two[k]), stream);
  }
  stream.synchronize();
  // Step 2 wrote b in both.
  EXPECT_TRUE(course::testing::equal(pipeline_states_reference(initial_one, steps_one).back(),
                                     one.b.download(), {{}, "the first pipeline's b"}));
  EXPECT_TRUE(course::testing::equal(pipeline_states_reference(initial_two, steps_two).back(),
                                     two.b.download(), {{}, "the second pipeline's b"}));
  EXPECT_TRUE(one.b.guards_intact("the first pipeline's b"));
  EXPECT_TRUE(two.b.guards_intact("the second pipeline's b"));
}

TEST(GraphUpdateStream, StepRunsOnTheGivenStream) {
  // Three steps while the stream is held shut: nothing may change before it opens, no step
  // may wait for it (the second and third update g.exec while the first launch is pending),
  // and afterwards each step must have run with its own parameters.
  const std::size_t n = 4096;
  constexpr int kSteps = 3;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto steps = random_steps(kSteps, rng);
  const auto states = pipeline_states_reference(initial, steps);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  course::Stream build_stream;
  OwnedPipeline g(build_pipeline_graph(buffers.params(0, steps[0]), n, build_stream));
  build_stream.synchronize();
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        for (int k = 0; k < kSteps; ++k) run_pipeline_step(g.get(), buffers.params(k, steps[k]), s);
      },
      {course::testing::watched(buffers.a, "a"), course::testing::watched(buffers.b, "b")}));
  EXPECT_TRUE(course::testing::equal(states[kSteps - 2], buffers.a.download(),
                                     {{}, after_step(kSteps - 2, "a")}));
  EXPECT_TRUE(course::testing::equal(states[kSteps - 1], buffers.b.download(),
                                     {{}, after_step(kSteps - 1, "b")}));
}

TEST(GraphUpdateStream, BuildRunsOnTheGivenStream) {
  // Building is given a stream only to upload the graph on: it must neither run a step (the
  // buffers change) nor wait for that stream (it would not return while the stream is held).
  const std::size_t n = 4096;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto step = random_coefficients(rng);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  PipelineGraph built;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { built = build_pipeline_graph(buffers.params(0, step), n, s); },
      {course::testing::watched(buffers.a, "a"), course::testing::watched(buffers.b, "b")}));
  OwnedPipeline g(built);
  EXPECT_TRUE(course::testing::wrote_nothing(buffers.b,
                                             "b after build_pipeline_graph (it runs nothing)"));
  course::Stream stream;
  run_pipeline_step(g.get(), buffers.params(0, step), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(pipeline_step_reference(initial, step), buffers.b.download(),
                                     {{}, "b after a step of that graph"}));
}

TEST(GraphUpdateStream, ExecutableGraphIsInstantiatedOnce) {
  // The test binary counts instantiations (course::graph_instantiations: the runtime's
  // cudaGraphInstantiate* are wrapped at link time): the steps must add none, and g.exec must
  // stay the handle build_pipeline_graph made. The handle alone cannot tell, since a destroyed
  // exec's address may come back from the next instantiation. The test also launches g.exec
  // behind a held stream before the steps: that launch, enqueued before any update, must do
  // build_pipeline_graph's step; the steps, which queue behind it, their own; and no step may
  // wait for it.
  const std::size_t n = 4096;
  constexpr int kSteps = 4;
  auto rng = course::testing::case_rng();
  const auto scratch_initial = random_state(n, rng);
  const auto initial = random_state(n, rng);
  const auto built_for = random_coefficients(rng);
  const auto steps = random_steps(kSteps, rng);
  const auto states = pipeline_states_reference(initial, steps);
  GuardedOutput<float> scratch_in(n), scratch_out(n);
  upload(scratch_in.data(), scratch_initial);
  PingPong buffers(n);
  upload(buffers.a.data(), initial);
  course::Stream held, stream;
  OwnedPipeline g(build_pipeline_graph(
      step_params(scratch_in.data(), scratch_out.data(), built_for), n, stream));
  stream.synchronize();
  const cudaGraphExec_t instantiated = g.get().exec;
  ASSERT_NE(instantiated, nullptr) << "PipelineGraph::exec is nullptr after build_pipeline_graph";
  std::string replaced;
  bool gave_up = false;
  const std::size_t instantiated_before = course::graph_instantiations();
  {
    course::StreamGate gate(held);
    CUDA_CHECK(cudaGraphLaunch(instantiated, held));
    for (int k = 0; k < kSteps; ++k) {
      run_pipeline_step(g.get(), buffers.params(k, steps[k]), stream);
      if (g.get().exec != instantiated && replaced.empty())
        replaced = "g.exec changed during step " + std::to_string(k);
    }
    gate.open();
    gave_up = gate.gave_up();
  }
  const std::size_t instantiated_in_steps = course::graph_instantiations() - instantiated_before;
  held.synchronize();
  stream.synchronize();
  EXPECT_EQ(instantiated_in_steps, 0u)
      << "run_pipeline_step instantiated " << instantiated_in_steps << " executable graphs in "
      << kSteps << " steps: it must change the executable graph that build_pipeline_graph "
      << "instantiated (cudaGraphExecKernelNodeSetParams or cudaGraphExecUpdate), never "
      << "cudaGraphInstantiate another one for a step";
  EXPECT_TRUE(replaced.empty())
      << replaced << ": run_pipeline_step must change the executable graph that "
      << "build_pipeline_graph instantiated (cudaGraphExecKernelNodeSetParams or "
      << "cudaGraphExecUpdate), not instantiate another one for the step";
  EXPECT_FALSE(gave_up) << "run_pipeline_step did not return while an earlier launch of "
                        << "g.exec was held back: it waited for the device, but an update "
                        << "needs no wait (it reaches only later launches)";
  EXPECT_TRUE(course::testing::equal(
      pipeline_step_reference(scratch_initial, built_for), scratch_out.download(),
      {{}, "the output of the launch enqueued before the steps (it must keep the parameters "
           "build_pipeline_graph gave it)"}));
  EXPECT_TRUE(course::testing::equal(states[kSteps - 1], buffers.a.download(),
                                     {{}, after_step(kSteps - 1, "a")}));
  EXPECT_TRUE(course::testing::equal(states[kSteps - 2], buffers.b.download(),
                                     {{}, after_step(kSteps - 2, "b")}));
}

TEST(GraphUpdateMemory, BuildStepsAndDestroyLeaveNoDeviceMemoryBehind) {
  // 64 pipelines built, stepped and destroyed: what an executable graph holds on the device
  // must come back with destroy_pipeline_graph.
  constexpr int kCycles = 64;
  constexpr int kSteps = 4;
  constexpr std::size_t kSlack = std::size_t{16} << 20;  // the driver's own bookkeeping
  const std::size_t n = 4096;
  auto rng = course::testing::case_rng();
  const auto initial = random_state(n, rng);
  const auto steps = random_steps(kSteps, rng);
  PingPong buffers(n);
  course::Stream stream;
  const auto cycle = [&] {
    upload(buffers.a.data(), initial);
    OwnedPipeline g(build_pipeline_graph(buffers.params(0, steps[0]), n, stream));
    for (int k = 0; k < kSteps; ++k)
      run_pipeline_step(g.get(), buffers.params(k, steps[k]), stream);
    stream.synchronize();
  };
  cycle();  // whatever the runtime sets up once on first use is not a leak
  const course::testing::DeviceMemoryWatch memory(kSlack);
  for (int i = 0; i < kCycles; ++i) cycle();
  EXPECT_TRUE(memory.nothing_leaked(std::to_string(kCycles) +
                                    " pipelines: destroy_pipeline_graph must destroy the "
                                    "executable graph and the graph"));
  // Step 3 wrote a.
  EXPECT_TRUE(course::testing::equal(pipeline_states_reference(initial, steps).back(),
                                     buffers.a.download(), {{}, after_step(kSteps - 1, "a")}));
}

}  // namespace
