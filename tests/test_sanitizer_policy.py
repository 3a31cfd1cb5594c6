"""The course's compute-sanitizer policy, read from the manifests (no GPU):

- an exercise whose solution synchronises threads runs racecheck and synccheck, the only tools
  that see a missing or misplaced barrier;
- every sanitizer filter leaves out the *RunsOnTheGivenStream* cases: their gate kernel holds
  the stream shut while the launcher returns, and compute-sanitizer's serialised launches
  cannot run past it;
- the exercises where a read of memory nobody wrote is the likely bug run initcheck;
- exercises with dynamic parallelism (chapter 07) run memcheck alone: racecheck, synccheck and
  initcheck refuse a program that launches kernels from the device ("CUDA Dynamic Parallelism
  is not supported by the selected tool", compute-sanitizer of CUDA 13.0 on an H100);
- a trimmed filter still runs every test of the Small* instantiations and each instantiation
  (scripts/check_sanitizer_coverage.py, run by CI on the compiled tests; its rules below).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import manifest
from grader.gtest import selects, split_filter
from helpers import ROOT, needs_solutions

EXERCISES = manifest.discover(ROOT)

STREAM_CASES = "*RunsOnTheGivenStream*"

# Block- and warp-level synchronisation in CUDA C++ and inline PTX. Warp shuffles are left out:
# they synchronise only the lanes of their mask, which synccheck does not check.
SYNC_PATTERN = re.compile(
    r"\b__syncthreads(?:_count|_and|_or)?\s*\("
    r"|\b__syncwarp\s*\("
    r"|\b__barrier_sync\w*\s*\("
    r"|\bbar(?:rier)?\.(?:sync|arrive|red)\b"
    r"|\bmbarrier\."
    r"|\bcp\.async\.(?:wait|mbarrier)"
    r"|\bcg::sync\s*\("
    r"|\.sync\s*\(\s*\)"
    r"|\bcuda::(?:barrier|pipeline|make_pipeline)\b"
    r"|\b__pipeline_wait_prior\s*\("
    r"|\b(?:consumer_wait|arrive_and_wait|arrive_and_drop)\s*\(")

# Where a read of memory nobody wrote is the bug to catch: shared-memory trees, tiles and halos
# that must be filled before they are read, including their zero padding past the input's end.
INITCHECK_REQUIRED = {
    "reduce_v1_neighbored": "its tree reads s[] slots past n that must be loaded as 0",
    "reduce_v2_neighbored_less_divergence": "its tree reads s[] slots past n that must be 0",
    "reduce_v3_interleaved": "its tree reads s[] slots past n that must be loaded as 0",
    "reduce_v4_unroll2": "its tree reads s[] slots whose inputs lie past n",
    "reduce_v5_unroll8": "its tree reads s[] slots whose inputs lie past n",
    "reduce_v6_unroll_last_warp": "the last warp reads s[0..63], every one of them written first",
    "reduce_v7_complete_unroll": "the unrolled tree reads s[] slots whose inputs lie past n",
    "reduce_v8_warp_shuffle": "warp 0 must read only the warp sums that were written",
    "smem_reduction": "the block's tree reads partial[] of threads with no input",
    "barriers": "segment_sum's tree reads partial[] past a short last segment",
    "histogram": "the shared bins must be zeroed before the first atomicAdd",
    "transpose_shared": "the tile is read where a partial tile left it unwritten",
    "aat": "the A and A^T tiles must be zero-filled outside the matrix",
    "matmul_v2_shared_tiles": "the A and B tiles must be zero-filled outside the matrices",
    "matmul_v3_register_blocking": "the A and B tiles must be zero-filled outside the matrices",
    "matmul_v4_warp_tiling": "both stages of the A and B tiles must be zero-filled outside",
    "matmul_v5_async_copy": "the copies' zero-fill must write every float of a stage it reads",
    "bank_conflicts": "every element of the padded tile that is read must be loaded",
    "async_copy": "the staged buffers (asynchronous copies and the halo's zeros) must be filled",
    "stencil_constant": "the tile's halo must hold 0 outside [0, n)",
    "conv2d_constant": "the staged tile and its halo must be filled before the convolution",
}


def _without_comments(source: str) -> str:
    """C++ source without // and /* */ comments, so that hints and notes do not count."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", source)


