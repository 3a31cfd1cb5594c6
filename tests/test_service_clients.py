"""The platforms calling the grading service, each path as its platform runs it and without a
GPU, against the real service (`serve --build-only`, whose grades the stand-in grader of
tests/service_support.py writes):

- Gradescope: the zip of `export-gradescope --service` unpacked, and its own run_autograder run
  with AUTOGRADER_ROOT on a temporary folder (the token in the zip, or $COURSE_SERVICE_TOKEN);
- PrairieLearn: the folder of `export-prairielearn`, and its entrypoint run with GRADE_ROOT on a
  temporary /grade (the token through serverFilesCourse, or the question's environment);
- GitHub Classroom: the workflow of `export-template --service`, its Grade step run by bash in a
  copy of the repository's grader and chapters, then its chapter steps, into the reporter's
  inputs, whose totals are checked with the model of tests/test_exports.py (and with the
  reporter itself under Node, where COURSE_CLASSROOM_REPORTER names it)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import uuid
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the grading service needs Flask (requirements.txt)")
pytest.importorskip("waitress", reason="the grading service needs Waitress (requirements.txt)")

from grader import cli, exports, manifest, model, render, template  # noqa: E402
from grader.model import ExerciseStatus  # noqa: E402
from grader.service import tokens  # noqa: E402
from grader.service.store import Store  # noqa: E402
from helpers import (PYTHON, ROOT, assert_one_line_error, needs_solutions,  # noqa: E402
                     run_cli)
from service_support import (call, configure, grades, start_service,  # noqa: E402
                             write_fake_grader)
from test_exports import (HAS_REPORTER, _steps, _yaml_blocks, chapter_env,  # noqa: E402
                          classroom_problems, console_totals, course_report, gradescope_problems,
                          points_sent, prairielearn_problems, reporter_input, run_reporter,
                          unpack_zip)

# The exports refuse in a student template (no solutions/ to leave out): nothing to test there.
pytestmark = needs_solutions

URL_FREE = "https://grading.example.edu"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("clients")
    config, env = write_fake_grader(root / "fake")
    running = start_service(root / "data", env, "--build-only")
    store = Store(root / "data" / "service.db")
    running.config, running.fake = config, root / "fake"
    running.token = lambda: tokens.create(store, f"t-{uuid.uuid4().hex[:6]}", "course")
    reports = {"partial": course_report("partial"), "build-only": build_only_report()}
    running.reports = {}
    for kind, report in reports.items():
        path = root / "fake" / f"{kind}.json"
        path.write_text(json.dumps(render.report_data(report)))
        running.reports[kind] = path
    yield running
    assert running.stop() == 0


@pytest.fixture(scope="module")
def zips(service, tmp_path_factory) -> dict[str, Path]:
    """export-gradescope --service's zips: with the service's token in the zip, and without."""
    folder = tmp_path_factory.mktemp("gradescope")
    service.zip_token = service.token()
    return {"zip": export_gradescope(folder / "zip", service.url, service.zip_token)[0],
            "environment": export_gradescope(folder / "environment", service.url, None)[0]}


@pytest.fixture(scope="module")
def images(service, tmp_path_factory) -> dict[str, Path]:
    """export-prairielearn's folders: with the service's token for serverFilesCourse, and
    without."""
    folder = tmp_path_factory.mktemp("prairielearn")
    service.image_token = service.token()
    return {"serverFilesCourse": export_prairielearn(folder / "file", service.url,
                                                     service.image_token)[0],
            "environment": export_prairielearn(folder / "environment", service.url, None)[0]}


def build_only_report() -> model.Report:
    """What a real `grade --build-only` of vector_add reports: compiled, not run, no points."""
    ex = next(e for e in manifest.discover(ROOT) if e.name == "vector_add")
    return model.Report(
        submission="/w", seed=1, started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:09+00:00", grader_version="1", gpu=None, host="h",
        options={"build_only": True}, exercises=[model.ExerciseResult(
            ex.key, ex.name, ex.chapter, ex.title, ExerciseStatus.SKIPPED, 0.0, ex.max_points,
            "compiled (--build-only: not run)", [model.StageResult("build", "passed")])])


def platform_env(**extra) -> dict:
    """A platform job's environment: this Python first on the PATH (as python3 and python),
    no token unless given."""
    env = {k: v for k, v in os.environ.items() if k != "COURSE_SERVICE_TOKEN"}
    env["PATH"] = f"{Path(PYTHON).parent}{os.pathsep}{env['PATH']}"
    return {**env, **extra}


def run(command: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------------------ Gradescope

def export_gradescope(folder: Path, url: str, token: str | None) -> tuple[Path, str]:
    """export-gradescope --service (with the token's file when given): the zip, and what the
    command printed."""
    folder.mkdir(parents=True, exist_ok=True)
    args = ["export-gradescope", folder / "autograder.zip", "--service", url]
    if token is not None:
        (folder / "token").write_text(token + "\n")
        args += ["--service-token-file", folder / "token"]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    return folder / "autograder.zip", result.stdout + result.stderr


def test_gradescope_zip_for_the_service_holds_no_build(tmp_path):
    token = "ccs_0123456789ab_secret-of-the-course"
    archive, said = export_gradescope(tmp_path, URL_FREE + "/", token)
    assert token not in said and "the token in the zip" in said
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        setup, run_autograder = zf.read("setup.sh").decode(), zf.read("run_autograder").decode()
        assert zf.read(exports.SERVICE_TOKEN).decode() == token + "\n"
    assert {"setup.sh", "run_autograder", exports.SERVICE_TOKEN, "grader/cli.py",
            "grader/service/client.py",
            "chapters/ch01_programming_model/vector_add/vector_add.toml"} <= names
    # The course files that laying out an upload reads, nothing to build or to give away.
    assert {n.split("/")[0] for n in names} == {"setup.sh", "run_autograder",
                                                exports.SERVICE_TOKEN, "grader", "chapters",
                                                ".course-template"}
    assert not [n for n in names if template.excluded(n) or "_hidden_test." in n]
    assert stat.S_IMODE(modes[exports.SERVICE_TOKEN]) == 0o600
    assert all(modes[n] & 0o111 for n in ("setup.sh", "run_autograder"))
    # Python 3.11 and certificates alone: no CUDA, no GoogleTest, no course set-up.
    installs = " ".join(re.findall(r"apt-get install (.+)", setup))
    assert "python3.11" in installs and "ca-certificates" in installs
    assert not re.search(r"cuda|nvcc|gtest|meson|scripts/setup\.sh", installs + setup.split(
        "set -euo pipefail")[1])
    assert f"gradescope-run --service {URL_FREE} \\" in run_autograder
    assert '--service-token-file "$root/source/service-token"' in run_autograder

    bare, _ = export_gradescope(tmp_path / "bare", URL_FREE, None)
    with zipfile.ZipFile(bare) as zf:
        assert exports.SERVICE_TOKEN not in zf.namelist()
        assert "--service-token-file" not in zf.read("run_autograder").decode()


@pytest.mark.parametrize("args, said", [
    (["--service-token-file", "token"], "--service-token-file is for --service URL"),
    (["--service", "ftp://grading.example.edu"], "is not the address of a grading service"),
    (["--service", "https://grading.example.edu/x'; rm -rf ~"], "without quotes, spaces"),
    (["--service", URL_FREE, "--service-token-file", "empty"], "must hold the token alone"),
    (["--service", URL_FREE, "--service-token-file", "missing"], "cannot read it"),
])
def test_export_gradescope_service_options_are_checked(tmp_path, capsys, args, said):
    (tmp_path / "token").write_text("ccs_x_y\n")
    (tmp_path / "empty").write_text("\n")
    args = [str(tmp_path / a) if a in ("token", "empty", "missing") else a for a in args]
    assert cli.main(["export-gradescope", str(tmp_path / "a.zip"), *args]) == 2
    assert_one_line_error(capsys.readouterr().err, said)
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.parametrize("kind, token_in", [("partial", "zip"), ("build-only", "environment")])
def test_run_autograder_sends_the_upload_to_the_service(service, zips, tmp_path, kind,
                                                       token_in):
    configure(service.config, report=str(service.reports[kind]))
    token = service.zip_token if token_in == "zip" else service.token()
    autograder = tmp_path / "autograder"  # Gradescope's /autograder
    source = unpack_zip(zips[token_in], autograder / "source")
    (autograder / "submission").mkdir()
    (autograder / "submission" / "vector_add.cu").write_text("// a loose file, as uploaded\n")
    env = platform_env(AUTOGRADER_ROOT=str(autograder),
                       **({"COURSE_SERVICE_TOKEN": token} if token_in == "environment" else {}))
    ran = run([source / "run_autograder"], autograder, env)
    assert ran.returncode == 0, ran.stderr
    assert "the grading service took the submission as" in ran.stderr
    assert token not in ran.stdout + ran.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    assert gradescope_problems(results) == []
    # The results are the service's report as Gradescope reads it: a build-only grade is
    # 0 points, each exercise a test saying it was compiled and not run.
    report = model.Report.load(source / "build" / "gradescope" / "report.json")
    assert results == exports.gradescope(report)
    assert results["score"] == round(report.score, 3) and results["tests"]
    if kind == "build-only":
        assert results["score"] == 0 and "--build-only: not run" in results["tests"][0]["output"]
    assert grades(service.fake)[-1]["files"] == ["ch01_programming_model/vector_add.cu"]


def test_run_autograder_without_python_311_writes_a_zero_saying_so(zips, tmp_path):
    autograder = tmp_path / "autograder"
    source = unpack_zip(zips["environment"], autograder / "source")
    tools = tmp_path / "bin"  # an old python3, and mkdir: nothing else on the PATH
    tools.mkdir()
    (tools / "python3").write_text("#!/bin/sh\nexit 1\n")
    (tools / "python3").chmod(0o755)
    (tools / "mkdir").symlink_to(shutil.which("mkdir"))
    ran = run([shutil.which("bash"), source / "run_autograder"], autograder,
              {"PATH": str(tools), "AUTOGRADER_ROOT": str(autograder)})
    assert ran.returncode == 0 and "no Python 3.11 or newer" in ran.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    assert gradescope_problems(results) == [] and results["score"] == 0
    assert "setup.sh installs one" in results["output"]


# ---------------------------------------------------------------------------- PrairieLearn

# https://prairielearn.readthedocs.io/en/latest/externalGrading/: externalGradingOptions.
PL_OPTIONS = {"enabled", "image", "entrypoint", "serverFilesCourse", "timeout",
              "enableNetworking", "environment"}


def export_prairielearn(folder: Path, url: str, token: str | None) -> tuple[Path, str]:
    args = ["export-prairielearn", folder / "pl", "--service", url, "--image", "me/cuda-grader"]
    if token is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "token").write_text(token + "\n")
        args += ["--service-token-file", folder / "token"]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    return folder / "pl", result.stdout + result.stderr


def test_prairielearn_export_an_image_without_cuda_or_token(tmp_path):
    token = "ccs_0123456789ab_secret-of-the-course"
    out, said = export_prairielearn(tmp_path, URL_FREE, token)
    assert token not in said
    dockerfile = (out / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+-slim$", dockerfile, re.M)
    assert not re.search(r"cuda|nvidia|nvcc", dockerfile.split("FROM")[1], re.I)
    assert "COPY course/ /course/" in dockerfile and "ENTRYPOINT" in dockerfile
    course = out / "course"
    assert {p.name for p in course.iterdir()} == {"grader", "chapters", ".course-template",
                                                  exports.PL_ENTRYPOINT}
    assert os.access(course / exports.PL_ENTRYPOINT, os.X_OK)
    # The token goes to the PrairieLearn course's serverFilesCourse, never into the image.
    assert not [p for p in course.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    secret = out / "serverFilesCourse" / exports.PL_TOKEN_FOLDER / exports.SERVICE_TOKEN
    assert secret.read_text() == token + "\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    question = json.loads((out / "question-info.json").read_text())
    options = question["externalGradingOptions"]
    assert question["gradingMethod"] == "External" and set(options) <= PL_OPTIONS
    assert options["image"] == "me/cuda-grader" and options["enableNetworking"] is True
    assert 0 < options["timeout"] <= 600 and options["timeout"] > exports.PL_WAIT_S
    assert options["entrypoint"][:2] == [f"/course/{exports.PL_ENTRYPOINT}", "-e"]
    assert options["serverFilesCourse"] == [f"{exports.PL_TOKEN_FOLDER}/"]
    assert "docker build -t me/cuda-grader" in (out / "README.md").read_text()
    again = run_cli("export-prairielearn", out, "--service", URL_FREE)
    assert again.returncode == 2 and "is not an empty folder" in again.stderr


@pytest.mark.parametrize("token_in", ["serverFilesCourse", "environment"])
def test_prairielearn_entrypoint_sends_the_files_to_the_service(service, images, tmp_path,
                                                               token_in):
    configure(service.config, report=str(service.reports["partial"]))
    token = service.image_token if token_in == "serverFilesCourse" else service.token()
    out = images[token_in]
    grade = tmp_path / "grade"  # PrairieLearn's /grade
    (grade / "student").mkdir(parents=True)
    (grade / "student" / "vector_add.cu").write_text("// from the file editor\n")
    if token_in == "serverFilesCourse":  # as the question's serverFilesCourse copies it
        shutil.copytree(out / "serverFilesCourse", grade / "serverFilesCourse")
    env = platform_env(GRADE_ROOT=str(grade),
                       **({"COURSE_SERVICE_TOKEN": token} if token_in == "environment" else {}))
    options = json.loads((out / "question-info.json").read_text())["externalGradingOptions"]
    entrypoint = [str(out / "course" / exports.PL_ENTRYPOINT), *options["entrypoint"][1:]]
    ran = run(entrypoint, grade, env)
    assert ran.returncode == 0, ran.stderr
    assert token not in ran.stdout + ran.stderr
    assert grades(service.fake)[-1]["argv"][2:4] == ["-e", "vector_add"]
    results = json.loads((grade / "results" / "results.json").read_text())
    assert prairielearn_problems(results) == []
    report = model.Report.load(out / "course" / "build" / "prairielearn" / "report.json")
    assert results == exports.prairielearn(report) and results["gradable"] is True


def test_prairielearn_entrypoint_without_a_token_is_not_gradable(images, tmp_path):
    out = images["environment"]
    (tmp_path / "grade" / "student").mkdir(parents=True)
    (tmp_path / "grade" / "student" / "vector_add.cu").write_text("// mine\n")
    ran = run([out / "course" / exports.PL_ENTRYPOINT, "-e", "vector_add"], tmp_path,
              platform_env(GRADE_ROOT=str(tmp_path / "grade")))
    assert ran.returncode == 0, ran.stderr
    results = json.loads((tmp_path / "grade" / "results" / "results.json").read_text())
    assert prairielearn_problems(results) == [] and results["gradable"] is False
    assert "--service needs the course's token" in results["format_errors"][0]


def test_a_client_gives_up_after_service_wait_saying_so(service, tmp_path, capsys):
    gate = tmp_path / "gate"
    configure(service.config, report=str(service.reports["partial"]), gate=str(gate))
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "vector_add.cu").write_text("// mine\n")
    results = tmp_path / "results.json"
    try:
        ran = run_cli("prairielearn-run", "--student", tmp_path / "student", "--results", results,
                      "-e", "vector_add", "--service", service.url, "--service-wait", "1",
                      env=platform_env(COURSE_SERVICE_TOKEN=service.token()))
    finally:
        gate.write_text("")  # the stand-in grade ends; the next tests' jobs go on
        configure(service.config, gate=None)
    assert ran.returncode == 0, ran.stderr
    data = json.loads(results.read_text())
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert "did not grade it within 1 s" in data["format_errors"][0]
    assert cli.main(["prairielearn-run", "--student", str(tmp_path / "student"), "--results",
                     str(results), "--service-wait", "5"]) == 2
    assert_one_line_error(capsys.readouterr().err, "--service-wait is for --service URL")


# ------------------------------------------------------------------------ GitHub Classroom

def grade_step(text: str) -> str:
    """The Grade step's script, as its `run: |` block holds it."""
    (block,) = re.findall(r"- name: Grade\n(?: +#.*\n)*(?: +env:\n(?: {10}.+\n)+)? +run: \|\n"
                          r"((?: {10}.*\n)+)", text)
    return "".join(line[10:] + "\n" for line in block.splitlines())


def classroom_repository(folder: Path) -> Path:
    """A student's repository as the hosted runner checks it out: the grader, the chapters and
    workspace/ (the rest of the template takes no part in the grade)."""
    for rel in exports.service_files(ROOT):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, folder / rel)
    work = folder / "workspace" / "ch01_programming_model"
    work.mkdir(parents=True)
    (work / "vector_add.cu").write_text("// the student's kernel\n")
    (work / "notes.txt").write_text("not an exercise file\n")
    return folder


