"""grader batch --slurm against a real Slurm: a one-node cluster started for this module
(tests/slurm_cluster.py; no GPU, so the tasks compile with --build-only), a class of four
submitted as a job array, one task cancelled on purpose while it runs, the merge job's
gradebook and findings, and the resubmission that grades only that student. A class of three:
each task compiles the course (a cold compiler cache makes that the test's cost), and three
cover each outcome (compiled, cancelled then compiled, compile errors). Then the grading
service (`grader serve --slurm`) submits an upload as a job on the same node, whose compiler
cache the class filled.

It skips, saying why, where the daemons cannot start (not root, Slurm not installed); CI
(CI=true) installs Slurm and munge through scripts/setup.sh, and there a skip is a failure."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import service_support as svc
import slurm_cluster
from helpers import ROOT, run_cli

pytestmark = pytest.mark.same_in_template

IN_CI = os.environ.get("CI") == "true"
SKELETON = ROOT / "skeletons" / "ch01_programming_model" / "vector_add.cu"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    try:
        started = slurm_cluster.start(tmp_path_factory.mktemp("slurm"))
    except slurm_cluster.ClusterUnavailable as why:
        if IN_CI:
            pytest.fail(f"the one-node Slurm cluster did not start: {why}")
        pytest.skip(f"no Slurm cluster here: {why}")
    yield started
    started.stop()


@pytest.fixture(scope="module")
def node_scratch(tmp_path_factory) -> Path:
    """The node's scratch, shared by the module's tests as by a node's jobs: its compiler cache
    lets the second test's job reuse the course objects the first test's tasks compiled."""
    return tmp_path_factory.mktemp("scratch")


def make_class(root: Path) -> Path:
    """alice and bob hand in the skeleton (it compiles); dave's does not compile."""
    for sid in ("alice", "bob", "dave"):
        folder = root / sid / "ch01_programming_model"
        folder.mkdir(parents=True)
        shutil.copy(SKELETON, folder / "vector_add.cu")
    with open(root / "dave" / "ch01_programming_model" / "vector_add.cu", "a") as f:
        f.write("\nthis line is not C++\n")
    return root


def gradebook(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def submit(cluster, roster: Path, out: Path, scratch: Path):
    result = run_cli("batch", roster, "--out", out, "-e", "vector_add", "--build-only",
                     "--slurm", "--time", "10", "--scratch", scratch, env=cluster.env)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "slurm" / "rounds.json").read_text())[-1]


def cache_hits(cache: Path) -> int:
    stats = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                           env=dict(os.environ, CCACHE_DIR=str(cache)), check=True).stdout
    counts = dict(line.split("\t", 1) for line in stats.splitlines() if "\t" in line)
    return int(counts.get("direct_cache_hit", 0)) + int(counts.get("preprocessed_cache_hit", 0))


def task_logs(out: Path, number: int) -> str:
    """The round's task logs, for a failure's message."""
    logs = sorted((out / "slurm" / f"round-{number}" / "logs").glob("task-*.out"))
    return "\n".join(f"== {log.name}\n{log.read_text(errors='replace')[-1500:]}" for log in logs)


def wait_for_grading(cluster, task: str, scratch: Path, timeout_s: float = 120) -> None:
    """Until the task runs and its grader has begun a build in the task's scratch folder: from
    then on the task script hands a SIGTERM on to the grader. A cancel in the first instant of
    the launch can reach none of the task's programs; Slurm then kills the task at KillWait,
    where no EXIT trap runs, and its folder stays."""
    job, index = task.split("_")
    folder = scratch / f"cuda-course-{job}-{index}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if f"{task} RUNNING" in cluster.queued() and folder.is_dir() and any(folder.iterdir()):
            return
        time.sleep(0.1)
    raise AssertionError(f"{task} never began grading: {cluster.queued()}\n{cluster.logs()}")


