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