def synchronises(source: str) -> bool:
    return SYNC_PATTERN.search(_without_comments(source)) is not None


def sync_sources(ex: manifest.Exercise) -> list[Path]:
    """Device code the solution runs: the solution files, the exercise's own .cuh (course code
    compiled into the student's translation unit) and the shared folder's header."""
    paths = [ROOT / "solutions" / ex.chapter / f for f in ex.files]
    paths += sorted(ex.directory.glob("*.cuh"))
    if ex.shared:
        paths.append(ex.shared_directory / f"{ex.shared}.h")
    return [p for p in paths if p.is_file()]


def test_the_sync_detector_sees_code_not_comments():
    assert synchronises("  s[t] = v;\n  __syncthreads();\n")
    assert synchronises("__syncwarp(0xffffffffu);")
    assert synchronises("cg::this_thread_block().sync();")
    assert synchronises('asm volatile("bar.sync 0;");')
    assert synchronises("pipe.consumer_wait();")
    assert synchronises("__shared__ cuda::barrier<cuda::thread_scope_block> bar;")
    assert not synchronises("// then __syncthreads() before reading\nout[i] = in[i];")
    assert not synchronises("/* no __syncwarp() here */ sum += __shfl_down_sync(~0u, sum, 1);")


def test_the_filter_parser_follows_googletest():
    assert split_filter("Small/*:Edge.*-*Stream*:Other.*") == (["Small/*", "Edge.*"],
                                                              ["*Stream*", "Other.*"])
    assert split_filter("-Edge.Slow") == (["*"], ["Edge.Slow"])
    assert selects("Small/*:Edge.*-*RunsOnTheGivenStream*", "Edge.Empty")
    assert not selects("Small/*:Edge.*-*RunsOnTheGivenStream*", "Edge.RunsOnTheGivenStream")
    assert not selects("Small/*", "Large/Case.Name/3")


@needs_solutions
def test_some_exercises_synchronise():
    # Keeps the rule below from passing vacuously if the paths or the pattern break.
    found = {ex.name for ex in EXERCISES if any(synchronises(p.read_text(encoding="utf-8"))
                                                 for p in sync_sources(ex))}
    assert {"barriers", "reduce_v1_neighbored", "matmul_v2_shared_tiles"} <= found, found
    assert "vector_add" not in found


def dynamic_parallelism(ex: manifest.Exercise) -> bool:
    return ex.rdc and "cudadevrt" in ex.libraries


@pytest.mark.parametrize("ex", [e for e in EXERCISES if dynamic_parallelism(e)],
                         ids=lambda e: e.key)
def test_dynamic_parallelism_runs_memcheck_alone(ex):
    refusing = [t for t in ex.sanitizer_tools if t != "memcheck"]
    assert not refusing, (
        f"{ex.name}: {', '.join(refusing)} refuse programs that launch kernels from the device "
        f"(the run fails with a warning and checks nothing): keep only memcheck in "
        f"{ex.manifest.relative_to(ROOT)}")


def test_chapter_07_is_dynamic_parallelism():
    # Keeps the rule above from passing vacuously.
    assert sum(dynamic_parallelism(e) for e in EXERCISES) >= 4


@needs_solutions
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.key)
def test_synchronising_solutions_run_racecheck_and_synccheck(ex):
    sources = [p for p in sync_sources(ex) if synchronises(p.read_text(encoding="utf-8"))]
    if not sources or dynamic_parallelism(ex):
        return  # nothing to require, or nothing the tools could check
    missing = [t for t in ("racecheck", "synccheck") if t not in ex.sanitizer_tools]
    assert not missing, (
        f"{ex.name}: {', '.join(str(p.relative_to(ROOT)) for p in sources)} synchronise "
        f"threads, so add {' and '.join(repr(t) for t in missing)} to [sanitizer] tools in "
        f"{ex.manifest.relative_to(ROOT)} (a missing or misplaced barrier is invisible to "
        "memcheck)")


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.key)
def test_sanitizer_filter_leaves_out_the_stream_cases(ex):
    for tool in ex.sanitizer_tools:
        _, negative = split_filter(ex.sanitizer_filter_for(tool))
        assert STREAM_CASES in negative, (
            f"{ex.name}: {tool}'s filter {ex.sanitizer_filter_for(tool)!r} ([sanitizer] "
            f"gtest_filter or tool_filters) must exclude {STREAM_CASES} (end it with "
            f"'-{STREAM_CASES}', or ':{STREAM_CASES}' after an existing negative part) in "
            f"{ex.manifest.relative_to(ROOT)}: their gate kernel holds the stream, which the "
            "sanitizer's serialised launches cannot run past")


