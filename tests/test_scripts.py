"""scripts/summarize.py, check_report.py and measured_table.py on small reports, run as
'python3 scripts/x.py REPORT.json' is; gpu_check.sh's plan of stages, which needs no GPU."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from grader import model, render
from helpers import PYTHON, ROOT, sample_report

MEASUREMENTS = [
    {"name": "vector_add", "median_ms": 0.1234, "rate": 550.04, "unit": "GB/s", "valid": True},
    {"name": "copy", "median_ms": 0.0678, "rate": 1000.0, "unit": "GB/s", "valid": True},
    {"name": "broken", "median_ms": 1.0, "rate": 1.0, "unit": "GB/s", "valid": False}]


def script(name, *args):
    return subprocess.run([PYTHON, str(ROOT / "scripts" / f"{name}.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=60, cwd="/")


@pytest.fixture
def report_path(tmp_path):
    """sample_report() with benchmark measurements, written as the grader writes it."""
    report = sample_report()
    report.exercises[1].stage("benchmark").details["measurements"] = MEASUREMENTS
    path = tmp_path / "run1.json"
    render.write_json(report, path)
    return path


def test_summarize(report_path, tmp_path):
    other = sample_report()
    other.exercises = other.exercises[:1]
    other.exercises[0].score = 33.3333
    render.write_json(other, tmp_path / "run2.json")
    r = script("summarize", report_path, tmp_path / "run2.json")
    assert r.returncode == 0, r.stderr
    assert r.stdout == """\
run1  one    passed         2/2  100/100      bandwidth=0.90
run1  two    partial        1/1  80/100       bandwidth=0.55
run1  three  crashed        1/4  20/60
run1  four   compile_error  -    0/50
run1  five   not_submitted  -    0/40
run1  TOTAL                      200/350      57.1%
run2  one    passed         2/2  33.3333/100  bandwidth=0.90
run2  TOTAL                      33.333/100   33.3%
"""


def test_summarize_bad_report(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"exercises": 1}')
    r = script("summarize", path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip() == f"summarize: report {path}: not a grader report " \
        "('int' object is not iterable)"


def test_check_report_all_compiled(report_path):
    r = script("check_report", report_path, "--all-compiled")
    assert r.returncode == 1
    assert r.stdout == f"""\
{report_path}: 5 exercises, problems:
  ch02_b/four: compile_error compilation failed
  FAILED: four.cu.o
error: x
  ch02_b/five: not_submitted not submitted: five.cu
"""


def test_check_report_passes(report_path, tmp_path):
    r = script("check_report", report_path)
    assert r.returncode == 0 and r.stdout == f"{report_path}: 5 exercises, all compiled\n"
    report = model.Report.load(report_path)
    report.exercises = report.exercises[:3]
    path = tmp_path / "compiled.json"
    render.write_json(report, path)
    r = script("check_report", path, "--all-compiled")
    assert r.returncode == 0 and r.stdout == f"{path}: 3 exercises, all compiled\n"


def test_check_report_full_marks(report_path, tmp_path):
    r = script("check_report", report_path, "--full-marks")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == f"{report_path}: 5 exercises, problems:"
    # Every exercise short of its maximum is named, with its score; the full one is not.
    assert [l.split(":")[0].strip() for l in lines[1:]] == \
        ["ch01_a/two", "ch02_b/three", "ch02_b/four", "ch02_b/five"]
    assert "  ch01_a/two: 80/100 (partial) bandwidth: slow" in lines
    report = model.Report.load(report_path)
    report.exercises = report.exercises[:1]
    path = tmp_path / "full.json"
    render.write_json(report, path)
    r = script("check_report", path, "--full-marks", "--all-compiled")
    assert r.returncode == 0
    assert r.stdout == f"{path}: 1 exercises, all compiled, all full marks\n"


def test_check_report_no_correctness(report_path, tmp_path):
    r = script("check_report", report_path, "--no-correctness")
    assert r.returncode == 1
    # A skeleton that passes any case earns correctness points: each such exercise is named.
    assert r.stdout.splitlines()[1:] == ["  ch01_a/one: 60 correctness points (2 cases passed)",
                                         "  ch01_a/two: 60 correctness points (1 cases passed)",
                                         "  ch02_b/three: 20 correctness points (1 cases passed)"]
    report = model.Report.load(report_path)
    report.exercises = report.exercises[3:]
    path = tmp_path / "skeletons.json"
    render.write_json(report, path)
    r = script("check_report", path, "--no-correctness")
    assert r.returncode == 0 and r.stdout == f"{path}: 2 exercises, no correctness points\n"


def test_check_report_missing_file(tmp_path):
    r = script("check_report", tmp_path / "none.json", "--all-compiled")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"check_report: report {tmp_path / 'none.json'} does not exist\n"


def test_measured_table(report_path):
    r = script("measured_table", report_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == """\
