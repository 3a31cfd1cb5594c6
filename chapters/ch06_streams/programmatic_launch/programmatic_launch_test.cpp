#include "programmatic_launch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "course/device.h"
#include "course/testing.h"
#include "programmatic_launch_reference.h"

namespace {

using course::testing::GuardedOutput;

void upload(float* device, const std::vector<float>& host) {
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

// Values in [-1, 1], where the steps keep them.
std::vector<float> random_inputs(std::size_t n, std::mt19937_64& rng) {
  return course::random_floats(n, -1.f, 1.f, rng);
}

struct ChainCase {
  std::size_t n;
  int steps;
};

std::string case_name(const ::testing::TestParamInfo<ChainCase>& info) {
  return "n_" + std::to_string(info.param.n) + "_steps_" + std::to_string(info.param.steps);
}

class StepChainCase : public ::testing::TestWithParam<ChainCase> {};

TEST_P(StepChainCase, MatchesReference) {
  const auto [n, steps] = GetParam();
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  run_step_chain(data.data(), n, steps, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after the chain"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST_P(StepChainCase, SecondCallWaitsForTheFirst) {
  // Both calls enqueued before any wait: the second call's first step may be launched while
  // the first call's last step is still running (backwards, after an even number of steps),
  // and must wait for it before reading data.
  const auto [n, steps] = GetParam();
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  run_step_chain(data.data(), n, steps, stream);
  run_step_chain(data.data(), n, steps, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps, 2), data.download(),
                                     {{}, "data after two calls of the chain"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

// One step, odd and tiny sizes, a size just past one block, a chain longer than a few steps.
INSTANTIATE_TEST_SUITE_P(Small, StepChainCase,
                         ::testing::Values(ChainCase{1, 1}, ChainCase{1, 7}, ChainCase{7, 2},
                                           ChainCase{31, 3}, ChainCase{33, 1},
                                           ChainCase{255, 2}, ChainCase{257, 5},
                                           ChainCase{1000, 16}, ChainCase{4097, 3}),
                         case_name);
// More elements than the grid has threads (a grid-stride loop of many rounds), and chains as
// long as the benchmark's and longer.
INSTANTIATE_TEST_SUITE_P(Large, StepChainCase,
                         ::testing::Values(ChainCase{100003, 4}, ChainCase{33, 300},
                                           ChainCase{4096, 256}, ChainCase{(1u << 19) + 1, 2}),
                         case_name);

// The edges of a graph with their data (cudaGraphGetEdges); a lossless query, since an edge
// of a programmatic launch carries data that a query without it refuses to drop.
struct Edge {
  cudaGraphNode_t from;
  cudaGraphNode_t to;
  cudaGraphEdgeData data;
};

std::vector<Edge> graph_edges(cudaGraph_t graph) {
  std::size_t count = 0;
  CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count));
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> data(count);
  if (count > 0)
    CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count));
  std::vector<Edge> edges;
  for (std::size_t e = 0; e < count; ++e) edges.push_back({from[e], to[e], data[e]});
  return edges;
}

TEST(StepChainLaunch, OneProgrammaticLaunchPerStep) {
  // The call recorded into a graph (stream capture): one kernel node per step with the
  // header's launch shape, and between consecutive steps an edge of the programmatic kind,
  // which is what a launch with cudaLaunchAttributeProgrammaticStreamSerialization becomes.
  // An ordinary launch gives an ordinary edge: the next kernel starts only once the previous
  // one has ended. The recorded graph is then replayed and must give the chain's result.
  const std::size_t n = 5000;
  const int steps = 6;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  course::testing::RecordedGraph recorded(
      stream, [&](cudaStream_t s) { run_step_chain(data.data(), n, steps, s); });
  ASSERT_TRUE(recorded.problem().empty()) << "run_step_chain: " << recorded.problem();
  ASSERT_EQ(recorded.kernels(), steps)
      << "run_step_chain(" << steps << " steps) enqueued " << recorded.census()
      << "; each step must be one kernel launch of its own";
  EXPECT_EQ(recorded.memsets() + recorded.copies() + recorded.others(), 0)
      << "run_step_chain enqueued " << recorded.census() << "; only the steps' kernels belong";
  const unsigned blocks = step_blocks(n, course::sm_count());
  for (const auto& launch : recorded.launches())
    EXPECT_TRUE(launch.grid.x == blocks && launch.grid.y == 1 && launch.grid.z == 1 &&
                launch.block.x == static_cast<unsigned>(kStepThreads) && launch.block.y == 1 &&
                launch.block.z == 1)
        << "a step was launched with " << course::testing::describe(launch) << "; the header "
        << "asks for grid (" << blocks << ", 1, 1) (step_blocks(n, course::sm_count())) and "
        << "block (" << kStepThreads << ", 1, 1), the shape the course's plain launches use";

  const auto edges = graph_edges(recorded.graph());
  std::set<cudaGraphNode_t> sources, targets;
  int programmatic = 0;
  for (const Edge& edge : edges) {
    sources.insert(edge.from);
    targets.insert(edge.to);
    programmatic += edge.data.type == cudaGraphDependencyTypeProgrammatic;
  }
  ASSERT_TRUE(edges.size() == static_cast<std::size_t>(steps - 1) &&
              sources.size() == edges.size() && targets.size() == edges.size())
      << "the " << steps << " steps' kernels are joined by " << edges.size()
      << " edges; a chain has " << steps - 1 << ", each step depending on the one before";
  EXPECT_EQ(programmatic, steps - 1)
      << programmatic << " of the " << steps - 1 << " dependencies between consecutive steps "
      << "are programmatic; the others are ordinary, so those steps start only once the step "
      << "before has ended. Launch every step after the first with cudaLaunchKernelEx and the "
      << "attribute cudaLaunchAttributeProgrammaticStreamSerialization, "
      << "val.programmaticStreamSerializationAllowed = 1";

  recorded.replay(stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after a replay of the recorded call"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST(StepChainEdge, ZeroStepsEnqueueNothing) {
  const std::size_t n = 300;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  run_step_chain(data.data(), n, 0, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(input, data.download(), {{}, "data after 0 steps"}));
  // Then three steps on the same data, so that a launcher doing nothing does not pass.
  run_step_chain(data.data(), n, 3, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, 3), data.download(),
                                     {{}, "data after 0 steps, then 3"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST(StepChainEdge, LongStepsCatchAnEarlyRead) {
  // Sixteen elements for every thread of the grid, so that a step's update takes several
  // times its prologue, and the given kernel walks them backwards on odd steps: a kernel
  // launched programmatically that reads data before cudaGridDependencySynchronize() returns
  // meets first the elements the step before writes last, while that step is far from done.
  const std::size_t n = static_cast<std::size_t>(16) * kStepThreads * course::sm_count() + 3;
  const int steps = 3;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  GuardedOutput<float> data(n);
  upload(data.data(), input);
  course::Stream stream;
  run_step_chain(data.data(), n, steps, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(
      step_chain_reference(input, steps), data.download(),
      {{}, "data after 3 long steps (a step that reads data before its "
           "cudaGridDependencySynchronize() reads the previous step's unfinished output)"}));
  EXPECT_TRUE(data.guards_intact("data"));
}

TEST(StepChainEdge, CallsAgainWithNewInputs) {
  // Same buffer, new contents before each call, all stream-ordered around it: a call that
  // ran before the upload, or reused an earlier result, leaves other values.
  const std::size_t n = 4099;
  const int steps = 20;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> data(n);
  course::PinnedBuffer<float> staged(n), result(n);
  course::Stream stream;
  for (const std::string call : {"first call", "second call", "third call"}) {
    const auto input = random_inputs(n, rng);
    std::memcpy(staged.data(), input.data(), n * sizeof(float));
    std::memset(result.data(), course::kPoisonByte, n * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(data.data(), staged.data(), n * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    run_step_chain(data.data(), n, steps, stream);
    CUDA_CHECK(cudaMemcpyAsync(result.data(), data.data(), n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
    stream.synchronize();
    EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps),
                                       std::vector<float>(result.data(), result.data() + n),
                                       {{}, "data after the " + call}));
  }
}

TEST(StepChainStream, RunsOnTheGivenStream) {
  // The stream is held shut while run_step_chain returns: a step launched elsewhere changes
  // data meanwhile, and a launcher that waits for the stream never returns.
  const std::size_t n = 4096;
  const int steps = 16;
  auto rng = course::testing::case_rng();
  const auto input = random_inputs(n, rng);
  course::DeviceBuffer<float> data(input);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { run_step_chain(data.data(), n, steps, s); },
      {course::testing::watched(data, "data")}));
  EXPECT_TRUE(course::testing::equal(step_chain_reference(input, steps), data.download(),
                                     {{}, "data after the chain"}));
}

}  // namespace
