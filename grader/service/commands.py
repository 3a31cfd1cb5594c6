"""The service's two subcommands: `serve` (the API and its workers) and `serve-token`
(add, list, revoke). Flask and Waitress are imported by `serve` alone, when it starts: the
rest of the grader needs only the standard library."""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

from grader import manifest, sandbox, tools
from grader.errors import GraderError
from grader.service import tokens, workers
from grader.service.grading import GradeSettings
from grader.service.jobs import Limits, Mode
from grader.service.store import Store

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_DATA = ROOT / "build" / "service"
DEFAULT_PORT = 8750
MiB = 1024 * 1024
NEEDS = "flask==3.1.3 and waitress==3.0.2"
SLURM_ONLY = ("partition", "account", "sbatch_arg", "time", "scratch", "poll")


def _whole(flag: str, least: int = 1):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise GraderError(f"{flag} takes a whole number, not {text!r}") from None
        if value < least:
            raise GraderError(f"{flag} takes a number of at least {least}")
        return value
    parse.__name__ = "int"
    return parse


def _data_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, metavar="DIR",
                   help="the service's folder: its database (tokens, jobs) and the uploads "
                   "(default: build/service in the course)")


def add_parsers(sub) -> None:
    s = sub.add_parser(
        "serve", help="instructors: a grading service (HTTP API) for platforms without a GPU",
        description="Serves an HTTP API (JSON, under /v1) that takes submissions as .zip or "
        ".tar.gz archives from teaching platforms (Gradescope, PrairieLearn, GitHub "
        "Classroom runners) with a course token, queues them in a SQLite database under "
        "--data and grades each with 'grade' on this machine's GPUs (one worker per GPU), or "
        "through Slurm. Nothing accepted is lost when it stops or dies: it grades again what "
        "it was grading. Needs Flask and Waitress (requirements.txt). Put it behind a reverse "
        "proxy with TLS (docs/instructors.md, 'Grading service').")
    _data_flag(s)
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s; serve to others through "
                   "a reverse proxy with TLS)")
    s.add_argument("--port", type=_whole("--port", 0), default=DEFAULT_PORT,
                   help="port (default: %(default)s; 0 picks a free one, printed at start)")
    s.add_argument("--workers", type=_whole("--workers"), metavar="N",
                   help="grades at once (default: one per GPU nvidia-smi lists, each pinned to "
                   "its GPU; 1 with --build-only; with --slurm the most jobs in Slurm at "
                   "once, default 16)")
    s.add_argument("--build-only", action="store_true",
                   help="only compile each submission (grade --build-only): needs no GPU, "
                   "gives no score (for CI and trials)")
    s.add_argument("--hidden", action="store_true",
                   help="compile in and run the hidden test cases (grade --hidden); "
                   "$COURSE_SECRET, when set, reaches every grade")
    s.add_argument("--no-sandbox", action="store_true",
                   help="grade even where this machine cannot give the course's sandbox, the "
                   "students' programs then running with the grader's own rights (default: "
                   "such a machine is refused, exit 2)")
    s.add_argument("--grade-timeout", type=_whole("--grade-timeout"), default=3600,
                   metavar="SECONDS", help="stop a grade that runs longer (default: "
                   "%(default)s); the job fails, saying so")
    s.add_argument("--max-upload-mb", type=_whole("--max-upload-mb"), default=10, metavar="MB",
                   help="largest upload, in MiB (default: %(default)s; larger: 413)")
    s.add_argument("--max-unpacked-mb", type=_whole("--max-unpacked-mb"), default=50,
                   metavar="MB", help="most an archive may unpack to, in MiB (default: "
                   "%(default)s; more: 400)")
    s.add_argument("--max-files", type=_whole("--max-files"), default=2000, metavar="N",
                   help="most entries in an archive (default: %(default)s; more: 400)")
    s.add_argument("--max-queued", type=_whole("--max-queued"), default=100, metavar="N",
                   help="most submissions of one token queued or being graded (default: "
                   "%(default)s; more: 429)")
    s.add_argument("--rate-limit", type=_whole("--rate-limit"), default=600, metavar="N",
                   help="most requests of one token in a minute (default: %(default)s; more: "
                   "429 with Retry-After)")
    s.add_argument("--threads", type=_whole("--threads"), default=8, metavar="N",
                   help="the web server's threads (default: %(default)s)")
    s.add_argument("--slurm", action="store_true",
                   help="grade each submission as a Slurm job (sbatch) instead of on this "
                   "machine, which needs no GPU then")
    s.add_argument("--partition", help="Slurm partition of the jobs (--slurm)")
    s.add_argument("--account", help="Slurm account of the jobs (--slurm)")
    s.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                   help="one more sbatch argument (--slurm; repeatable, e.g. "
                   "--sbatch-arg=--qos=class)")
    s.add_argument("--time", type=_whole("--time"), metavar="MINUTES",
                   help="each job's Slurm time limit (--slurm; default: three times a full "
                   "grade measured on an H100, as batch --slurm)")
    s.add_argument("--scratch", metavar="DIR", help="node-local folder the jobs build in "
                   "(--slurm; default: $SLURM_TMPDIR, else $TMPDIR, else /tmp)")
    s.add_argument("--poll", type=float, metavar="SECONDS",
                   help="how often the scheduler is asked how the jobs go (--slurm; default 10)")

    t = sub.add_parser("serve-token", help="instructors: add, list or revoke the grading "
                       "service's tokens",
                       description="Each platform of each course calls the grading service "
                       "with a token of its own. 'add' prints a new token once (the service "
                       "keeps only a salted hash of it); 'list' shows them; 'revoke' refuses "
                       "a token from then on (403).")
    actions = t.add_subparsers(dest="action", required=True, metavar="ACTION",
                               help="add, list or revoke")
    add = actions.add_parser("add", help="make a token and print it once")
    add.add_argument("--name", required=True, help="the token's name, e.g. the platform: "
                     "gradescope, prairielearn, classroom")
    add.add_argument("--course", default="course", help="the course it grades for: a token "
                     "reads only its course's submissions (default: %(default)s)")
    _data_flag(add)
    listed = actions.add_parser("list", help="list the tokens (never the tokens themselves)")
    _data_flag(listed)
    revoke = actions.add_parser("revoke", help="refuse a token from now on")
    revoke.add_argument("--name", required=True, help="the token's name")
    _data_flag(revoke)


