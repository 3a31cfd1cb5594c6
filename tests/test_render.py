"""grader.render: terminal table, JSON (read back by model.Report.from_dict), JUnit XML."""

from __future__ import annotations

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
    for key in ("ch01_a/one", "ch01_a/two", "ch02_b/three", "ch02_b/four", "ch02_b/five"):
        assert any(line.startswith(key) for line in lines), key
    row = next(l for l in lines if l.startswith("ch02_b/three"))
    assert "crashed" in row and "1/4" in row and "20.0/60.0" in row
    assert "0.55x" in next(l for l in lines if l.startswith("ch01_a/two"))
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
