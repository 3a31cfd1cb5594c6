"""grader.gtest: the case list, GoogleTest's JSON report, the course's event stream."""

from __future__ import annotations

import json

import pytest

from grader import gtest

LISTING = """\
Running main() from gpu_test_main.cpp
VectorAddEdge.
  Empty
  NegativeN
Small/VectorAdd.  # TestWithParam<int>
  MatchesReference/n_1  # GetParam() = 1
  MatchesReference/n_7  # GetParam() = 7
TypedSum/0.  # TypeParam = float
  Works
"""


def test_parse_list():
    assert gtest.parse_list(LISTING) == [
        "VectorAddEdge.Empty", "VectorAddEdge.NegativeN",
        "Small/VectorAdd.MatchesReference/n_1", "Small/VectorAdd.MatchesReference/n_7",
        "TypedSum/0.Works"]


def test_parse_list_ignores_noise_and_empty_output():
    assert gtest.parse_list("") == []
    assert gtest.parse_list("SKIPPED: no CUDA device\n  indented but no suite\n") == []


def report(tmp_path, data) -> object:
    path = tmp_path / "report.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


GOOD = {"testsuites": [
    {"name": "Edge", "testsuite": [
        {"name": "Empty", "status": "RUN", "result": "COMPLETED", "time": "0.002s"},
        {"name": "Bad", "status": "RUN", "result": "COMPLETED", "time": "1.5s",
         "failures": [{"failure": "a.cpp:3\nfirst"}, {"failure": "a.cpp:4\nsecond"}]},
        {"name": "Skip", "status": "RUN", "result": "SKIPPED", "time": "0s"},
        {"name": "DISABLED_Off", "status": "NOTRUN", "result": "SUPPRESSED", "time": "0s"},
        {"name": "Numeric", "status": "RUN", "result": "COMPLETED", "time": 0.25},
    ]}]}


def test_parse_report(tmp_path):
    cases = gtest.parse_report(report(tmp_path, GOOD))
    assert list(cases) == ["Edge.Empty", "Edge.Bad", "Edge.Skip", "Edge.Numeric"]
    assert cases["Edge.Empty"].status == "passed"
    assert cases["Edge.Empty"].duration_ms == pytest.approx(2.0)
    assert cases["Edge.Bad"].status == "failed"
    assert cases["Edge.Bad"].message == "a.cpp:3\nfirst\na.cpp:4\nsecond"
    assert cases["Edge.Bad"].duration_ms == pytest.approx(1500.0)
    assert cases["Edge.Skip"].status == "skipped"
    assert cases["Edge.Numeric"].duration_ms == pytest.approx(250.0)


@pytest.mark.parametrize("text", ['{"tests": 3}', "[]", '"x"'])
def test_parse_report_rejects_non_reports(tmp_path, text):
    with pytest.raises(ValueError):
        gtest.parse_report(report(tmp_path, text))


def test_parse_report_torn_file(tmp_path):
    with pytest.raises(ValueError):  # json.JSONDecodeError is a ValueError
        gtest.parse_report(report(tmp_path, json.dumps(GOOD)[:40]))


EVENTS = [
    {"event": "start", "case": "A.one"},
    {"event": "end", "case": "A.one", "status": "passed", "ms": 3, "failures": []},
    {"event": "start", "case": "A.two"},
    {"event": "end", "case": "A.two", "status": "failed", "ms": 4,
     "failures": ["x.cpp:1\nbad", "x.cpp:2\nworse"]},
    {"event": "start", "case": "A.three"},
]


def events_file(tmp_path, lines, tail=""):
    path = tmp_path / "events"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines) + tail)
    return path


def test_parse_events_names_the_running_case(tmp_path):
    out = gtest.parse_events(events_file(tmp_path, EVENTS))
    assert out.running == "A.three"
    assert not out.complete_report
    assert {n: c.status for n, c in out.cases.items()} == {"A.one": "passed", "A.two": "failed"}
    assert out.cases["A.two"].message == "x.cpp:1\nbad\nx.cpp:2\nworse"
    assert out.cases["A.one"].duration_ms == 3.0


def test_parse_events_torn_last_line(tmp_path):
    out = gtest.parse_events(events_file(tmp_path, EVENTS, tail='{"event":"end","case":"A.th'))
    assert out.running == "A.three"
    assert set(out.cases) == {"A.one", "A.two"}


def test_parse_events_all_finished(tmp_path):
    out = gtest.parse_events(events_file(tmp_path, EVENTS[:4]))
    assert out.running is None and len(out.cases) == 2


def test_parse_events_missing_file(tmp_path):
    out = gtest.parse_events(tmp_path / "none")
    assert out.cases == {} and out.running is None


def test_parse_events_invalid_utf8(tmp_path):
    path = events_file(tmp_path, EVENTS[:2])
    with open(path, "ab") as f:
        f.write(b'\xff\xfe{"event":"start","case":"A.\xff"}\n')
    out = gtest.parse_events(path)
    assert "A.one" in out.cases


def test_collect_prefers_the_report(tmp_path):
    out = gtest.collect(report(tmp_path, GOOD), events_file(tmp_path, EVENTS))
    assert out.complete_report and out.running is None
    assert "Edge.Bad" in out.cases and "A.one" not in out.cases


def test_collect_falls_back_to_events(tmp_path):
    events = events_file(tmp_path, EVENTS)
    for rep in (tmp_path / "missing.json", report(tmp_path, "{torn"),
                report(tmp_path, '{"testsuites": [{"testsuite": [{"name": "x"}]}]}')):
        out = gtest.collect(rep, events)
        assert not out.complete_report
        assert out.running == "A.three"