# ------------------------------------------------------------------------------ serve-token

def cmd_serve_token(args) -> int:
    store = Store(_data_folder(args.data) / "service.db")
    if args.action == "add":
        token = tokens.create(store, args.name, args.course)
        print(token)
        print(f"grader: token {args.name!r} for course {args.course!r} made; it is shown this "
              "once only: give it to the platform now (Authorization: Bearer <token>)",
              file=sys.stderr)
        return 0
    if args.action == "revoke":
        if not store.revoke(args.name):
            raise GraderError(f"no token named {args.name!r} to revoke ('serve-token list' "
                              "shows them)")
        print(f"grader: token {args.name!r} revoked: it is refused from now on (403)",
              file=sys.stderr)
        return 0
    rows = store.tokens()
    if not rows:
        print("no tokens yet: python3 -m grader serve-token add --name NAME")
    for row in rows:
        state = f"revoked {row.revoked_at}" if row.revoked_at else "active"
        print(f"{row.name:<20} course {row.course:<16} made {row.created_at}  "
              f"last used {row.last_used_at or 'never'}  {state}")
    return 0


# ------------------------------------------------------------------------------ serve

def _data_folder(given: Path) -> Path:
    data = given.resolve()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GraderError(f"--data {given}: cannot make it ({error.strerror})") from None
    if not os.access(data, os.W_OK | os.X_OK):
        raise GraderError(f"--data {given} cannot be written")
    return data


def _lock(data: Path):
    """One service per --data: flock on DATA/service.lock, released when the process ends."""
    handle = (data / "service.lock").open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        who = handle.read().strip() or "another process"
        raise GraderError(f"--data {data} is in use by another grading service ({who}); "
                          "one service per folder: stop it, or give another --data") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"process {os.getpid()}\n")
    handle.flush()
    return handle


def _framework():
    try:
        import flask
        import waitress
    except ImportError as error:
        raise GraderError(f"serve needs Flask and Waitress ({error.name} is not installed): "
                          f"pip install {NEEDS.replace(' and ', ' ')} (requirements.txt; "
                          "'. scripts/setup.sh' installs them into .venv)") from None
    return flask, waitress


def _check_options(args) -> None:
    if not args.slurm:
        given = [f"--{name.replace('_', '-')}" for name in SLURM_ONLY if getattr(args, name)]
        if given:
            raise GraderError(f"{given[0]} is for grading through Slurm: add --slurm")
    if args.poll is not None and not args.poll > 0:
        raise GraderError("--poll takes a number of seconds above 0")


def _mode(args) -> tuple[Mode, list]:
    """Where the jobs go, and the GPUs of the local workers."""
    if args.slurm:
        if shutil.which("sbatch") is None:
            raise GraderError("sbatch not found: serve --slurm submits each grade with the "
                              "Slurm client commands; run it on a login node of the cluster")
        return Mode.SLURM, []
    if args.build_only:
        return Mode.BUILD_ONLY, []
    gpus = tools.list_gpus()
    if not gpus:
        raise GraderError("no NVIDIA GPU found (nvidia-smi lists none): the service grades on "
                          "this machine's GPUs; use --slurm to grade on a cluster, or "
                          "--build-only to only compile")
    if not args.no_sandbox:
        sandbox.check_kernel(sandbox.Mode.REQUIRED)
    return Mode.GPU, gpus


