"""One home for test helpers: the exercises' tests and benchmarks (chapters/**/*_test.cpp,
*_bench.cpp) use the shared ones in course/testing.h and course/testing_common.h
(namespace course::testing) instead of copies of their own. A copy drifts: one names its
sizes "n_7" and the next "n7", one poison constant is -1 and the other a memset, and the
grader's manifests and sanitizer filters name cases by what these helpers produce.

Each rule below is a pattern that finds a hand-made copy in a chapter's test or benchmark
source, why it is one, and the shared helper to use instead. Runs on the CPU; reads files only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import ROOT

CHAPTERS = ROOT / "chapters"
SUPPORT_HEADERS = ROOT / "support" / "include" / "course"


def chapter_test_sources() -> list[Path]:
    """Every test and benchmark source of every exercise (hidden tests included)."""
    return sorted([*CHAPTERS.rglob("*_test.cpp"), *CHAPTERS.rglob("*_bench.cpp")])


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str     # a regex, re.MULTILINE, matched against the whole file
    why: str         # why a match is a copy of a shared helper
    instead: str     # what to use
    example: str     # a copy the rule must catch (checked below, so the pattern stays alive)

    @property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.MULTILINE)


RULES = [
    Rule(
        name="size-name",
        pattern=r"TestParamInfo<\s*(?:std::)?size_t\s*>"
                r"|\"n_?\"\s*\+\s*std::to_string\(\s*info\.param\s*\)",
        why="a GoogleTest name generator for a sweep over sizes: each test had its own, and the "
            "case names it makes (Small/Suite.Case/n_1000) are what the manifests' filters and "
            "the grader's reports name",
        instead="course::testing::size_name (\"n_1000\") or compact_size_name (\"n1000\")",
        example='std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {\n'
                '  return "n_" + std::to_string(info.param);\n}\n',
    ),
    Rule(
        name="host-sum",
        pattern=r"^[ \t]*(?:long long|unsigned long long|std::u?int64_t|double|float|int)\s+"
                r"\w*sum\w*\s*\([^)]*std::vector<[^)]*\)\s*\{\s*\n"
                r"\s*(?:long long|unsigned long long|std::u?int64_t|double|float|int)\s+\w+\s*="
                r"\s*0\s*;\s*\n\s*for\s*\(",
        why="a host reference that adds a range of a vector in a loop: four reduction tests "
            "had one each, differing only in how the range is given",
        instead="course::testing::host_sum<Sum>(values, first, count)",
        example="long long host_sum(const std::vector<int>& values, std::size_t first) {\n"
                "  long long sum = 0;\n"
                "  for (std::size_t i = first; i < values.size(); ++i) sum += values[i];\n"
                "  return sum;\n}\n",
    ),
    Rule(
        name="host-map",
        pattern=r"std::vector<[\w:]+>\s+(\w+)\((\w+)\.size\(\)\);\s*\n\s*for\s*\(\s*"
                r"(?:std::)?size_t\s+(\w+)\s*=\s*0;\s*\3\s*<\s*\2\.size\(\);\s*\+\+\3\)\s*"
                r"\1\[\3\]\s*=\s*\w+\(\s*\2\[\3\]",
        why="a host reference that applies the header's per-element function to each input in a "
            "loop of its own: the same loop in the tests and benchmarks of three exercises",
        instead="course::testing::host_map(in, f)",
        example="std::vector<float> reference(const std::vector<float>& in) {\n"
                "  std::vector<float> out(in.size());\n"
                "  for (std::size_t i = 0; i < in.size(); ++i) out[i] = urgent_response(in[i]);\n"
                "  return out;\n}\n",
    ),
    Rule(
        name="custom-deleter",
        pattern=r"struct\s+\w+\s*\{\s*void\s+operator\(\)\s*\(\s*[\w:]+\s*\*\s*\w*\s*\)\s*const",
        why="a std::unique_ptr deleter that calls the exercise's own free function "
            "(free_pinned, free_host, destroy_stream_pool): the same three lines in six files",
        instead="course::testing::Owned<T, free_function> (and owned_result<Owner>(pointer, "
                "may_be_null, call) in a test, which fails on an unexpected nullptr)",
        example="struct PinnedDeleter {\n  void operator()(float* p) const { free_pinned(p); }\n};\n",
    ),
    Rule(
        name="raw-event-timing",
        pattern=r"\bcudaEvent(?:Create(?:WithFlags)?|ElapsedTime|Destroy)\s*\(",
        why="raw CUDA events in a test or benchmark: leaked on an early return or an exception, "
            "and a timing of its own beside the harness's",
        instead="course::Event (RAII), course::GpuTimer (one stream), "
                "course::testing::elapsed_ms(from, to) (events on several streams)",
        example="    CUDA_CHECK(cudaEventElapsedTime(&ms, before, after));\n",
    ),
    Rule(
        name="local-poison",
        pattern=r"(?:constexpr|const)\s+[\w:]+\s+kPoison(?!Byte\b|ed)\w*\s*="
                r"|\b(?:poison_value|poison_values|poison_vector)\s*\([^)]*\)\s*\{"
                r"|std::memset\(\s*&\w+\s*,[^;]*kPoisonByte",
        why="a poison constant of the test's own: what a never-written element holds follows "
            "from course::kPoisonByte, and a hand-written -1 or memset drifts from it",
        instead="course::testing::poison_value<T>() or poison_values<T>(count)",
        example="// What an int still holding the poison bytes reads as.\n"
                "constexpr int kPoisonKey = -1;\n",
    ),
    Rule(
        name="empty-call-check",
        pattern=r"equal\(\s*(?:course::testing::)?poison_values<[^>]+>\([^()]*(?:\([^()]*\))?"
                r"[^()]*\)\s*,\s*(\w+)\.download\(\)[^;]*;\s*\n\s*EXPECT_TRUE\(\s*\1\."
                r"guards_intact\(",
        why="the \"empty call, then a small call\" check written out: all of a guarded output "
            "still poison and its guards intact, after a call with nothing to do",
        instead="EXPECT_TRUE(course::testing::wrote_nothing(out, \"out after a call with n = 0\"))",
        example="  EXPECT_TRUE(course::testing::equal(course::testing::poison_values<float>(kCount),\n"
                "                                     out.download(), {{}, \"out after n = 0\"}));\n"
                "  EXPECT_TRUE(out.guards_intact(\"out after n = 0\"));\n",
    ),
    Rule(
        name="poison-after-by-hand",
        pattern=r"equal\(\s*(?:course::testing::)?poison_values<[^>]+>\([^;]*?"
                r"std::vector<[^>]+>\(\s*\w+\.begin\(\)\s*\+[^;]*?\w+\.end\(\)\s*\)",
        why="the check that nothing past what a call may write changed, written out: the poison "
            "compared with a slice of the downloaded output and its guard",
        instead="EXPECT_TRUE(course::testing::poison_after(all, written, \"memory after out[10) "
                "(must not be written)\"))",
        example="  EXPECT_TRUE(course::testing::equal(course::testing::poison_values<float>(kCount - 10),\n"
                "                                     std::vector<float>(all.begin() + 10, all.end()),\n"
                "                                     {{}, \"memory after y[10) (must not be written)\"}));\n",
    ),
    Rule(
        name="graph-node-lists",
        pattern=r"\bcudaGraph(?:GetNodes|NodeGetDependencies|NodeGetDependentNodes)\s*\(",
        why="listing a graph's nodes or a node's edges by hand: the count-then-fill calls, and a "
            "CUDA 13 signature switch for the edges, in four tests",
        instead="course::testing::graph_nodes(graph[, type]), graph_dependencies(node), "
                "graph_dependents(node)",
        example="  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));\n",
    ),
    Rule(
        name="repoison-by-hand",
        pattern=r"fill_device_bytes\(\s*(\w+)\.data\(\)\s*,\s*course::kPoisonByte\s*,\s*\1\."
                r"size\(\)\s*\*\s*sizeof",
        why="poisoning a guarded output again before the next call, by hand",
        instead="out.repoison() (course::testing::GuardedOutput)",
        example="    course::testing::fill_device_bytes(out.data(), course::kPoisonByte, "
                "out.size() * sizeof(float));\n",
    ),
    Rule(
        name="page-locked-check",
        pattern=r"cudaPointerGetAttributes\([^;]*;\s*\n[^;]*cudaMemoryTypeHost",
        why="the \"is this page-locked memory\" check of an exercise's host allocator, written "
            "out in each exercise that has one",
        instead="EXPECT_TRUE(course::testing::page_locked(pointer))",
        example="  CUDA_CHECK(cudaPointerGetAttributes(&attributes, p.get()));\n"
                "  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);\n",
    ),
]


def hits(rule: Rule, text: str) -> list[int]:
    """The 1-based lines where the rule's pattern starts in `text`."""
    return [text.count("\n", 0, m.start()) + 1 for m in rule.regex.finditer(text)]


