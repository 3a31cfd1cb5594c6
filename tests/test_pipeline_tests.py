"""grader.stages.tests against stand-in GoogleTest binaries that misbehave on demand."""

from __future__ import annotations

import json
import time

import pytest

from fakes import alive, fake_gtest
from grader.stages import tests as tests_stage
from helpers import vector_add

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

CASES = ["VectorAddEdge.Empty", "Small/VectorAdd.MatchesReference/n_1",
         "Small/VectorAdd.MatchesReference/n_33", "Large/VectorAdd.MatchesReference/n_65537"]


@pytest.fixture
def run(grader_for):
    """run(cases, timeout_s=..., **fake_config) -> (stage, expected, elapsed seconds)."""

    def go(cases, *, timeout_s=20.0, output_limit=None, shards=1, tests_alone=False,
           one_process=False, **config):
        ex = vector_add(test_timeout_s=timeout_s, tests_alone=tests_alone,
                        tests_one_process=one_process)
        extra = {"output_limit": output_limit} if output_limit else {}
        g = grader_for(ex, **extra)
        binary = fake_gtest(g.options.build_dir / "vector_add_test", cases, **config)
        started = time.monotonic()
        stage = tests_stage.run(g.options, ex, binary, shards=shards)
        elapsed = time.monotonic() - started
        return stage, tests_stage.list_cases(g.options, binary,
                                             scratch=g.options.build_dir / "list"), elapsed

    return go


def statuses(stage):
    return {c.name: c.status for c in stage.cases}


def test_all_pass(run):
    stage, expected, _ = run(CASES)
    assert expected == CASES
    assert stage.status == "passed"
    assert stage.message == "all 4 cases passed"
    assert stage.details["passed"] == stage.details["total"] == 4
    assert all(c.status == "passed" for c in stage.cases)
    assert stage.output == ""  # only kept when the run failed


def test_some_cases_fail_with_their_messages(run):
    cases = [CASES[0], {"name": CASES[1], "status": "failed",
                        "message": "c: 3 of 1 elements differ; first at [0]: expected 1, got nan"},
             CASES[2], {"name": CASES[3], "status": "failed", "message": "poisoned"}]
    stage, _, _ = run(cases)
    assert stage.status == "failed"
    assert stage.message == "2 of 4 cases passed"
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "failed", CASES[2]: "passed",
                               CASES[3]: "failed"}
    failed = next(c for c in stage.cases if c.name == CASES[1])
    assert "expected 1, got nan" in failed.message
    assert stage.details["passed"] == 2 and stage.details["total"] == 4
    assert "course seed: 1234" in stage.output  # COURSE_SEED reaches the binary


def test_skipped_case_is_not_a_pass(run):
    stage, _, _ = run([CASES[0], {"name": CASES[1], "status": "skipped"}])
    assert statuses(stage)[CASES[1]] == "skipped"
    assert stage.status == "failed"


def test_no_gpu_exit_77_is_skipped(run):
    stage, _, _ = run(CASES, no_gpu=True)
    assert stage.status == "skipped"
    assert "no GPU" in stage.message
    assert stage.cases == []


@pytest.mark.parametrize("action, signame", [("segv", "SIGSEGV"), ("abort", "SIGABRT")])
def test_crash_mid_case_names_signal_and_case(run, action, signame):
    cases = [CASES[0], {"name": CASES[1], "action": action}, CASES[2], CASES[3]]
    stage, _, elapsed = run(cases)
    assert stage.status == "crashed"
    assert signame in stage.message
    assert f"while running {CASES[1]}" in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "crashed", CASES[2]: "not_run",
                               CASES[3]: "not_run"}
    assert stage.details["passed"] == 1 and stage.details["total"] == 4
    assert signame in stage.details["exit"]
    assert f"[ RUN      ] {CASES[1]}" in stage.output
    assert elapsed < 10


def test_killed_with_a_torn_event_line(run):
    """SIGKILL half-way through writing an event line: the torn line is ignored."""
    stage, _, _ = run([CASES[0], {"name": CASES[1], "action": "torn"}, CASES[2]])
    assert stage.status == "crashed"
    assert "SIGKILL" in stage.message and CASES[1] in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "crashed", CASES[2]: "not_run"}


def test_hang_times_out_naming_the_case(run):
    stage, _, elapsed = run([CASES[0], {"name": CASES[1], "action": "hang"}, CASES[2]],
                            timeout_s=1.0)
    assert stage.status == "timed_out"
    assert "timed out after" in stage.message
    assert f"while running {CASES[1]}" in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "timed_out", CASES[2]: "not_run"}
    assert stage.duration_s < 6 and elapsed < 10


def test_hang_ignoring_sigterm_is_killed(run):
    stage, _, elapsed = run([{"name": CASES[0], "action": "hang_ignoring_term"}], timeout_s=0.5)
    assert stage.status == "timed_out"
    assert CASES[0] in stage.message
    assert elapsed < 12  # time limit + 3 s grace + SIGKILL