@pytest.mark.parametrize("name", sorted(INITCHECK_REQUIRED))
def test_initcheck_where_uninitialised_reads_are_the_bug(name):
    by_name = {ex.name: ex for ex in EXERCISES}
    assert name in by_name, (
        f"{name} is no longer an exercise: update INITCHECK_REQUIRED in {Path(__file__).name}")
    ex = by_name[name]
    assert "initcheck" in ex.sanitizer_tools, (
        f"{name}: add 'initcheck' to [sanitizer] tools in {ex.manifest.relative_to(ROOT)} "
        f"({INITCHECK_REQUIRED[name]})")


# ------------------------------------------------------------ coverage of the trimmed filters
# scripts/check_sanitizer_coverage.py runs in CI on the compiled tests; its rules here.

def _coverage_script():
    spec = importlib.util.spec_from_file_location(
        "check_sanitizer_coverage", ROOT / "scripts" / "check_sanitizer_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COVERAGE = _coverage_script()
CASES = ["Small/Reduce.SumsRandomInts/n_1_block_64", "Small/Reduce.SumsRandomInts/n_33_block_64",
         "Small/Reduce.SumsFromAMisalignedPointer/n_1_block_64",
         "SmallEveryBlockSize/Reduce.SumsRandomInts/n_2047_block_128",
         "Large/Reduce.SumsRandomInts/n_268435456_block_256",
         "ReduceEdge.ZeroElementsGiveZero", "ReduceEdge.RunsOnTheGivenStream"]


def test_a_filter_that_runs_one_case_of_each_small_test_and_instantiation_covers():
    assert COVERAGE.uncovered(CASES, "Small/*/n_1_*:SmallEveryBlockSize/*-*Stream*") == []
    assert COVERAGE.problems("reduce", CASES, "Small/*:SmallEveryBlockSize/*") == []


def test_a_trim_that_drops_a_small_test_or_an_instantiation_is_named():
    # The misaligned pointer is called only in its own test: trimmed to random ints, unchecked.
    assert COVERAGE.uncovered(CASES, "Small/Reduce.SumsRandomInts/*:SmallEveryBlockSize/*") \
        == ["Reduce.SumsFromAMisalignedPointer"]
    assert COVERAGE.uncovered(CASES, "Small/*") == ["SmallEveryBlockSize/Reduce"]
    assert COVERAGE.uncovered(CASES, "ReduceEdge.*") == [
        "Reduce.SumsFromAMisalignedPointer", "Reduce.SumsRandomInts", "Small/Reduce",
        "SmallEveryBlockSize/Reduce"]
    [line] = COVERAGE.problems("reduce", CASES, "Small/*")
    assert line == "reduce: the sanitizer filter 'Small/*' runs no case of " \
                   "SmallEveryBlockSize/Reduce"


def test_an_exemption_excuses_its_tests_and_must_stay_needed(monkeypatch):
    monkeypatch.setitem(COVERAGE.EXEMPT, "reduce", ("Reduce.SumsFromAMisaligned*", "why"))
    trimmed = "Small/Reduce.SumsRandomInts/*:SmallEveryBlockSize/*"
    assert COVERAGE.problems("reduce", CASES, trimmed) == []
    [stale] = COVERAGE.problems("reduce", CASES, "Small/*:SmallEveryBlockSize/*")
    assert "no longer needed" in stale


def test_a_tools_own_filter_must_select_some_case():
    filters = (("racecheck", "Small/*/n_1_*-*Stream*"), ("synccheck", "Smal/*"))
    assert COVERAGE.tool_filter_problems("reduce", CASES, filters) == [
        "reduce: synccheck's filter 'Smal/*' ([sanitizer.tool_filters]) selects no test case"]


def test_the_exemptions_name_exercises():
    names = {ex.name for ex in EXERCISES}
    assert set(COVERAGE.EXEMPT) <= names, set(COVERAGE.EXEMPT) - names


def test_the_coverage_check_needs_every_test_program(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_sanitizer_coverage.py"),
                             str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("_test was not built"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
