"""grader batch: rosters, the gradebook and leaderboard, failures that do not stop the batch,
resuming after an interruption, --regrade; with a grade function injected (fast), and once
through the command line with stand-in meson, ninja and test binaries."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from fakes import (alive, bench_data, fake_bench, fake_gtest, fake_tool, use_fake_build_tools,
                   write_script)
from grader import batch, batch_roster, cli, html_report, model, tools
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.gradebook import GRADED, INCOMPLETE_PREFIX
from grader.stages.common import GradeOptions
from helpers import ROOT, TESTS, assert_one_line_error, make_student, vector_add

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

GPU = model.GpuInfo("Fake GPU", "9.0", "1", 1)


def fake_report(options: GradeOptions, score: float, ratio: float | None) -> model.Report:
    metric = model.Metric("bandwidth", "", "vector_add", "copy", None, None, "GB/s", ratio,
                          0.8, 0.3, 0.0, 40.0)
    ex = model.ExerciseResult("ch01_programming_model/vector_add", "vector_add",
                              "ch01_programming_model", "Vector add", "partial", score, 100.0,
                              stages=[model.StageResult("benchmark", "passed",
                                                        metrics=[metric])])
    return model.Report(submission=str(options.submission), seed=options.seed,
                        started_at="s", finished_at="f", exercises=[ex])


class Grades:
    """A grade function: per student a (score, ratio), an exception to raise, or a callable;
    records who was graded, in order."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.calls: list[str] = []
        self.options: dict[str, GradeOptions] = {}

    def __call__(self, student, options, progress):
        self.calls.append(student.id)
        self.options[student.id] = options
        progress("grading (fake)")
        what = self.plan[student.id]
        if isinstance(what, BaseException):
            raise what
        score, ratio = what
        return fake_report(options, score, ratio)


def run_batch(roster, out, grades, *, regrade=None, seed=7, secret=None, seed_given=True,
              lines=None, build_only=False, **at_once):
    """lines: where the progress lines go (also when the batch is stopped); at_once: Batch's
    gpus and jobs (tests/test_batch_parallel.py)."""
    lines = [] if lines is None else lines
    options = GradeOptions(root=ROOT, submission=ROOT, build_dir=out, seed=seed, secret=secret,
                           build_only=build_only)
    batch.prepare_out(out)
    b = batch.Batch(batch.read_roster(roster), out, [vector_add()], options, grades,
                    regrade=regrade, seed_given=seed_given, say=lines.append, **at_once)
    status = b.run()
    return status, lines