def test_a_class_through_a_job_array_with_a_task_killed_and_resubmitted(cluster, tmp_path,
                                                                       node_scratch):
    roster = make_class(tmp_path / "class")
    out, scratch = tmp_path / "out", node_scratch
    first = submit(cluster, roster, out, scratch)
    assert first["tasks"] == 3
    victim = f"{first['array_job']}_1"  # bob's task
    wait_for_grading(cluster, victim, scratch)
    cluster.run("scancel", victim)
    cluster.wait_until_idle(timeout_s=600)

    merged = json.loads((out / "slurm/round-1/merge.json").read_text())
    assert merged["states_from"] == "scontrol"
    states = {t["task"]: t["state"] for t in merged["tasks"]}
    assert states == {0: "COMPLETED", 1: "CANCELLED", 2: "COMPLETED"}, \
        (merged, cluster.logs())
    book = gradebook(out)
    assert book["bob"]["status"] == (f"failed to grade: its Slurm task {victim} was cancelled "
                                     "(scancel, or an administrator) (CANCELLED); submitting "
                                     "again grades it")
    # --build-only: whether the files compile, and no score.
    assert book["alice"]["status"] == "compiled" and book["alice"]["total"] == "", book["alice"]
    assert book["dave"]["status"] == "compile errors: vector_add", book["dave"]
    dave = json.loads((out / "reports" / "dave.json").read_text())
    assert dave["exercises"][0]["status"] == "compile_error"
    summary = (out / "slurm" / "summary.txt").read_text()
    assert f"task 1 ({victim}) CANCELLED" in summary and "1 student not graded" in summary
    assert "1 student whose files do not compile: dave" in summary
    # Each task built in its own folder on the scratch and removed it; the compiler cache
    # stays for the node's next tasks.
    left = sorted(p.name for p in scratch.iterdir())
    assert left == ["cuda-course-ccache"], (left, task_logs(out, 1))
    hits_before = cache_hits(scratch / "cuda-course-ccache") if shutil.which("ccache") else 0

    second = submit(cluster, roster, out, scratch)
    assert second["tasks"] == 1
    record = json.loads((out / "slurm/round-2/tasks.json").read_text())
    assert [s["id"] for t in record["tasks"] for s in t] == ["bob"]
    assert record["options"]["seed"] == \
        json.loads((out / "slurm/round-1/tasks.json").read_text())["options"]["seed"]
    cluster.wait_until_idle(timeout_s=300)
    book = gradebook(out)
    assert {sid: row["status"] for sid, row in book.items()} == {
        "alice": "compiled", "bob": "compiled", "dave": "compile errors: vector_add"}, book
    assert "0 students not graded" in (out / "slurm" / "summary.txt").read_text()
    ended = json.loads((out / "slurm/round-2/ended/0.json").read_text())
    assert ended["node"] and list(ended["students"]) == ["bob"]
    if shutil.which("ccache"):  # scripts/setup.sh installs it; Meson uses it when it is there
        assert cache_hits(scratch / "cuda-course-ccache") > hits_before, \
            "bob's second task reused none of the objects the first round left on the node"


def test_the_grading_service_grades_through_the_cluster(cluster, tmp_path, node_scratch):
    """`grader serve --slurm --build-only` against the same cluster: an upload becomes a Slurm
    job that compiles it on the node's scratch, the service reads the job's end from the
    scheduler and serves the report; the scratch folder is gone afterwards. (The stand-in
    sbatch/squeue/sacct of tests/test_service_slurm.py cover the failures.)"""
    pytest.importorskip("flask", reason="the grading service needs Flask (requirements.txt)")
    data, scratch = tmp_path / "service", node_scratch
    token = svc.new_token(data, "ci", env=cluster.env)
    server = svc.start_service(data, cluster.env, "--slurm", "--build-only", "--time", "10",
                               "--scratch", scratch, "--poll", "1")
    try:
        answer = svc.submit(server.url, token, svc.zip_of(
            {svc.VECTOR_ADD: SKELETON.read_text()}), "?exercise=vector_add")
        assert answer.status == 202, answer.body
        job = answer.json["id"]
        view = svc.wait_for(server.url, token, job, timeout=600, every=1)
        assert view["state"] == "done", (view, server.log.read_text()[-3000:], cluster.logs())
        report = svc.call(f"{server.url}/v1/submissions/{job}/report", token=token).json
        assert [(e["name"], e["status"]) for e in report["exercises"]] == \
            [("vector_add", "skipped")], report["exercises"]
        assert "--build-only" in report["exercises"][0]["message"]
    finally:
        server.stop()
    cluster.wait_until_idle(timeout_s=60)
    assert sorted(p.name for p in scratch.iterdir()) in ([], ["cuda-course-ccache"])