def cmd_serve(args) -> int:
    _check_options(args)
    _, waitress = _framework()
    from grader.service.app import create_app
    from grader.service.submissions import Service

    mode, gpus = _mode(args)
    data = _data_folder(args.data)
    held = _lock(data)
    store = Store(data / "service.db")
    again = workers.recover(store, data, mode)
    limits = Limits(max_upload_bytes=args.max_upload_mb * MiB,
                    max_unpacked_bytes=args.max_unpacked_mb * MiB, max_files=args.max_files,
                    max_queued=args.max_queued, requests_per_minute=args.rate_limit)
    settings = GradeSettings(build_only=args.build_only, hidden=args.hidden,
                             sandbox=not args.no_sandbox, timeout_s=float(args.grade_timeout))
    wake, stopping = threading.Event(), threading.Event()
    count = args.workers or (16 if mode == Mode.SLURM else len(gpus) or 1)
    threads = _backend(args, mode, gpus, count, store, data, settings, wake, stopping)
    service = Service(data, store, limits, manifest.discover(ROOT), mode, args.build_only,
                      count, wake)
    body_limit = limits.max_upload_bytes + 64 * 1024
    try:
        server = waitress.create_server(create_app(service), host=args.host, port=args.port,
                                        threads=args.threads, max_request_body_size=body_limit,
                                        inbuf_overflow=body_limit, ident="cuda-course")
    except OSError as error:
        raise GraderError(f"cannot listen on {args.host}:{args.port} ({error.strerror})") \
            from None
    for thread in threads:
        thread.start()
    _say(f"serving on http://{server.effective_host}:{server.effective_port} ({mode.value}, "
         f"{count} worker{'s' if count != 1 else ''}, data in {data})"
         + (f"; {len(again)} job{'s' if len(again) != 1 else ''} cut short by the last stop "
            "queued again" if again else ""))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        stopping.set()
        server.close()
        # Every running grade is told to stop at once; each gets its grace period together.
        stoppers = [threading.Thread(target=thread.stop) for thread in threads
                    if isinstance(thread, workers.LocalWorker)]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join()
        for thread in threads:
            thread.join(timeout=workers.STOP_GRACE_S + 5)
    held.close()
    _say("stopped; the jobs still queued or cut short are graded when it starts again")
    return 0


def _backend(args, mode, gpus, count, store, data, settings, wake, stopping) -> list:
    if mode == Mode.SLURM:
        from grader.service import slurm_backend
        from grader.slurm_scripts import SlurmSettings
        cluster = SlurmSettings(partition=args.partition, account=args.account,
                                sbatch_args=args.sbatch_arg)
        if args.scratch:
            cluster.scratch = args.scratch
        return [slurm_backend.SlurmBackend(store, data, settings, cluster,
                                           args.time or slurm_backend.default_minutes(settings),
                                           count, args.poll or 10.0, wake, stopping, _say)]
    return [workers.LocalWorker(i, gpus[i % len(gpus)] if gpus else None, store, data,
                                settings, wake, stopping) for i in range(count)]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _say(message: str) -> None:
    print(f"grader: {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ platforms calling a service

def add_client_flags(p: argparse.ArgumentParser) -> None:
    """gradescope-run and prairielearn-run: grade through a service instead of here."""
    p.add_argument("--service", metavar="URL",
                   help="send the submission to this grading service ('grader serve' on a GPU "
                   "machine, e.g. https://grading.example.edu) and write its grade: this "
                   "machine needs no GPU and no CUDA")
    p.add_argument("--service-token-file", type=Path, metavar="PATH",
                   help="the file holding the service's token (default: $COURSE_SERVICE_TOKEN)")
    p.add_argument("--service-wait", type=_whole("--service-wait"), metavar="SECONDS",
                   help="give up on the service's grade after this long, its queue included, "
                   "and say so in the results (default: 3600; PrairieLearn stops a job after "
                   "600 s at most)")


def service_grade(args, work: Path, names: list[str] = ()):
    """The grade function of a platform run with --service, else None. The token is read
    when the grade starts, so that a missing one is said in the platform's results."""
    for flag in ("service_token_file", "service_wait"):
        if getattr(args, flag) is not None and not args.service:
            raise GraderError(f"--{flag.replace('_', '-')} is for --service URL")
    if not args.service:
        return None
    if args.no_sandbox:
        raise GraderError("--no-sandbox is the grading service's own option (serve "
                          "--no-sandbox), not its clients'")
    from grader.service import client

    def grade(submission: Path):
        token = client.token_from(args.service_token_file)
        return client.grade_with_service(args.service, token, work, list(names),
                                         wait_s=float(args.service_wait or 3600),
                                         say=_say)(submission)
    return grade
