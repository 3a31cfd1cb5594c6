#include "stream_ordered_allocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "course/testing.h"
#include "stream_ordered_allocation_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;
using Offsets = std::vector<std::size_t>;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// What the driver's rounding and bookkeeping may take without a leak.
constexpr std::size_t kLeakSlack = 4 * kMiB;
constexpr char kNoPool[] = "open_scratch_pool returned nullptr: it must return the pool "
                           "process_chunks allocates from";

// The pool open_scratch_pool returns, given back with close_scratch_pool when the case ends,
// once the device has finished every call's work (the contract of close_scratch_pool).
class ScratchPool {
 public:
  ScratchPool() : pool_(open_scratch_pool()) {}
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;
  ~ScratchPool() { close(); }
  cudaMemPool_t get() const { return pool_; }
  void close() {
    if (closed_) return;
    closed_ = true;
    try {
      CUDA_CHECK(cudaDeviceSynchronize());
      close_scratch_pool(pool_);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "close_scratch_pool: " << error.what();
    }
  }

 private:
  cudaMemPool_t pool_;
  bool closed_ = false;
};

std::uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attribute) {
  std::uint64_t value = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, attribute, &value));
  return value;
}

Offsets offsets_of(const std::vector<std::size_t>& sizes) {
  Offsets offsets = {0};
  for (const std::size_t size : sizes) offsets.push_back(offsets.back() + size);
  return offsets;
}

int chunk_count(const Offsets& offsets) { return static_cast<int>(offsets.size()) - 1; }

void call(const std::uint32_t* in, std::uint32_t* out, const Offsets& offsets,
          cudaMemPool_t pool, cudaStream_t stream) {
  process_chunks(in, out, offsets.data(), chunk_count(offsets), pool, stream);
}

struct Layout {
  std::string name;
  Offsets offsets;
};

std::string describe(const Layout& layout) {
  return layout.name + " (" + std::to_string(chunk_count(layout.offsets)) + " chunks)";
}

// Ways to cut n elements: one chunk; two halves (the middle element of an odd chunk is its own
// mirror); random cuts with empty chunks first, in the middle and last; for small n, chunks of
// one, two and three elements in turn.
std::vector<Layout> layouts_for(std::size_t n, std::mt19937_64& rng) {
  std::vector<Layout> layouts = {{"one chunk", {0, n}}, {"two halves", {0, n / 2, n}}};
  std::uniform_int_distribution<std::size_t> at(0, n);
  std::vector<std::size_t> cuts(std::min<std::size_t>(n, 40));
  for (std::size_t& cut : cuts) cut = at(rng);
  cuts.push_back(cuts.empty() ? 0 : cuts.front());  // the same cut twice: an empty chunk
  std::sort(cuts.begin(), cuts.end());
  Offsets random = {0, 0};  // an empty first chunk
  random.insert(random.end(), cuts.begin(), cuts.end());
  random.push_back(n);
  random.push_back(n);  // an empty last chunk
  layouts.push_back({"random cuts", random});
  if (n <= 257) {
    std::vector<std::size_t> sizes;
    for (std::size_t covered = 0, next = 1; covered < n; next = next % 3 + 1) {
      sizes.push_back(std::min(next, n - covered));
      covered += sizes.back();
    }
    layouts.push_back({"chunks of 1, 2 and 3", offsets_of(sizes)});
  }
  return layouts;
}

std::vector<std::uint32_t> random_words(std::size_t n, std::mt19937_64& rng) {
  return course::random_uints(n, 0u, UINT_MAX, rng);
}

class Chunks : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Chunks, MatchReferenceForEveryLayout) {
  const std::size_t n = GetParam();
  auto rng = course::testing::case_rng();
  const GuardedInput<std::uint32_t> in(random_words(n, rng));
  GuardedOutput<std::uint32_t> out(n);
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  course::Stream stream;
  for (const Layout& layout : layouts_for(n, rng)) {
    out.repoison();
    call(in.data(), out.data(), layout.offsets, pool.get(), stream);
    // The whole device, so results are there even when the work went elsewhere: the case
    // that holds the stream shut tells where it ran.
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), layout.offsets),
                                       out.download(), {{}, "out with " + describe(layout)}));
  }
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

using course::testing::size_name;

INSTANTIATE_TEST_SUITE_P(Small, Chunks, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, Chunks,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 22) + 1})),
                         size_name);