Measured on an Fake GPU (compute capability 9.0, driver 555), grader run of 2025-01-01, \
seed 42: medians of event-timed repeats, L2 flushed between repeats.

| exercise | measurement | median (ms) | rate |
| --- | --- | ---: | ---: |
| two | vector_add | 0.123 | 550.0 GB/s |
| two | copy | 0.068 | 1000.0 GB/s |

| exercise | graded ratio | value | full marks at | no marks at |
| --- | --- | ---: | ---: | ---: |
| one | vector_add / copy | 0.90 | 0.8 | 0.3 |
| two | vector_add / copy | 0.55 | 0.8 | 0.3 |
"""


def test_measured_table_chapter_skip_and_no_gpu(report_path):
    report = model.Report.load(report_path)
    report.gpu = None
    render.write_json(report, report_path)
    r = script("measured_table", report_path, "--chapter", "ch01", "--skip", "^cop")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Measured on an ? (compute capability ?, driver ?)")
    assert "| two | vector_add | 0.123 | 550.0 GB/s |" in lines
    assert not any("| copy |" in line for line in lines)
    r = script("measured_table", report_path, "--chapter", "ch02")
    assert "| exercise | graded ratio" not in r.stdout and "| two |" not in r.stdout


def test_time_table(tmp_path):
    report = sample_report()
    report.started_at, report.finished_at = "2025-01-01T10:00:00+00:00", "2025-01-01T10:01:40+00:00"
    report.phases = {"configure_s": 2.0, "build_s": 30.4, "checks_s": 40.0, "benchmarks_s": 27.0}
    seconds = {"tests": 3.0, "sanitizer": 5.5, "benchmark": 7.25, "technique": 0.5}
    for ex in report.exercises:
        for stage in ex.stages:
            stage.duration_s = seconds.get(stage.name, 100.0)  # build: not in the table
    path = tmp_path / "run.json"
    render.write_json(report, path)
    r = script("time_table", path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("| chapter | exercises | tests (s) | sanitizer (s) | benchmark (s) "
                        "| technique (s) | total (s) |")
    # Each row sums its chapter's exercises; "all" sums the rows.
    per_chapter = {}
    for ex in report.exercises:
        row = per_chapter.setdefault(ex.chapter, [0, 0.0, 0.0, 0.0, 0.0])
        row[0] += 1
        for i, name in enumerate(("tests", "sanitizer", "benchmark", "technique"), 1):
            row[i] += seconds[name] if ex.stage(name) else 0.0
    for chapter, row in per_chapter.items():
        cells = " | ".join(f"{v:.0f}" for v in row[1:])
        assert f"| {chapter} | {row[0]} | {cells} | {sum(row[1:]):.0f} |" in lines
    assert lines[-1].startswith("wall 100 s (configure 2 s, build 30 s, checks 40 s, "
                                "benchmarks 27 s);")
    assert lines[-3].startswith(f"| all | {len(report.exercises)} |")


def test_time_table_bad_report(tmp_path):
    r = script("time_table", tmp_path / "none.json")
    assert r.returncode == 1 and r.stderr.startswith("time_table: ")


def test_incremental_times_rebuilds_the_changed_exercise_alone(tmp_path, course_build_dir):
    """On the CPU with --build-only: the course is built first, then the one exercise's file is
    changed and graded again; its row and the slowest line are printed. (The GPU check runs
    it on every exercise of every chapter, with the 12 s limit and the 8 s median.)"""
    submission = tmp_path / "copy"
    shutil.copytree(ROOT / "skeletons" / "ch01_programming_model",  # the template has these
                    submission / "ch01_programming_model")
    before = (submission / "ch01_programming_model" / "device_query.cu").read_text()
    r = subprocess.run([PYTHON, str(ROOT / "scripts" / "incremental_times.py"), str(submission),
                        str(course_build_dir), "--exercises", "device_query", "--build-only",
                        "--limit", "600", "--median-limit", "600",
                        "--json-dir", str(tmp_path / "reports")],
                       capture_output=True, text=True, timeout=900, cwd="/")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].startswith("device_query ")
    assert "slowest: device_query" in r.stdout and "exercises; median " in r.stdout
    after = (submission / "ch01_programming_model" / "device_query.cu").read_text()
    assert after == before + "// changed again\n"
    report = model.Report.load(tmp_path / "reports" / "incremental-device_query.json")
    assert [e.name for e in report.exercises] == ["device_query"]
    assert report.exercises[0].stage("build").status == model.StageStatus.PASSED


def test_incremental_times_bad_arguments(tmp_path):
    r = script("incremental_times", tmp_path / "nowhere", tmp_path / "build")
    assert r.returncode == 2 and "no submission folder" in r.stderr
    r = script("incremental_times", tmp_path, tmp_path / "build", "--exercises", "no_such")
    assert r.returncode == 2 and "no exercise" in r.stderr


def test_process_costs_groups_the_log_by_kind(tmp_path):
    def line(command, seconds):
        return json.dumps({"command": command, "began": 0.0, "duration_s": seconds,
                           "returncode": 0, "timed_out": False, "thread": "w"})
    boxed = ["/b/course_sandbox", "--write", "/s", "--read", "/b/x_test", "--"]
    log = tmp_path / "processes.jsonl"
    log.write_text("\n".join([
        line([*boxed, "/b/x_test", "--gtest_list_tests"], 0.1),
        line([*boxed, "/b/x_test", "--gtest_output=json:/s/r.json"], 2.0),
        line([*boxed, "/cuda/bin/compute-sanitizer", "--tool", "racecheck", "/b/x_test"], 3.0),
        line([*boxed, "/cuda/bin/compute-sanitizer", "--tool", "racecheck", "/b/y_test"], 1.0),
        line(["ninja", "-C", "/b"], 5.0)]) + "\n")
    r = script("process_costs", log)
    assert r.returncode == 0, r.stderr
    rows = {row[:44].strip(): row[44:].split() for row in r.stdout.splitlines()[1:]}
    assert rows["sanitizer racecheck"] == ["2", "4.0", "1.00", "2.00", "3.00"]
    assert rows["tests"][:2] == ["1", "2.0"] and rows["test listing"][:2] == ["1", "0.1"]
    assert rows["ninja"][:2] == ["1", "5.0"] and rows["all"] == ["5", "11.1"]
    by_exercise = script("process_costs", log, "--by-exercise")
    assert "y: sanitizer racecheck" in by_exercise.stdout


def test_process_costs_unreadable_log(tmp_path):
    r = script("process_costs", tmp_path / "none.jsonl")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_cpu_costs_option_writes_a_line_per_test(tmp_path):
    """pytest --cpu-costs (tests/conftest.py): one JSON line per test run, with its CPU and
    wall seconds; the tests it did not run write none."""
    costs = tmp_path / "costs.jsonl"
    chosen = "tests/test_scripts.py::test_process_costs_unreadable_log"
    r = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        chosen, "--cpu-costs", str(costs)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(text) for text in costs.read_text().splitlines()]
    assert [line["test"] for line in lines] == [chosen]
    assert lines[0]["cpu_s"] >= 0 and lines[0]["wall_s"] > 0


def test_test_costs_sums_by_module_and_lists_the_costliest(tmp_path):
    costs = tmp_path / "costs.jsonl"
    costs.write_text("\n".join(json.dumps({"test": t, "cpu_s": c, "wall_s": w}) for t, c, w in [
        ("tests/test_a.py::one", 1.5, 2.0), ("tests/test_a.py::two", 0.5, 4.0),
        ("tests/test_b.py::big[x]", 3.0, 3.5)]) + "\n")
    r = script("test_costs", costs, "--top", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rows = {row[:52].strip(): row[52:].split() for row in lines[1:4]}
    assert rows == {"tests/test_b.py": ["1", "3.0", "3.5"], "tests/test_a.py": ["2", "2.0", "6.0"],
                    "all": ["3", "5.0", "9.5"]}
    assert list(rows) == ["tests/test_b.py", "tests/test_a.py", "all"]  # costliest first
    listed = [line.split()[-1] for line in lines[6:]]
    assert listed == ["tests/test_b.py::big[x]", "tests/test_a.py::one"]


@pytest.mark.parametrize("text", ["not json\n", '{"test": "t", "cpu_s": 1}\n'])
def test_test_costs_unreadable_file(tmp_path, text):
    costs = tmp_path / "costs.jsonl"
    costs.write_text(text)
    r = script("test_costs", costs)
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    assert script("test_costs", tmp_path / "none.jsonl").returncode == 2


def test_sanitizer_costs_unknown_exercise(tmp_path):
    r = script("sanitizer_costs", tmp_path, "no_such_exercise")
    assert r.returncode == 2 and "unknown exercise" in r.stderr


def gpu_check(tmp_path, **knobs):
    """scripts/gpu_check.sh with only `knobs` (and a PATH) in its environment."""
    env = {"PATH": "/usr/bin:/bin", "OUT": str(tmp_path / "out"), **knobs}
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh")], env=env,
                          capture_output=True, text=True, timeout=60)


def test_gpu_check_plan_runs_exactly_the_stages_named(tmp_path):
    done = gpu_check(tmp_path, RUN_STAGES="solutions support skeletons student class",
                     SHARED="1", PLAN="1")
    assert done.returncode == 0, done.stderr
    plan = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert plan.pop("solutions") == "3 run(s)"
    assert {name for name, state in plan.items() if state == "on"} == {
        "support", "skeletons", "student", "class"}
    assert plan["shared"] == "off", "a named list overrides the stage's own knob"
    assert not (tmp_path / "out").exists(), "the plan ran before set-up"
    without = gpu_check(tmp_path, RUN_STAGES="support", RUNS="2", PLAN="1")
    assert without.stdout.splitlines()[0] == "solutions 0 run(s)"


def test_gpu_check_plan_without_a_list_shows_the_knobs_defaults(tmp_path):
    done = gpu_check(tmp_path, PLAN="1", RUNS="1", PYTEST="0")
    plan = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert plan["solutions"] == "1 run(s)" and plan["pytest"] == "off"
    assert plan["shared"] == "on" and plan["profile"] == "off"


def test_gpu_check_stops_on_a_stage_it_does_not_have(tmp_path):
    done = gpu_check(tmp_path, RUN_STAGES="solutions skeleton")
    assert done.returncode == 2
    assert "'skeleton' in RUN_STAGES is no stage" in done.stderr
    assert not (tmp_path / "out").exists()
