"""`serve --slurm` without a cluster: the Slurm back end driven by hand (no thread, no web
server) with stand-in sbatch, squeue and sacct on PATH, as tests/test_slurm.py does for
`batch --slurm`. A job's script is run by the stand-in sbatch itself, with the stand-in grader
of tests/service_support.py; the scheduler's answers come from files the test writes."""

from __future__ import annotations

import stat
import subprocess
import threading
from pathlib import Path

import pytest

from grader.service import slurm_backend
from grader.service.grading import GradeSettings
from grader.service.jobs import Job, JobState
from grader.service.store import Store
from grader.slurm_scripts import SlurmSettings
from service_support import VECTOR_ADD, grades, write_fake_grader

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """Stand-ins on PATH: sbatch logs its arguments, prints the next job id and, while RUN
    exists, runs the script at once (SLURM_JOB_ID set); squeue prints queued.txt, sacct
    sacct.txt. Returns the folder of those files."""
    bin_dir, files = tmp_path / "fake-slurm", tmp_path / "slurm-files"
    bin_dir.mkdir()
    files.mkdir()
    (files / "queued.txt").write_text("")
    (files / "sacct.txt").write_text("")
    scripts = {
        "sbatch": f"""#!/bin/bash
if [ -f {files}/refuse ]; then echo "sbatch: error: invalid partition specified" >&2; exit 1; fi
echo "$*" >> {files}/sbatch.log
n=$(( $(wc -l < {files}/sbatch.log) + 4240 ))
if [ -f {files}/RUN ]; then SLURM_JOB_ID=$n bash "${{@: -1}}" > /dev/null 2>&1; fi
echo "$n;cluster"
""",
        "squeue": f"#!/bin/bash\necho \"$*\" >> {files}/squeue.log\ncat {files}/queued.txt\n",
        "sacct": f"#!/bin/bash\ncat {files}/sacct.txt\n",
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    _, env = write_fake_grader(tmp_path / "fake")
    for name in ("PATH", "COURSE_SERVICE_GRADER", "FAKE_GRADER_CONFIG"):
        monkeypatch.setenv(name, env[name] if name != "PATH" else f"{bin_dir}:{env['PATH']}")
    return files


def backend(tmp_path: Path, max_jobs: int = 4):
    store = Store(tmp_path / "data" / "service.db")
    settings = SlurmSettings(partition="gpu", sbatch_args=["--qos=class"],
                             scratch=str(tmp_path / "scratch"))
    return slurm_backend.SlurmBackend(store, tmp_path / "data", GradeSettings(), settings,
                                      20, max_jobs, 0.1, threading.Event(), threading.Event(),
                                      lambda line: None)


def queue(slurm: slurm_backend.SlurmBackend, job_id: str) -> None:
    folder = slurm.data / "jobs" / job_id / "submission" / "ch01_programming_model"
    folder.mkdir(parents=True)
    (folder / "vector_add.cu").write_text("// mine\n")
    slurm.store.insert(Job(id=job_id, token_id=1, course="c", exercises=["vector_add"],
                           files=[VECTOR_ADD]))


def test_a_job_is_submitted_graded_in_slurm_and_read_back(tmp_path, cluster):
    slurm = backend(tmp_path)
    queue(slurm, "a1")
    (cluster / "RUN").touch()
    slurm.submit_more()
    job = slurm.store.job("a1")
    assert (job.state, job.slurm_job, job.progress) == (JobState.RUNNING, "4241",
                                                        "Slurm job 4241: submitted")
    script = slurm.data / "jobs" / "a1" / "grade.sbatch"
    assert (cluster / "sbatch.log").read_text() == f"--parsable --qos=class {script}\n"
    slurm.poll()  # squeue lists nothing: it has ended, and its script left its status
    job = slurm.store.job("a1")
    assert (job.state, job.exit_code, job.score, job.max_score) == (JobState.DONE, 0, 200.0,
                                                                    350.0)
    graded = grades(tmp_path / "fake")[0]
    assert graded["argv"][1] == str(slurm.data.resolve() / "jobs" / "a1" / "submission")
    build = graded["argv"][graded["argv"].index("--build-dir") + 1]
    assert build == f"{tmp_path}/scratch/cuda-course-4241-0/build"
    assert not Path(build).parent.exists()  # the script's clean-up removed its scratch
    assert "table of the grade" in (slurm.data / "jobs" / "a1" / "grade.log").read_text()


def test_a_job_slurm_ended_early_fails_with_the_reason(tmp_path, cluster):
    slurm = backend(tmp_path)
    queue(slurm, "a1")
    slurm.submit_more()  # not run: it waits in the queue
    (cluster / "queued.txt").write_text("4241|PENDING\n")
    slurm.poll()
    assert slurm.store.job("a1").progress == "Slurm job 4241: pending"
    (cluster / "queued.txt").write_text("")
    (cluster / "sacct.txt").write_text("4241|TIMEOUT\n")
    slurm.poll()
    job = slurm.store.job("a1")
    assert job.state == JobState.FAILED
    assert job.error == "its Slurm job 4241 ran past its time limit before the grade finished"


def test_at_most_max_jobs_are_in_slurm_and_a_refused_sbatch_fails_the_job(tmp_path, cluster):
    slurm = backend(tmp_path, max_jobs=1)
    queue(slurm, "a1")
    queue(slurm, "b2")
    slurm.submit_more()
    assert [slurm.store.job(j).state for j in ("a1", "b2")] == [JobState.RUNNING,
                                                                JobState.QUEUED]
    (cluster / "sacct.txt").write_text("4241|CANCELLED by 0\n")
    (cluster / "refuse").touch()
    slurm.poll()
    slurm.submit_more()
    assert "was cancelled" in slurm.store.job("a1").error
    b2 = slurm.store.job("b2")
    assert b2.state == JobState.FAILED
    assert b2.error.startswith("it could not be submitted to Slurm: ")
    assert "invalid partition specified" in b2.error


@pytest.mark.parametrize("build_only", [False, True])
def test_the_job_script(tmp_path, build_only):
    settings = GradeSettings(build_only, hidden=True)
    cluster = SlurmSettings(partition="gpu", account="cs101")
    job = Job(id="ab" * 10, token_id=1, course="c", exercises=["ch01"], files=[])
    text = slurm_backend.script(job, tmp_path / "job", settings, cluster,
                                slurm_backend.default_minutes(settings))
    assert "#SBATCH --partition=gpu" in text and "#SBATCH --account=cs101" in text
    assert ("#SBATCH --gres=gpu:1" in text) == (not build_only)
    # Three times the measured build (and grade), and the script's start: as batch --slurm.
    assert f"#SBATCH --time=0-00:{8 if build_only else 16:02d}:00" in text
    assert ("--build-only" in text) == build_only
    assert '--build-dir "$scratch/build"' in text and "--hidden" in text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