TEST(ChunksEdge, NoChunksWriteNothingThenChunksWork) {
  // No chunk at all, then three empty ones: nothing to allocate, launch or write (a
  // zero-byte allocation or a grid of zero blocks is an error). The same buffers then take
  // two chunks, so doing nothing at all does not pass.
  const std::size_t n = 100;
  auto rng = course::testing::case_rng();
  const GuardedInput<std::uint32_t> in(random_words(n, rng));
  GuardedOutput<std::uint32_t> out(n);
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  course::Stream stream;
  call(in.data(), out.data(), {0}, pool.get(), stream);
  call(in.data(), out.data(), {0, 0, 0, 0}, pool.get(), stream);
  EXPECT_TRUE(course::testing::wrote_nothing(
      out, "out after a call with no chunk and one with three empty chunks"));
  const Offsets two = {0, 37, n};
  call(in.data(), out.data(), two, pool.get(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), two), out.download(),
                                     {{}, "out after a call with two chunks"}));
}

TEST(ChunksEdge, CallsAgainWithNewInputs) {
  // Same buffers and layout, new contents: a result remembered by pointer or by size fails.
  const std::size_t n = 100003;
  const Offsets offsets = {0, 1, 5000, 5000, 77777, n};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<std::uint32_t> in(n);
  GuardedOutput<std::uint32_t> out(n);
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  course::Stream stream;
  for (const std::string which : {"first call", "second call"}) {
    const auto input = random_words(n, rng);
    in.upload(input);
    out.repoison();
    call(in.data(), out.data(), offsets, pool.get(), stream);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(chunks_reference(input, offsets), out.download(),
                                       {{}, "out after the " + which}));
  }
}

TEST(ChunksEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the given stream shut while process_chunks returns: work on another
  // stream writes out meanwhile, and a launcher that waits for the device (cudaFree of
  // cudaMalloc'd scratch does, and so does any synchronisation) never returns.
  const std::size_t n = std::size_t{1} << 20;
  auto rng = course::testing::case_rng();
  std::vector<std::size_t> sizes(64);
  std::uniform_int_distribution<std::size_t> size(1, 2 * n / sizes.size() - 1);
  for (std::size_t& s : sizes) s = size(rng);
  const Offsets offsets = offsets_of(sizes);
  const GuardedInput<std::uint32_t> in(random_words(offsets.back(), rng));
  GuardedOutput<std::uint32_t> out(offsets.back());
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { call(in.data(), out.data(), offsets, pool.get(), s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), offsets), out.download(),
                                     {{}, "out once the given stream finished"}));
}

const char* node_kind(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeKernel: return "a kernel";
    case cudaGraphNodeTypeMemAlloc: return "an allocation";
    case cudaGraphNodeTypeMemFree: return "a free";
    case cudaGraphNodeTypeMemcpy: return "a copy";
    case cudaGraphNodeTypeMemset: return "a memset";
    default: return "another kind of node";
  }
}

