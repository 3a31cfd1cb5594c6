"""Stand-ins for the programs the grader drives, so the pipeline can be tested without a GPU.

Each fake is a small Python script with a shebang, made executable in a temporary directory,
reading its behaviour from a JSON file beside it (<script>.json):

* fake_gtest: imitates a GoogleTest binary built with support/src/gpu_test_main.cpp:
  --gtest_list_tests, --gtest_filter, the run nonce taken from $COURSE_NONCE_FILE, one JSON
  line per case start and end and a last "finished" line on $COURSE_EVENTS, all carrying the
  nonce, GoogleTest's premature-exit file $TEST_PREMATURE_EXIT_FILE, exit 77 without a GPU,
  and misbehaviour on demand per case ("action") or for the whole run.
* fake_bench: imitates a course benchmark binary (--json PATH, the nonce and "completed": true;
  with "sequence", one report per run in order).
* FakeProbe: a GPU load probe (grader/gpu_load.py) that answers from a script of looks.
* fake_ceilings: imitates a course ceilings program (--only KEYS --json PATH), logging its calls.
* fake_sanitizer: imitates compute-sanitizer (--tool, --error-exitcode, ERROR SUMMARY lines).
* fake_tool: a meson/ninja stand-in that prints a text and exits with a status.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

# -S: no site import (faster start), -u: unbuffered, so output printed just before a crash
# reaches the grader.
SHEBANG = f"#!{sys.executable} -Su\n"

# Both fakes take the run's nonce as the course's harness does (support/src/results.cpp):
# read the file COURSE_NONCE_FILE names, then delete it.
_TAKE_NONCE = r'''
import os
nonce = ""
if os.environ.get("COURSE_NONCE_FILE"):
    with open(os.environ["COURSE_NONCE_FILE"]) as f:
        nonce = f.read().strip()
    os.remove(os.environ["COURSE_NONCE_FILE"])
'''

_CROWD = r'''
# Parallel grading: a marker file in crowd_dir while this program runs, so that a program can
# tell whether others run beside it, and one line per start and end in the timeline log.
crowd = cfg.get("crowd_dir")
if crowd and not listing:
    me = os.path.join(crowd, str(os.getpid()))
    open(me, "w").close()
    import atexit
    atexit.register(lambda: os.path.exists(me) and os.remove(me))


def crowded():
    return bool(crowd) and any(n != str(os.getpid()) for n in os.listdir(crowd))


def timeline(event):
    if cfg.get("timeline") and not listing:
        with open(cfg["timeline"], "a") as f:
            f.write(json.dumps({"who": os.path.basename(__file__), "event": event,
                                "t": time.time(), "crowded": crowded(),
                                "sanitizer": os.environ.get("FAKE_SANITIZER_TOOL")}) + "\n")
'''

_GTEST = _TAKE_NONCE + r'''
import fnmatch, json, os, resource, signal, subprocess, sys, time

resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core files from the crash cases
here = os.path.abspath(__file__)
cfg = json.load(open(here + ".json"))
log = cfg.get("argv_log")
if log:
    with open(log, "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")

listing, flt = False, None
for a in sys.argv[1:]:
    if a == "--gtest_list_tests":
        listing = True
    elif a.startswith("--gtest_filter="):
        flt = a.split("=", 1)[1]



def matches(name):
    if not flt:
        return True
    pos, _, neg = flt.partition("-")
    ok = any(fnmatch.fnmatchcase(name, p) for p in (pos or "*").split(":") if p)
    return ok and not any(fnmatch.fnmatchcase(name, p) for p in neg.split(":") if p)


cases = [c for c in cfg["cases"] if matches(c["name"])]
under_sanitizer = "FAKE_SANITIZER_TOOL" in os.environ
if "GTEST_TOTAL_SHARDS" in os.environ and not listing:  # GoogleTest's sharding: round robin
    total, index = int(os.environ["GTEST_TOTAL_SHARDS"]), int(os.environ["GTEST_SHARD_INDEX"])
    cases = [c for i, c in enumerate(cases) if i % total == index]

''' + _CROWD + r'''timeline("start")

if listing:  # like GoogleTest, the listing includes DISABLED_ cases that match the filter
    suite = None
    for c in cases + [{"name": d} for d in cfg.get("disabled", []) if matches(d)]:
        s, n = c["name"].split(".", 1)
        if s != suite:
            print(s + "." + ("  # TypeParam = float" if s.startswith("Typed") else ""))
            suite = s
        print("  " + n + ("  # GetParam() = 7" if "/" in n else ""))
    sys.exit(cfg.get("list_exit", 0))

if cfg.get("no_gpu"):
    print("SKIPPED: no CUDA device here (cudaErrorNoDevice); these tests need a GPU.")
    sys.exit(77)

print("course seed: %s (rerun with COURSE_SEED=%s)" % (os.environ.get("COURSE_SEED"),
                                                       os.environ.get("COURSE_SEED")))
# A submission planting folders where the grader's files go (paths relative to this run's
# scratch folder, the folder of COURSE_EVENTS), as code with the grader's rights could; in the
# tests stage's run, for the runs after it.
for planted in [] if under_sanitizer else cfg.get("plant", []):
    os.makedirs(os.path.join(os.path.dirname(os.environ["COURSE_EVENTS"]), planted),
                exist_ok=True)
premature = os.environ.get("TEST_PREMATURE_EXIT_FILE") if cfg.get("premature", True) else None
if premature:
    open(premature, "w").close()
events = open(os.environ["COURSE_EVENTS"], "w") if os.environ.get("COURSE_EVENTS") else None


def emit(obj, signed=True):
    if events:
        events.write(json.dumps(dict(obj, nonce=nonce) if signed else obj) + "\n")
        events.flush()


# A submission forging results: lines on stdout and, without the nonce, on the stream.
for line in cfg.get("forge", []):
    print(json.dumps(line))
    emit(line, signed=False)


def flood(total):
    block = (b"x" * 1023 + b"\n") * 1024
    os.write(1, b"FLOOD-BEGIN\n")
    written = 0
    while written < total:
        os.write(1, block)
        written += len(block)
    os.write(1, b"\nFLOOD-END\n")


def failure_kinds(failures):
    """What the test main says of a failure (support/src/gpu_test_main.cpp, failure_kinds)."""
    kinds = set()
    for m in failures:
        if "device memory leaked" in m:
            kinds.add("device_memory_leaked")
        if any(s in m for s in ("out of memory", "cudaErrorMemoryAllocation", "std::bad_alloc",
                                "Cannot allocate memory")):
            kinds.add("out_of_memory")
    return sorted(kinds)


done = []
dropped = cases[len(cases) - cfg.get("drop", 0):] if cfg.get("drop") else []
for c in cases:
    name = c["name"]
    if c in dropped:  # results missing from the stream
        continue
    emit({"event": "start", "case": name})
    print("[ RUN      ] " + name)
    action = c.get("action_under_sanitizer") if under_sanitizer else c.get("action")
    if action == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == "abort":
        os.abort()
    elif action == "hang":
        time.sleep(3600)
    elif action == "hang_ignoring_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    elif action == "exit":
        os._exit(c.get("code", 0))
    elif action == "stop_if_limited":  # the test main's watchdog on a case that never ends
        limit = os.environ.get("COURSE_CASE_LIMIT_S")
        if limit is None:
            time.sleep(3600)
        emit({"event": "stopped", "case": name, "limit_s": float(limit)})
        os._exit(3)
    elif action == "torn":
        if events:
            events.write('{"event":"end","case":"' + name[:3])
            events.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "flood":
        flood(c.get("bytes", 1 << 20))
    elif action == "sleep":
        time.sleep(c.get("seconds", 0.3))
    elif action == "fail_when_crowded":  # as a test that runs out of memory among others
        # Fails once another program is seen within its `seconds`, whenever in them: a check
        # only at the end missed neighbours that a loaded machine started or ended early.
        deadline = time.time() + c.get("seconds", 0.3)
        while not crowded() and time.time() < deadline:
            time.sleep(0.02)
        if crowded():
            c = dict(c, status="failed", message="out of memory: others ran beside it")
    elif action == "child_hang":
        # a grandchild that keeps stdout (the grader's pipe) open and outlives this process
        child = subprocess.Popen([sys.executable, "-Sc", "import time; time.sleep(3600)"])
        with open(c["pid_file"], "w") as f:
            f.write(str(child.pid))
    status = c.get("status_under_sanitizer", c.get("status", "passed")) if under_sanitizer \
        else c.get("status", "passed")
    failures = [c.get("message", "expected equality")] if status == "failed" else []
    for m in failures:
        print(m)
    print("[ %8s ] %s (1 ms)" % ("OK" if status == "passed" else status.upper(), name))
    emit({"event": "end", "case": name, "status": status, "ms": 1, "failures": failures,
          "failure_kinds": c.get("kinds", failure_kinds(failures))})
    done.append((name, status, failures))

if cfg.get("launched"):  # the test main's record of kernels launched (launch_record.cpp)
    emit({"event": "launched", "kernels": cfg["launched"]})
timeline("end")
if cfg.get("report", "ok") == "ok":
    emit({"event": "finished", "passed": sum(st == "passed" for _, st, _ in done)})
if premature:
    os.remove(premature)
if cfg.get("after_exit_child"):
    subprocess.Popen([sys.executable, "-Sc", "import time; time.sleep(3600)"])
sys.exit(cfg.get("exit", 1 if any(s == "failed" for _, s, _ in done) else 0))
'''

_BENCH = _TAKE_NONCE + r'''
import json, os, sys, time
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
listing = False

''' + _CROWD + r'''timeline("start")
time.sleep(cfg.get("seconds", 0))
timeline("end")
if cfg.get("argv_log"):
    with open(cfg["argv_log"], "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")
path = sys.argv[sys.argv.index("--json") + 1]
print(cfg.get("print", "measurement  median ms  rate"))
if cfg.get("no_gpu"):
    sys.exit(77)
if cfg.get("hang"):
    time.sleep(3600)
if "raw" in cfg:
    open(path, "w").write(cfg["raw"])
elif "data" in cfg or "sequence" in cfg:
    if "sequence" in cfg:  # one report per run, in order, the last one repeated
        counter = os.path.abspath(__file__) + ".count"
        runs = int(open(counter).read()) if os.path.exists(counter) else 0
        open(counter, "w").write(str(runs + 1))
        data = dict(cfg["sequence"][min(runs, len(cfg["sequence"]) - 1)])
    else:
        data = dict(cfg["data"])
    if "nonce" not in data:  # a forging submission sets its own
        data["nonce"] = nonce
    open(path, "w").write(json.dumps(data))
sys.exit(cfg.get("exit", 0))
'''

_CEILINGS = _TAKE_NONCE + r'''
import json, os, sys, time
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
listing = False

''' + _CROWD + r'''timeline("start")
time.sleep(cfg.get("seconds", 0))
timeline("end")
args = sys.argv[1:]
with open(cfg["log"], "a") as f:
    f.write(json.dumps(args) + "\n")
keys = args[args.index("--only") + 1].split(",")
path = args[args.index("--json") + 1]
if cfg.get("crash"):
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)
rates = cfg.get("rates", {})
measurements = [{"name": key.split(":")[0], "key": key, "unit": cfg.get("unit", "GB/s"),
                 "work_per_run": cfg.get("work", 1e9), "median_ms": 1.0, "min_ms": 0.9,
                 "max_ms": 1.1, "repeats": 10, "rate": rates[key], "host_ms": 1.2,
                 "valid": rates[key] > 0, "problem": "" if rates[key] > 0 else "wrong output",
                 "elsewhere": False}
                for key in keys if key in rates]
data = {"schema": 1, "title": "fake ceilings", "nonce": cfg.get("nonce", nonce),
        "measurements": measurements, "requirements": [],
        "errors": ["no ceiling %s in this program" % key for key in keys if key not in rates],
        "completed": True}
open(path, "w").write(json.dumps(data))
'''

_SANITIZER = r'''
import json, os, subprocess, sys
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
args = sys.argv[1:]
with open(cfg["argv_log"], "a") as f:
    f.write(json.dumps(args) + "\n")
tool = args[args.index("--tool") + 1]
exitcode = int(args[args.index("--error-exitcode") + 1])
i = 0
while args[i].startswith("--"):
    i += 2
command = args[i:]
print("========= COMPUTE-SANITIZER")
if cfg.get("unsupported"):
    print("========= Error: Device not supported")
    sys.exit(1)
env = dict(os.environ, FAKE_SANITIZER_TOOL=tool)
rc = subprocess.call(command, env=env)
if cfg.get("refuses") == tool:  # as racecheck does with dynamic parallelism
    print("========= Warning: CUDA Dynamic Parallelism is not supported by the selected tool")
    print("========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)")
    sys.exit(exitcode)
errors = cfg.get("errors", {}).get(tool, 0)
for k in range(errors):
    print("========= Invalid __global__ write of size 4 bytes")
    print("=========     at vector_add_kernel(const float *, float *, int)+0x80")
# Like the real tool, leaks show only with --leak-check full and a destroyed context (the
# course's test main resets the device when COURSE_LEAK_CHECK=1).
leaked = cfg.get("leaked_bytes", 0)
if leaked and "--leak-check" in args and os.environ.get("COURSE_LEAK_CHECK") == "1":
    print("========= Leaked %d bytes at 0x7f0000000000" % leaked)
    print("========= LEAK SUMMARY: %d bytes leaked in 1 allocations" % leaked)
    errors += 1
if tool == "racecheck" and errors:
    print("========= RACECHECK SUMMARY: 1 hazard displayed (%d errors, 0 warnings)" % errors)
else:
    print("========= ERROR SUMMARY: %d error%s" % (errors, "" if errors == 1 else "s"))
if errors:
    sys.exit(exitcode)
sys.exit(rc if rc >= 0 else 128 - rc)
'''

_TOOL = r'''
import json, os, sys
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
if cfg.get("argv_log"):
    with open(cfg["argv_log"], "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")
sys.stdout.write(cfg.get("print", ""))
sys.exit(cfg.get("exit", 0))
'''


def write_script(path: Path, body: str, config: dict | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SHEBANG + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if config is not None:
        Path(str(path) + ".json").write_text(json.dumps(config), encoding="utf-8")
    return path


def fake_gtest(path: Path, cases: list, **config) -> Path:
    """cases: names ("Suite.case", passing) or dicts with name, status (passed | failed |
    skipped), message, kinds (the failure's kinds; by default those the test main would
    name for the message), action (segv | abort | hang | hang_ignoring_term | exit | torn | flood |
    child_hang), and *_under_sanitizer variants. config: report (ok, or missing: no
    "finished" line), drop (the last cases' results left out of the stream), forge (lines
    printed and written to the stream without the nonce), exit, no_gpu, premature (honour the
    premature-exit file, default true), list_exit, argv_log, disabled, after_exit_child."""
    cases = [{"name": c} if isinstance(c, str) else c for c in cases]
    return write_script(path, _GTEST, dict(config, cases=cases))


def fake_bench(path: Path, data: dict | None = None, **config) -> Path:
    if data is not None:
        config["data"] = data
    return write_script(path, _BENCH, config)


def fake_ceilings(path: Path, log: Path, rates: dict, **config) -> Path:
    """rates: key -> rate of the keys it measures (0: an invalid measurement); config: unit,
    work (per run), nonce (a wrong one), crash, and crowd_dir, timeline, seconds as the
    other fakes take them."""
    return write_script(path, _CEILINGS, dict(config, log=str(log), rates=rates))


def fake_sanitizer(path: Path, argv_log: Path, **config) -> Path:
    return write_script(path, _SANITIZER, dict(config, argv_log=str(argv_log)))


def fake_tool(path: Path, print_text: str = "", exit_code: int = 0, argv_log=None) -> Path:
    return write_script(path, _TOOL, {"print": print_text, "exit": exit_code,
                                      "argv_log": str(argv_log) if argv_log else None})


def bench_data(measure_rate: float = 900.0, baseline_rate: float = 1000.0, *,
               measure: str = "vector_add", baseline: str = "copy", valid: bool = True,
               problem: str = "", requirements=(), errors=(), completed: bool = True,
               drop: tuple = (), baseline_key: str = "") -> dict:
    """A benchmark report like support/src/bench.cu writes. With baseline_key the baseline is
    a shared ceiling recorded with that key and not timed (--ceilings-elsewhere)."""
    measurements = [
        {"name": baseline, "unit": "GB/s", "work_per_run": 1e9, "median_ms": 1.0,
         "rate": baseline_rate, "valid": True, "problem": "", "key": "", "elsewhere": False},
        {"name": measure, "unit": "GB/s", "work_per_run": 1e9, "median_ms": 1.1,
         "rate": measure_rate, "valid": valid, "problem": problem, "key": "",
         "elsewhere": False},
    ]
    if baseline_key:
        measurements[0].update(key=baseline_key, elsewhere=True, rate=0.0, median_ms=0.0)
    data = {"schema": 1, "title": "fake", "device": {"name": "Fake GPU", "cc": "9.0"},
            "measurements": [m for m in measurements if m["name"] not in drop],
            "requirements": [dict(r) for r in requirements],
            "errors": list(errors)}
    if completed:
        data["completed"] = True
    return data


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] not in ("Z", "X")


def python_command(code: str) -> list:
    return [sys.executable, "-Su", "-c", code]


_LINKING_NINJA = r'''
import json, os, sys, time
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
targets = [a for a in sys.argv[1:] if not a.startswith("-") and not os.path.isdir(a)
           and not a.isdigit()]
with open(cfg["timeline"], "a") as f:
    f.write(json.dumps({"who": "ninja", "event": "start", "t": time.time(),
                        "targets": targets}) + "\n")
failed = False
for k, target in enumerate(targets, 1):
    time.sleep(cfg["seconds_per_target"])
    print(f"[{k}/{len(targets)}] Linking target {target}", flush=True)
    if target in cfg["fail"]:
        failed = True
        print(f"FAILED: {target}\nc++ -o {target} {target}.p/main.o\nundefined reference",
              flush=True)
with open(cfg["timeline"], "a") as f:
    f.write(json.dumps({"who": "ninja", "event": "end", "t": time.time(),
                        "targets": targets}) + "\n")
sys.exit(1 if failed else 0)
'''


def linking_ninja(path: Path, timeline: Path, seconds_per_target: float,
                  fail: tuple = ()) -> Path:
    """A ninja that "links" the targets it is given one after another, seconds_per_target
    each, printing a step line as each ends (and "FAILED: <target>" after those in `fail`,
    exiting 1 then), and logs its start and end (with its targets) in the timeline."""
    return write_script(path, _LINKING_NINJA, {"timeline": str(timeline), "fail": list(fail),
                                               "seconds_per_target": seconds_per_target})


def use_fake_build_tools(monkeypatch, tmp_path, sanitizer: bool = True) -> dict:
    """Makes tools.find return stand-in meson and ninja (and a clean compute-sanitizer) made
    under tmp_path/bin, and nothing else; returns name -> path."""
    from grader import tools
    bin_dir = tmp_path / "bin"
    found = {"meson": fake_tool(bin_dir / "meson"), "ninja": fake_tool(bin_dir / "ninja")}
    if sanitizer:
        found["compute-sanitizer"] = fake_sanitizer(bin_dir / "compute-sanitizer",
                                                    tmp_path / "san.log")
    monkeypatch.setattr(tools, "find", lambda name, required_for="": str(found[name])
                        if name in found else None)
    clean_integrity(monkeypatch)
    return found


def clean_integrity(monkeypatch) -> None:
    """A fake build leaves no library to read: the integrity stage (tested on real objects in
    tests/test_integrity.py) finds nothing forbidden in it."""
    from grader.model import StageResult, StageStatus
    from grader.stages import integrity
    monkeypatch.setattr(integrity, "run", lambda options, ex: StageResult(
        "integrity", StageStatus.PASSED, message="calls nothing it must not (fake build)"))


class FakeProbe:
    """A grader.gpu_load probe: look() answers the scripted Looks in order (the last one
    repeated); active() answers `active` (a set of pids, or None: cannot tell)."""

    def __init__(self, looks, active=None):
        self.looks = list(looks)
        self.active_pids = active
        self.calls = 0

    def look(self):
        look = self.looks[min(self.calls, len(self.looks) - 1)]
        self.calls += 1
        return look

    def active(self, pids, since_s):
        return None if self.active_pids is None else set(self.active_pids) & set(pids)
