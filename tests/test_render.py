"""grader.render: terminal table, JSON (read back by model.Report.from_dict), JUnit XML."""

from __future__ import annotations

from pathlib import Path

import io
import json
import xml.etree.ElementTree as ET

import pytest

from grader import cli, model, render
from grader.errors import GraderError
from helpers import sample_report


def test_totals():
    r = sample_report()
    assert r.score == 200 and r.max_score == 350
    assert r.percent == pytest.approx(100 * 200 / 350)


def test_terminal_table():
    text = render.terminal(sample_report(), io.StringIO())
    assert "\033[" not in text  # no colour when not a terminal
    lines = text.splitlines()
    total = lines[-1]
    assert total.startswith("total") and "200.0/350.0" in total and "(57.1%)" in total
    # Rows sit under their chapter, named without it, so long names still fit.
    assert lines.index("ch01_a") < lines.index(next(l for l in lines if l.startswith("  one")))
    for name in ("one", "two", "three", "four", "five"):
        assert any(line.startswith(f"  {name} ") for line in lines), name
    row = next(l for l in lines if l.startswith("  three "))
    assert "crashed" in row and "1/4" in row and "20.0/60.0" in row
    assert "0.55x" in next(l for l in lines if l.startswith("  two "))
    assert "Seed: 42" in text and "Fake GPU" in text
    # details of the exercises that lost points
    assert "✗ S.c [crashed]" in text and "expected 1, got nan" in text
    assert "FAILED: four.cu.o" in text
    assert "── ch01_a/one" not in text  # passed exercises have no details unless verbose


def test_terminal_verbose_and_empty():
    verbose = render.terminal(sample_report(), io.StringIO(), verbose=True)
    assert "── ch01_a/one" in verbose
    empty = model.Report(submission="s", seed=1, started_at="t")
    text = render.terminal(empty, io.StringIO())
    assert text.splitlines()[-1].startswith("total") and "GPU: none" in text


def test_json_round_trip(tmp_path):
    report = sample_report()
    path = tmp_path / "out" / "report.json"
    render.write_json(report, path)
    data = json.loads(path.read_text())
    assert data["score"] == 200 and data["max_score"] == 350 and data["percent"] == 57.14
    assert data["schema"] == model.SCHEMA_VERSION
    again = model.Report.from_dict(data)
    assert again.to_dict() == report.to_dict()
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.parametrize("data", [{}, {"exercises": [{"key": "x"}]}, [], {"exercises": []}])
def test_report_from_dict_rejects_non_reports(data):
    with pytest.raises(GraderError, match="not a grader report"):
        model.Report.from_dict(data)


def test_junit_xml_counts():
    report = sample_report()
    root = ET.fromstring(render.junit_xml(report))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [e.key for e in report.exercises]
    cases = root.iter("testcase")
    failures = list(root.iter("failure"))
    assert int(root.get("tests")) == len(list(cases))
    assert int(root.get("failures")) == len(failures)
    # two: tests/S.b failed, S.c crashed, S.d not_run, benchmark failed, build failed
    by_suite = {s.get("name"): s for s in suites}
    assert by_suite["ch01_a/one"].get("failures") == "0"
    assert by_suite["ch01_a/two"].get("failures") == "1"
    assert by_suite["ch02_b/three"].get("failures") == "3"
    assert by_suite["ch02_b/four"].get("failures") == "1"
    assert by_suite["ch02_b/five"].find("testcase/skipped") is not None
    assert int(root.get("failures")) == 5
    crash = by_suite["ch02_b/three"].find("testcase[@name='tests/S.c']/failure")
    assert crash.get("type") == "crashed" and "SIGSEGV" in crash.text


