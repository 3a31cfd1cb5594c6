#!/usr/bin/env python3
"""The grading service end to end on a GPU machine (scripts/gpu_check.sh, stage service):
`grader serve` with two workers on this machine's GPU, a class of four uploads sent the way the
platforms send them, and a restart in the middle of the queue.

    python3 scripts/check_service.py DATA --chapter ch01_programming_model [--out DIR]

1. The service starts (`serve --port 0 --workers 2`) with a token made by `serve-token add`.
2. Four uploads, two at a time, graded together by the two workers, each through the script
   its platform runs: the solutions and then the skeletons of CHAPTER, through the
   `run_autograder` of the zip `export-gradescope --service URL` writes (unpacked in an
   /autograder of its own, AUTOGRADER_ROOT, with the upload's loose files in its submission/)
   and through the entrypoint of the image `export-prairielearn --service URL` writes (its
   course/ copied per run, as each grading container has its own /course; a /grade of its own,
   GRADE_ROOT, with the question's files in student/ and the token where serverFilesCourse
   puts it; run with `-e CHAPTER`, as the question's entrypoint arguments pass it).
   The solutions must earn every point of the chapter, the skeletons none.
3. A fifth upload (the solutions, through the HTTP API): once it is being graded the service is
   killed (SIGKILL, as a crash would), started again, and the job must be graded again to full
   marks, with nothing lost.

Prints one line per step and a last line with the wall times; exit 1 naming what failed, 2 when
the service cannot start here (no Flask, no GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.service import client as service_client  # noqa: E402  (standard library only)

PY = sys.executable
START_TIMEOUT_S = 60
GRADE_TIMEOUT_S = 900


def start(data: Path, log: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    """`grader serve` in its own session; the URL it prints once it listens."""
    out = log.open("ab")
    seen = out.tell()  # only what this start prints
    server = subprocess.Popen([PY, "-m", "grader", "serve", "--data", str(data), "--port", "0",
                               "--workers", "2", *extra], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                              start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = re.findall(r"serving on (http://\S+)", log.read_text(errors="replace")[seen:])
        if found:
            return server, found[-1]
        if server.poll() is not None:
            break
        time.sleep(0.2)
    server.kill()
    sys.exit(f"check_service: the service did not start (see {log})\n"
             + log.read_text(errors="replace")[-2000:])


def chapter_files(tree: str, chapter: str, into: Path, loose: bool) -> Path:
    """CHAPTER's student files of solutions/ or skeletons/ as an upload: loose files
    (Gradescope) or the chapter's folder (PrairieLearn's /grade/student holds the files)."""
    shutil.rmtree(into, ignore_errors=True)
    target = into if loose else into / chapter
    target.mkdir(parents=True)
    for source in sorted((ROOT / tree / chapter).glob("*.cu")):
        shutil.copy(source, target / source.name)
    return into


def view(api: service_client.Client, job_id: str) -> dict:
    return json.loads(api.call(f"/v1/submissions/{job_id}")[2])


def run_platform(command: list[str], extra_env: dict[str, str]) -> tuple[int, str]:
    """A platform's script as the platform runs it: no token in the environment (it is where
    the export put it), this Python first on the PATH as python3."""
    env = {k: v for k, v in os.environ.items() if k != "COURSE_SERVICE_TOKEN"}
    env["PATH"] = f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(command, cwd=Path(command[0]).parent, env={**env, **extra_env},
                          capture_output=True, text=True, timeout=GRADE_TIMEOUT_S)
    return done.returncode, (done.stdout + done.stderr)[-1500:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the service's folder (emptied first)")
    parser.add_argument("--chapter", default="ch01_programming_model")
    parser.add_argument("--out", type=Path, default=None, help="where results go (default DATA)")
    parser.add_argument("--build-only", action="store_true",
                        help="a trial without a GPU: the service only compiles, so no upload "
                        "earns a point and the score checks fail; the steps still run")
    args = parser.parse_args()
    data = args.data.resolve()
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    out = (args.out or data / "results").resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "serve.log"
    problems: list[str] = []
    began = time.monotonic()

    made = subprocess.run([PY, "-m", "grader", "serve-token", "add", "--name", "check",
                           "--data", str(data)], cwd=ROOT, capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit(f"check_service: serve-token add failed: {made.stderr.strip()}")
    token = made.stdout.split()[0]
    server, url = start(data, log, ["--build-only"] if args.build_only else [])
    print(f"check_service: {url}, two workers", flush=True)

    uploads = out / "uploads"
    exported = out / "exported"
    shutil.rmtree(exported, ignore_errors=True)
    exported.mkdir()
    (exported / "token").write_text(token + "\n")
    zip_path, pl_export = exported / "autograder.zip", exported / "prairielearn"
    for args_ in (["export-gradescope", str(zip_path)],
                  ["export-prairielearn", str(pl_export), "--image", "check/cuda-grader"]):
        done = subprocess.run([PY, "-m", "grader", *args_, "--service", url,
                               "--service-token-file", str(exported / "token")], cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"check_service: {args_[0]} failed: {done.stderr.strip()}")
    options = json.loads((pl_export / "question-info.json").read_text())
    entry_args = options["externalGradingOptions"]["entrypoint"]
    cases = []
    for tree in ("solutions", "skeletons"):
        autograder = uploads / f"gradescope-{tree}"  # Gradescope's /autograder
        shutil.rmtree(autograder, ignore_errors=True)
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(autograder / "source")
        for name in ("run_autograder", "setup.sh"):  # zipfile keeps no modes
            (autograder / "source" / name).chmod(0o755)
        chapter_files(tree, args.chapter, autograder / "submission", loose=True)
        cases.append((f"gradescope {tree}", tree, autograder / "results" / "results.json",
                      [str(autograder / "source" / "run_autograder")],
                      {"AUTOGRADER_ROOT": str(autograder)}))
        grade = uploads / f"prairielearn-{tree}"  # PrairieLearn's /grade
        chapter_files(tree, args.chapter, grade, loose=False)
        (grade / args.chapter).rename(grade / "student")
        shutil.copytree(pl_export / "serverFilesCourse", grade / "serverFilesCourse")
        course = uploads / f"prairielearn-{tree}-course"  # the container's /course
        shutil.rmtree(course, ignore_errors=True)
        shutil.copytree(pl_export / "course", course, symlinks=True)
        entrypoint = course / Path(entry_args[0]).name
        cases.append((f"prairielearn {tree}", tree, grade / "results" / "results.json",
                      [str(entrypoint), "-e", args.chapter], {"GRADE_ROOT": str(grade)}))
    # Two waves of two, one upload of each platform in each.
    class_began = time.monotonic()
    ran = []
    with ThreadPoolExecutor(2) as pool:
        for wave in (cases[:2], cases[2:]):
            ran += list(pool.map(lambda case: run_platform(case[3], case[4]), wave))
    class_s = time.monotonic() - class_began
    for (name, tree, results, _, _), (code, output) in zip(cases, ran):
        if code != 0 or not results.is_file():
            problems.append(f"{name}: exit {code}: {output.strip()[-300:]}")
            continue
        got = json.loads(results.read_text())
        if name.startswith("gradescope"):  # one test per exercise, "<chapter>/<name>: title"
            mine = [t for t in got.get("tests", []) if str(t.get("name", "")).startswith(
                args.chapter + "/")]
            earned = sum(float(t.get("score", 0)) for t in mine)
            best = sum(float(t.get("max_score", 0)) for t in mine)
            line = f"{earned:g}/{best:g} points of {args.chapter} (score {got.get('score')})"
            full = best > 0 and earned >= best
            nothing = float(got.get("score", 0)) == 0
        else:  # PrairieLearn: the fraction of the question's points
            score = float(got.get("score", 0))
            line = f"score {score:g}, gradable {got.get('gradable')}"
            full, nothing = score >= 1, score == 0 and got.get("gradable") is True
        ok = full if tree == "solutions" else nothing
        print(f"check_service: {name}: {line} ({'ok' if ok else 'WRONG'})", flush=True)
        if not ok:
            problems.append(f"{name}: {line}, expected "
                            f"{'every point' if tree == 'solutions' else 'nothing'}")

    # A crash in the middle of a grade: the job is graded again when the service comes back.
    api = service_client.Client(url, token)
    upload = chapter_files("solutions", args.chapter, uploads / "restart", loose=False)
    _, _, answer = api.call(f"/v1/submissions?exercise={args.chapter}",
                            service_client.archive(upload))
    job_id = json.loads(answer)["id"]
    deadline = time.monotonic() + GRADE_TIMEOUT_S
    while view(api, job_id)["state"] != "running" and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # well into the grade
    os.killpg(server.pid, signal.SIGKILL)
    server.wait()
    restart_began = time.monotonic()
    server, url = start(data, log, ["--build-only"] if args.build_only else [])
    api = service_client.Client(url, token)
    state = view(api, job_id)
    while state["state"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(1)
        state = view(api, job_id)
    report = {}
    if state["state"] == "done":
        report = json.loads(api.call(f"/v1/submissions/{job_id}/report")[2])
    restart_s = time.monotonic() - restart_began
    got, best = report.get("score"), report.get("max_score")
    ok = (state["state"] == "done" and state.get("attempts", 0) >= 2 and got is not None
          and best and got >= best)
    print(f"check_service: killed mid-grade and started again: {state['state']} after "
          f"{state.get('attempts')} attempts, {got}/{best} ({'ok' if ok else 'WRONG'})",
          flush=True)
    if not ok:
        problems.append(f"restart: job {job_id} {json.dumps(state)[:300]}")
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)

    print(f"check_service: class of four {class_s:.0f} s, restart {restart_s:.0f} s, all "
          f"{time.monotonic() - began:.0f} s", flush=True)
    for problem in problems:
        print(f"check_service: FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
