"""grader.skeletons: skeletons generated from solutions, and the committed ones in sync."""

from __future__ import annotations

import pytest

from grader import skeletons
from grader.errors import GraderError
from helpers import ROOT, needs_solutions

SOLUTION = """\
#include "x.h"

__global__ void kernel(float* out, int n) {
  // @begin-solution: Compute one element per thread
  // @hint: and guard against i >= n.
  // @hint: Use blockIdx, blockDim and threadIdx.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
  // @skeleton: (void)out;
  // @skeleton: (void)n;
  // @end-solution
}

void launch(float* out, int n) {
    // @begin-solution
    kernel<<<(n + 255) / 256, 256>>>(out, n);
    // @end-solution
}
"""

SKELETON = """\
#include "x.h"

__global__ void kernel(float* out, int n) {
  // TODO: Compute one element per thread
  //       and guard against i >= n.
  //       Use blockIdx, blockDim and threadIdx.
  (void)out;
  (void)n;
}

void launch(float* out, int n) {
}
"""


def test_to_skeleton_hints_stubs_and_indentation():
    assert skeletons.to_skeleton(SOLUTION) == SKELETON


def test_text_outside_blocks_is_copied_verbatim():
    text = "a\n  b // @note not a marker\n\n\tc"
    assert skeletons.to_skeleton(text) == text


def test_hint_only_in_the_hint_lines():
    text = "x\n\t// @begin-solution\n\t// @hint: only hint\n\tcode;\n\t// @end-solution\n"
    assert skeletons.to_skeleton(text) == "x\n\t// TODO: only hint\n"


def test_stub_keeps_the_block_indentation():
    text = "      // @begin-solution: h\n      x;\n      // @skeleton: return 0;\n" \
           "      // @end-solution\n"
    assert skeletons.to_skeleton(text) == "      // TODO: h\n      return 0;\n"


@pytest.mark.parametrize("text, message", [
    ("a\n// @begin-solution: x\nb\n", "f.cu:2: @begin-solution is never closed"),
    ("// @begin-solution\n// @begin-solution\n// @end-solution\n",
     "f.cu:2: @begin-solution inside the block opened at line 1"),
    ("a\n  // @end-solution\n", "f.cu:2: @end-solution outside a @begin-solution block"),
    ("// @hint: stray\n", "f.cu:1: @hint: outside a @begin-solution block"),
    ("x\n\n// @skeleton: stray\n", "f.cu:3: @skeleton: outside a @begin-solution block"),
])
def test_marker_errors_name_file_and_line(text, message):
    with pytest.raises(GraderError) as info:
        skeletons.to_skeleton(text, "f.cu")
    assert str(info.value) == message


def test_generate_compare_and_write(tmp_path):
    solutions, skel = tmp_path / "solutions", tmp_path / "skeletons"
    (solutions / "ch01_a").mkdir(parents=True)
    (solutions / "ch01_a" / "k.cu").write_text(SOLUTION)
    (solutions / "ch01_a" / "notes.md").write_text("not a source")
    assert [(d.path, d.problem) for d in skeletons.compare(solutions, skel)] == \
        [("ch01_a/k.cu", "missing")]
    assert skeletons.write(solutions, skel) == ["ch01_a/k.cu"]
    assert (skel / "ch01_a" / "k.cu").read_text() == SKELETON
    assert not (skel / "ch01_a" / "notes.md").exists()
    assert skeletons.compare(solutions, skel) == []
    assert skeletons.write(solutions, skel) == []  # up to date: nothing rewritten
    (skel / "ch01_a" / "k.cu").write_text(SKELETON + "// edited\n")
    (skel / "ch01_a" / "extra.cuh").write_text("")
    assert sorted((d.path, d.problem) for d in skeletons.compare(solutions, skel)) == \
        [("ch01_a/extra.cuh", "extra"), ("ch01_a/k.cu", "stale")]


@needs_solutions
def test_committed_skeletons_match_solutions():
    differences = skeletons.compare(ROOT / "solutions", ROOT / "skeletons")
    assert differences == [], "run 'python3 -m grader skeletons' and commit skeletons/"


@needs_solutions
def test_every_solution_block_is_well_formed():
    for path in sorted((ROOT / "solutions").rglob("*")):
        if path.is_file() and path.suffix in skeletons.SOURCE_SUFFIXES:
            skeleton = skeletons.to_skeleton(path.read_text(encoding="utf-8"), str(path))
            assert "@begin-solution" not in skeleton and "@end-solution" not in skeleton