def test_child_keeping_the_pipe_open_is_killed(run, tmp_path):
    pid_file = tmp_path / "child.pid"
    stage, _, elapsed = run([CASES[0], {"name": CASES[1], "action": "child_hang",
                                        "pid_file": str(pid_file)}], timeout_s=30)
    assert stage.status == "passed"
    assert elapsed < 10
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


@pytest.mark.parametrize("code", [0, 1, 3])
def test_exit_mid_run_is_exited_early(run, code):
    stage, _, _ = run([CASES[0], {"name": CASES[1], "action": "exit", "code": code}, CASES[2]])
    assert stage.status == "exited_early"
    assert f"exit status {code}" in stage.message
    assert f"while running {CASES[1]}" in stage.message
    assert "exit()" in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "crashed", CASES[2]: "not_run"}


def test_exit_zero_without_premature_file_is_still_not_a_pass(run):
    stage, _, _ = run([CASES[0], {"name": CASES[1], "action": "exit", "code": 0}, CASES[2]],
                      premature=False)
    assert stage.status == "crashed"
    assert "before its last case" in stage.message
    assert CASES[1] in stage.message


@pytest.mark.parametrize("code, phrase", [
    (0, "before its last case"),
    (1, "before its last case"),
    (2, "wrote no results"),
])
def test_no_finished_line_is_a_crash_with_the_streamed_results(run, code, phrase):
    cases = [CASES[0], {"name": CASES[1], "status": "failed", "message": "boom"}, CASES[2]]
    stage, _, _ = run(cases, report="missing", exit=code)
    assert stage.status == "crashed"
    assert phrase in stage.message
    assert f"exit status {code}" in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "failed", CASES[2]: "passed"}
    assert "boom" in stage.cases[1].message


FORGED_PASS = {"event": "end", "case": CASES[1], "status": "passed", "ms": 1, "failures": []}


def test_forged_results_count_for_nothing(run):
    # The failing case's "pass" printed and written without the nonce, and a forged
    # "finished" line: the run fails, and no case keeps its points.
    cases = [CASES[0], {"name": CASES[1], "status": "failed", "message": "boom"}]
    stage, _, _ = run(cases, forge=[FORGED_PASS, {"event": "finished"}])
    assert stage.status == "failed"
    assert "forged" in stage.message and "2 result lines" in stage.message
    assert stage.details["forged_lines"] == 2
    assert set(statuses(stage).values()) == {"failed"}


def test_forged_lines_with_a_guessed_nonce_are_still_forged(run):
    stage, _, _ = run(CASES[:1], forge=[dict(FORGED_PASS, nonce="0" * 32)])
    assert stage.status == "failed" and stage.details["forged_lines"] == 1


def test_the_nonce_file_is_gone_after_the_run(run, grader_for):
    stage, _, _ = run(CASES[:1])
    assert stage.status == "passed"
    work = grader_for(vector_add()).options.work_dir
    assert not list(work.rglob("*.nonce"))


def test_fewer_results_than_listed_is_not_a_pass(run):
    stage, _, _ = run(CASES, drop=1)
    assert stage.status != "passed"
    assert statuses(stage)[CASES[3]] == "not_run"
    assert stage.details["passed"] == 3 and stage.details["total"] == 4


def test_fewer_results_than_listed_is_named(run):
    stage, _, _ = run(CASES, drop=1)
    assert stage.status != "passed"
    assert "only 3 of 4 cases reported" in stage.message


def test_disabled_cases_are_not_counted(run):
    stage, expected, _ = run(CASES, disabled=["VectorAddEdge.DISABLED_Huge"])
    assert "VectorAddEdge.DISABLED_Huge" not in expected  # listed by GoogleTest, never run
    assert stage.status == "passed"
    assert stage.details["total"] == 4


def test_listing_failure_uses_reported_cases(run):
    stage, expected, _ = run(CASES[:2], list_exit=1)
    assert expected == []
    assert stage.status == "passed"
    assert [c.name for c in stage.cases] == CASES[:2]


def test_huge_output_is_truncated(run):
    total = 200 * 1024 * 1024
    cases = [CASES[0], {"name": CASES[1], "action": "flood", "bytes": total}, CASES[2]]
    stage, _, elapsed = run(cases, output_limit=32 * 1024,
                            exit=1, report="missing")  # failed run, so the output is kept
    assert stage.details["output_bytes"] > total
    assert len(stage.output) < 32 * 1024 + 200
    assert "bytes of output cut" in stage.output
    assert stage.output.startswith("course seed")
    assert "FLOOD-END" in stage.output
    assert elapsed < 30


def test_huge_output_of_a_passing_run_is_not_kept(run):
    cases = [{"name": CASES[0], "action": "flood", "bytes": 50 * 1024 * 1024}]
    stage, _, _ = run(cases)
    assert stage.status == "passed"
    assert stage.output == ""
    assert stage.details["output_bytes"] > 50 * 1024 * 1024