def test_there_are_chapter_tests():
    sources = chapter_test_sources()
    assert any(p.name.endswith("_test.cpp") for p in sources)
    assert any(p.name.endswith("_bench.cpp") for p in sources)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_rule_catches_its_example(rule):
    assert hits(rule, rule.example), f"{rule.name}: the pattern no longer catches its example"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_no_chapter_test_copies_a_shared_helper(rule):
    found = []
    for path in chapter_test_sources():
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}:{line}" for line in hits(rule, text)]
    assert not found, (
        f"{rule.name}: {rule.why}.\nUse {rule.instead} instead, at:\n  " + "\n  ".join(found))


def test_the_shared_helpers_exist():
    """The helpers the rules point to are where the rules say."""
    testing_h = (SUPPORT_HEADERS / "testing.h").read_text(encoding="utf-8")
    common_h = (SUPPORT_HEADERS / "testing_common.h").read_text(encoding="utf-8")
    assert '#include "course/testing_common.h"' in testing_h
    for name in ("size_name", "compact_size_name", "owned_result", "wrote_nothing",
                 "page_locked", "repoison", "watched", "poison_after", "graph_nodes",
                 "graph_dependencies", "graph_dependents"):
        assert re.search(rf"\b{name}\b", testing_h), f"{name} missing from course/testing.h"
    for name in ("poison_value", "poison_values", "host_sum", "host_map", "FreeWith", "Owned",
                 "elapsed_ms"):
        assert re.search(rf"\b{name}\b", common_h), f"{name} missing from course/testing_common.h"
    # testing_common.h serves benchmarks, which do not link GoogleTest.
    assert "gtest" not in common_h
