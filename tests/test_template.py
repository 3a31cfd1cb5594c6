"""The student template (python3 -m grader export-template): what it holds and leaves out, its
README and links, the workspace git tracks, and that no solution code reached it (the reduction
ladder's course rungs and the course kernels that answer exercises ship compiled). That its own
test command passes in it is tests/test_template_command.py.
test_the_compiled_rungs_make_the_same_machine_code (nvcc, four architectures) is the slow one;
test_the_compiled_course_kernels_make_the_same_machine_code (nvcc, sm_90, once per exercise)
takes a few seconds each.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import exports, manifest, skeletons, template, tools
from helpers import ROOT, assert_one_line_error, needs_solutions, run_cli

pytestmark = needs_solutions  # the template is exported from the course, solutions and all

LADDER = "chapters/ch02_execution_model/reduce_ladder"



def shipped(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(folder).parts)


# ------------------------------------------------------------------------- what it holds

def test_the_exclusions_are_one_constant():
    for rel in ("solutions/ch01_programming_model/vector_add.cu",
                "tests/fixtures/submissions/ch01_broken_mix/expect.toml",
                "docs/instructor_notes.md", "chapters/ch01_programming_model/Hidden/x.cpp",
                "tests/instructor/test_x.py", "grader/__pycache__/cli.cpython-311.pyc",
                "chapters/ch01_programming_model/vector_add/vector_add_hidden_test.cpp",
                f"{LADDER}/instructor/reduce_ladder_rungs.cu", "docs/instructors.md",
                "docs/measurements/sandbox.md", "docs/grading_time.md", "docs/notes_map.md",
                "tests/test_scripts.py", "tests/test_slurm.py",
                "grader/templates/student_README.md"):
        assert template.excluded(rel), rel
    for rel in ("skeletons/ch01_programming_model/vector_add.cu", "tests/test_cli.py",
                "scripts/grade.sh", "docs/architecture.md", "docs/architecture/scoring.md",
                "grader/hidden.py", "docs/ch02_execution_model/README.md",
                f"{LADDER}/reduce_ladder_rungs.cu"):
        assert not template.excluded(rel), rel
    # scripts/ ships only what students and scripts/test.sh run.
    scripts = {rel for rel in template.files(ROOT) if rel.startswith("scripts/")}
    assert scripts == {"scripts/setup.sh", "scripts/grade.sh", "scripts/test.sh",
                       "scripts/check_report.py", "scripts/check_sanitizer_coverage.py",
                       "scripts/draw_timeline.py"}


def test_the_template_holds_the_course_without_answers(exported):
    for path in ("chapters", "skeletons", "support", "grader", "scripts/setup.sh",
                 "scripts/test.sh", "scripts/grade.sh", "docs/architecture.md",
                 "docs/architecture/guarantees.md", "docs/ch01_programming_model/README.md",
                 "meson.build", "meson.options", "requirements.txt", "pytest.ini", "README.md",
                 ".gitignore", ".ci/run", "tests/test_cli.py", "tests/helpers.py", template.MARKER,
                 ".github/workflows/classroom.yml", f"{LADDER}/reduce_ladder_rungs.cu",
                 "workspace/ch01_programming_model/vector_add.cu"):
        assert (exported / path).exists(), path
    for path in ("solutions", "tests/fixtures/submissions", "scripts/gpu_check.sh",
                 "scripts/check_shared_gpu.py", "scripts/gpu_hog.cu", "scripts/instructor",
                 "scripts/summarize.py", "docs/instructors.md", "docs/measurements",
                 "docs/grading_time.md", "docs/notes_map.md", f"{LADDER}/instructor",
                 "grader/templates/student_README.md", ".venv", "build"):
        assert not (exported / path).exists(), path
    assert not list(exported.rglob("__pycache__"))
    assert os.access(exported / "scripts" / "test.sh", os.X_OK) == \
        os.access(ROOT / "scripts" / "test.sh", os.X_OK)
    workflow = (exported / ".github" / "workflows" / "classroom.yml").read_text()
    assert workflow == exports.classroom_workflow(manifest.discover(ROOT))


def test_no_shipped_test_needs_a_file_left_out(exported):
    """A test that runs an instructors' script or reads an instructors' document leaves with
    it (tests/test_scripts.py, tests/test_slurm.py): one that stayed would fail in the
    student's scripts/test.sh."""
    left_out = [rel for rel in (
        p.relative_to(ROOT).as_posix() for folder in ("scripts", "docs")
        for p in (ROOT / folder).rglob("*") if p.is_file())
        if not (exported / rel).exists() and "__pycache__" not in rel]
    assert "scripts/gpu_check.sh" in left_out and "docs/grading_time.md" in left_out

    def ways_to_name(rel: str) -> list[str]:
        parts = rel.split("/")
        # As code names it (a path in quotes, or joined with /), not as prose mentions it.
        ways = [f'"{rel}"', f"'{rel}'", '"' + '" / "'.join(parts[-2:]) + '"']
        if rel.startswith("scripts/"):  # test_scripts.py runs script("summarize", ...)
            stem = parts[-1].rsplit(".", 1)[0]
            ways += [f'"{stem}"', f"'{stem}'"]
        return ways

    for test in sorted((exported / "tests").glob("*.py")):
        if test.name == "test_template.py":
            continue  # it names them to check that they are not there
        text = test.read_text(encoding="utf-8")
        named = [rel for rel in left_out if any(way in text for way in ways_to_name(rel))]
        assert not named, f"{test.name} uses {named}, which the template leaves out"


