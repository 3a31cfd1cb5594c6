"""The numbers the notes quote about scoring cannot drift from the manifests.

scripts/quoted_thresholds.py writes each chapter README's points and thresholds tables from the
manifests and checks every other quote (docs/measurements/README.md, "Numbers in the notes");
scripts/write_measured.py writes a report's measured tables into a page between markers. The
first tests run the check on the repository as it is; the others show what it catches, on
texts made for the purpose, against the real manifests.
"""

from __future__ import annotations

import dataclasses
import json
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import render
from grader.manifest import discover
from helpers import PYTHON, ROOT, sample_report


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


qt = _load("quoted_thresholds")
wm = _load("write_measured")

CHAPTER = "ch02_execution_model"
README = ROOT / "chapters" / CHAPTER / "README.md"


@pytest.fixture(scope="module")
def exercises():
    return discover(ROOT)


def strict(text: str, exercises, chapter: str = CHAPTER) -> list[str]:
    """The strict check's problems for TEXT as a chapter README (its generated blocks fresh)."""
    text = qt.regenerate(text, qt.chapter_exercises(exercises, chapter))
    return [p.text for p in qt.check_chapter_readme(README, text, exercises, chapter)]


def lenient(text: str, exercises) -> list[str]:
    return [p.text for p in qt.check_other_note(ROOT / "docs" / "x.md", text, exercises)]


BLOCKS = "<!-- points:begin -->\n<!-- points:end -->\n\n<!-- thresholds:begin -->\n" \
         "<!-- thresholds:end -->\n\n<!-- counters:begin -->\n<!-- counters:end -->\n"


# --- the repository as it is -----------------------------------------------------------------

def test_the_notes_quote_no_number_the_manifests_contradict():
    problems = qt.check(ROOT)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("path", qt.chapter_readmes(ROOT), ids=lambda p: p.parent.name)
def test_each_chapter_readme_has_current_generated_tables(path, exercises):
    text = path.read_text(encoding="utf-8")
    names = [name for name, _, _ in qt._blocks(text.split("\n"))]
    assert sorted(names) == ["counters", "points", "thresholds"], names
    fresh = qt.regenerate(text, qt.chapter_exercises(exercises, path.parent.name))
    assert fresh == text, (f"{path.relative_to(ROOT)}: generated tables are stale; "
                           "run python3 scripts/quoted_thresholds.py")


def test_every_exercise_and_criterion_appears_in_its_chapter(exercises):
    for ex in exercises:
        text = (ROOT / "chapters" / ex.chapter / "README.md").read_text(encoding="utf-8")
        assert f"| `{ex.name}` | {', '.join(f'`{f}`' for f in ex.files)} |" in text, ex.name
        for p in ex.performance:
            assert (f"| `{ex.name}` | `{p.name}` | `{p.measure}` / `{p.baseline}` | "
                    f"{qt.fmt(p.points)} | {qt.fmt(p.full_at)} | {qt.fmt(p.zero_at)} |") in text


