"""The sandbox student programs run in (grader/sandbox.py, support/sandbox/course_sandbox.cpp),
for real: the launcher is compiled here with the host compiler and run around shell programs
that try what a submission must not. CPU only; CUDA inside it is checked on a GPU (gpu_check's
fixtures). Where this machine has no Landlock or no user namespaces, the tests that need them
are skipped with the probe's reason, and the unavailable path is checked instead.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from grader import proc, sandbox
from grader.errors import GraderError
from helpers import ROOT

SOURCE = ROOT / "support" / "sandbox" / "course_sandbox.cpp"


@pytest.fixture(scope="module")
def launcher(tmp_path_factory) -> Path:
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("no C++ compiler to build the sandbox's launcher")
    out = tmp_path_factory.mktemp("launcher") / sandbox.LAUNCHER
    subprocess.run([compiler, "-std=c++17", "-O2", "-Wall", "-Werror", str(SOURCE), "-o",
                    str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def box(launcher) -> sandbox.Sandbox:
    found = sandbox.probe(launcher)
    assert found is not None, "the launcher's probe printed no JSON"
    if found["landlock_abi"] < 1 or not found["network_namespace"]:
        pytest.skip(f"this machine cannot give the sandbox: {found}")
    made = sandbox.prepare(sandbox.Mode.REQUIRED, launcher.parent)
    assert made.on and made.capabilities == found
    return made


def run_in(box: sandbox.Sandbox, scratch: Path, script: str, timeout_s: float = 30,
           env: dict | None = None) -> proc.ProcResult:
    scratch.mkdir(parents=True, exist_ok=True)
    return proc.run(box.wrap(["/bin/bash", "-c", script], scratch), timeout_s,
                    env={**os.environ, **(env or {})})


def test_probe_names_what_the_machine_allows(launcher):
    found = sandbox.probe(launcher)
    assert set(found) == {"landlock_abi", "user_namespace", "network_namespace", "pid_namespace"}
    assert found["landlock_abi"] == sandbox.landlock_abi()


def test_the_program_writes_its_scratch_folder_and_nothing_else(box, tmp_path):
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    outside.mkdir()
    result = run_in(box, scratch, f"""
        echo kept > {scratch}/result && mkdir {scratch}/sub && echo nested > {scratch}/sub/x
        echo planted > {outside}/planted 2>/dev/null && echo WROTE-OUTSIDE
        touch /tmp/course-sandbox-escape-$$ 2>/dev/null && echo WROTE-TMP
        echo done""")
    assert result.returncode == 0, result.output
    assert (scratch / "result").read_text() == "kept\n"
    assert (scratch / "sub" / "x").read_text() == "nested\n"
    assert "WROTE" not in result.output and result.output.strip().endswith("done")
    assert not (outside / "planted").exists()


def test_the_course_other_submissions_and_secrets_cannot_be_read(box, tmp_path):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "solutions" / "vector_add.cu").write_text("the reference solution\n")
    other = tmp_path / "students" / "bob"
    other.mkdir(parents=True)
    (other / "vector_add.cu").write_text("bob's work\n")
    result = run_in(box, tmp_path / "scratch", f"""
        cat {course}/solutions/vector_add.cu; cat {other}/vector_add.cu; ls {tmp_path}
        cat /etc/shadow; ls /root; ls {ROOT}
        cat /usr/include/stdio.h > /dev/null && echo SYSTEM-READABLE""")
    for leaked in ("the reference solution", "bob's work", "root:"):
        assert leaked not in result.output, result.output
    assert result.output.count("Permission denied") == 6, result.output
    assert "SYSTEM-READABLE" in result.output  # the libraries and headers CUDA needs


def host_listener():
    """A TCP server on the host's loopback, and accepted(): what connected to it, asked once
    the program has ended. A connect() that got through returned only after the handshake had
    put the connection in the server's queue, so the queue holds it by then; nothing is left
    to wait for (a thread waiting 5 s for a connection that never comes was most of the
    test's time)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def accepted() -> list:
        server.settimeout(0.5)
        return [_accept(server)]
    return server, server.getsockname()[1], accepted


def test_no_network_not_even_the_hosts_loopback(box, tmp_path):
    server, port, accepted = host_listener()
    result = run_in(box, tmp_path / "scratch",
                    f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo CONNECTED; "
                    "(exec 3<>/dev/tcp/192.0.2.1/80) && echo CONNECTED-OUT; true", timeout_s=20)
    got = accepted()
    server.close()
    assert "CONNECTED" not in result.output, result.output
    assert "Network is unreachable" in result.output
    assert got == [None]


def test_a_profiler_run_has_its_own_loopback_and_still_no_network(box, tmp_path):
    """--profiler (Nsight Compute inside, talking to its program over 127.0.0.1): a loopback of
    the sandbox's own is up; the host's loopback and the world stay out of reach."""
    server, port, accepted = host_listener()
    profiler = dataclasses.replace(box, profiler=True)
    inside = ("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1); "
              "c = socket.create_connection(s.getsockname(), timeout=5); print('OWN-LOOPBACK')")
    result = run_in(profiler, tmp_path / "scratch",
                    f"/usr/bin/python3 -c \"{inside}\"; "
                    f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo CONNECTED-HOST; "
                    "(exec 3<>/dev/tcp/192.0.2.1/80) && echo CONNECTED-OUT; true", timeout_s=20)
    got = accepted()
    server.close()
    assert "OWN-LOOPBACK" in result.output, result.output
    assert "CONNECTED-HOST" not in result.output and "CONNECTED-OUT" not in result.output
    assert got == [None]
    assert "--profiler" in profiler.wrap(["true"], tmp_path) and \
        "--profiler" not in box.wrap(["true"], tmp_path)


def test_unix_sockets_in_the_usual_folders_are_out_of_reach(box, tmp_path):
    # A socket named in the file system (a container engine's, another user's tmux) can be
    # connected to whatever Landlock says of files; /tmp, /run and the like get an empty file
    # system of their own. The scratch folder lives in the build directory, as the grader's do.
    python = Path("/usr/bin/python3")
    if not python.is_file() or not box.capabilities.get("pid_namespace"):
        pytest.skip("needs /usr/bin/python3 and a mount namespace")
    scratch = ROOT / "build" / f"test-sandbox-{os.getpid()}"
    # A hidden folder that does not hold the scratch folder (a course under /tmp keeps /tmp).
    folder = next((Path(f) for f in ("/tmp", "/var/tmp", "/dev/shm", "/run")
                   if os.access(f, os.W_OK) and not str(scratch).startswith(f + "/")), None)
    if folder is None:
        pytest.skip("no writable folder of sockets apart from the scratch folder's")
    sockets = Path(tempfile.mkdtemp(dir=folder))
    path = sockets / "engine.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        result = proc.run(box.wrap([str(python), "-c",
                                    "import socket; s = socket.socket(socket.AF_UNIX); "
                                    f"s.connect({str(path)!r}); print('CONNECTED')"],
                                   sandbox.fresh_folder(scratch)), 30)
    finally:
        server.close()
        sandbox.remove(scratch)
        shutil.rmtree(sockets, ignore_errors=True)
    assert "CONNECTED" not in result.output
    assert "FileNotFoundError" in result.output, result.output