# ------------------------------------------------------------------------- the README

def test_the_readme_is_the_students_own(exported):
    readme = (exported / "README.md").read_text(encoding="utf-8")
    assert readme == template.STUDENT_README.read_text(encoding="utf-8")
    assert readme != (ROOT / "README.md").read_text(encoding="utf-8")
    # From clone to grade: set-up, init, where to edit, grade and -e, the HTML page, what a
    # report says, exit statuses, the sandbox and the include rule.
    for needed in ("bash scripts/grade.sh", "python3 -m grader init", "workspace/",
                   "python3 -m grader list", "-e <exercise>", "--html grade-report.html",
                   "## What a report says", "Exit status: 0", "sandbox",
                   "include only your own files", "git tracks `workspace/`"):
        assert needed in readme, needed
    # Nothing for instructors, nothing that fails or is false in a student's copy.
    lowered = readme.lower()
    for wrong in ("teaching", "batch", "slurm", "gpu_check", "grade.sh solutions",
                  "instructors.md", "git ignores it", "git-ignored", "hidden test", "--secret",
                  "gradescope", "prairielearn", "export-template"):
        assert wrong not in lowered, wrong


def _help(*command: str) -> str:
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_readme_names_only_what_the_grader_has(exported):
    """Every `python3 -m grader COMMAND` in the README is a command, and every option it
    names is one of grade's or render's."""
    readme = (exported / "README.md").read_text(encoding="utf-8")
    commands = set(re.findall(r"python3 -m grader ([a-z][a-z-]*)", readme))
    assert {"init", "list", "grade", "render"} <= commands
    listed = _help()
    for command in commands:
        assert re.search(rf"\b{command}\b", listed), command
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b",
                             readme.replace("python3 -m grader", "")))
    assert {"-e", "-v", "--seed", "--html", "--json", "--build-only", "--fail-under",
            "--no-sandbox"} <= options
    known = _help("grade") + _help("render") + listed
    for option in options:
        assert re.search(rf"(?<![\w-]){re.escape(option)}\b", known), option


# ------------------------------------------------------------------------- links