def gradebook(out):
    with open(out / "gradebook.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_gradebook_totals_are_the_reports_totals(roster, tmp_path):
    out = tmp_path / "out"
    grades = Grades({"alice": (100, 0.9), "bob": (72.5, 0.55), "carol": (10, None),
                     "dave": (0, 0.55), "eve": (33.333, 0.2)})
    status, lines = run_batch(roster, out, grades)
    assert status == 0
    assert grades.calls == ["alice", "bob", "carol", "dave", "eve"]
    book = gradebook(out)
    assert list(book) == grades.calls
    for sid, row in book.items():
        report = model.Report.load(out / "reports" / f"{sid}.json")
        assert float(row["total"]) == pytest.approx(report.score, abs=0.005)
        assert float(row["vector_add"]) == pytest.approx(report.exercises[0].score, abs=0.005)
        assert float(row["percent"]) == pytest.approx(report.percent, abs=0.005)
        assert row["max"] == "100" and row["status"] == "graded"
        assert (out / "logs" / f"{sid}.log").read_text().count("grading (fake)") == 1
    # every student has a build directory of its own
    assert len({str(o.build_dir) for o in grades.options.values()}) == 5
    assert grades.options["bob"].build_dir == (out / "builds" / "bob").resolve()
    assert any("[5/5] eve: 33.33/100 (33.3%)" in line for line in lines)
    assert any("left (" in line and "a student)" in line for line in lines)  # the ETA
    assert "done: 5 of 5 students graded" in lines[-1]


def test_leaderboard_ranks_each_metric_best_first(roster, tmp_path):
    out = tmp_path / "out"
    grades = Grades({"alice": (100, 0.9), "bob": (72.5, 0.55), "carol": (10, None),
                     "dave": (0, 0.55), "eve": (33.333, 0.2)})
    run_batch(roster, out, grades)
    with open(out / "leaderboard.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student", "exercise", "metric", "ratio", "rank"]
    assert rows[1:] == [["alice", "vector_add", "bandwidth", "0.9000", "1"],
                        ["bob", "vector_add", "bandwidth", "0.5500", "2"],
                        ["dave", "vector_add", "bandwidth", "0.5500", "2"],
                        ["eve", "vector_add", "bandwidth", "0.2000", "4"]]  # carol: no ratio

    # The same ranking as a page beside it, each student linked to their report page.
    page = (out / "leaderboard.html").read_text()
    table = page[page.index("<h2>vector_add: bandwidth</h2>"):]
    cells = re.findall(r'<td class="num">(\d+)</td><td><a href="reports/(\w+)\.html">\w+</a>'
                       r'</td><td class="num">([\d.]+)</td>', table)
    assert cells == [("1", "alice", "0.900"), ("2", "bob", "0.550"), ("2", "dave", "0.550"),
                     ("4", "eve", "0.200")]
    assert "carol" not in table and "<script" not in page and "http" not in page


def test_leaderboard_page_without_jinja2_is_not_left_stale(roster, tmp_path, monkeypatch):
    out = tmp_path / "out"
    run_batch(roster, out, Grades({"alice": (100, 0.9)}))
    assert (out / "leaderboard.html").is_file()

    def unavailable(name):
        raise html_report.Unavailable(html_report.MISSING)
    monkeypatch.setattr(html_report, "_import", unavailable)
    run_batch(roster, out, Grades({"alice": (100, 0.8)}), regrade=["alice"])
    assert not (out / "leaderboard.html").exists()
    assert "0.8000" in (out / "leaderboard.csv").read_text()


def test_a_failing_student_is_recorded_and_the_batch_goes_on(roster, tmp_path):
    out = tmp_path / "out"
    (roster / "dave" / "ch01_programming_model" / "vector_add.cu").unlink()  # a bad folder
    grades = Grades({"alice": (100, 0.9), "bob": GraderError("configuring the build failed: x"),
                     "carol": RuntimeError("a grader bug"), "dave": (1, 1), "eve": (50, 0.5)})
    status, lines = run_batch(roster, out, grades)
    assert status == 1
    assert grades.calls == ["alice", "bob", "carol", "eve"]  # dave's folder was refused
    book = gradebook(out)
    assert book["alice"]["status"] == book["eve"]["status"] == "graded"
    assert book["bob"]["status"] == "failed to grade: configuring the build failed: x"
    assert book["carol"]["status"] == "failed to grade: the grader failed: RuntimeError: " \
                                      "a grader bug"
    assert book["dave"]["status"].startswith("failed to grade: no exercise files in")
    assert book["bob"]["total"] == "" and not (out / "reports" / "bob.json").exists()
    assert "Traceback" in (out / "logs" / "carol.log").read_text()
    assert "could not grade bob, carol, dave" in lines[-1]


def test_an_interrupted_batch_resumes_with_what_is_left(roster, tmp_path):
    out = tmp_path / "out"
    plan = {"alice": (100, 0.9), "bob": (50, 0.5), "carol": KeyboardInterrupt(),
            "dave": (1, 0.1), "eve": (2, 0.2)}
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, Grades(plan))
    book = gradebook(out)  # consistent with the reports written so far
    assert [book[s]["status"] for s in book] == ["graded", "graded"] + ["not graded yet"] * 3
    # a report cut short by a kill does not count as complete
    (out / "reports" / "bob.json").write_text((out / "reports" / "bob.json").read_text()[:200])
    plan["carol"] = (30, 0.3)
    grades = Grades(plan)
    status, lines = run_batch(roster, out, grades, seed_given=False)
    assert status == 0
    assert grades.calls == ["bob", "carol", "dave", "eve"]
    assert "1 of 5 students already have a complete report" in lines[0]
    assert {o.seed for o in grades.options.values()} == {7}
    assert all(row["status"] == "graded" for row in gradebook(out).values())


