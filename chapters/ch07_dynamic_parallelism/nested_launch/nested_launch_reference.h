// CPU reference for record_nested_launches, and the comparison the tests and the benchmark
// make: the records of a call form a multiset (their order is whatever the atomics gave).
#pragma once

#include <string>
#include <vector>

#include "nested_launch.h"

// Every record one call appends, sorted by (depth, root_block, block, thread).
std::vector<LaunchRecord> nested_launch_reference(int blocks, int threads, int max_depth);

// Compares what a call appended (in slot order, as downloaded) with the sorted reference as
// multisets. Returns "" when they match; otherwise what differs, for a student to act on:
// slots taken but never written, the records per depth (expected, got, and what a missing or
// extra depth means) and the first difference in sorted order.
std::string describe_record_differences(const std::vector<LaunchRecord>& expected,
                                        std::vector<LaunchRecord> appended, int max_depth);
