#include "cuda_graphs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "course/testing.h"
#include "cuda_graphs_reference.h"

namespace {

using course::testing::GuardedOutput;

// Destroys the student's graph when the case ends, passed or not.
class OwnedGraph {
 public:
  explicit OwnedGraph(StepGraph g) : g_(g) {}
  OwnedGraph(const OwnedGraph&) = delete;
  OwnedGraph& operator=(const OwnedGraph&) = delete;
  ~OwnedGraph() {
    try {
      destroy_step_graph(g_);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "destroy_step_graph: " << error.what();
    }
  }
  StepGraph& get() { return g_; }

 private:
  StepGraph g_;
};

void upload(float* device, const std::vector<float>& host) {
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

// Values in [-1, 1], where step_update keeps them.
std::vector<float> random_inputs(std::size_t n, std::mt19937_64& rng) {
  return course::random_floats(n, -1.f, 1.f, rng);
}

using course::testing::graph_dependencies;
using course::testing::graph_dependents;

// Success when `graph` is exactly `steps` kernel nodes, each depending on the one before.
::testing::AssertionResult is_chain_of_kernels(cudaGraph_t graph, int steps) {
  if (graph == nullptr)
    return ::testing::AssertionFailure()
           << "StepGraph::graph is nullptr: build_step_graph must keep the graph it recorded "
              "(the one it instantiated) there";
  const std::size_t count = course::testing::graph_nodes(graph).size();
  const std::size_t kernels =
      course::testing::graph_nodes(graph, cudaGraphNodeTypeKernel).size();
  if (count != static_cast<std::size_t>(steps) || kernels != count)
    return ::testing::AssertionFailure()
           << "the graph has " << count << (count == 1 ? " node" : " nodes") << " ("
           << kernels << (kernels == 1 ? " kernel node" : " kernel nodes") << "); expected "
           << steps << " kernel nodes and nothing else: one launch of one step per node, so "
           << "that the graph, not a loop inside one kernel, carries the sequence (copies, "
              "memsets and event nodes do not belong in it)";

  std::size_t root_count = 0;
  CUDA_CHECK(cudaGraphGetRootNodes(graph, nullptr, &root_count));
  if (root_count != 1)
    return ::testing::AssertionFailure()
           << "the graph has " << root_count << " root nodes (nodes with no dependency); a "
           << "chain has one: every step's kernel must depend on the previous step's, so "
              "capture all the launches on one stream, or add each node with the previous "
              "one as its dependency";
  cudaGraphNode_t node = nullptr;
  CUDA_CHECK(cudaGraphGetRootNodes(graph, &node, &root_count));
  for (int position = 1;; ++position) {
    const auto after = graph_dependents(node);
    if (after.empty()) {
      if (position == steps) return ::testing::AssertionSuccess();
      return ::testing::AssertionFailure()
             << "the chain from the root ends after " << position << " of " << steps
             << " nodes: some steps do not depend on the one before";
    }
    if (after.size() > 1 || graph_dependencies(after.front()).size() != 1)
      return ::testing::AssertionFailure()
             << "node " << position << " of the chain has " << after.size()
             << " dependents and the next has " << graph_dependencies(after.front()).size()
             << " dependencies; in a chain each step depends on exactly the one before";
    node = after.front();
  }
}

struct GraphCase {
  std::size_t n;
  int steps;
};

std::string case_name(const ::testing::TestParamInfo<GraphCase>& info) {
  return "n_" + std::to_string(info.param.n) + "_steps_" + std::to_string(info.param.steps);
}

class StepGraphCase : public ::testing::TestWithParam<GraphCase> {};

TEST_P(StepGraphCase, BuildRunsNothingThenReplayMatchesReference) {
  const auto [n, steps] = GetParam();
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  OwnedGraph g(build_step_graph(data.data(), n, steps, stream));
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(input, data.download(),
                                     {{}, "data after build_step_graph (it must run nothing)"}));
  launch_step_graph(g.get(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after one replay"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST_P(StepGraphCase, ReplayTwiceAppliesTheStepsTwice) {
  const auto [n, steps] = GetParam();
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  OwnedGraph g(build_step_graph(data.data(), n, steps, stream));
  // Both replays enqueued before any wait: the second must follow the first on the stream.
  launch_step_graph(g.get(), stream);
  launch_step_graph(g.get(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps, 2), data.download(),
                                     {{}, "data after two replays"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST_P(StepGraphCase, GraphIsAChainOfKernelNodes) {
  const auto [n, steps] = GetParam();
  course::DeviceBuffer<float> data(n);
  course::Stream stream;
  OwnedGraph g(build_step_graph(data.data(), n, steps, stream));
  stream.synchronize();
  EXPECT_TRUE(is_chain_of_kernels(g.get().graph, steps));
  EXPECT_NE(g.get().exec, nullptr)
      << "StepGraph::exec is nullptr: build_step_graph must instantiate the graph once "
         "(cudaGraphInstantiate) and keep the executable graph there";
  destroy_step_graph(g.get());
  EXPECT_EQ(g.get().graph, nullptr) << "destroy_step_graph must set graph to nullptr";
  EXPECT_EQ(g.get().exec, nullptr) << "destroy_step_graph must set exec to nullptr";
}

// Tiny and odd sizes, one step, a chain as long as the benchmark's and beyond, an array
// larger than the grid.
INSTANTIATE_TEST_SUITE_P(Small, StepGraphCase,
                         ::testing::Values(GraphCase{1, 1}, GraphCase{1, 7}, GraphCase{7, 3},
                                           GraphCase{31, 2}, GraphCase{33, 1},
                                           GraphCase{257, 16}, GraphCase{4096, 256},
                                           GraphCase{4099, 300}, GraphCase{65537, 5}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Large, StepGraphCase,
                         ::testing::Values(GraphCase{100003, 64}, GraphCase{(1u << 22) + 1, 4}),
                         case_name);

TEST(CudaGraphsEdge, CallsAgainWithNewInputs) {
  // One graph, new contents before each replay, all stream-ordered around it: a replay that
  // ran before the upload, or reused an earlier result, leaves other values.
  const std::size_t n = 4099;
  const int steps = 40;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> data(n);
  course::PinnedBuffer<float> staged(n), result(n);
  course::Stream stream;
  OwnedGraph g(build_step_graph(data.data(), n, steps, stream));
  for (const std::string call : {"first replay", "second replay", "third replay"}) {
    const auto input = random_inputs(n, rng);
    std::memcpy(staged.data(), input.data(), n * sizeof(float));
    std::memset(result.data(), course::kPoisonByte, n * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(data.data(), staged.data(), n * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    launch_step_graph(g.get(), stream);
    CUDA_CHECK(cudaMemcpyAsync(result.data(), data.data(), n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
    stream.synchronize();
    EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps),
                                       std::vector<float>(result.data(), result.data() + n),
                                       {{}, "data after the " + call}));
  }
}

TEST(CudaGraphsEdge, TwoGraphsAtOnce) {
  // Two graphs alive together, on different buffers and chains, replayed in turn: each
  // replay must run its own graph, not the last one built.
  auto rng = course::testing::case_rng();
  const std::size_t n_a = 1000, n_b = 77;
  const int steps_a = 9, steps_b = 20;
  const auto input_a = random_inputs(n_a, rng);
  const auto input_b = random_inputs(n_b, rng);
  GuardedOutput<float> a(n_a), b(n_b);
  upload(a.data(), input_a);
  upload(b.data(), input_b);
  course::Stream stream;
  OwnedGraph graph_a(build_step_graph(a.data(), n_a, steps_a, stream));
  OwnedGraph graph_b(build_step_graph(b.data(), n_b, steps_b, stream));
  launch_step_graph(graph_a.get(), stream);
  launch_step_graph(graph_b.get(), stream);
  launch_step_graph(graph_a.get(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input_a, steps_a, 2), a.download(),
                                     {{}, "a after two replays of its graph"}));
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input_b, steps_b, 1), b.download(),
                                     {{}, "b after one replay of its graph"}));
  EXPECT_TRUE(a.guards_intact("a"));
  EXPECT_TRUE(b.guards_intact("b"));
}

TEST(CudaGraphsStream, ReplayRunsOnTheGivenStream) {
  // The graph is built beforehand; the replay's stream is held shut while launch_step_graph
  // returns: a replay launched elsewhere changes data meanwhile, one that waits never returns.
  const std::size_t n = 4096;
  const int steps = 32;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  course::DeviceBuffer<float> data(input);
  course::Stream build_stream;
  OwnedGraph g(build_step_graph(data.data(), n, steps, build_stream));
  build_stream.synchronize();
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { launch_step_graph(g.get(), s); },
      {{data.data(), n * sizeof(float), "data"}}));
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after the replay"}));
}

TEST(CudaGraphsStream, BuildRunsOnTheGivenStream) {
  // Building is given a stream only to upload the graph on: it must neither run the chain
  // (data changes) nor wait for that stream (it would never return while the stream is held).
  const std::size_t n = 4096;
  const int steps = 32;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  course::DeviceBuffer<float> data(input);
  StepGraph built;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { built = build_step_graph(data.data(), n, steps, s); },
      {{data.data(), n * sizeof(float), "data"}}));
  OwnedGraph g(built);
  EXPECT_TRUE(course::testing::equal(input, data.download(),
                                     {{}, "data after build_step_graph (it must run nothing)"}));
  course::Stream stream;
  launch_step_graph(g.get(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after a replay of that graph"}));
}

}  // namespace
