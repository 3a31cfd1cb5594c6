"""grader.gtest: the case list and the course's signed result stream."""

from __future__ import annotations

import json

import pytest

from grader import gtest
from grader.model import FailureKind

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

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
    assert not out.finished
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


NONCE = "5" * 32


def signed(lines, nonce=NONCE):
    return [dict(line, nonce=nonce) for line in lines]


def test_finished_line_marks_a_complete_run(tmp_path):
    out = gtest.parse_events(events_file(tmp_path, signed(EVENTS[:4] + [{"event": "finished"}])),
                             NONCE)
    assert out.finished and out.forged == 0 and len(out.cases) == 2


def test_finished_line_while_a_case_runs_is_not_a_finish(tmp_path):
    out = gtest.parse_events(events_file(tmp_path, signed(EVENTS + [{"event": "finished"}])),
                             NONCE)
    assert not out.finished and out.running == "A.three"


def test_lines_without_the_nonce_are_forged_and_ignored(tmp_path):
    forged = [{"event": "end", "case": "A.two", "status": "passed", "failures": []},
              {"event": "finished"}]
    lines = signed(EVENTS[:4]) + forged + signed(forged[:1], nonce="bad")
    out = gtest.parse_events(events_file(tmp_path, lines), NONCE)
    assert out.forged == 3
    assert out.cases["A.two"].status == "failed" and not out.finished


def test_odd_field_types_do_not_crash_the_reader(tmp_path):
    lines = signed([{"event": "end", "case": 7, "status": [], "ms": "x", "failures": "boom"}])
    out = gtest.parse_events(events_file(tmp_path, lines + ["[1]"]), NONCE)
    assert out.cases["7"].status == "failed" and out.cases["7"].duration_ms == 0.0


def test_failure_kinds_come_from_the_end_line_not_the_message(tmp_path):
    """The test main names what a failure ran into (gpu_test_main.cpp, failure_kinds); the
    grader never reads the wording of a message, and a kind it does not know is no kind."""
    lines = signed([
        {"event": "end", "case": "A.leak", "status": "failed", "failures": ["leaked"],
         "failure_kinds": ["device_memory_leaked"]},
        {"event": "end", "case": "A.says", "status": "failed", "failures": ["out of memory"]},
        {"event": "end", "case": "A.odd", "status": "failed", "failures": [],
         "failure_kinds": ["gremlins", 3, "out_of_memory"]}])
    out = gtest.parse_events(events_file(tmp_path, lines), NONCE)
    assert out.cases["A.leak"].failure_kinds == {FailureKind.DEVICE_MEMORY_LEAKED}
    assert out.cases["A.says"].failure_kinds == set()
    assert out.cases["A.odd"].failure_kinds == {FailureKind.OUT_OF_MEMORY}