def test_gtest_filter_is_passed_to_list_and_run(grader_for, tmp_path):
    ex = vector_add()
    g = grader_for(ex)
    log = tmp_path / "argv.log"
    binary = fake_gtest(g.options.build_dir / "vector_add_test", CASES, argv_log=str(log))
    stage = tests_stage.run(g.options, ex, binary, stage_name="sanitizer-memcheck",
                            gtest_filter="Small/*:VectorAddEdge.*")
    expected = tests_stage.list_cases(g.options, binary, "Small/*:VectorAddEdge.*",
                                      scratch=g.options.build_dir / "list")
    assert expected == CASES[:3]
    assert stage.name == "sanitizer-memcheck"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[0] == ["--gtest_list_tests", "--gtest_filter=Small/*:VectorAddEdge.*"]
    # GoogleTest's own report is not asked for: results come only from the signed stream.
    assert calls[1] == ["--gtest_filter=Small/*:VectorAddEdge.*"]


def test_stale_results_of_a_previous_run_are_not_reused(run, grader_for):
    """A crash on re-grade must not pick up the report left by the previous run."""
    ex = vector_add()
    g = grader_for(ex)
    binary = fake_gtest(g.options.build_dir / "vector_add_test", CASES)
    first = tests_stage.run(g.options, ex, binary)
    assert first.status == "passed"
    fake_gtest(binary, [CASES[0], {"name": CASES[1], "action": "segv"}, CASES[2], CASES[3]])
    second = tests_stage.run(g.options, ex, binary)
    assert second.status == "crashed"
    assert second.details["passed"] == 1


# ------------------------------------------------------------ cases split over processes
# A re-grade of one exercise splits its cases over processes (options.test_shards, GoogleTest's
# sharding); the runs read as one, with the same verdicts and names.

def test_shards_report_every_case_once(run, grader_for):
    stage, _, _ = run(CASES, shards=2, timeline=str(grader_for(vector_add()).options.build_dir
                                                   / "timeline.log"))
    assert stage.status == "passed" and stage.message == "all 4 cases passed"
    assert [c.name for c in stage.cases] == CASES
    log = grader_for(vector_add()).options.build_dir / "timeline.log"
    assert sum(json.loads(l)["event"] == "start" for l in log.read_text().splitlines()) == 2


def test_shards_keep_each_failure_and_its_message(run):
    cases = [CASES[0], {"name": CASES[1], "status": "failed", "message": "poisoned at [3]"},
             CASES[2], {"name": CASES[3], "status": "failed", "message": "off by one"}]
    stage, _, _ = run(cases, shards=2)
    assert stage.status == "failed" and stage.message == "2 of 4 cases passed"
    messages = {c.name: c.message for c in stage.cases}
    assert "poisoned at [3]" in messages[CASES[1]] and "off by one" in messages[CASES[3]]
    assert stage.output  # the failing shard's output is kept


def test_a_crash_in_one_shard_names_its_case_and_keeps_the_others(run):
    # Round robin: shard 0 runs cases 0 and 2, shard 1 cases 1 and 3.
    cases = [CASES[0], {"name": CASES[1], "action": "segv"}, CASES[2], CASES[3]]
    stage, _, _ = run(cases, shards=2)
    assert stage.status == "crashed"
    assert "SIGSEGV" in stage.message and f"while running {CASES[1]}" in stage.message
    assert statuses(stage) == {CASES[0]: "passed", CASES[1]: "crashed", CASES[2]: "passed",
                               CASES[3]: "not_run"}


def test_forged_lines_in_any_shard_void_every_case(run):
    stage, _, _ = run(CASES, shards=2, forge=[FORGED_PASS])
    assert stage.status == "failed" and stage.details["forged_lines"] == 2
    assert set(statuses(stage).values()) == {"failed"}


@pytest.mark.parametrize("flag", ["tests_alone", "one_process"])
def test_an_exercise_that_tests_alone_or_in_one_process_is_not_split(run, grader_for, flag):
    log = grader_for(vector_add()).options.build_dir / f"{flag}.log"
    stage, _, _ = run(CASES, shards=2, timeline=str(log), **{flag: True})
    assert stage.status == "passed"
    assert sum(json.loads(l)["event"] == "start" for l in log.read_text().splitlines()) == 1


def test_test_and_benchmark_programs_ask_malloc_for_huge_pages(run, grader_for, monkeypatch):
    """Test, sanitizer and benchmark runs get glibc's huge-page tunable beside any the machine
    sets."""
    from fakes import bench_data, fake_bench
    from grader import proc
    from grader.stages import benchmark

    seen = []
    real = proc.run

    def recording(command, timeout_s, **kwargs):
        seen.append((command, dict(kwargs.get("env") or {})))
        return real(command, timeout_s, **kwargs)

    monkeypatch.setattr(proc, "run", recording)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    stage, _, _ = run(CASES)
    assert stage.status == "passed"
    test_runs = [env for _, env in seen if "COURSE_EVENTS" in env]
    assert test_runs and all(env["GLIBC_TUNABLES"] ==
                             "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
                             for env in test_runs)
    seen.clear()
    ex = vector_add()
    g = grader_for(ex)
    binary = fake_bench(g.options.build_dir / "vector_add_bench", bench_data())
    assert benchmark.run(g.options, ex, binary).status == "passed"
    assert seen and all(env["GLIBC_TUNABLES"] ==
                        "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" for _, env in seen)
