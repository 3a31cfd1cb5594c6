"""grader.proc.run: own process group, wall-clock limit, bounded output."""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import signal
import subprocess
import sys
import threading
import time

import pytest

from fakes import alive, python_command
from grader import proc

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template


def test_normal_exit_keeps_all_output():
    r = proc.run(python_command("print('hello'); print('world')"), 10)
    assert r.returncode == 0 and not r.timed_out and not r.truncated
    assert r.output == "hello\nworld\n"
    assert r.output_bytes == len(r.output)
    assert r.describe_exit() == "exit status 0"


def test_nonzero_exit_status():
    r = proc.run(python_command("import sys; sys.exit(3)"), 10)
    assert r.returncode == 3 and r.signal_name == ""
    assert r.describe_exit() == "exit status 3"


def test_signal_is_named():
    r = proc.run(python_command(
        "import os, resource, signal; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
        "print('before', flush=True); os.kill(os.getpid(), signal.SIGSEGV)"), 10)
    assert r.returncode == -signal.SIGSEGV
    assert r.signal_name == "SIGSEGV"
    assert r.describe_exit() == "killed by SIGSEGV"
    assert "before" in r.output


def test_program_that_cannot_start(tmp_path):
    r = proc.run([str(tmp_path / "no-such-binary")], 10)
    assert r.returncode is None and r.start_error
    assert r.describe_exit().startswith("could not start")


class FlakyPopen:
    """subprocess.Popen that fails with `error` the first `failures` times it is called."""

    def __init__(self, failures: int, error: int):
        self.failures, self.error, self.calls = failures, error, 0
        self.real = subprocess.Popen

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise OSError(self.error, os.strerror(self.error))
        return self.real(*args, **kwargs)


def test_a_start_that_fails_for_a_moment_is_tried_again(monkeypatch):
    flaky = FlakyPopen(failures=2, error=errno.EFAULT)
    monkeypatch.setattr(subprocess, "Popen", flaky)
    r = proc.run(python_command("print('ran')"), 10)
    assert r.returncode == 0 and r.output.strip() == "ran"
    assert flaky.calls == 3


def test_a_start_that_keeps_failing_is_reported_after_the_last_attempt(monkeypatch):
    flaky = FlakyPopen(failures=proc.START_ATTEMPTS, error=errno.EAGAIN)
    monkeypatch.setattr(subprocess, "Popen", flaky)
    r = proc.run(python_command("print('ran')"), 10)
    assert r.returncode is None and os.strerror(errno.EAGAIN) in r.start_error
    assert flaky.calls == proc.START_ATTEMPTS


def test_a_missing_program_is_not_tried_again(monkeypatch, tmp_path):
    flaky = FlakyPopen(failures=0, error=0)
    monkeypatch.setattr(subprocess, "Popen", flaky)
    r = proc.run([str(tmp_path / "no-such-binary")], 10)
    assert r.start_error and flaky.calls == 1


def test_stdin_is_closed():
    r = proc.run(python_command("import sys; print(repr(sys.stdin.read()))"), 10)
    assert r.output.strip() == "''"


def test_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-Sc', 'import time; time.sleep(3600)']); "
            f"open({str(pid_file)!r}, 'w').write(str(c.pid)); print('started', flush=True); "
            "time.sleep(3600)")
    started = time.monotonic()
    r = proc.run(python_command(code), 1.0, grace_s=1.0)
    elapsed = time.monotonic() - started
    assert r.timed_out
    assert "timed out after" in r.describe_exit()
    assert "started" in r.output
    assert 1.0 <= r.duration_s < 6 and elapsed < 8
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the grandchild survived the time-out"


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path):
    pid_file = tmp_path / "child.pid"
    code = ("import os, signal, subprocess, sys, time; "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "c = subprocess.Popen([sys.executable, '-Sc', 'import signal, time; "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)']); "
            f"open({str(pid_file)!r}, 'w').write(str(c.pid)); print('ready', flush=True); "
            "time.sleep(3600)")
    r = proc.run(python_command(code), 0.5, grace_s=0.5)
    assert r.timed_out
    assert r.returncode == -signal.SIGKILL
    assert r.duration_s < 5
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_child_holding_the_pipe_open_does_not_block(tmp_path):
    """The program exits at once but leaves a child with its stdout: run() must not wait for
    the child (it is in the same group and gets killed)."""
    pid_file = tmp_path / "child.pid"
    code = ("import subprocess, sys; "
            "c = subprocess.Popen([sys.executable, '-Sc', 'import signal, time; "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)']); "
            f"open({str(pid_file)!r}, 'w').write(str(c.pid)); print('parent done')")
    started = time.monotonic()
    r = proc.run(python_command(code), 30)
    assert time.monotonic() - started < 8
    assert r.returncode == 0 and not r.timed_out
    assert "parent done" in r.output
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_output_over_the_limit_keeps_head_and_tail_with_a_marker():
    code = ("import sys; sys.stdout.write('HEAD' + 'a' * 50000 + 'b' * 50000 + 'TAIL'); "
            "sys.stdout.flush()")
    r = proc.run(python_command(code), 10, output_limit=1000)
    assert r.truncated
    assert r.output_bytes == 100008
    assert r.output.startswith("HEAD" + "a" * 496)
    assert r.output.endswith("b" * 496 + "TAIL")
    assert "[... 99008 bytes of output cut ...]" in r.output
    assert len(r.output) < 1100