def _accept(server: socket.socket):
    try:
        connection, _ = server.accept()
        connection.close()
        return "accepted"
    except OSError:
        return None


def test_other_processes_are_out_of_sight_and_reach(box, tmp_path):
    if not box.capabilities.get("pid_namespace"):
        pytest.skip("no PID namespace on this machine")
    marker = subprocess.Popen(["sleep", "60"])
    try:
        result = run_in(box, tmp_path / "scratch", f"""
            ls /proc | grep -E '^[0-9]+$' | wc -l
            kill -0 {os.getpid()} 2>/dev/null && echo SEES-GRADER
            kill -TERM {marker.pid} 2>/dev/null && echo SIGNALLED
            cat /proc/{os.getpid()}/cmdline 2>/dev/null && echo READ-CMDLINE
            true""")
        assert marker.poll() is None, "the sandboxed program killed a process outside"
    finally:
        marker.kill()
        marker.wait()
    lines = result.output.split()
    assert int(lines[0]) <= 5, result.output  # init, the shell and its pipeline only
    for escaped in ("SEES-GRADER", "SIGNALLED", "READ-CMDLINE"):
        assert escaped not in result.output


def test_exit_status_and_signals_come_through_unchanged(box, tmp_path):
    assert run_in(box, tmp_path / "a", "exit 7").returncode == 7
    crashed = run_in(box, tmp_path / "b", "kill -SEGV $$")
    assert crashed.returncode == -signal.SIGSEGV and crashed.signal_name == "SIGSEGV"
    aborted = run_in(box, tmp_path / "c", "kill -ABRT $$")
    assert aborted.signal_name == "SIGABRT"
    missing = proc.run(box.wrap(["/no/such/program"], tmp_path / "a"), 10)
    assert missing.returncode == 125 and "/no/such/program" in missing.output