def test_regrade_all_one_and_a_stopped_regrade_resumes(roster, tmp_path):
    out = tmp_path / "out"
    plan = {sid: (10, 0.1) for sid in ("alice", "bob", "carol", "dave", "eve")}
    run_batch(roster, out, Grades(plan))
    grades = Grades(plan)
    run_batch(roster, out, grades)
    assert grades.calls == []  # all complete
    grades = Grades(plan)
    run_batch(roster, out, grades, regrade=["bob", "dave"])
    assert grades.calls == ["bob", "dave"]
    # a regrade of everyone, stopped at carol, then the same command again
    plan["carol"] = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, Grades(plan), regrade=[batch.ALL_STUDENTS])
    plan["carol"] = (20, 0.2)
    grades = Grades(plan)
    run_batch(roster, out, grades, regrade=[batch.ALL_STUDENTS])
    assert grades.calls == ["carol", "dave", "eve"]
    grades = Grades(plan)
    run_batch(roster, out, grades, regrade=[batch.ALL_STUDENTS])
    assert grades.calls == ["alice", "bob", "carol", "dave", "eve"]  # a new regrade
    with pytest.raises(GraderError, match="--regrade zoe: no such student"):
        run_batch(roster, out, Grades(plan), regrade=["zoe"])


def test_a_rerun_keeps_the_seed_and_the_secret(roster, tmp_path):
    out = tmp_path / "out"
    plan = {sid: (10, 0.1) for sid in ("alice", "bob", "carol", "dave", "eve")}
    plan["bob"] = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, Grades(plan), secret="s3cret")
    assert "s3cret" not in (out / "batch.json").read_text()
    plan["bob"] = (10, 0.1)
    with pytest.raises(GraderError, match="started with a secret; give it again"):
        run_batch(roster, out, Grades(plan))
    with pytest.raises(GraderError, match="with a different secret"):
        run_batch(roster, out, Grades(plan), secret="other")
    with pytest.raises(GraderError, match="grades with --seed 7"):
        run_batch(roster, out, Grades(plan), secret="s3cret", seed=8)
    grades = Grades(plan)
    run_batch(roster, out, grades, secret="s3cret", seed=8, seed_given=False)
    assert {o.seed for o in grades.options.values()} == {7}
    assert {o.secret for o in grades.options.values()} == {"s3cret"}


# ------------------------------------------------------------------------------ rosters

def write(path, text):
    path.write_text(text)
    return path


def test_csv_roster(tmp_path):
    make_student(tmp_path / "subs", "a1")
    path = write(tmp_path / "roster.csv", "\ufeffStudent ID,Path,Email\n"
                 "a1,subs/a1,a@x\n\n b-2 , /abs/b2 \n")
    students = batch.read_roster(path)
    assert [(s.id, s.submission) for s in students] == [
        ("a1", tmp_path / "subs" / "a1"), ("b-2", tmp_path.joinpath("/abs/b2"))]