// Success when `graph` is one chain that holds, for each non-empty chunk in order, an
// allocation of at least the chunk's scratch, two kernels, and the free of that allocation.
::testing::AssertionResult is_chain_of_chunks(cudaGraph_t graph,
                                              const std::vector<std::size_t>& sizes) {
  std::vector<std::size_t> counts, chunks;  // the non-empty chunks' sizes and indices
  for (std::size_t c = 0; c < sizes.size(); ++c)
    if (sizes[c] > 0) {
      counts.push_back(sizes[c]);
      chunks.push_back(c);
    }
  const std::size_t expected = 4 * counts.size();
  const auto nodes = course::testing::graph_nodes(graph);
  if (nodes.size() != expected)
    return ::testing::AssertionFailure()
           << "the recorded call has " << nodes.size() << " nodes; " << counts.size()
           << " non-empty chunks make " << expected << ": per chunk its scratch's allocation "
           << "(cudaMallocFromPoolAsync or cudaMallocAsync), mix_kernel, pair_kernel and the "
              "scratch's free (cudaFreeAsync), all on the given stream";
  std::vector<cudaGraphNode_t> roots;
  for (cudaGraphNode_t node : nodes)
    if (course::testing::graph_dependencies(node).empty()) roots.push_back(node);
  if (roots.size() != 1)
    return ::testing::AssertionFailure()
           << "the recorded call has " << roots.size() << " nodes that wait for nothing; on "
           << "one stream everything forms one chain, each operation after the previous one";
  static constexpr cudaGraphNodeType kStep[] = {cudaGraphNodeTypeMemAlloc,
                                                cudaGraphNodeTypeKernel,
                                                cudaGraphNodeTypeKernel,
                                                cudaGraphNodeTypeMemFree};
  static constexpr const char* kWhat[] = {"its scratch's allocation", "mix_kernel",
                                          "pair_kernel", "its scratch's free"};
  cudaGraphNode_t node = roots.front();
  void* scratch = nullptr;
  for (std::size_t k = 0; k < expected; ++k) {
    const std::size_t chunk = k / 4;
    const std::string where = "operation " + std::to_string(k % 4 + 1) + " of chunk " +
                              std::to_string(chunks[chunk]) + " (" +
                              std::to_string(counts[chunk]) + " elements)";
    cudaGraphNodeType type{};
    CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != kStep[k % 4])
      return ::testing::AssertionFailure()
             << where << " is " << node_kind(type) << " where " << kWhat[k % 4]
             << " belongs: each chunk allocates its scratch on the stream, runs its two "
                "kernels, then frees the scratch on the stream";
    if (type == cudaGraphNodeTypeMemAlloc) {
      cudaMemAllocNodeParams params{};
      CUDA_CHECK(cudaGraphMemAllocNodeGetParams(node, &params));
      if (params.bytesize < counts[chunk] * sizeof(std::uint32_t))
        return ::testing::AssertionFailure()
               << where << " allocates " << params.bytesize << " bytes, less than the chunk's "
               << counts[chunk] << " uint32_t";
      scratch = params.dptr;
    }
    if (type == cudaGraphNodeTypeMemFree) {
      void* freed = nullptr;
      CUDA_CHECK(cudaGraphMemFreeNodeGetParams(node, &freed));
      if (freed != scratch)
        return ::testing::AssertionFailure()
               << where << " frees another pointer than the chunk allocated: free each "
               << "chunk's scratch after its two kernels";
    }
    const auto next = course::testing::graph_dependents(node);
    if (k + 1 == expected) break;
    if (next.size() != 1 || course::testing::graph_dependencies(next.front()).size() != 1)
      return ::testing::AssertionFailure()
             << "after " << where << " the chain branches: everything goes on the given "
             << "stream, one operation after another";
    node = next.front();
  }
  return ::testing::AssertionSuccess();
}

TEST(ChunksRecorded, EachChunkAllocatesUsesAndFreesItsScratchOnTheStream) {
  // Recorded into a graph instead of run, stream-ordered allocations and frees become
  // allocation and free nodes: the graph shows where each scratch came from and where it went,
  // which the results cannot. cudaMalloc / cudaFree leave no node (or end the recording), a
  // free on another stream leaves the graph's allocation unfreed, and a synchronisation
  // cannot be recorded.
  const std::vector<std::size_t> sizes = {700, 0, 1, 33, 0, 1024, 5, 0};
  const Offsets offsets = offsets_of(sizes);
  auto rng = course::testing::case_rng();
  const GuardedInput<std::uint32_t> in(random_words(offsets.back(), rng));
  GuardedOutput<std::uint32_t> out(offsets.back());
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  course::Stream stream;
  // One ordinary call first, so that one-time set-up (loading the kernels) happens outside
  // the recording.
  call(in.data(), out.data(), offsets, pool.get(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  out.repoison();
  {
    course::testing::RecordedGraph recorded(
        stream, [&](cudaStream_t s) { call(in.data(), out.data(), offsets, pool.get(), s); });
    ASSERT_TRUE(recorded.problem().empty())
        << "process_chunks: " << recorded.problem()
        << " (cudaFree waits for the device, and cudaFreeAsync of a recorded allocation must "
           "go on the recorded stream)";
    ASSERT_TRUE(is_chain_of_chunks(recorded.graph(), sizes)) << "; recorded: "
                                                             << recorded.census();
    // The recording is the call's work: replayed, it must give the results.
    recorded.replay(stream);
    stream.synchronize();
  }
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGraphMemTrim(device));  // the replay's scratch, held for graphs
  EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), offsets), out.download(),
                                     {{}, "out after replaying the recorded call"}));
}