def test_classroom_workflow_for_the_service_runs_on_hosted_runners(tmp_path):
    exercises = manifest.discover(ROOT)
    text = exports.classroom_workflow(exercises, URL_FREE)
    for line in _yaml_blocks(text):
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, line
        assert re.match(r'^ *(#.*|- .+|"?[\w-]+"?:( .*)?)$', line), line
    assert "runs-on: ubuntu-latest" in text and "self-hosted" not in text
    assert "uses: actions/setup-python@v5" in text and "scripts/setup.sh" not in text
    assert 'COURSE_SERVICE_TOKEN: "${{ secrets.COURSE_SERVICE_TOKEN }}"' in text
    assert text.count("secrets.") == 1  # the token reaches the Grade step alone
    assert f"classroom-run --service {URL_FREE} " in grade_step(text)
    # The chapters' steps and the reporter are the GPU runner's workflow's, to the letter.
    gpu = exports.classroom_workflow(exercises)
    assert _steps(text) == _steps(gpu)
    assert text[text.index("      - name: Keep"):] == gpu[gpu.index("      - name: Keep"):]
    # export-template --service writes it into the template.
    out = tmp_path / "student"
    result = run_cli("export-template", out, "--no-git", "--service", URL_FREE)
    assert result.returncode == 0, result.stderr
    assert "COURSE_SERVICE_TOKEN" in result.stderr
    assert (out / ".github" / "workflows" / "classroom.yml").read_text() == text