@pytest.mark.parametrize("text, fragments", [
    ("", ["is empty", "header"]),
    ("student,path\nalice\n", ["line 2", "expected a student id and a path"]),
    ("student,path\nalice,a\nbob,b\nalice,c\n", ["line 4", "duplicate student id 'alice'",
                                                 "line 2"]),
    ("student,path\nAlice,a\nalice,c\n", ["line 3", "duplicate"]),
    ("student,path\nal ice,a\n", ["line 2", "'al ice'"]),
    ("student,path\n../x,a\n", ["line 2", "'../x'"]),
    ('student,path\nalice,"a\nbob,b\n', ["malformed CSV"]),
    ("alice,subs/alice\n", ["line 1", "header"]),
])
def test_roster_csv_errors(tmp_path, text, fragments):
    make_student(tmp_path / "subs", "alice")
    with pytest.raises(GraderError) as error:
        batch.read_roster(write(tmp_path / "roster.csv", text))
    message = str(error.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_out_inside_the_roster_folder_is_refused(roster):
    with pytest.raises(GraderError, match="inside the roster folder"):
        batch.prepare_out(roster / "grades", roster)


def test_folder_roster_errors(tmp_path, roster):
    with pytest.raises(GraderError, match="does not exist"):
        batch.read_roster(tmp_path / "nope.csv")
    with pytest.raises(GraderError, match="looks like one submission"):
        batch.read_roster(roster / "alice")
    (tmp_path / "empty").mkdir()
    with pytest.raises(GraderError, match="lists no students"):
        batch.read_roster(tmp_path / "empty")
    (roster / ".git").mkdir()
    assert [s.id for s in batch.read_roster(roster)] == ["alice", "bob", "carol", "dave", "eve"]


# ------------------------------------------------------------------------------ command line

@pytest.fixture
def fake_course(tmp_path, monkeypatch):
    """A fake GPU, meson, ninja; stand-in test and benchmark binaries go into the students'
    build directories before the batch runs."""
    use_fake_build_tools(monkeypatch, tmp_path, sanitizer=False)
    monkeypatch.setattr(tools, "query_gpu", lambda: GPU)


def binaries(out, sid, cases, rate):
    build = out / "builds" / sid
    fake_gtest(build / "vector_add_test", cases)
    fake_bench(build / "vector_add_bench", bench_data(rate, 1000))


def test_a_batch_requires_the_sandbox_unless_told_not_to(fake_course, roster, tmp_path, capsys):
    out = tmp_path / "out"
    binaries(out, "alice", ["Small/VectorAdd.MatchesReference/n_1"], 900)
    roster_csv = write(tmp_path / "roster.csv", "id,path\nalice,students/alice\n")
    args = ["batch", str(roster_csv), "--out", str(out), "-e", "vector_add", "--no-sanitizer",
            "--seed", "5"]
    # The stand-in build makes no launcher: no sandbox, so no grade, and the gradebook says why.
    assert cli.main(args) == 1
    status = gradebook(out)["alice"]["status"]
    assert status.startswith("failed to grade: no sandbox for student programs: the launcher "
                             "course_sandbox did not build"), status
    assert "--no-sandbox" in status
    assert cli.main(args + ["--no-sandbox"]) == 0
    report = json.loads((out / "reports" / "alice.json").read_text())
    assert report["sandbox"] == {"status": "off", "reason": "--no-sandbox"}


def test_cli_batch_grades_with_the_real_pipeline(fake_course, roster, tmp_path, capsys):
    out = tmp_path / "out"
    ok = ["Small/VectorAdd.MatchesReference/n_1", "VectorAddEdge.Empty"]
    binaries(out, "alice", ok, 900)
    binaries(out, "bob", ok, 550)
    binaries(out, "carol", ["Small/VectorAdd.MatchesReference/n_1",
                            {"name": "VectorAddEdge.Empty", "action": "segv"}], 900)
    binaries(out, "dave", ok, 900)
    roster_csv = write(tmp_path / "roster.csv", "id,path\nalice,students/alice\n"
                       "bob,students/bob\ncarol,students/carol\nzed,students/zed\n")
    # The stand-in build makes no sandbox launcher (test_sandbox.py has the real one).
    args = ["batch", str(roster_csv), "--out", str(out), "-e", "vector_add",
            "--no-sanitizer", "--seed", "5", "--no-sandbox"]
    assert cli.main(args) == 1  # zed has no folder
    book = gradebook(out)
    assert book["alice"]["total"] == "100" and book["bob"]["total"] == "80"
    assert book["carol"]["status"] == "graded" and float(book["carol"]["total"]) == 30
    assert book["zed"]["status"].startswith("failed to grade: submission folder")
    err = capsys.readouterr().err
    assert "[4/4] zed: failed to grade" in err
    report = json.loads((out / "reports" / "carol.json").read_text())
    assert report["seed"] == 5 and report["exercises"][0]["status"] == "crashed"
    assert "SIGSEGV" in (out / "logs" / "carol.log").read_text()
    # the same command again: only zed, who still has no folder
    assert cli.main(args) == 1
    assert "3 of 4 students already have a complete report" in capsys.readouterr().err


@pytest.mark.parametrize("make_args, fragments", [
    (lambda t: ["batch", str(t / "none.csv"), "--out", str(t / "o")], ["does not exist"]),
    (lambda t: ["batch", str(write(t / "r.csv", "id,path\na,x\na,y\n")), "--out", str(t / "o")],
     ["line 3", "duplicate"]),
    (lambda t: ["batch", str(write(t / "r.csv", "id,path\na,x\n")),
                "--out", str(write(t / "file", "x") / "o")], ["--out", "not writable"]),
    (lambda t: ["batch", str(write(t / "r.csv", "id,path\na,x\n")),
                "--out", str(write(t / "file", "x"))], ["--out", "is a file"]),
])
def test_cli_batch_bad_input_is_one_line_and_exit_2(fake_course, tmp_path, capsys, make_args,
                                                    fragments):
    assert cli.main(make_args(tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    err = [line for line in err if not line.startswith("grader: warning: ")]
    assert len(err) == 1 and err[0].startswith("grader: error: ")
    for fragment in fragments:
        assert fragment in err[0]


def test_a_batch_stopped_with_kill_ends_its_programs_and_resumes(tmp_path):
    # A real process and a real SIGTERM: the batch stops inside bob's test run, the running
    # test program and its child are ended, and the same command grades bob and carol.
    roster = tmp_path / "students"
    for sid in ("alice", "bob", "carol"):
        make_student(roster, sid)
    bin_dir, out = tmp_path / "bin", tmp_path / "out"
    fake_tool(bin_dir / "meson")
    fake_tool(bin_dir / "ninja")
    script = tmp_path / "run.py"
    script.write_text(f"""import sys
sys.path[:0] = [{str(ROOT)!r}, {str(TESTS)!r}]
from grader import cli, model, tools
tools.find = lambda name, required_for="": (
    {str(bin_dir)!r} + "/" + name if name in ("meson", "ninja") else None)
tools.query_gpu = lambda: model.GpuInfo("Fake GPU", "9.0", "1", 1)
from grader.stages import integrity  # the fake build leaves no library to read
integrity.run = lambda options, ex: model.StageResult("integrity", model.StageStatus.PASSED)
sys.exit(cli.main(sys.argv[1:]))
""")
    ok = ["Small/VectorAdd.MatchesReference/n_1"]
    pid_file = tmp_path / "child.pid"
    for sid in ("alice", "bob", "carol"):
        binaries(out, sid, ok, 900)
    fake_gtest(out / "builds" / "bob" / "vector_add_test",
               [{"name": ok[0], "action": "child_hang", "pid_file": str(pid_file)},
                {"name": "VectorAddEdge.Empty", "action": "hang"}])
    command = [sys.executable, str(script), "batch", str(roster), "--out", str(out),
               "-e", "vector_add", "--no-sanitizer", "--no-benchmark", "--no-sandbox"]
    with open(tmp_path / "err1", "w") as err:
        batch_process = subprocess.Popen(command, stderr=err, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)
        batch_process.send_signal(signal.SIGTERM)
        assert batch_process.wait(timeout=30) == 130
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)
    book = gradebook(out)
    assert [row["status"] for row in book.values()] == ["graded", "not graded yet",
                                                         "not graded yet"]
    assert "the same command resumes" in (tmp_path / "err1").read_text()

    fake_gtest(out / "builds" / "bob" / "vector_add_test", ok)
    alice_report = (out / "reports" / "alice.json").stat().st_mtime_ns
    r = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "1 of 3 students already have a complete report" in r.stderr
    assert (out / "reports" / "alice.json").stat().st_mtime_ns == alice_report
    assert all(row["status"] == "graded" for row in gradebook(out).values())


def test_an_incomplete_grade_is_marked_and_graded_again_on_the_next_run(roster, tmp_path):
    """A student whose benchmark was not measured (another process kept the GPU busy) is not
    done: the gradebook says so, the batch exits 3, and the same command grades them again."""
    out = tmp_path / "out"

    def grade(student, options, progress):
        report = fake_report(options, 60, None)
        if student.id == "bob" and busy:
            report.exercises[0].status = model.ExerciseStatus.INCOMPLETE
        return report

    busy = True
    calls = Grades({})
    status, lines = run_batch(roster, out, lambda s, o, p: (calls.calls.append(s.id),
                                                           grade(s, o, p))[1])
    assert status == EXIT_INCOMPLETE
    assert gradebook(out)["bob"]["status"] == INCOMPLETE_PREFIX + "vector_add"
    assert gradebook(out)["alice"]["status"] == GRADED
    assert "1 incomplete" in lines[-1] and "bob" in lines[-1]
    assert any(line.startswith("[2/5] bob: 60/100 (60.0%), incomplete: 1 not measured")
               for line in lines)
    busy = False
    calls.calls.clear()
    status, lines = run_batch(roster, out, lambda s, o, p: (calls.calls.append(s.id),
                                                           grade(s, o, p))[1])
    assert status == 0 and calls.calls == ["bob"]
    assert any("incomplete grade" in line and "bob" in line for line in lines)
    assert gradebook(out)["bob"]["status"] == GRADED


# ------------------------------------------------------------------------------ --build-only

def built_report(options: GradeOptions, statuses: dict[str, str]) -> model.Report:
    """A --build-only report: per exercise name, its status (skipped: compiled, not run)."""
    exercises = [model.ExerciseResult(f"ch01_programming_model/{name}", name,
                                      "ch01_programming_model", name, status, 0.0, 100.0)
                 for name, status in statuses.items()]
    return model.Report(submission=str(options.submission), seed=options.seed,
                        started_at="s", finished_at="f", options={"build_only": True},
                        exercises=exercises)


def test_a_build_only_batch_says_who_compiled_and_scores_nothing(roster, tmp_path):
    out = tmp_path / "out"
    plan = {"alice": {"vector_add": "skipped", "saxpy": "skipped"},
            "bob": {"vector_add": "compile_error", "saxpy": "compile_error"},
            "carol": {"vector_add": "skipped", "saxpy": "not_submitted"},
            "dave": {"vector_add": "rejected", "saxpy": "skipped"},
            "eve": {"vector_add": "skipped", "saxpy": "skipped"}}
    status, lines = run_batch(roster, out, lambda s, o, p: built_report(o, plan[s.id]),
                              build_only=True)
    assert status == batch.EXIT_SOME_FAILED  # some do not compile
    book = gradebook(out)
    assert book["alice"]["status"] == book["eve"]["status"] == "compiled"
    assert book["bob"]["status"] == "compile errors: vector_add, saxpy"
    assert book["carol"]["status"] == "compiled; not submitted: saxpy"
    assert book["dave"]["status"] == "rejected: vector_add"
    for row in book.values():  # nothing was run: no score, not even 0
        assert row["vector_add"] == row["saxpy"] == row["total"] == row["max"] \
            == row["percent"] == "", row
    assert any(line.startswith("[2/5] bob: compile errors: vector_add, saxpy in")
               for line in lines)
    assert any(line.startswith("[1/5] alice: compiled in") for line in lines)
    assert lines[-1].startswith("done: 5 of 5 students built; 2 do not compile: bob, dave;")
    assert (out / "leaderboard.csv").read_text().count("\n") == 1  # the header alone

    # The same build-only command again: nothing to do, same verdict.
    calls = []
    status, lines = run_batch(roster, out, lambda s, o, p: calls.append(s.id), build_only=True)
    assert status == batch.EXIT_SOME_FAILED and calls == []
    # A full batch into the same folder grades everyone: a build-only report measured nothing.
    grades = Grades({sid: (50, 0.5) for sid in plan})
    status, lines = run_batch(roster, out, grades)
    assert status == 0 and grades.calls == list(plan)
    assert any("5 students have a --build-only report, which measured nothing: graded in full"
               in line for line in lines)
    assert all(row["status"] == "graded" and row["total"] == "50"
               for row in gradebook(out).values())
    # And a build-only batch after it keeps the full reports, which say more.
    status, _ = run_batch(roster, out, lambda s, o, p: calls.append(s.id), build_only=True)
    assert status == 0 and calls == [] and gradebook(out)["bob"]["total"] == "50"


NINJA_FAILING_FOR_BOB = r'''
import sys
build = sys.argv[sys.argv.index("-C") + 1]
if "/bob" in build:
    print("FAILED: vector_add_test.p/vector_add.cu.o\nvector_add.cu(3): error: expected a ';'")
    sys.exit(1)
'''


def test_cli_build_only_batch_with_a_student_whose_file_does_not_compile(roster, tmp_path,
                                                                         monkeypatch, capsys):
    found = use_fake_build_tools(monkeypatch, tmp_path, sanitizer=False)
    found["ninja"] = write_script(tmp_path / "bin" / "ninja-for-bob", NINJA_FAILING_FOR_BOB)
    monkeypatch.setattr(tools, "query_gpu", lambda: None)  # build-only needs no GPU
    out = tmp_path / "out"
    status = cli.main(["batch", str(roster), "--out", str(out), "-e", "vector_add",
                       "--build-only", "--seed", "5"])
    assert status == 1
    book = gradebook(out)
    assert book["bob"]["status"] == "compile errors: vector_add"
    assert book["bob"]["total"] == book["bob"]["vector_add"] == ""
    assert all(book[sid]["status"] == "compiled" and book[sid]["total"] == ""
               for sid in ("alice", "carol", "dave", "eve"))
    report = json.loads((out / "reports" / "bob.json").read_text())
    assert report["exercises"][0]["status"] == "compile_error"
    err = capsys.readouterr().err
    assert "1 do not compile: bob" in err.strip().splitlines()[-1]


# ------------------------------------------------------------------------------ misnamed

def test_a_misnamed_or_misplaced_file_is_named_in_the_refusal(tmp_path):
    exercises = [vector_add()]
    cases = {"case": "ch01_programming_model/VectorAdd.cu",
             "extension": "ch01_programming_model/vector_add.cpp",
             "no chapter folder": "vector_add.cu",
             "one folder too deep": "alice-main/ch01_programming_model/vector_add.cu"}
    for name, path in cases.items():
        folder = tmp_path / name.replace(" ", "_")
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text("// work\n")
        (folder / "notes.txt").write_text("unrelated\n")
        problem = batch_roster.submission_problem(batch.Student("s", folder), exercises)
        assert problem.startswith(f"no exercise files in {folder} (expected one folder per "
                                  "chapter, e.g. ch01_programming_model/vector_add.cu)"), problem
        assert problem.endswith(f"; found {path} (should be "
                                "ch01_programming_model/vector_add.cu)"), (name, problem)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "found" not in batch_roster.submission_problem(batch.Student("s", empty), exercises)
    # A name that is not UTF-8 is named too, in text the UTF-8 gradebook and log can hold.
    odd = tmp_path / "odd"
    (odd / "ch01_programming_model").mkdir(parents=True)
    (odd / "ch01_programming_model" / os.fsdecode(b"Vector\xffAdd.cu")).write_text("//\n")
    problem = batch_roster.submission_problem(batch.Student("s", odd), exercises)
    assert problem.encode("utf-8").endswith(
        "; found ch01_programming_model/Vector\ufffdAdd.cu (should be "
        "ch01_programming_model/vector_add.cu)".encode("utf-8")), problem


# ------------------------------------------------------------------------------ one per --out

SLOW_TOOL = r'''
import os, sys, time
open(os.environ["STARTED"], "a").write(f"{os.getpid()}\n")
time.sleep(float(os.environ.get("TOOL_SECONDS", "0")))
'''


def test_a_second_batch_on_the_same_out_is_refused_naming_the_first(roster, tmp_path):
    bin_dir, out, started = tmp_path / "bin", tmp_path / "out", tmp_path / "started"
    for name in ("meson", "ninja"):
        write_script(bin_dir / name, SLOW_TOOL)
    script = tmp_path / "grade_class.py"
    script.write_text(f"""import sys
sys.path[:0] = [{str(ROOT)!r}, {str(TESTS)!r}]
from grader import cli, model, tools
tools.find = lambda name, required_for="": (
    {str(bin_dir)!r} + "/" + name if name in ("meson", "ninja") else None)
tools.query_gpu = lambda: None
from grader.stages import integrity  # the fake build leaves no library to read
integrity.run = lambda options, ex: model.StageResult("integrity", model.StageStatus.PASSED)
sys.exit(cli.main(sys.argv[1:]))
""")
    command = [sys.executable, str(script), "batch", str(roster), "--out", str(out),
               "-e", "vector_add", "--build-only"]
    env = dict(os.environ, STARTED=str(started), TOOL_SECONDS="60",
               COURSE_GPU_LOCK_DIR=str(tmp_path / "locks"))
    first = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the first batch never configured"
        second = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                env=dict(env, TOOL_SECONDS="0"))
        assert second.returncode == 2
        line = assert_one_line_error(
            second.stderr, f"--out {out} is in use by process {first.pid} of ",
            "grading a batch since ", f"grade_class.py batch {roster} --out {out}",
            f"(kill {first.pid})", "one batch per --out")
        assert "alice" not in line
        assert first.poll() is None  # the first goes on, untouched
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=30) == 130
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # The first gone, the same command resumes its work.
    again = subprocess.run(command, capture_output=True, text=True, timeout=120,
                           env=dict(env, TOOL_SECONDS="0"))
    assert again.returncode == 0, again.stderr
    assert all(row["status"] == "compiled" for row in gradebook(out).values())