TEST(ScratchPool, KeepsFreedScratchAcrossSynchronisation) {
  // The pool's release threshold decides what it keeps when the host synchronises: below
  // it, memory stays reserved for the next call; above it, it goes back to the driver. With
  // the default, 0, every synchronisation empties the pool, and the next call maps its
  // memory again.
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  const std::uint64_t threshold = pool_attribute(pool.get(), cudaMemPoolAttrReleaseThreshold);
  EXPECT_GE(threshold, kScratchPoolKeeps)
      << "the pool's release threshold is " << threshold << " bytes; raise it to at least "
      << "kScratchPoolKeeps with cudaMemPoolSetAttribute(pool, "
         "cudaMemPoolAttrReleaseThreshold, &value) so that freed scratch stays in the pool";
  const Offsets offsets = {0, kMiB, kMiB + 4096};
  auto rng = course::testing::case_rng();
  const GuardedInput<std::uint32_t> in(random_words(offsets.back(), rng));
  GuardedOutput<std::uint32_t> out(offsets.back());
  course::Stream stream;
  call(in.data(), out.data(), offsets, pool.get(), stream);
  stream.synchronize();
  const std::uint64_t reserved = pool_attribute(pool.get(), cudaMemPoolAttrReservedMemCurrent);
  EXPECT_GE(reserved, kMiB * sizeof(std::uint32_t))
      << "once the stream was synchronised the pool kept " << reserved << " bytes, less than "
      << "the largest chunk's scratch: it gave its memory back to the driver (is its release "
         "threshold raised, and is the scratch allocated from it?)";
  EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), offsets), out.download(),
                                     {{}, "out"}));
}

TEST(ScratchPool, ScratchComesFromThePoolAndIsFreed) {
  // The pool counts what it hands out: its high watermark shows that the scratch came from
  // it, and what is still in use once the work is done must be what was in use before.
  ScratchPool pool;
  ASSERT_NE(pool.get(), nullptr) << kNoPool;
  const std::size_t largest = 300007;
  const Offsets offsets = {0, 1000, 1000 + largest, 1000 + largest + 77};
  auto rng = course::testing::case_rng();
  const GuardedInput<std::uint32_t> in(random_words(offsets.back(), rng));
  GuardedOutput<std::uint32_t> out(offsets.back());
  course::Stream stream;
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::uint64_t used_before = pool_attribute(pool.get(), cudaMemPoolAttrUsedMemCurrent);
  std::uint64_t zero = 0;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool.get(), cudaMemPoolAttrUsedMemHigh, &zero));
  call(in.data(), out.data(), offsets, pool.get(), stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::uint64_t high = pool_attribute(pool.get(), cudaMemPoolAttrUsedMemHigh);
  EXPECT_GE(high, largest * sizeof(std::uint32_t))
      << "at most " << high << " bytes of the pool were in use during the call, less than the "
      << "largest chunk's scratch: allocate the scratch from the pool open_scratch_pool "
         "returned (cudaMallocFromPoolAsync with it)";
  const std::uint64_t used_after = pool_attribute(pool.get(), cudaMemPoolAttrUsedMemCurrent);
  EXPECT_EQ(used_after, used_before)
      << "the pool still has " << used_after - used_before << " bytes in use after the call's "
      << "work finished: free every chunk's scratch (cudaFreeAsync on the stream)";
  EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), offsets), out.download(),
                                     {{}, "out"}));
}

TEST(ScratchPool, ClosingGivesBackEveryByte) {
  // A pool that keeps its memory must still give it back when it is closed; freed scratch
  // that is never trimmed, or scratch never freed, stays taken from the device.
  {
    // One small call on a pool of its own first, so that what the driver sets up once (the
    // kernels' code, the allocator's own state) is in place before the watch starts.
    const GuardedInput<std::uint32_t> in(std::vector<std::uint32_t>(64, 1u));
    GuardedOutput<std::uint32_t> out(64);
    ScratchPool pool;
    ASSERT_NE(pool.get(), nullptr) << kNoPool;
    course::Stream stream;
    call(in.data(), out.data(), {0, 64}, pool.get(), stream);
  }
  const course::testing::DeviceMemoryWatch memory(kLeakSlack);
  {
    const std::size_t largest = 8 * kMiB;  // 32 MiB of scratch, far above the slack
    const Offsets offsets = {0, 4096, 4096 + largest, 4096 + largest + kMiB};
    auto rng = course::testing::case_rng();
    const GuardedInput<std::uint32_t> in(random_words(offsets.back(), rng));
    GuardedOutput<std::uint32_t> out(offsets.back());
    ScratchPool pool;
    ASSERT_NE(pool.get(), nullptr) << kNoPool;
    course::Stream stream;
    for (int round = 0; round < 3; ++round)
      call(in.data(), out.data(), offsets, pool.get(), stream);
    pool.close();
    EXPECT_TRUE(course::testing::equal(chunks_reference(in.host(), offsets), out.download(),
                                       {{}, "out after three calls"}));
  }
  EXPECT_TRUE(memory.nothing_leaked(
      "free every chunk's scratch with cudaFreeAsync, and make close_scratch_pool give back "
      "what the pool keeps: cudaMemPoolDestroy for a pool of your own, a threshold of 0 and "
      "cudaMemPoolTrimTo for the device's pool"));
}

}  // namespace