def test_a_hanging_program_and_what_it_started_end_at_the_time_limit(box, tmp_path):
    started = time.monotonic()
    result = run_in(box, tmp_path / "scratch",
                    "(sleep 300 &) ; setsid sleep 301 & echo started; sleep 302", timeout_s=2)
    assert result.timed_out and time.monotonic() - started < 15
    time.sleep(0.5)
    survivors = subprocess.run(["pgrep", "-f", "sleep 30[12]"], capture_output=True, text=True)
    assert survivors.stdout.strip() == "", "processes outlived the sandboxed program"


def test_files_are_limited_in_size(box, tmp_path):
    result = run_in(box, tmp_path / "scratch",
                    f"head -c {(sandbox.FILE_SIZE_LIMIT_MIB + 1) << 20} /dev/zero "
                    f"> {tmp_path}/scratch/big; echo status $?")
    assert "status 0" not in result.output
    assert (tmp_path / "scratch" / "big").stat().st_size <= sandbox.FILE_SIZE_LIMIT_MIB << 20


def test_a_required_sandbox_that_cannot_be_had_is_one_clear_error(tmp_path):
    with pytest.raises(GraderError, match="no sandbox for student programs: the launcher "
                       "course_sandbox did not build; .*--no-sandbox"):
        sandbox.prepare(sandbox.Mode.REQUIRED, tmp_path)
    auto = sandbox.prepare(sandbox.Mode.AUTO, tmp_path)
    assert auto.status == sandbox.Status.UNAVAILABLE
    assert auto.wrap(["prog", "x"], tmp_path) == ["prog", "x"]
    assert auto.describe() == "sandbox: unavailable (the launcher course_sandbox did not build)"
    assert sandbox.prepare(sandbox.Mode.OFF, tmp_path).record() == {"status": "off",
                                                                     "reason": "--no-sandbox"}


def test_a_kernel_without_landlock_is_refused_before_any_work(monkeypatch):
    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 0)
    with pytest.raises(GraderError, match="this kernel has no Landlock"):
        sandbox.check_kernel(sandbox.Mode.REQUIRED)
    sandbox.check_kernel(sandbox.Mode.AUTO)  # grade goes on, and its report says so


def test_fresh_folder_replaces_whatever_a_program_planted(tmp_path):
    target = tmp_path / "tests"
    (target / "nonce" / "deeper").mkdir(parents=True)  # a folder where a file goes
    (target / "events").symlink_to("/etc/passwd")
    os.chmod(target / "nonce", 0o500)
    sandbox.fresh_folder(target)
    assert list(target.iterdir()) == []
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    sandbox.fresh_folder(link)
    assert link.is_dir() and not link.is_symlink() and (tmp_path / "elsewhere").is_dir()
    assert not sandbox.regular_file(tmp_path / "missing")
    (tmp_path / "f").write_text("x")
    assert sandbox.regular_file(tmp_path / "f") and not sandbox.regular_file(link)
    os.chmod(tmp_path, 0o700)


def test_wrap_gives_the_program_its_scratch_and_the_toolkit(box, tmp_path):
    command = box.wrap([str(Path("/bin/true")), "--flag"], tmp_path)
    assert command[0] == str(box.launcher)
    assert command[command.index("--write") + 1] == str(tmp_path)
    reads = [command[i + 1] for i, a in enumerate(command) if a == "--read"]
    assert "/bin/true" in reads and set(box.readable) <= set(reads)
    assert command[command.index("--"):] == ["--", "/bin/true", "--flag"]
    assert json.loads(json.dumps(box.record()))["status"] == "on"