def test_script_check_mode_passes_and_changes_nothing():
    before = {p: p.read_bytes() for p in qt.chapter_readmes(ROOT)}
    r = subprocess.run([PYTHON, str(ROOT / "scripts" / "quoted_thresholds.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_no_chapter_readme_sends_students_to_the_solutions_build():
    for path in qt.chapter_readmes(ROOT) + [ROOT / "README.md"]:
        assert "build/grade/solutions-" not in path.read_text(encoding="utf-8"), path


def test_notes_map_stays_inside_the_repository():
    text = (ROOT / "docs" / "notes_map.md").read_text(encoding="utf-8")
    assert "shared/seeds" not in text
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if not target.startswith("http"):
            resolved = (ROOT / "docs" / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), target


@pytest.mark.skipif((ROOT / ".course-template").exists(),
                    reason="a student template has a README of its own")
def test_readme_status_is_one_line_that_links_the_measurements():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    status = text.split("## Status\n", 1)[1].split("\n## ", 1)[0].strip()
    assert "\n\n" not in status and "docs/measurements/" in status, status
    assert (ROOT / "docs" / "measurements" / "status.md").exists()


# --- what the generated tables follow --------------------------------------------------------

def test_a_manifest_change_makes_the_table_stale(exercises):
    text = README.read_text(encoding="utf-8")
    changed = [dataclasses.replace(ex, performance=tuple(
        dataclasses.replace(p, full_at=0.92) for p in ex.performance))
        if ex.name == "occupancy" else ex for ex in exercises]
    problems = qt.check_chapter_readme(README, text, changed, CHAPTER)
    assert any("out of date" in p.text for p in problems)
    fresh = qt.regenerate(text, qt.chapter_exercises(changed, CHAPTER))
    assert "| `occupancy` | `vs_best_of_sweep` | `chosen_config` / `sweep_best` | 40 | 0.92 | 0.6 |" \
        in fresh


def test_a_hand_edited_table_is_stale(exercises):
    text = README.read_text(encoding="utf-8")
    row = "| `reduce_v7_complete_unroll` | `speedup_vs_v6` |"
    edited = text.replace(" | 60 | 1.02 | 0.98 |", " | 60 | 1.04 | 0.98 |")
    assert row in text and edited != text
    problems = qt.check_chapter_readme(README, edited, exercises, CHAPTER)
    assert any("out of date" in p.text for p in problems)


def test_unbalanced_markers_are_reported(exercises):
    text = "# x\n<!-- points:begin -->\n<!-- thresholds:end -->\n"
    problems = [p.text for p in qt.check_chapter_readme(README, text, exercises, CHAPTER)]
    assert problems and "generated blocks" in problems[0]


# --- what the prose check catches in a chapter README ----------------------------------------

@pytest.mark.parametrize("prose", [
    "`occupancy` gets full marks at 0.92 of the sweep's best.",            # ch02 drift
    "Rung 7 earns full marks from 1.04 on.",                               # rung 7 drift
    "zero_copy_unified: full marks at 1.15, no marks at 1.02.",            # ch03 drift
    "The warp-tiled rung has a target of 0.85 of cuBLAS.",
    "`occupancy` reached 0.92x of the best configuration.",
    "The quicksort is 19 times slower than CUB.",
    "Every exercise is worth 100 points.",
    "Points are 60 + 40 points.",
    "The sanitizer runs 31 of 109 cases.",
    "| exercise | full marks at |\n| --- | ---: |\n| occupancy | 0.9 |",
    "ncu build/grade/solutions-*/matrix_sum_2d_bench",
])
def test_scoring_numbers_in_prose_are_flagged(prose, exercises):
    assert strict(f"# Chapter\n\n{prose}\n\n{BLOCKS}", exercises)


@pytest.mark.parametrize("prose", [
    "A matrix of 8192 x 8192 floats, tiles of 32x32 and a 4x4 block per thread.",
    "Grid-stride loops: `blockIdx.x * blockDim.x + threadIdx.x`, memory clock × 2.",
    "The register-blocked rung aims at half of cuBLAS.",
    "Full marks at <!-- q:occupancy.vs_best_of_sweep.full_at -->0.90 of the sweep's best, none "
    "at <!-- q:occupancy.vs_best_of_sweep.zero_at -->0.6.",
    "`reduce_v8_warp_shuffle` earns <!-- q:reduce_v8_warp_shuffle.warp_shuffles.points -->10 "
    "points for its shuffles, <!-- q:reduce_v8_warp_shuffle.total -->100 in all.",
    "A case that runs past <!-- q:grid_sync.case_timeout_s -->30 s is stopped.",
    "Keep the ints greater than a threshold, in input order.",
    "`BUILD=$(echo build/grade/workspace-*)` then `$BUILD/reduce_v5_unroll8_bench --repeats 1`.",
])
def test_teaching_prose_and_marked_quotes_pass(prose, exercises):
    assert strict(f"# Chapter\n\n{prose}\n\n{BLOCKS}", exercises) == []


@pytest.mark.parametrize("quote, message", [
    ("<!-- q:occupancy.vs_best_of_sweep.full_at -->0.92", "says 0.92, the manifest 0.9"),
    ("<!-- q:reduce_v7_complete_unroll.speedup_vs_v6.full_at -->1.04x", "the manifest 1.02"),
    ("<!-- q:zero_copy_unified.prefetch_speedup.zero_at -->1.02", "the manifest 1.3"),
    ("<!-- q:occupancy.no_such_criterion.full_at -->1", "no such number"),
    ("<!-- q:no_such_exercise.total -->100", "no exercise named"),
    ("<!-- q:barriers.correctness -->60", "the manifest 100"),
])
def test_wrong_quote_markers_are_flagged(quote, message, exercises):
    problems = strict(f"# Chapter\n\nSee {quote}.\n\n{BLOCKS}", exercises)
    assert any(message in p for p in problems), problems
    assert lenient(f"See {quote}.", exercises)


# --- what the check catches in the other notes -----------------------------------------------

@pytest.mark.parametrize("prose", [
    "`zero_copy_unified` gets full marks at 1.15 and none at 1.02.",
    "| occupancy | full marks at 0.92 |",
    "The warp-tiled rung (matmul_v4_warp_tiling) has a target of 0.85 of cuBLAS.",
])
def test_other_notes_flag_a_threshold_beside_an_exercise_that_has_another(prose, exercises):
    assert lenient(prose, exercises)


@pytest.mark.parametrize("prose", [
    "`zero_copy_unified` gets full marks at 2.0x and none at 1.3x.",
    "| occupancy | full marks at 0.90 |",
    "full_at = 0.80 for measure = \"vector_add\"",
    "A grade with full marks at 0.92 (no exercise named here).",
    "warp_divergence ran 1.85x faster on an H200 (a measurement, not a threshold).",
])
def test_other_notes_pass_right_or_unattributed_thresholds(prose, exercises):
    assert lenient(prose, exercises) == []


# --- sentences that say what the guide says carry their source ------------------------------

def test_every_guide_sentence_in_the_notes_carries_a_source():
    problems = qt.check_sources(ROOT)
    assert not problems, "\n".join(map(str, problems))


def test_the_source_check_covers_chapter_readmes_and_docs_but_not_the_logs():
    notes = {p.relative_to(ROOT).as_posix() for p in qt.source_notes(ROOT)}
    assert "chapters/ch05_constant_memory/README.md" in notes
    assert "docs/ch05_constant_memory/README.md" in notes
    assert "docs/notes_map.md" in notes and "README.md" in notes
    assert not any(n.startswith("docs/measurements/") for n in notes)
    assert "docs/grading_time.md" not in notes


@pytest.mark.parametrize("prose", [
    "The guide says the pool holds 2,048 launches.",
    "The CUDA C++ Programming Guide states that the flag is ignored.",
    "According to the Programming Guide, a launch with more threads fails.",
    "Plot the CSV next to the Best Practices Guide's V100 figures.",
    "The programming guide calls it undefined behaviour.",
    "The Runtime API reference says the host function is not called.",
    "The CUDA Runtime API documents the error.",
    "The PTX ISA defines four scopes.",
    "| 001 | References | links to NVIDIA's guide |",
    "- a list item: the guide promises nothing more.",
    "The guide says so. The next sentence has a [link](https://example.com).",
    "A first line that goes on\nto the guide, which states it on the next line.",
    "e.g. the guide says so, and nothing else follows.",
])
def test_a_guide_sentence_without_a_source_is_flagged(prose):
    assert qt.unsourced_guide_sentences(f"# Notes\n\n{prose}\n")


@pytest.mark.parametrize("prose", [
    "The guide says so ([Sources](#sources)).",
    "The guide says so. ([Sources](#sources))",
    "The guide says so (Sources: Launch Bounds).",
    "The Programming Guide states it ([Launch Bounds](https://docs.nvidia.com/cuda/x.html#lb)).",
    "The guide says so, <https://docs.nvidia.com/cuda/>.",
    "The notes say so ([section 3](../../docs/ch05_constant_memory/README.md#sources)).",
    "Runtime API calls return a `cudaError_t`.",
    "Read the CUDA Runtime API reference's error-handling section.",
    "These notes guide you through each exercise.",
    "A name in code: `the_guide_says()` and `the guide`.",
    "```text\nthe guide says so\n```",
    "## What the guide says\n\nNothing here.",
    "## Sources\n\n- The CUDA Programming Guide, Launch Bounds: the guide says so.",
    "<!-- the guide says so -->",
])
def test_sourced_or_unrelated_sentences_pass(prose):
    assert qt.unsourced_guide_sentences(f"# Notes\n\n{prose}\n") == []


def test_the_check_names_the_line_the_sentence_starts_on():
    text = "# Notes\n\nA first sentence.\nThen\nthe guide\nsays so.\n"
    assert qt.unsourced_guide_sentences(text) == [(4, "Then the guide says so.")]


def test_the_sources_section_ends_at_the_next_heading_as_high():
    text = ("# Notes\n\n## Sources\n\n- The guide, unchecked here.\n\n### Detail\n\n"
            "The guide says, still in Sources.\n\n## After\n\nThe guide says, checked.\n")
    assert [s for _, s in qt.unsourced_guide_sentences(text)] == ["The guide says, checked."]


# --- scripts/write_measured.py ---------------------------------------------------------------

MEASUREMENTS = [
    {"name": "vector_add", "median_ms": 0.1234, "rate": 550.04, "unit": "GB/s", "valid": True},
    {"name": "copy", "median_ms": 0.0678, "rate": 1000.0, "unit": "GB/s", "valid": True}]


@pytest.fixture
def report_path(tmp_path):
    report = sample_report()
    report.exercises[1].stage("benchmark").details["measurements"] = MEASUREMENTS
    path = tmp_path / "run.json"
    render.write_json(report, path)
    return path


def write_measured(*args):
    return subprocess.run([PYTHON, str(ROOT / "scripts" / "write_measured.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_write_measured_fills_the_block_and_keeps_the_rest(report_path, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Runs\n\nbefore\n\n<!-- measured:ch01:begin -->\nold table\n"
                    "<!-- measured:ch01:end -->\n\nafter\n")
    r = write_measured(report_path, page, "--chapter", "ch01")
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert text.startswith("# Runs\n\nbefore\n\n<!-- measured:ch01:begin (written by")
    assert text.endswith("<!-- measured:ch01:end -->\n\nafter\n")
    assert "old table" not in text
    assert "Measured on an Fake GPU (compute capability 9.0, driver 555), grader run of " \
           "2025-01-01, seed 42" in text
    assert "| two | vector_add | 0.123 | 550.0 GB/s |" in text
    assert "| two | vector_add / copy | 0.55 | 0.8 | 0.3 |" in text
    again = write_measured(report_path, page, "--chapter", "ch01")
    assert again.returncode == 0 and again.stdout == "" and page.read_text() == text


def test_write_measured_needs_markers_or_append(report_path, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Runs\n")
    r = write_measured(report_path, page, "--block", "h100-run")
    assert r.returncode == 1 and "no <!-- measured:h100-run:begin -->" in r.stderr
    assert page.read_text() == "# Runs\n"
    r = write_measured(report_path, page, "--block", "h100-run", "--append")
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert text.startswith("# Runs\n\n<!-- measured:h100-run:begin") and \
        text.endswith("<!-- measured:h100-run:end -->\n")


def test_write_measured_bad_report_is_one_line_and_exit_2(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("x\n")
    r = write_measured(tmp_path / "missing.json", page, "--append")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "missing.json" in r.stderr
    assert page.read_text() == "x\n"


def test_place_is_pure():
    assert wm.place("a\n", "x", "T") is None
    once = wm.place("a\n", "x", "T", append=True)
    assert wm.place(once, "x", "T") == once
    assert wm.place(once, "x", "U").count("U") == 1


def test_the_counters_table_quotes_each_calibrated_gpus_reference(tmp_path, exercises):
    """The counters block takes the reference solution's counters from calibrations/*.json, one
    column per GPU, and says "not measured" where a file has none for an exercise."""
    ex = next(e for e in exercises if e.name == "bank_conflicts")
    (tmp_path / "calibrations").mkdir()
    (tmp_path / "calibrations" / "gpu-a.json").write_text(json.dumps({
        "gpu": {"name": "GPU A"},
        "profile": {"bank_conflicts": {"bank_conflicts_square":
                                       {"shared_wavefronts_per_request": 1.0}}}}))
    (tmp_path / "calibrations" / "gpu-b.json").write_text(json.dumps({
        "gpu": {"name": "GPU B"}, "profile": {"vector_add": {"vector_add": {}}}}))
    lines = qt.render_counters([ex], tmp_path)
    assert "solution on GPU A" in lines[0] and "solution on GPU B" in lines[0]
    row = next(line for line in lines if "wavefronts" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "1" or cells[3].startswith("1.0"), cells
    assert cells[4] == "not measured", cells
    assert qt.render_counters([e for e in exercises if not e.profile_counters][:1], tmp_path) \
        == ["No exercise of this chapter declares counters."]