_LINK = re.compile(r"(`+).*?\1|!?\[[^\]\n]*\]\(([^)\s]+)\)", re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _anchors(page: Path) -> set[str]:
    found, seen = set(), {}
    for heading in re.findall(r"^#+\s+(.*?)\s*#*\s*$", _without_code_blocks(page.read_text()),
                              re.M):
        slug = _slug(heading)
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def broken_links(folder: Path) -> list[str]:
    """Relative links and images of every markdown file under folder whose file (or, into a
    markdown page, whose heading) is not there."""
    broken = []
    for page in sorted(folder.rglob("*.md")):
        if ".git" in page.relative_to(folder).parts:
            continue
        for match in _LINK.finditer(_without_code_blocks(page.read_text(encoding="utf-8"))):
            target = match.group(2)
            if match.group(1) or re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # a code span, or a URL
            file, _, anchor = target.partition("#")
            destination = page.parent / file if file else page
            where = f"{page.relative_to(folder)}: {target}"
            if not destination.exists():
                broken.append(where)
            elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
                broken.append(f"{where} (no such heading)")
    return broken


def test_every_relative_link_in_the_template_resolves(exported):
    # The course links its instructors' pages (README.md -> docs/instructors.md, the chapter
    # READMEs -> docs/measurements/), so the check has something to find there.
    assert any("instructors.md" in link or "measurements/" in link
               for link in broken_links_if_left_out())
    assert broken_links(exported) == []
    # A link to a page left out became its text, saying where the page is.
    ch01 = (exported / "chapters" / "ch01_programming_model" / "README.md").read_text()
    if "docs/measurements/" in (ROOT / "chapters" / "ch01_programming_model" /
                                "README.md").read_text():
        assert template.LEFT_OUT in ch01


def broken_links_if_left_out() -> list[str]:
    """The course's own links that lead to a file the template leaves out."""
    shipped_files = set(template.files(ROOT))
    out = []
    for rel in shipped_files:
        if not rel.endswith(".md"):
            continue
        page = ROOT / rel
        for match in _LINK.finditer(_without_code_blocks(page.read_text(encoding="utf-8"))):
            target = (match.group(2) or "").partition("#")[0]
            if match.group(1) or not target or re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            linked = (page.parent / target).resolve()
            if linked.is_file() and linked.relative_to(ROOT).as_posix() not in shipped_files:
                out.append(f"{rel}: {target}")
    return out


def test_links_to_left_out_files_become_text(tmp_path):
    root, out = tmp_path / "course", tmp_path / "out"
    for base in (root, out):
        (base / "docs").mkdir(parents=True)
        (base / "docs" / "notes.md").write_text("kept\n")
    (root / "docs" / "instructors.md").write_text("theirs\n")
    page = ("See [the platforms](instructors.md#gradescope), [notes](notes.md), "
            "[lost](missing.md), [site](https://example.org/instructors.md), "
            "`[code](instructors.md)` and ![figure](instructors.md).\n"
            "```\n[in a block](instructors.md)\n```\n")
    (root / "docs" / "page.md").write_text(page)
    (out / "docs" / "page.md").write_text(page)
    template.unlink_left_out(root, out, "docs/page.md")
    assert (out / "docs" / "page.md").read_text() == page.replace(
        "[the platforms](instructors.md#gradescope)", "the platforms" + template.LEFT_OUT)


# ------------------------------------------------------------------------- the workspace

def test_the_workspace_is_committed_as_the_readme_says(exported):
    """The README says git tracks workspace/ and ignores build output and grade-report.*: the
    template's .gitignore and its first commit agree, and new work shows up to be committed."""
    def git(*args, check=True):
        return subprocess.run(["git", *args], cwd=exported, capture_output=True, text=True,
                              check=check)
    readme = (exported / "README.md").read_text()
    assert "git tracks `workspace/`" in readme and "`grade-report.*`" in readme
    tracked = set(git("ls-files", "workspace").stdout.splitlines())
    skeleton_files = {f"workspace/{p.relative_to(ROOT / 'skeletons').as_posix()}"
                      for p in (ROOT / "skeletons").rglob("*")
                      if p.is_file() and not p.name.startswith(".")}
    assert skeleton_files and skeleton_files <= tracked
    assert git("check-ignore", "-q", "workspace/ch01_programming_model/vector_add.cu",
               check=False).returncode == 1  # not ignored
    for ignored in ("build/grade/report.json", "grade-report.html", ".venv/bin/python"):
        assert git("check-ignore", "-q", ignored, check=False).returncode == 0, ignored
    work = exported / "workspace" / "ch01_programming_model" / "vector_add.cu"
    original = work.read_text()
    try:
        work.write_text(original + "// my change\n")
        assert git("status", "--porcelain", "workspace").stdout.split() == \
            ["M", "workspace/ch01_programming_model/vector_add.cu"]
    finally:
        work.write_text(original)
    # The course's own .gitignore ignores the workspace (an instructor's is not a student's).
    assert "/workspace/" in (ROOT / ".gitignore").read_text().splitlines()


# ------------------------------------------------------------------------- no answers

# A block's code as tokens: comments and layout dropped, identifiers and literals kept.
_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
                    r"|[A-Za-z_]\w*|\d[\w.]*|::|->|<<|>>|\+\+|--|[-+*/%&|^!=<>]=|&&|\|\||\S",
                    re.S)