def test_huge_output_is_bounded_in_memory_and_time():
    total = 300 * 1024 * 1024
    code = ("import os; block = b'y' * (1 << 20); os.write(1, b'FIRST'); "
            f"[os.write(1, block) for _ in range({total >> 20})]; os.write(1, b'LAST')")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    r = proc.run(python_command(code), 60, output_limit=64 * 1024)
    elapsed = time.monotonic() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert r.returncode == 0 and r.truncated
    assert r.output_bytes == total + 9
    assert r.output.startswith("FIRST") and r.output.endswith("LAST")
    assert "bytes of output cut" in r.output
    assert len(r.output) < 64 * 1024 + 100
    assert elapsed < 30
    assert rss_after - rss_before < 64 * 1024  # KiB: far less than the 300 MB printed


def test_collector_keeps_exact_head_and_tail():
    rng = random.Random(7)
    data = bytes(rng.randrange(32, 127) for _ in range(20000))
    for limit in (1, 2, 99, 1000, 4096, 20000, 30000):
        c = proc._Collector(limit)
        pos = 0
        while pos < len(data):
            step = rng.randrange(1, 3000)
            c.add(data[pos:pos + step])
            pos += step
        text, truncated = c.text()
        head, tail = limit // 2, limit - limit // 2
        if limit >= len(data):
            assert not truncated and text == data.decode()
        else:
            assert truncated
            marker = f"\n[... {len(data) - limit} bytes of output cut ...]\n"
            assert text == data[:head].decode() + marker + (data[-tail:].decode() if tail else "")
        assert c.total == len(data)


def test_a_program_started_while_stop_all_runs_is_ended(monkeypatch, tmp_path):
    """A thread starts a program at the moment another thread's interrupt runs stop_all(),
    too late for its list of running programs: run() must end it, not supervise it to its
    time-out."""
    started = []
    real_popen = subprocess.Popen

    def popen_then_stop_all(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        proc.stop_all()  # lists the running programs before this one is registered
        return started[-1]

    monkeypatch.setattr(proc.subprocess, "Popen", popen_then_stop_all)
    clock = time.monotonic()
    try:
        with pytest.raises(proc.Stopped):
            proc.run(python_command("import time; time.sleep(30)"), 20)
    finally:
        proc.resume()
    assert time.monotonic() - clock < 10
    assert started[0].poll() is not None, "the program lives on"


def test_cancel_ends_a_run_long_before_its_time_limit():
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = proc.run([sys.executable, "-c", "import time; time.sleep(60)"], 60.0,
                      cancel=cancel)
    assert time.monotonic() - started < 10
    assert not result.timed_out and result.signal_name in ("SIGTERM", "SIGKILL")


def test_a_cancel_never_set_leaves_the_time_limit_in_charge():
    result = proc.run([sys.executable, "-c", "import time; time.sleep(60)"], 0.5,
                      cancel=threading.Event())
    assert result.timed_out and result.duration_s < 10


@pytest.mark.parametrize("cancel", [None, threading.Event()], ids=["plain", "cancellable"])
def test_without_a_pidfd_the_wait_still_ends_at_exit_and_at_the_limit(monkeypatch, cancel):
    """Kernels before 5.3 have no pidfd_open: the wait falls back to polling, same verdicts."""
    def no_pidfd(_pid):
        raise OSError("pidfd_open: function not implemented")
    monkeypatch.setattr(proc.os, "pidfd_open", no_pidfd)
    done = proc.run(python_command("print('out')"), 10, cancel=cancel)
    assert done.returncode == 0 and not done.timed_out and "out" in done.output
    late = proc.run([sys.executable, "-c", "import time; time.sleep(60)"], 0.5, cancel=cancel)
    assert late.timed_out and late.duration_s < 10


def test_the_wait_watches_the_program_through_a_pidfd(monkeypatch):
    """The exit is seen through the kernel's pidfd (no 50 ms polling), and the pidfd closed."""
    opened, closed = [], []
    real_open, real_close = proc.os.pidfd_open, proc.os.close
    monkeypatch.setattr(proc.os, "pidfd_open", lambda pid: opened.append(real_open(pid))
                        or opened[-1])
    monkeypatch.setattr(proc.os, "close", lambda fd: closed.append(fd) or real_close(fd))
    result = proc.run(python_command("pass"), 10)
    assert result.returncode == 0
    assert len(opened) == 1 and opened[0] in closed


def test_process_log_holds_one_line_per_program(tmp_path, monkeypatch):
    log = tmp_path / "processes.jsonl"
    monkeypatch.setenv(proc.PROCESS_LOG_ENV, str(log))
    before = time.time()
    proc.run(python_command("import time; time.sleep(0.2)"), 10)
    proc.run(python_command("import sys; sys.exit(3)"), 10)
    proc.run(python_command("import time; time.sleep(5)"), 0.3)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["returncode"] for line in lines[:2]] == [0, 3]
    assert [line["timed_out"] for line in lines] == [False, False, True]
    assert lines[0]["command"][-1] == "import time; time.sleep(0.2)"
    assert 0.2 <= lines[0]["duration_s"] < 5
    assert before - 1 < lines[0]["began"] <= lines[1]["began"] <= lines[2]["began"]


def test_no_process_log_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(proc.PROCESS_LOG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    proc.run(python_command("print('x')"), 10)
    assert list(tmp_path.iterdir()) == []


def test_student_programs_do_not_see_the_process_log(monkeypatch, tmp_path):
    from grader.stages.common import GradeOptions, program_env
    monkeypatch.setenv(proc.PROCESS_LOG_ENV, str(tmp_path / "processes.jsonl"))
    options = GradeOptions(root=tmp_path, submission=tmp_path, build_dir=tmp_path, seed=1)
    assert proc.PROCESS_LOG_ENV not in program_env(options)
