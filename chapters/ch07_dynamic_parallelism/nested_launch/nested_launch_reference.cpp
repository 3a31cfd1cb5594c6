#include "nested_launch_reference.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

namespace {

auto key(const LaunchRecord& r) { return std::tie(r.depth, r.root_block, r.block, r.thread); }

bool less(const LaunchRecord& a, const LaunchRecord& b) { return key(a) < key(b); }

bool same(const LaunchRecord& a, const LaunchRecord& b) { return key(a) == key(b); }

// A slot whose four fields still hold the poison (every byte 0xFF): taken, never written.
bool never_written(const LaunchRecord& r) {
  return r.depth == -1 && r.root_block == -1 && r.block == -1 && r.thread == -1;
}

std::string show(const LaunchRecord& r) {
  std::ostringstream out;
  out << "{depth " << r.depth << ", root_block " << r.root_block << ", block " << r.block
      << ", thread " << r.thread << "}";
  return out.str();
}

std::map<int, std::size_t> per_depth(const std::vector<LaunchRecord>& records) {
  std::map<int, std::size_t> counts;
  for (const LaunchRecord& r : records) ++counts[r.depth];
  return counts;
}

// Why depth `depth` holds `got` records where `expected` belong.
std::string depth_diagnosis(int depth, std::size_t expected, std::size_t got, int max_depth) {
  if (expected == 0)
    return depth < 0 ? "no grid has a negative depth: records written with wrong fields"
                     : "this depth should not exist: the recursion stops at max_depth = " +
                           std::to_string(max_depth) + " and when half the threads is 0";
  if (depth == 0)
    return got < expected ? "the grid launched from the host (blocks x threads) is missing "
                            "threads, or it never ran"
                          : "more depth-0 records than blocks x threads: a thread recorded "
                            "twice, or depth 0 was launched more than once";
  const std::string parent = "depth " + std::to_string(depth - 1);
  if (got == 0)
    return "the launch at " + parent + " failed or was never made (check cudaGetLastError() "
           "after the device-side launch, and the conditions: depth < max_depth and at least "
           "1 thread for the child)";
  if (got < expected)
    return "some grids launched at " + parent + " are missing or have too few threads (each "
           "block's thread 0 launches one grid of 1 block with half its block's threads)";
  return "more than one child grid per block at " + parent + " (only thread 0 launches), "
         "children with too many threads, or a thread recorded twice";
}

}  // namespace

std::vector<LaunchRecord> nested_launch_reference(int blocks, int threads, int max_depth) {
  std::vector<LaunchRecord> out;
  out.reserve(nested_launch_record_count(blocks, threads, max_depth));
  for (int depth = 0, t = threads; t >= 1 && depth <= max_depth; ++depth, t /= 2)
    for (int root = 0; root < blocks; ++root)
      for (int thread = 0; thread < t; ++thread)
        out.push_back(LaunchRecord{depth, root, depth == 0 ? root : 0, thread});
  std::sort(out.begin(), out.end(), less);
  return out;
}

std::string describe_record_differences(const std::vector<LaunchRecord>& expected,
                                        std::vector<LaunchRecord> appended, int max_depth) {
  std::sort(appended.begin(), appended.end(), less);
  if (appended.size() == expected.size() &&
      std::equal(expected.begin(), expected.end(), appended.begin(), same))
    return "";

  std::ostringstream out;
  out << "the call appended " << appended.size() << " records, expected " << expected.size()
      << "\n";
  const auto unwritten = std::count_if(appended.begin(), appended.end(), never_written);
  if (unwritten > 0)
    out << "  " << unwritten << " slots were taken with atomicAdd but never written: take "
        << "exactly one slot per record and write the record there\n";
  appended.erase(std::remove_if(appended.begin(), appended.end(), never_written),
                 appended.end());

  const auto want = per_depth(expected), have = per_depth(appended);
  std::map<int, bool> depths;
  for (const auto& [depth, n] : want) depths[depth] = true;
  for (const auto& [depth, n] : have) depths[depth] = true;
  for (const auto& [depth, unused] : depths) {
    const std::size_t e = want.count(depth) ? want.at(depth) : 0;
    const std::size_t g = have.count(depth) ? have.at(depth) : 0;
    out << "  depth " << depth << ": expected " << e << " records, got " << g;
    if (e != g) out << ": " << depth_diagnosis(depth, e, g, max_depth);
    out << "\n";
  }

  // Both sorted by (depth, root_block, block, thread): the first place they part.
  const std::size_t common = std::min(expected.size(), appended.size());
  std::size_t i = 0;
  while (i < common && same(expected[i], appended[i])) ++i;
  out << "  first difference in sorted order (depth, root_block, block, thread), record " << i
      << ": expected " << (i < expected.size() ? show(expected[i]) : "nothing more")
      << ", got " << (i < appended.size() ? show(appended[i]) : "nothing more");
  return out.str();
}
