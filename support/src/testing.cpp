#include "course/testing.h"

#include "course/device.h"
#include "course/stream_gate.h"

#include <algorithm>
#include <sstream>

namespace course::testing {

std::mt19937_64 case_rng() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string salt = "no-test";
  if (info != nullptr) salt = std::string(info->test_suite_name()) + "." + info->name();
  return make_rng(salt);
}

namespace {

// Indices of the guard elements whose bytes are not all poison, nearest to the data first.
std::vector<std::size_t> written(const unsigned char* zone, std::size_t elements,
                                 std::size_t size, bool front) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < elements; ++k) {
    const std::size_t e = front ? elements - 1 - k : k;
    for (std::size_t b = 0; b < size; ++b) {
      if (zone[e * size + b] != kPoisonByte) {
        out.push_back(e);
        break;
      }
    }
  }
  return out;
}

}  // namespace

::testing::AssertionResult check_guards(const unsigned char* front, std::size_t before,
                                        const unsigned char* back, std::size_t after,
                                        std::size_t size, std::size_t count,
                                        const std::string& name) {
  constexpr std::size_t kShown = 5;
  const auto in_front = written(front, before, size, true);
  const auto in_back = written(back, after, size, false);
  if (in_front.empty() && in_back.empty()) return ::testing::AssertionSuccess();
  std::ostringstream out;
  out << name << " (" << count << " elements): memory outside it was written";
  const auto describe = [&](const std::vector<std::size_t>& hits, std::size_t zone, bool is_front) {
    if (hits.empty()) return;
    out << "\n  the guard " << (is_front ? "before" : "after") << " it: " << hits.size()
        << " of " << zone << " elements changed, at ";
    for (std::size_t k = 0; k < hits.size() && k < kShown; ++k) {
      const std::size_t e = hits[k];
      if (k > 0) out << ", ";
      if (is_front)
        out << name << "[-" << (before - e) << "]";
      else
        out << name << "[" << (count + e) << "] (" << e << " past the end)";
    }
    if (hits.size() > kShown) out << " and " << (hits.size() - kShown) << " more";
  };
  describe(in_front, before, true);
  describe(in_back, after, false);
  return ::testing::AssertionFailure() << out.str();
}

void wait_for_setup() { CUDA_CHECK(cudaStreamSynchronize(nullptr)); }

::testing::AssertionResult page_locked(const void* host) {
  cudaPointerAttributes attributes{};
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
  if (attributes.type == cudaMemoryTypeHost) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "cudaPointerGetAttributes does not know this pointer: it is pageable memory";
}

std::size_t free_device_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

DeviceMemoryWatch::DeviceMemoryWatch(std::size_t slack_bytes) : slack_bytes_(slack_bytes) {
  CUDA_CHECK(cudaDeviceSynchronize());
  free_before_ = free_device_bytes();
}

::testing::AssertionResult DeviceMemoryWatch::nothing_leaked(const std::string& advice) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t free_after = free_device_bytes();
  if (free_after + slack_bytes_ >= free_before_) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << kDeviceMemoryLeaked << ": " << (free_before_ - free_after) / (std::size_t{1} << 20)
         << " MiB less free after the call than before (" << advice << ")";
}

void fill_device_bytes(void* device, int value, std::size_t bytes) {
  CUDA_CHECK(cudaMemset(device, value, bytes));
  wait_for_setup();
}

long long resident_thread_capacity() {
  int device = 0;
  int per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return static_cast<long long>(per_sm) * course::sm_count();
}

std::size_t elements_beyond_residency(int per_thread, std::size_t most) {
  const auto wanted = static_cast<std::size_t>(per_thread > 0 ? per_thread : 1) *
                          static_cast<std::size_t>(resident_thread_capacity()) +
                      3;
  return std::min(wanted, most);
}

std::vector<std::size_t> adversarial_sizes() {
  return {1, 7, 31, 32, 33, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025,
          4097, 65537, 1000003};
}