def test_cli_render_and_junit(tmp_path, capsys):
    path = tmp_path / "report.json"
    render.write_json(sample_report(), path)
    junit = tmp_path / "junit.xml"
    assert cli.main(["render", str(path), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "200.0/350.0" in out
    assert ET.parse(junit).getroot().get("failures") == "5"


@pytest.mark.parametrize("content, fragment", [
    (None, "does not exist"), ("{torn", "is not JSON"), ('{"exercises": 1}', "not a grader "
                                                        "report")])
def test_cli_render_errors(tmp_path, capsys, content, fragment):
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    assert cli.main(["render", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("grader: error: ") and fragment in err


def test_report_from_dict_with_strings_as_exercises():
    with pytest.raises(GraderError, match="not a grader report"):
        model.Report.from_dict({"exercises": ["x"]})


def test_terminal_fits_100_columns_with_the_longest_names():
    report = sample_report()
    long_name = "reduce_v2_neighbored_less_divergence"
    report.exercises[1].name = long_name
    report.exercises[1].stage("benchmark").metrics *= 4  # four ratios in one cell
    text = render.terminal(report, io.StringIO())
    table = text[text.index("exercise "):].splitlines()
    assert max(len(line) for line in table) <= 100
    row = next(l for l in table if l.startswith(f"  {long_name}"))
    assert row.rstrip().endswith("80.0/100.0") and "0.55x" in row


def test_terminal_build_only_says_compiled_and_gives_no_score_or_seed():
    report = sample_report()
    report.options["build_only"] = True
    for ex in report.exercises[:3]:
        ex.status = model.ExerciseStatus.SKIPPED
        ex.score = 0.0
    text = render.terminal(report, io.StringIO())
    assert "Seed:" not in text and "%" not in text and "/100.0" not in text
    assert "  one      compiled" in text
    assert text.splitlines()[-1].startswith(
        "compiled 3 of 5 exercises, 1 with compile errors, 1 not submitted")


def test_every_exercise_status_has_a_colour_in_the_terminal_and_the_page():
    from grader.model import ExerciseStatus
    assert set(render._COLORS) == set(ExerciseStatus)
    page = (Path(render.__file__).parent / "templates" / "report.html.j2").read_text()
    missing = [s.value for s in ExerciseStatus if f".status.{s.value}" not in page]
    assert not missing, f"no CSS rule for {missing} in report.html.j2"


# ----------------------------------------------------------------- said once, said in full

def _failing_exercise(message, stage):
    return model.ExerciseResult("ch01_a/six", "six", "ch01_a", "Six", model.ExerciseStatus.FAILED,
                                0.0, 100.0, message, [model.StageResult("build", "passed"), stage])


def test_a_failing_stage_is_said_once():
    tests = model.StageResult("tests", "failed", message="0 of 43 cases passed",
                              details={"passed": 0, "total": 43})
    report = model.Report("s", 1, "t", exercises=[_failing_exercise("tests: 0 of 43 cases "
                                                                     "passed", tests)])
    text = render.terminal(report, io.StringIO())
    assert text.count("0 of 43") == 1, text
    assert "   tests: failed - 0 of 43 cases passed" in text


def test_a_compile_error_is_said_once():
    build = model.StageResult("build", "failed", message="compilation failed; the compiler "
                              "said:", output="FAILED: x.o\nx.cu(1): error: y")
    ex = model.ExerciseResult("ch01_a/six", "six", "ch01_a", "Six",
                              model.ExerciseStatus.COMPILE_ERROR, 0.0, 100.0,
                              "compilation failed; the compiler said", [build])
    text = render.terminal(model.Report("s", 1, "t", exercises=[ex]), io.StringIO())
    assert text.count("compilation failed") == 1, text
    assert "   build: failed - compilation failed; the compiler said:" in text


def test_an_exercise_message_of_its_own_is_kept():
    # A message that is not just one stage's (the partial one joins two) is said as it is.
    text = render.terminal(sample_report(), io.StringIO())
    assert "   bandwidth: slow" in text


def test_not_counted_reads_as_such_and_junit_skips_it():
    sanitizer = model.StageResult("sanitizer", "not_counted", message="memcheck: clean (6 "
                                  "cases failed under it)")
    tests = model.StageResult("tests", "failed", message="0 of 6 cases passed",
                              details={"passed": 0, "total": 6})
    ex = _failing_exercise("tests: 0 of 6 cases passed", tests)
    ex.stages.append(sanitizer)
    report = model.Report("s", 1, "t", exercises=[ex])
    assert "   sanitizer: not counted - memcheck: clean" in render.terminal(report, io.StringIO())
    root = ET.fromstring(render.junit_xml(report))
    case = root.find(".//testcase[@name='sanitizer']")
    assert case.find("skipped") is not None and case.find("failure") is None


# ----------------------------------------------------------------------- build-only report

def build_only_report():
    report = sample_report()
    report.options["build_only"] = True
    for ex in report.exercises[:3]:
        ex.status, ex.score = model.ExerciseStatus.SKIPPED, 0.0
        ex.stages = ex.stages[:2]
    return report


def test_a_build_only_report_has_no_score(tmp_path):
    path = tmp_path / "r.json"
    render.write_json(build_only_report(), path)
    data = json.loads(path.read_text())
    assert data["score"] is None and data["percent"] is None
    assert data["max_score"] == 350  # what a grade would be out of
    again = model.Report.load(path)  # score and percent are derived: it loads
    assert again.options["build_only"] and len(again.exercises) == 5
    text = render.terminal(again, io.StringIO())
    assert "%" not in text and "no score" in text
    assert ET.fromstring(render.junit_xml(again)).get("failures") == "1"  # the compile error


def test_render_prints_a_build_only_report_and_its_junit(tmp_path, capsys):
    path = tmp_path / "r.json"
    render.write_json(build_only_report(), path)
    junit = tmp_path / "j.xml"
    assert cli.main(["render", str(path), "--junit", str(junit)]) == 0
    assert "no score" in capsys.readouterr().out and junit.is_file()


def test_classroom_points_of_a_build_only_report_is_an_error_not_a_zero():
    from grader import exports
    result = exports.classroom_result(build_only_report(), "ch01_a", 200)
    assert result["status"] == "error"
    assert "--build-only" in result["tests"][0]["message"]


# ----------------------------------------------------------------- the build stage's lines

def _warning_log(count, prefix="../../workspace/ch01_programming_model/vector_add.cu"):
    return "\n".join(f"{prefix}({10 + i}): warning #177-D: variable \"u{i}\" was declared but "
                     "never referenced" for i in range(count))


def test_warnings_past_those_shown_are_counted():
    from grader.stages import build
    from helpers import vector_add
    stage = build.linked(vector_add(), _warning_log(25))
    assert len(stage.details["warnings"]) == build.WARNINGS_SHOWN == 20
    assert stage.details["warnings_hidden"] == 5
    assert stage.message == ("compiled, with 25 compiler warnings in your code; 20 shown here, "
                             "5 more not shown")
    report = model.Report("s", 1, "t", exercises=[model.ExerciseResult(
        "ch01_programming_model/vector_add", "vector_add", "ch01_programming_model", "V",
        model.ExerciseStatus.PASSED, 100.0, 100.0, "full marks", [stage])])
    text = render.terminal(report, io.StringIO())
    assert "25 compiler warnings" in text and "5 more not shown" in text


def test_warnings_of_an_unchanged_file_are_said_again(tmp_path):
    """ninja compiles only what changed: the grade after one with warnings still says them,
    and says they are from the last compile; a compile without warnings clears them."""
    from grader.stages import build
    from grader.stages.common import GradeOptions
    from helpers import vector_add, ROOT
    ex = vector_add()
    options = GradeOptions(root=ROOT, submission=tmp_path / "sub", build_dir=tmp_path / "build",
                           seed=1)
    compiled = ("[3/9] Compiling Cuda object libvector_add_submission.a.p/"
                "workspace_ch01_programming_model_vector_add.cu.o\n")
    first = build.linked(ex, compiled + _warning_log(2), options=options)
    assert first.message == "compiled, with 2 compiler warnings in your code"
    again = build.linked(ex, "[1/1] Linking target vector_add_test\n", options=options)
    assert again.message == ("compiled, with 2 compiler warnings in your code (from its last "
                             "compile: unchanged since)")
    assert again.details["warnings"] == first.details["warnings"]
    fixed = build.linked(ex, compiled, options=options)
    assert fixed.message == "" and "warnings" not in fixed.details
    assert build.linked(ex, "", options=options).message == ""


def test_compiler_paths_open_from_the_course_root(tmp_path):
    from grader.stages import build
    from helpers import ROOT
    build_dir = ROOT / "build" / "grade" / "workspace-0123abcd"
    text = ("FAILED: [code=2] libvector_add_submission.a.p/workspace_ch01_vector_add.cu.o\n"
            "../../../workspace/ch01_programming_model/vector_add.cu(16): error: identifier\n"
            "In file included from ../../../support/include/course/check.h:5,\n"
            "1 error detected in the compilation of "
            "\"../../../workspace/ch01_programming_model/vector_add.cu\".\n"
            "nvcc -I../../../support/include -c ../../../../outside/x.cu\n"
            "/abs/elsewhere/ch01_programming_model/vector_add.cu:3:1: warning: w\n")
    shown = build.openable_paths(text, build_dir, ROOT).splitlines()
    assert shown[0].startswith("FAILED: [code=2] libvector_add_submission.a.p/")
    assert shown[1] == "workspace/ch01_programming_model/vector_add.cu(16): error: identifier"
    assert shown[2] == "In file included from support/include/course/check.h:5,"
    assert shown[3].endswith('"workspace/ch01_programming_model/vector_add.cu".')
    # An option's path stays as the command has it; a path outside the course is left too
    # (Meson names such files absolutely, as the last line does).
    assert shown[4] == "nvcc -I../../../support/include -c ../../../../outside/x.cu"
    assert shown[5].startswith("/abs/elsewhere/")
    # Each opens from the root.
    assert (ROOT / "support" / "include" / "course" / "check.h").is_file()
    # Without options the build folder is the one ninja entered.
    log = f"ninja: Entering directory `{build_dir}'\n" + _warning_log(
        1, "../../../workspace/ch01_programming_model/vector_add.cu")
    from helpers import vector_add
    [warning] = build.linked(vector_add(), log).details["warnings"]
    assert warning.startswith("workspace/ch01_programming_model/vector_add.cu(10): warning")