def test_classroom_grade_step_feeds_the_reporter_the_services_points(service, tmp_path):
    configure(service.config, report=str(service.reports["partial"]))
    token = service.token()
    text = exports.classroom_workflow(manifest.discover(ROOT), service.url)
    repository = classroom_repository(tmp_path / "repository")
    github_env = tmp_path / "github_env"
    github_env.write_text("")
    ran = run(["bash", "-e", "-c", grade_step(text)], repository, platform_env(
        COURSE_SERVICE_TOKEN=token, GITHUB_ENV=str(github_env),
        GITHUB_REPOSITORY="course-org/hw1-alice", GITHUB_SHA="0123abcd" * 5))
    assert ran.returncode == 0, ran.stderr
    assert "::error::" not in ran.stdout and token not in ran.stdout + ran.stderr
    assert grades(service.fake)[-1]["files"] == ["ch01_programming_model/vector_add.cu"]
    saved = repository / exports.CLASSROOM_REPORT
    report = model.Report.load(saved)
    expected = model.Report.load(service.reports["partial"])
    assert report.score == expected.score and report.max_score == expected.max_score
    # The service's job carries the push it graded.
    job = re.search(r"took the submission as (\w+)", ran.stderr).group(1)
    view = call(f"{service.url}/v1/submissions/{job}", token=token).json
    assert view["client_ref"] == "course-org/hw1-alice@" + "0123abcd" * 5

    # The chapters' steps, with the $PY the Grade step left in $GITHUB_ENV.
    (py,) = re.findall(r"^PY=(.+)$", github_env.read_text(), re.M)
    env, runners = chapter_env(text, repository, {"PY": py})
    runs = reporter_input(env, runners)
    for _, results in runs:
        assert classroom_problems(results) == []
        assert len(exports.classroom_value(results)) <= exports.CLASSROOM_LIMIT
    total = sum(int(sum(e.score for e in report.exercises if e.chapter == c) + 0.5)
                for c in {e.chapter for e in report.exercises})
    assert console_totals(runs) == points_sent(runs) == (total, report.max_score)
    if HAS_REPORTER:
        run_reporter(env, runners, tmp_path)