namespace {

std::vector<std::size_t> sizes_in(std::size_t lo, std::size_t hi,
                                  std::initializer_list<std::size_t> extra) {
  std::vector<std::size_t> all = adversarial_sizes();
  all.insert(all.end(), extra.begin(), extra.end());
  std::vector<std::size_t> out;
  for (const std::size_t n : all)
    if (n >= lo && n < hi) out.push_back(n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<std::size_t> small_sizes(std::initializer_list<std::size_t> extra) {
  return sizes_in(0, kLargeSize, extra);
}

std::vector<std::size_t> large_sizes(std::initializer_list<std::size_t> extra) {
  return sizes_in(kLargeSize, static_cast<std::size_t>(-1), extra);
}

::testing::AssertionResult keeps_to_stream(const std::function<void(cudaStream_t)>& launch,
                                           const std::vector<Watched>& watched) {
  // Whatever the test enqueued before (poisoning the outputs on the legacy stream) is done
  // before the "before" pictures are taken.
  CUDA_CHECK(cudaDeviceSynchronize());
  Stream stream(cudaStreamNonBlocking);
  // Every buffer in one course::snapshot per look: one stream and one wait.
  std::vector<course::Piece> pieces;
  std::size_t total = 0;
  for (const auto& w : watched) {
    pieces.push_back({w.data, w.bytes});
    total += w.bytes;
  }
  std::vector<unsigned char> before(total), now(total);
  course::snapshot(pieces, before.data());
  std::vector<std::string> changed;
  const course::HeldCall held = course::call_held(stream, launch, [&] {
    changed.clear();
    course::snapshot(pieces, now.data());
    std::size_t at = 0;
    for (const auto& w : watched) {
      if (!std::equal(now.begin() + at, now.begin() + at + w.bytes, before.begin() + at))
        changed.push_back(w.name);
      at += w.bytes;
    }
    return !changed.empty();
  });
  stream.synchronize();
  if (held.gave_up)
    return ::testing::AssertionFailure()
           << "the launcher did not return while its stream was held: it waited for work on "
              "that stream (cudaDeviceSynchronize, cudaStreamSynchronize, a synchronous copy "
              "ordered after it). A launcher only enqueues work on the stream it is given; "
              "the caller decides when to wait.";
  if (!changed.empty()) {
    std::string names;
    for (const auto& name : changed) names += (names.empty() ? "" : ", ") + name;
    return ::testing::AssertionFailure()
           << names << " changed while the given stream was held shut, so the work ran "
           << "somewhere else: on the default stream (a launch without a stream argument, "
              "cudaMemcpy), on a stream of the launcher's own, or on the host. Pass the "
              "stream argument to every launch and use cudaMemcpyAsync/cudaMemsetAsync on it.";
  }
  return ::testing::AssertionSuccess();
}

namespace {

// The two-call pattern of CUDA's node lists: ask for the count, then fill that many. (CUDA 13
// gives the dependency queries an edge-data array, not wanted here: nullptr.)
template <typename Query>
std::vector<cudaGraphNode_t> node_list(Query query) {
  std::size_t count = 0;
  query(nullptr, &count);
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) query(nodes.data(), &count);
  nodes.resize(count);
  return nodes;
}

}  // namespace

std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph) {
  return node_list([graph](cudaGraphNode_t* nodes, std::size_t* count) {
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes, count));
  });
}

std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph, cudaGraphNodeType type) {
  std::vector<cudaGraphNode_t> out;
  for (cudaGraphNode_t node : graph_nodes(graph)) {
    cudaGraphNodeType node_type{};
    CUDA_CHECK(cudaGraphNodeGetType(node, &node_type));
    if (node_type == type) out.push_back(node);
  }
  return out;
}

std::vector<cudaGraphNode_t> graph_dependencies(cudaGraphNode_t node) {
  return node_list([node](cudaGraphNode_t* nodes, std::size_t* count) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaGraphNodeGetDependencies(node, nodes, nullptr, count));
#else
    CUDA_CHECK(cudaGraphNodeGetDependencies(node, nodes, count));
#endif
  });
}

std::vector<cudaGraphNode_t> graph_dependents(cudaGraphNode_t node) {
  return node_list([node](cudaGraphNode_t* nodes, std::size_t* count) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaGraphNodeGetDependentNodes(node, nodes, nullptr, count));
#else
    CUDA_CHECK(cudaGraphNodeGetDependentNodes(node, nodes, count));
#endif
  });
}

RecordedGraph::RecordedGraph(cudaStream_t stream,
                             const std::function<void(cudaStream_t)>& launch) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  std::string thrown;
  try {
    launch(stream);
  } catch (const std::exception& error) {
    thrown = error.what();
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph_);
  (void)cudaGetLastError();  // a failed capture leaves its error behind; it is reported here
  if (!thrown.empty()) {
    problem_ = "the launcher failed while its stream was recorded into a graph: " + thrown;
  } else if (ended != cudaSuccess || graph_ == nullptr) {
    problem_ = std::string("recording the launcher's work into a graph failed (") +
               cudaGetErrorName(ended) +
               "): it did something a recorded stream does not allow (a synchronisation, a "
               "synchronous copy), or left a stream it forked from the given one unjoined";
  }
  if (graph_ == nullptr) return;
  std::size_t total = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &total));
  std::vector<cudaGraphNode_t> nodes(total);
  if (total > 0) CUDA_CHECK(cudaGraphGetNodes(graph_, nodes.data(), &total));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) {
      ++kernels_;
      cudaKernelNodeParams params{};
      CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &params));
      cudaLaunchAttributeValue cooperative{};
      CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributeCooperative,
                                                 &cooperative));
      launches_.push_back({params.gridDim, params.blockDim, params.sharedMemBytes,
                           cooperative.cooperative != 0});
    } else if (type == cudaGraphNodeTypeMemset) ++memsets_;
    else if (type == cudaGraphNodeTypeMemcpy) ++copies_;
    else ++others_;
  }
}

RecordedGraph::~RecordedGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

std::string describe(const RecordedLaunch& launch) {
  auto triple = [](const dim3& d) {
    return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) +
           ")";
  };
  return "grid " + triple(launch.grid) + ", block " + triple(launch.block) + ", " +
         std::to_string(launch.dynamic_shared_bytes) + " bytes of dynamic shared memory" +
         (launch.cooperative ? ", cooperative" : "");
}

std::string RecordedGraph::census() const {
  return std::to_string(kernels_) + " kernel launch(es), " + std::to_string(memsets_) +
         " memset(s), " + std::to_string(copies_) + " copy(ies) and " + std::to_string(others_) +
         " other operation(s)";
}

void RecordedGraph::replay(cudaStream_t stream) {
  if (exec_ == nullptr) CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

}  // namespace course::testing
