"""The grading service (`python3 -m grader serve`) as a platform sees it: the real server in a
process of its own on a free port of 127.0.0.1, --build-only workers whose grader is the
stand-in of tests/service_support.py, driven over HTTP with urllib. Uploads, the queue and its
positions, progress, the report and the platforms' results; tokens (401, 403, another
course's 404); limits (413, 429 for a full queue and for the rate); refused archives (400,
nothing written outside the job, nothing kept); a restart after a stop and after a kill, with
nothing lost and the job cut short graded again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tarfile
import uuid
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the grading service needs Flask (requirements.txt)")
pytest.importorskip("waitress", reason="the grading service needs Waitress (requirements.txt)")

from grader import cli, exports, model, tools  # noqa: E402
from helpers import PYTHON, ROOT, assert_one_line_error, run_cli  # noqa: E402
from service_support import (VECTOR_ADD, call, configure, file_info, grades,  # noqa: E402
                             new_token, start_service, submit, tar_of, wait_for, wait_until,
                             workspace_zip, write_fake_grader, zip_of)
from grader.service import tokens  # noqa: E402
from grader.service.store import Store  # noqa: E402

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

LIMITS = ("--max-upload-mb", "1", "--max-unpacked-mb", "1", "--max-files", "20",
          "--max-queued", "2", "--rate-limit", "200")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """One service for the module's API tests; each test makes its own tokens, whose queues
    and rates are their own."""
    root = tmp_path_factory.mktemp("service")
    config, env = write_fake_grader(root / "fake")
    running = start_service(root / "data", env, "--build-only", *LIMITS)
    running.data, running.config, running.fake = root / "data", config, root / "fake"
    store = Store(root / "data" / "service.db")
    running.token = lambda name, course="course": tokens.create(
        store, f"{name}-{uuid.uuid4().hex[:6]}", course)
    yield running
    assert running.stop() == 0


def job_folders(data: Path) -> set[str]:
    return {p.name for p in (data / "jobs").iterdir()} if (data / "jobs").is_dir() else set()


def multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
             .encode() for k, v in fields.items()]
    parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"submission\"; "
                 f"filename=\"{filename}\"\r\nContent-Type: application/gzip\r\n\r\n".encode()
                 + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


# ------------------------------------------------------------------------------ a grade

def test_health_needs_no_token(service):
    answer = call(f"{service.url}/v1/health")
    assert answer.status == 200
    assert answer.json["status"] == "ok" and answer.json["mode"] == "build-only"
    assert answer.json["workers"] == 1


def test_an_upload_is_graded_and_every_view_of_it_fetched(service):
    token = service.token("gradescope")
    answer = submit(service.url, token, workspace_zip("workspace/"),
                    "?exercise=vector_add&client_ref=alice-attempt-3")
    assert answer.status == 202, answer.body
    job = answer.json
    assert answer.headers["Location"] == f"/v1/submissions/{job['id']}"
    assert job["state"] in ("queued", "running") and job["client_ref"] == "alice-attempt-3"
    assert job["files"] == [VECTOR_ADD] and job["exercises"] == ["vector_add"]
    view = wait_for(service.url, token, job["id"])
    assert view["state"] == "done" and view["attempts"] == 1 and view["exit_code"] == 0
    assert view["position"] is None and view["error"] is None
    assert (view["score"], view["max_score"]) == (200.0, 350.0)
    assert view["started_at"] and view["finished_at"]
    # The grade command: the worker's copy of the submission (the exercise file alone, not the
    # upload's other files), the job's report and page, the service's mode and sandbox.
    graded = grades(service.fake)[-1]
    assert graded["files"] == [VECTOR_ADD]
    argv = graded["argv"]
    assert argv[:2] == ["grade", str(service.data / "workers" / "0" / "submission")]
    assert argv[argv.index("-e") + 1] == "vector_add"
    assert argv[argv.index("--json") + 1] == str(service.data / "jobs" / job["id"] /
                                                 "report.json")
    assert "--build-only" in argv and "--require-sandbox" in argv and graded["cuda"] is None
    assert graded["progress_every"] == "2"  # the grader says its step every 2 s, not 30

    base = f"{service.url}/v1/submissions/{job['id']}"
    report = call(f"{base}/report", token=token)
    assert report.status == 200 and report.headers["Content-Type"] == "application/json"
    saved = model.Report.load(service.data / "jobs" / job["id"] / "report.json")
    assert json.loads(report.body)["exercises"][0]["key"] == saved.exercises[0].key
    gradescope = call(f"{base}/gradescope", token=token)
    assert gradescope.status == 200 and gradescope.json == exports.gradescope(saved)
    prairielearn = call(f"{base}/prairielearn", token=token)
    assert prairielearn.status == 200 and prairielearn.json == exports.prairielearn(saved)
    assert len(prairielearn.body) < 1024 * 1024
    page = call(f"{base}/html", token=token)
    assert page.status == 200 and page.body.startswith(b"<!doctype html>")
    assert page.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]


def test_a_multipart_tar_gz_upload_with_form_fields(service):
    token = service.token("prairielearn")
    archive = tar_of([(file_info(VECTOR_ADD), b"// tar\n")])
    body, content_type = multipart({"exercises": "ch01, vector_add", "client_ref": "q7"},
                                   "work.tar.gz", archive)
    answer = call(f"{service.url}/v1/submissions", "POST", token, body,
                  {"Content-Type": content_type})
    assert answer.status == 202, answer.body
    assert answer.json["exercises"] == ["ch01", "vector_add"]
    assert answer.json["client_ref"] == "q7"
    assert wait_for(service.url, token, answer.json["id"])["state"] == "done"


def test_a_failed_grade_says_why_and_the_platforms_get_their_failure_results(service):
    token = service.token("gradescope")
    configure(service.config, fail="no NVIDIA GPU found (nvidia-smi lists none)")
    try:
        job = submit(service.url, token, workspace_zip()).json["id"]
        view = wait_for(service.url, token, job)
    finally:
        configure(service.config, fail=None)
    assert view["state"] == "failed" and view["exit_code"] == 2
    assert view["error"] == "no NVIDIA GPU found (nvidia-smi lists none)"
    base = f"{service.url}/v1/submissions/{job}"
    report = call(f"{base}/report", token=token)
    assert report.status == 409 and report.json["error"]["code"] == "failed"
    gradescope = call(f"{base}/gradescope", token=token).json
    assert gradescope["score"] == 0 and "no NVIDIA GPU found" in gradescope["output"]
    prairielearn = call(f"{base}/prairielearn", token=token).json
    assert prairielearn["gradable"] is False and "no NVIDIA GPU" in prairielearn["message"]
    assert call(f"{base}/html", token=token).status == 404


# ------------------------------------------------------------------------------ the queue

def test_a_full_queue_is_429_and_the_queue_reports_positions_and_progress(service, tmp_path):
    token = service.token("classroom")
    gate = tmp_path / "gate"
    configure(service.config, gate=str(gate))
    try:
        first = submit(service.url, token, workspace_zip()).json["id"]
        wait_until(lambda: "checking" in call(f"{service.url}/v1/submissions/{first}",
                                              token=token).json["progress"], what="progress")
        second = submit(service.url, token, workspace_zip())
        assert second.status == 202 and second.json["position"] == 1
        full = submit(service.url, token, workspace_zip())
        assert full.status == 429 and full.json["error"]["code"] == "queue_full"
        assert full.headers["Retry-After"] == "60"
        running = call(f"{service.url}/v1/submissions/{first}", token=token).json
        assert running["state"] == "running" and running["position"] is None
        assert running["progress"] == "[1/1] ch01_programming_model/vector_add: checking"
        waiting = call(f"{service.url}/v1/submissions/{second.json['id']}/report", token=token)
        assert waiting.status == 409 and waiting.json["state"] == "queued"
        # Another token's queue is its own.
        assert submit(service.url, service.token("other"), workspace_zip()).status == 202
    finally:
        gate.touch()
        configure(service.config, gate=None)
    assert wait_for(service.url, token, second.json["id"])["state"] == "done"


def test_the_request_rate_is_limited_per_token(service):
    token = service.token("busy")
    answers = [call(f"{service.url}/v1/submissions/{'0' * 20}", token=token).status
               for _ in range(201)]
    assert answers[:200] == [404] * 200
    assert answers[200] == 429
    limited = call(f"{service.url}/v1/submissions/{'0' * 20}", token=token)
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert call(f"{service.url}/v1/submissions/{'0' * 20}",
                token=service.token("calm")).status == 404


# ------------------------------------------------------------------------------ tokens

def test_tokens_401_403_and_another_courses_jobs_are_not_found(service):
    url = f"{service.url}/v1/submissions"
    missing = submit(service.url, None, workspace_zip())
    assert missing.status == 401 and missing.json["error"]["code"] == "no_token"
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    for wrong in ("nonsense", "ccs_0123456789ab_guess", service.token("x")[:-2] + "zz"):
        answer = call(url, "POST", wrong, workspace_zip())
        assert answer.status == 401 and answer.json["error"]["code"] == "bad_token"
    assert call(url, "POST", None, workspace_zip(),
                {"Authorization": "Basic dTpw"}).status == 401

    token = new_token(service.data, "revoked-one")
    job = submit(service.url, token, workspace_zip()).json["id"]
    revoked = run_cli("serve-token", "revoke", "--name", "revoked-one", "--data", service.data)
    assert revoked.returncode == 0, revoked.stderr
    answer = call(f"{url}/{job}", token=token)
    assert answer.status == 403 and answer.json["error"]["code"] == "revoked_token"
    listed = run_cli("serve-token", "list", "--data", service.data)
    assert "revoked-one" in listed.stdout and "revoked 20" in listed.stdout
    assert token not in listed.stdout and token.split("_")[1] not in listed.stdout

    # The same course's other platform reads it; another course's token does not see it.
    mine = service.token("gradescope")
    theirs = service.token("gradescope", course="another")
    job = submit(service.url, mine, workspace_zip()).json["id"]
    assert call(f"{url}/{job}", token=service.token("prairielearn")).status == 200
    hidden = call(f"{url}/{job}/report", token=theirs)
    assert hidden.status == 404 and hidden.json["error"]["code"] == "not_found"
    assert wait_for(service.url, mine, job)["state"] == "done"  # nothing left to later tests


# ------------------------------------------------------------------------------ refusals

REFUSED = {
    "path traversal": (lambda tag: zip_of({f"../../../escaped-{tag}.cu": "x", VECTOR_ADD: "x"}),
                       "climbs out"),
    "absolute path": (lambda tag: tar_of([(file_info(f"/tmp/escaped-{tag}.cu"), b"x")]),
                      "absolute path"),
    "symbolic link": (lambda tag: tar_of([(file_info("ch01_programming_model",
                                                     tarfile.SYMTYPE, "/tmp"), None),
                                          (file_info(VECTOR_ADD), b"x")]), "symbolic link"),
    "too many files": (lambda tag: zip_of({f"f{i}.txt": "x" for i in range(21)}),
                       "21 entries"),
    "too large unpacked": (lambda tag: zip_of({VECTOR_ADD: b"\0" * (1024 * 1024 + 1)}),
                           "unpacks to"),
    "malformed archive": (lambda tag: zip_of({VECTOR_ADD: "x" * 300})[:90], "not a valid .zip"),
    "not an archive": (lambda tag: b"__global__ void k() {}\n", "not a .zip or .tar.gz"),
    "no exercise file": (lambda tag: zip_of({"notes.txt": "x"}), "no file of the exercises"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_refused_archive_is_400_and_leaves_nothing(service, case):
    make, said = REFUSED[case]
    tag = uuid.uuid4().hex
    before = job_folders(service.data)
    answer = submit(service.url, service.token("refused"), make(tag))
    assert answer.status == 400, answer.body
    assert said in answer.json["error"]["message"]
    assert job_folders(service.data) == before
    for where in (Path("/tmp"), service.data.parent, service.data, service.data / "jobs"):
        assert not (where / f"escaped-{tag}.cu").exists()


def test_an_unknown_exercise_and_an_oversize_upload(service):
    token = service.token("limits")
    before = job_folders(service.data)
    unknown = submit(service.url, token, workspace_zip(), "?exercise=vektor_add")
    assert unknown.status == 400 and unknown.json["error"]["code"] == "unknown_exercise"
    assert "did you mean vector_add" in unknown.json["error"]["message"]
    big = submit(service.url, token, zip_of({VECTOR_ADD: os.urandom(1024 * 1024 + 10)}))
    assert big.status == 413 and big.json["error"]["code"] == "too_large"
    assert job_folders(service.data) == before


# ------------------------------------------------------------------------------ restarts

def test_nothing_is_lost_across_a_stop_and_a_kill(tmp_path):
    """Three jobs queued behind a grade that waits: a stop (SIGTERM) puts the running job
    back; a kill (SIGKILL) mid-grade leaves it running in the database and its grader
    orphaned, which the next start ends before it grades the job again."""
    config, env = write_fake_grader(tmp_path / "fake", gate=str(tmp_path / "gate"))
    data = tmp_path / "data"
    token = new_token(data, "gradescope", env=env)
    first = start_service(data, env, "--build-only")
    jobs = [submit(first.url, token, workspace_zip(), f"?client_ref=s{i}").json["id"]
            for i in range(3)]
    wait_until(lambda: len(grades(tmp_path / "fake")) == 1, what="the first grade")
    assert first.stop(signal.SIGTERM) == 0
    assert "stopped" in first.log.read_text()
    assert not alive(grades(tmp_path / "fake")[0]["pid"])  # the stop ended its grader
    with_db = Store(data / "service.db")
    assert [with_db.job(j).state.value for j in jobs] == ["queued"] * 3

    second = start_service(data, env, "--build-only")
    wait_until(lambda: len(grades(tmp_path / "fake")) == 2, what="the grade again")
    assert call(f"{second.url}/v1/submissions/{jobs[0]}", token=token).json["attempts"] == 2
    second.stop(signal.SIGKILL)
    orphan = grades(tmp_path / "fake")[1]["pid"]
    assert alive(orphan)  # the killed service's grader still waits at the gate
    assert with_db.job(jobs[0]).state.value == "running"

    configure(config, gate=None)
    third = start_service(data, env, "--build-only")
    try:
        assert "1 job cut short by the last stop queued again" in third.log.read_text()
        views = [wait_for(third.url, token, j) for j in jobs]
        assert [v["state"] for v in views] == ["done"] * 3
        assert [v["client_ref"] for v in views] == ["s0", "s1", "s2"]
        assert views[0]["attempts"] == 3 and views[1]["attempts"] == 1
        assert not alive(orphan)  # ended at start-up, before the job was graded again
        assert len(grades(tmp_path / "fake")) == 5
    finally:
        assert third.stop() == 0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie that its parent (the killed service) has not reaped is gone too
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_one_service_per_data_folder(service):
    again = run_cli("serve", "--data", service.data, "--build-only", "--port", "0")
    assert again.returncode == 2
    assert_one_line_error(again.stderr, "in use by another grading service",
                          f"process {service.process.pid}")


# ------------------------------------------------------------------------------ the command

@pytest.mark.parametrize("args, said", [
    (["--max-queued", "0"], "--max-queued takes a number of at least 1"),
    (["--partition", "gpu"], "--partition is for grading through Slurm: add --slurm"),
    (["--slurm", "--poll", "0"], "--poll takes a number of seconds above 0"),
])
def test_bad_serve_options_are_one_line_and_exit_2(tmp_path, capsys, args, said):
    assert cli.main(["serve", "--data", str(tmp_path / "data"), "--build-only", *args]) == 2
    assert_one_line_error(capsys.readouterr().err, said)


@pytest.mark.skipif(bool(tools.list_gpus()), reason="this machine has a GPU to serve on")
def test_without_a_gpu_serve_asks_for_build_only_or_slurm(tmp_path, capsys):
    assert cli.main(["serve", "--data", str(tmp_path / "data")]) == 2
    assert_one_line_error(capsys.readouterr().err, "no NVIDIA GPU found", "--slurm",
                          "--build-only")


def test_without_flask_serve_names_what_to_install_and_grade_never_loads_it(tmp_path):
    code = ("import sys; sys.modules['flask'] = None; from grader import cli; "
            f"sys.exit(cli.main(['serve', '--build-only', '--data', {str(tmp_path)!r}]))")
    result = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "needs Flask and Waitress", "pip install flask==")
    listed = subprocess.run([PYTHON, "-c", "import sys; from grader import cli; "
                             "cli.main(['list']); sys.exit('flask' in sys.modules or "
                             "'waitress' in sys.modules)"], cwd=ROOT, capture_output=True,
                            timeout=60)
    assert listed.returncode == 0, listed.stderr


# ------------------------------------------------------------------------------ platforms

def test_gradescope_run_and_prairielearn_run_grade_through_the_service(service, tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "vector_add.cu").write_text("// a loose file, as Gradescope takes it\n")
    token_file = tmp_path / "token"
    token_file.write_text(service.token("gradescope") + "\n")
    results = tmp_path / "results.json"
    ran = run_cli("gradescope-run", "--upload", upload, "--results", results, "--service",
                  service.url, "--service-token-file", token_file)
    assert ran.returncode == 0, ran.stderr
    assert "the grading service took the submission as" in ran.stderr
    report = model.Report.load(ROOT / "build" / "gradescope" / "report.json")
    assert json.loads(results.read_text()) == exports.gradescope(report)
    graded = grades(service.fake)[-1]
    assert graded["files"] == [VECTOR_ADD] and "-e" not in graded["argv"]

    env = dict(os.environ, COURSE_SERVICE_TOKEN=service.token("prairielearn"))
    ran = run_cli("prairielearn-run", "--student", upload, "--results", results, "-e",
                  "vector_add", "--service", service.url, env=env)
    assert ran.returncode == 0, ran.stderr
    assert grades(service.fake)[-1]["argv"][2:4] == ["-e", "vector_add"]
    assert json.loads(results.read_text())["tests"][0]["name"] == "ch01_a/one"


@pytest.mark.parametrize("problem, said", [
    ("no token", "--service needs the course's token"),
    ("a revoked token", "answered 403: this token"),
    ("no service there", "cannot be reached"),
])
def test_a_platform_run_that_the_service_cannot_grade_says_why(service, tmp_path, problem,
                                                               said):
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "vector_add.cu").write_text("// mine\n")
    env = dict(os.environ)
    env.pop("COURSE_SERVICE_TOKEN", None)
    url = service.url
    if problem == "a revoked token":
        store, name = Store(service.data / "service.db"), f"gone-{uuid.uuid4().hex[:6]}"
        env["COURSE_SERVICE_TOKEN"] = tokens.create(store, name, "course")
        store.revoke(name)
    elif problem == "no service there":
        env["COURSE_SERVICE_TOKEN"] = "ccs_0123456789ab_x"
        url = "http://127.0.0.1:9"  # the discard port: nothing listens
    results = tmp_path / "results.json"
    ran = run_cli("gradescope-run", "--upload", upload, "--results", results, "--service", url,
                  env=env)
    assert ran.returncode == 0, ran.stderr  # Gradescope reads the file: it says why
    data = json.loads(results.read_text())
    assert data["score"] == 0 and said in data["output"], data["output"]


def test_serve_slurm_without_sbatch_says_where_to_run_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Slurm client here
    assert cli.main(["serve", "--slurm", "--data", str(tmp_path / "data")]) == 2
    assert_one_line_error(capsys.readouterr().err, "sbatch not found", "login node")