# A shared run this long is a copy: about two lines of kernel code.
RUN = 40


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if not t.startswith(("//", "/*"))]


def solution_blocks() -> list[tuple[str, list[str]]]:
    """(solution file, tokens) of every @begin-solution ... @end-solution block under
    solutions/ of at least RUN tokens; the hint and stub lines are comments."""
    blocks = []
    for path in sorted((ROOT / "solutions").rglob("*")):
        if not path.is_file() or path.suffix not in skeletons.SOURCE_SUFFIXES:
            continue
        body: list[str] | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip().startswith(skeletons.BEGIN):
                body = []
            elif line.strip().startswith(skeletons.END):
                found = tokens("\n".join(body))
                if len(found) >= RUN:
                    blocks.append((path.relative_to(ROOT).as_posix(), found))
                body = None
            elif body is not None:
                body.append(line)
    return blocks


def _runs(seq: list[str]) -> set[tuple[str, ...]]:
    return {tuple(seq[i:i + RUN]) for i in range(len(seq) - RUN + 1)}


def idioms(blocks) -> set[tuple[str, ...]]:
    """Runs that are the course's common idiom rather than one exercise's answer: in the
    blocks of three or more exercises, or in the support library every exercise links (the
    grid-stride loop, the launch check)."""
    owners: dict[tuple[str, ...], set[str]] = {}
    for source, found in blocks:
        for run in _runs(found):
            owners.setdefault(run, set()).add(source)
    common = {run for run, where in owners.items() if len(where) >= 3}
    for path in (ROOT / "support").rglob("*"):
        if path.is_file() and path.suffix in skeletons.SOURCE_SUFFIXES | {".cpp", ".cu"}:
            common |= _runs(tokens(path.read_text(encoding="utf-8")))
    return common