def test_classroom_grade_step_without_the_secret_leaves_each_chapter_an_error(service,
                                                                              tmp_path):
    text = exports.classroom_workflow(manifest.discover(ROOT), service.url)
    repository = classroom_repository(tmp_path / "repository")
    (tmp_path / "github_env").write_text("")
    ran = run(["bash", "-e", "-c", grade_step(text)], repository, platform_env(
        COURSE_SERVICE_TOKEN="", GITHUB_ENV=str(tmp_path / "github_env"),
        GITHUB_REPOSITORY="o/r", GITHUB_SHA="0" * 40))
    assert ran.returncode == 0, ran.stderr  # `|| true`: the chapters still report
    assert "::error::no Actions secret COURSE_SERVICE_TOKEN" in ran.stdout
    assert "--service needs the course's token" in ran.stderr
    assert not (repository / exports.CLASSROOM_REPORT).exists()
    # Each chapter's step then reports an error, with 0 points (its first, as all do).
    command = next(iter(_steps(text).values()))[1]
    (tmp_path / "out").write_text("")
    subprocess.run(["bash", "-c", command], cwd=repository, check=True, timeout=60,
                   env={**os.environ, "PY": PYTHON, "GITHUB_OUTPUT": str(tmp_path / "out")})
    earned = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    earned = json.loads(base64.b64decode(earned["earned"]))
    assert earned["status"] == "error" and "no grading report" in earned["tests"][0]["message"]