def leaks(folder: Path, only: list[str] | None = None) -> dict[tuple[str, str], int]:
    """(solution file, file under folder) -> how many tokens of that solution's blocks the
    file holds in runs of RUN tokens or more, idioms left out."""
    blocks = solution_blocks()
    common = idioms(blocks)
    # Each block's runs, idioms left out, indexed once: run -> (block number, where it starts).
    starts: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for number, (_, block) in enumerate(blocks):
        for i in range(len(block) - RUN + 1):
            run = tuple(block[i:i + RUN])
            if run not in common:
                starts.setdefault(run, []).append((number, i))
    found: dict[tuple[str, str], int] = {}
    # workspace/ is a copy of skeletons/ (python3 -m grader init), checked there.
    for rel in only or [rel for rel in shipped(folder) if not rel.startswith("workspace/")]:
        try:
            runs = _runs(tokens((folder / rel).read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
        covered: dict[int, set[int]] = {}  # block number -> its tokens the file holds
        for run in runs & starts.keys():
            for number, i in starts[run]:
                covered.setdefault(number, set()).update(range(i, i + RUN))
        for number, tokens_held in covered.items():
            key = (blocks[number][0], rel)
            found[key] = found.get(key, 0) + len(tokens_held)
    return found


# Course files that hold part of a solution block, each reviewed (issue 29), with why it stays.
# Starting points: the exercise's own version with the defect it removes, the baseline of its
# ratios, shipped on purpose: pasted, it passes the tests but scores 1.0 against itself, under
# every zero_at of its metrics. Notes: the chapter notes teach the pattern in an excerpt that
# the skeleton's hint spells out too. Idioms: launch and loop bookkeeping the course repeats.
REVIEWED = {
    ("solutions/ch04_shared_memory/bank_conflicts.cu",
     "chapters/ch04_shared_memory/bank_conflicts/bank_conflicts_baseline.cu"):
        "starting point: the unpadded tiles with 32-way conflicts (zero_at 1.3)",
    ("solutions/ch05_constant_memory/constant_broadcast.cu",
     "chapters/ch05_constant_memory/constant_broadcast/constant_broadcast_baseline.cu"):
        "starting point: the serialised constant reads (zero_at 2.0; 1.00 as a submission)",
    ("solutions/ch05_constant_memory/register_spilling.cu",
     "chapters/ch05_constant_memory/register_spilling/register_spilling_baseline.cu"):
        "starting point: the spilling local array (zero_at 2.0; 1.00 as a submission)",
    ("solutions/ch04_shared_memory/histogram.cu",
     "chapters/ch04_shared_memory/histogram/histogram_baseline.cu"):
        "starting point: global atomics (zero_at 1.5 and 0.9 against themselves)",
    ("solutions/ch04_shared_memory/histogram.cu",
     "chapters/ch04_shared_memory/cluster_histogram/cluster_histogram_baseline.cu"):
        "starting point: global atomics, histogram's fallback past shared memory and the "
        "baseline of cluster_histogram's ratios (zero_at 1.5 and 1.0 against themselves)",
    ("solutions/ch06_streams/stream_ordered_allocation.cu",
     "chapters/ch06_streams/stream_ordered_allocation/stream_ordered_allocation_baseline.cu"):
        "starting point: the same chunk loop with cudaMalloc and cudaFree per chunk, the "
        "baseline of the ratio, which earns nothing against itself; the exercise is where the "
        "scratch comes from",
    ("solutions/ch01_programming_model/error_handling.cu",
     "docs/ch01_programming_model/README.md"):
        "notes: the allocate-copy-check chain the exercise's hints also describe",
    ("solutions/ch02_execution_model/reduce_v6_unroll_last_warp.cu",
     "docs/ch02_execution_model/README.md"):
        "notes: the __syncwarp form of the last warp, which the skeleton's hint spells out",
    ("solutions/ch03_global_memory/device_symbols.cu",
     "skeletons/ch03_global_memory/zero_copy_unified.cu"):
        "idiom: the capped grid of the launch the skeleton gives",
    ("solutions/ch05_constant_memory/constant_broadcast.cu",
     "skeletons/ch06_streams/host_functions.cu"):
        "idiom: a grid-stride loop after a block barrier",
    ("solutions/ch04_shared_memory/histogram.cu", "skeletons/ch06_streams/host_functions.cu"):
        "starting point: the kernel ch06 gives counts per block with global atomics, the shape "
        "of ch04's global baseline: pasted, it fails uses_shared_memory and scores 1.0 against "
        "that baseline (skewed_vs_global zero_at 1.5, uniform_4096_vs_global 0.9)",
    ("solutions/ch03_global_memory/transpose_global.cu",
     "chapters/ch03_global_memory/transpose_global/transpose_global_baseline.cu"):
        "idiom: the launcher's 32 x 8 blocks and ceil grid, which the skeleton's hint spells "
        "out (its kernel, the read_rows answer, ships compiled)",
}
# Reviewed and not settled: course code that gives more than its exercise's starting point
# (from the manifests' thresholds; not yet measured as submissions on a GPU). Each is reported
# for the treatment the reduction ladder's rungs and the course kernels of aat, matrix_sum_2d,
# readonly_texture, async_copy and transpose_global got: compiled to PTX in inline assembly
# (scripts/compile_course_kernels.py), the readable source kept in an instructor/ folder,
# which the template leaves out.
OPEN: dict[tuple[str, str], str] = {}


def test_no_solution_block_reached_the_template(exported):
    blocks = solution_blocks()
    assert len(blocks) >= 60  # the check has something to look for
    # It finds what it looks for: every solution in its own file, and the course's readable
    # copies of the reduction rungs (course-only) as a copy of rung 1.
    assert {source for source, _ in blocks} <= {source for source, rel in leaks(ROOT, [
        source for source, _ in blocks]) if source == rel}
    assert ("solutions/ch02_execution_model/reduce_v1_neighbored.cu",
            f"{LADDER}/instructor/reduce_ladder_rungs.cu") in leaks(
        ROOT, [f"{LADDER}/instructor/reduce_ladder_rungs.cu"])
    # ... and the readable copies of the course kernels that ship compiled, each as a copy of
    # its exercise's answer.
    readable = {f"{folder}/instructor/{name}_kernels.cu": name
                for name, folder in COURSE_KERNELS.items()}
    assert {(source, rel) for source, rel in leaks(ROOT, list(readable))
            if source.endswith(f"/{readable[rel]}.cu")} == \
        {(source, rel) for rel, name in readable.items() for source, _ in blocks
         if source.endswith(f"/{name}.cu")}
    found = set(leaks(exported))
    # Exactly the reviewed ones: a new copy fails, and so does an entry no longer needed.
    assert found == set(REVIEWED) | set(OPEN)


def test_the_ladder_rungs_ship_compiled(exported):
    """The course's copies of rungs 1, 5 and 6 (the baselines of rungs 2 to 7) are in the
    template only as PTX in inline assembly, which a student's source may not hold."""
    shipped_ladder = exported / LADDER
    assert not (shipped_ladder / "instructor").exists()
    compiled = (shipped_ladder / "reduce_ladder_rungs.cu").read_text()
    kernels = re.findall(r"__global__ void (\w+)\((.*?)\n\}", compiled, re.S)
    assert [name for name, _ in kernels] == ["course_ladder_rung_v1_neighbored",
                                             "course_ladder_rung_v5_unroll8",
                                             "course_ladder_rung_v6_unroll_last_warp"]
    for name, body in kernels:
        code = [line.strip() for line in body.split("{", 1)[1].splitlines()
                if line.strip() and not line.strip().startswith(('"', "//", "#", ":"))]
        # Only the asm statement: the parameters and their (void) casts, nothing computed.
        assert all(line.startswith(("(void)", "asm volatile(")) for line in code), name
        assert "bar.sync" in body and "ld.shared" in body
    for rel in shipped(exported):
        if rel.startswith(("chapters/", "support/", "docs/")):
            assert "course_rung_kernel" not in (exported / rel).read_text(errors="replace"), rel


# The course kernels that answer graded exercises, shipped compiled by
# scripts/compile_course_kernels.py (the exercise: its baseline launches them).
COURSE_KERNELS = {
    "aat": "chapters/ch04_shared_memory/aat",
    "matrix_sum_2d": "chapters/ch02_execution_model/matrix_sum_2d",
    "readonly_texture": "chapters/ch05_constant_memory/readonly_texture",
    "async_copy": "chapters/ch04_shared_memory/async_copy",
    "transpose_global": "chapters/ch03_global_memory/transpose_global",
}


def _compile_course_kernels():
    spec = importlib.util.spec_from_file_location(
        "compile_course_kernels", ROOT / "scripts" / "compile_course_kernels.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_course_kernels_ship_compiled(exported):
    """Every course kernel that answers a graded exercise is in the template only as PTX in
    inline assembly: the readable copy (instructor/<name>_kernels.cu) stays behind, the
    generated <name>_kernels.cu defines the kernels its header declares with nothing but an asm
    statement, and the baseline beside it only launches them."""
    tool = _compile_course_kernels()
    units = tool.units([])
    assert {unit.generated.parent.relative_to(ROOT).as_posix() for unit in units} == \
        set(COURSE_KERNELS.values())
    assert not (exported / "scripts" / "compile_course_kernels.py").exists()
    for unit in units:
        folder = unit.generated.parent.relative_to(ROOT)
        exercise = folder.name
        assert template.excluded(unit.readable.relative_to(ROOT).as_posix())
        assert not (exported / folder / "instructor").exists(), exercise
        assert (exported / folder / unit.header.name).is_file(), exercise
        # The header declares the kernels and defines none.
        header = (exported / folder / unit.header.name).read_text()
        assert not re.search(r"__global__[^;{]*\{", header), exercise
        compiled = (exported / folder / unit.generated.name).read_text()
        kernels = re.findall(r"__global__ void (?:__launch_bounds__\([^)]*\)\s*)?(\w+)\((.*?)\n\}",
                             compiled, re.S)
        assert [name for name, _ in kernels] == [k.name for k in unit.kernels], exercise
        for name, body in kernels:
            code = [line.strip() for line in body.split("{", 1)[1].splitlines()
                    if line.strip() and not line.strip().startswith(('"', "//", "#", ":"))]
            # Only the asm statement: the parameters' (void) casts, nothing computed.
            assert all(line.startswith(("(void)", "asm volatile(")) for line in code), name
            assert "ld.param" in body and "ret;" in body, name
        baseline = (exported / folder / f"{exercise}_baseline.cu").read_text()
        assert "__global__" not in baseline and unit.header.name in baseline, exercise


@pytest.mark.skipif(tools.find("nvcc") is None or tools.find("cuobjdump") is None,
                    reason="no nvcc or cuobjdump: the machine code cannot be compared")
@pytest.mark.parametrize("exercise", sorted(COURSE_KERNELS))
def test_the_compiled_course_kernels_make_the_same_machine_code(exercise):
    """ptxas makes, from the shipped PTX, instruction for instruction the SASS (and the
    registers, shared memory and launch bounds) that nvcc makes from the readable kernels, on
    sm_90 (python3 scripts/compile_course_kernels.py --check compares every architecture)."""
    tool = _compile_course_kernels()
    (unit,) = tool.units([exercise])
    assert tool.same_machine_code(unit, [90]) == []


def _compile_rungs():
    spec = importlib.util.spec_from_file_location(
        "compile_rungs", ROOT / LADDER / "instructor" / "compile_rungs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(tools.find("nvcc") is None or tools.find("cuobjdump") is None,
                    reason="no nvcc or cuobjdump: the machine code cannot be compared")
def test_the_compiled_rungs_make_the_same_machine_code():
    """ptxas makes, from the shipped PTX, instruction for instruction the SASS that nvcc makes
    from the readable rungs: the baselines, and so the rungs' thresholds, are as calibrated.
    Both PTX bodies (up to compute_90, from compute_100), at each end."""
    assert _compile_rungs().same_machine_code([75, 90, 100, 120]) == []


def test_the_template_is_one_clean_git_commit(exported):
    def git(*args):
        return subprocess.run(["git", *args], cwd=exported, capture_output=True, text=True,
                              check=True).stdout
    assert len(git("log", "--oneline").splitlines()) == 1
    assert git("status", "--porcelain") == ""
    tracked = git("ls-files").splitlines()
    assert template.MARKER in tracked and ".github/workflows/classroom.yml" in tracked
    assert "workspace/ch01_programming_model/vector_add.cu" in tracked


def test_the_template_knows_it_has_no_solutions(exported):
    result = run_cli("skeletons", cwd=exported)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, template.NO_SOLUTIONS)
    again = run_cli("export-template", exported / "x", cwd=exported)
    assert again.returncode == 2
    assert_one_line_error(again.stderr, template.NO_SOLUTIONS)


def test_export_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = run_cli("export-template", tmp_path)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "not an empty folder")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_export_without_git(tmp_path):
    result = run_cli("export-template", tmp_path / "plain", "--no-git")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "plain" / template.MARKER).is_file()
    assert not (tmp_path / "plain" / ".git").exists()
