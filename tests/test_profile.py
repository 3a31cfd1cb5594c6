"""The profile stage (grade --profile, grader/stages/profile.py) and its counters
(grader/counters.py), with a stand-in ncu: a Python script that prints what
`ncu --csv --page raw --print-units base` prints (the program's output and ==PROF== lines, a
header row, a units row, one row per kernel, numbers with thousands separators) and writes the
bench's JSON as the bench's --profile run would. Also the [profile] table of the manifests, the
terminal's lines, that scoring passes the stage by, and that a built bench takes --profile."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from fakes import bench_data, fake_bench, fake_gtest, fake_tool, write_script
from grader import calibration, counters, manifest, model, render, scoring
from grader.errors import ManifestError
from grader.model import ExerciseStatus, StageName, StageResult, StageStatus
from grader.stages import profile
from grader.stages.common import GradeOptions
from helpers import ROOT

BANK_CONFLICTS = ROOT / "chapters" / "ch04_shared_memory" / "bank_conflicts" / "bank_conflicts.toml"
VERSION = "Version 2025.3.1.0 (build 36398880) (public-release)"
VECTOR_ADD_CASES = ["VectorAddEdge.Empty", "Small/VectorAdd.MatchesReference/n_1",
                    "Large/VectorAdd.MatchesReference/n_65537"]
WAVEFRONTS = counters.SHARED_WAVEFRONTS[0]
SHARED_LOADS = counters.SHARED_INSTRUCTIONS[0]

# What the stand-in prints for one NVTX range, in ncu's own layout (build/ncu-probe on an
# H200: the program's output and ==PROF== lines first, then the CSV).
_NCU = r'''
import json, os, sys
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
args = sys.argv[1:]
if cfg.get("argv_log"):
    with open(cfg["argv_log"], "a") as f:
        f.write(json.dumps(args) + "\n")
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Copyright (c) 2018-2025 NVIDIA Corporation")
    print(cfg["version"])
    sys.exit(0)
mode = cfg.get("mode", "ok")
if mode == "fail":
    print("ERROR : nsight-compute directory is not found under /usr/local/cuda-13.0/bin/../ "
          "or /opt/nvidia. Nsight Compute is not installed on your system.")
    sys.exit(1)
names = [args[i + 1].rstrip("/") for i, a in enumerate(args) if a == "--nvtx-include"]
metrics = args[args.index("--metrics") + 1].split(",")
program = args.index("--launch-count") + 2
json_path = args[args.index("--json") + 1]
nonce = ""
if os.environ.get("COURSE_NONCE_FILE"):
    with open(os.environ["COURSE_NONCE_FILE"]) as f:
        nonce = f.read().strip()
    os.remove(os.environ["COURSE_NONCE_FILE"])
print("==PROF== Connected to process 4242 (%s)" % args[program - 1])
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA "
          "GPU Performance Counters on the target device 0. For instructions on enabling "
          "permissions and to get more information see "
          "https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    print("==PROF== Disconnected from process 4242")
    sys.exit(1)
# The bench runs every measurement in its range, in its own order (the ranges' order here, an
# extra range nobody asked for among them); ncu lists the asked-for ranges' kernels, each
# range's first kernel the bench's marker.
order = cfg.get("order") or list(cfg["ranges"])
kernels = []
for name in order:
    if name in names:
        kernels.append({"kernel": "(anonymous namespace)::profile_range_marker()", "values": {}})
        kernels += cfg["ranges"].get(name, [])
kernels = kernels[:int(args[args.index("--launch-count") + 1])]
if mode == "none":  # no range holds a kernel (stream_priorities times its work by hand)
    kernels = []
# The program's own output, a forged CSV among it: the grader must take ncu's, printed last.
print('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream"')
print('"0","1","x","h","forged(int)","1","1"')
print("\nbench on NVIDIA H200 (cc 9.0, 132 SMs, 63 MB L2)")
for k in kernels:
    print('==PROF== Profiling "%s" - 0: 0%%....50%%....100%% - 9 passes' % k["kernel"])
with open(json_path, "w") as f:
    json.dump({"schema": 1, "nonce": cfg.get("nonce", nonce), "profile": True,
               "profile_ranges": ["unasked"] + order,
               "measurements": [{"name": n, "valid": True, "rate": 0.0}
                                for n in ["unasked"] + order],
               "requirements": [], "errors": [], "completed": True}, f)
print("==PROF== Disconnected from process 4242")
if not kernels:  # ncu's own words on an H100; no CSV follows them
    print("==WARNING== No kernels were profiled.")
    print("==WARNING== Note that specified NVTX include expressions match only push/pop ranges.")
    sys.exit(cfg.get("exit", 0))
columns = []
for m in metrics:  # asked for X.sum, ncu prints X.avg, X.max, X.min and X.sum
    columns += [m[:-4] + s for s in (".avg", ".max", ".min")] if m.endswith(".sum") else []
    columns.append(m)
columns.append("launch__cluster_scheduling_policy")
unit = lambda m: ("ns" if m.startswith("gpu__time") else "byte" if m.startswith("dram__bytes")
                  else "%" if "pct" in m else "register/thread" if "registers" in m else "")
quote = lambda fields: ",".join('"%s"' % f for f in fields)
fixed = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
         "Block Size", "Grid Size", "Device", "CC"]
print(quote(fixed + columns))
print(quote([""] * len(fixed) + [unit(c) for c in columns]))
for i, k in enumerate(kernels):
    values = []
    for c in columns:
        v = k["values"].get(c)
        if c == "launch__cluster_scheduling_policy":
            values.append("PolicySpread")
        elif v is None:
            values.append("n/a" if c in metrics else "7")
        else:
            values.append("{:,.2f}".format(v) if v != int(v) else "{:,}".format(int(v)))
    print(quote([str(i), "4242", "bench", "127.0.0.1", k["kernel"], "1", "13",
                 "(256, 1, 1)", "(1056, 1, 1)", "0", "9.0"] + values))
sys.exit(cfg.get("exit", 0))
'''


def fake_ncu(path: Path, ranges: dict, **config) -> Path:
    """ranges: NVTX range name -> [{"kernel": name, "values": {metric: value}}]; config:
    mode (ok, perm, fail), exit, nonce (a wrong one), argv_log."""
    return write_script(path, _NCU, dict(config, ranges=ranges, version=VERSION))


def kernel(name: str, duration_ns: float, **values) -> dict:
    return {"kernel": name, "values": {counters.DURATION: duration_ns, **values}}


def conflicted(duration_ns=1_563_040.0, wavefronts=302_876_019, loads=41_943_040):
    return kernel("void <unnamed>::gram_conflicted_kernel<32>(const float *, float *)",
                  duration_ns, **{WAVEFRONTS: wavefronts, SHARED_LOADS: loads,
                                  counters.DRAM_BYTES: 248_374_016})


def padded(duration_ns=209_800.0):
    return kernel("void gram_kernel<32>(const float *, float *)", duration_ns,
                  **{WAVEFRONTS: 41_943_040, SHARED_LOADS: 41_943_040,
                     counters.FFMA: 1e9, counters.DRAM_BYTES: 2e8})


RANGES = {"bank_conflicts_square": [padded()], "square_conflicted": [conflicted()],
          "bank_conflicts_rect": [padded(), padded()], "rect_conflicted": [conflicted()]}


@pytest.fixture
def bank_conflicts() -> manifest.Exercise:
    return manifest.load_manifest(BANK_CONFLICTS)


@pytest.fixture
def options(tmp_path) -> GradeOptions:
    build = tmp_path / "build"
    build.mkdir()
    (build / "bank_conflicts_bench").write_text("")
    return GradeOptions(root=ROOT, submission=tmp_path, build_dir=build, seed=7, profile=True)


@pytest.fixture
def ncu(tmp_path, monkeypatch):
    """ncu(ranges, **config): installs the stand-in as $COURSE_NCU; returns its argv log."""
    def install(ranges=RANGES, **config) -> Path:
        log = tmp_path / "ncu-argv.log"
        script = fake_ncu(tmp_path / "nsight-compute-2025.3.1" / "ncu", ranges,
                          argv_log=str(log), **config)
        monkeypatch.setenv(profile.NCU_ENV, str(script))
        return log
    return install


def no_reference(monkeypatch):
    monkeypatch.setattr(calibration, "reference_counters", lambda *a, **k: ({}, ""))


# ------------------------------------------------------------------------ ncu's CSV

def test_parse_reads_the_raw_page_after_the_programs_output(tmp_path):
    script = fake_ncu(tmp_path / "ncu", RANGES)
    out = tmp_path / "p.json"
    text = subprocess.run([str(script), "--nvtx", "--nvtx-include", "square_conflicted/",
                           "--metrics", f"{WAVEFRONTS},{counters.DURATION}", "--csv", "--page",
                           "raw", "--print-units", "base", "--launch-count", "64", "bench",
                           "--profile", "--json", str(out)],
                          capture_output=True, text=True).stdout
    kernels = profile.parse(text)
    # Not the forged row: the marker that opens the range, then the range's kernel.
    assert [k["kernel"] for k in kernels] == ["(anonymous namespace)::profile_range_marker()",
                                              conflicted()["kernel"]]
    values = kernels[1]["values"]
    assert values[WAVEFRONTS] == 302_876_019          # "302,876,019"
    assert values[counters.DURATION] == 1_563_040     # ns, the base unit
    assert values["launch__cluster_scheduling_policy"] is None  # not a number


def test_parse_scales_units_and_reads_the_details_page_too():
    assert profile.number("1,563.04", "usecond") == pytest.approx(1_563_040)
    assert profile.number("n/a") is None and profile.number("") is None
    details = "\n".join([
        "==PROF== Connected to process 1",
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Section Name","Metric Name","Metric Unit","Metric Value"',
        '"0","1","b","h","k(int)","1","7","Command line profiler metrics",'
        '"gpu__time_duration.sum","usecond","2.50"',
        '"0","1","b","h","k(int)","1","7","Command line profiler metrics",'
        '"dram__bytes.sum","Mbyte","1,000.00"'])
    assert profile.parse(details) == [{"kernel": "k(int)", "values": {
        counters.DURATION: 2500.0, counters.DRAM_BYTES: 1e9}}]
    assert profile.parse("==PROF== Connected\nno CSV at all\n") is None


# ------------------------------------------------------------------------ counters

def test_aggregate_adds_sums_weights_percentages_and_takes_the_largest_launch_value():
    pct = "sm__warps_active.avg.pct_of_peak_sustained_active"
    values = counters.aggregate([
        {counters.DURATION: 100.0, WAVEFRONTS: 10.0, pct: 90.0,
         "launch__registers_per_thread": 32.0},
        {counters.DURATION: 300.0, WAVEFRONTS: 30.0, pct: 50.0,
         "launch__registers_per_thread": 40.0, SHARED_LOADS: None}])
    assert values[counters.DURATION] == 400.0 and values[WAVEFRONTS] == 40.0
    assert values[pct] == pytest.approx(60.0)  # (90 * 100 + 50 * 300) / 400
    assert values["launch__registers_per_thread"] == 40.0
    assert SHARED_LOADS not in values


def test_counters_compute_from_aggregated_values():
    values = {WAVEFRONTS: 320.0, counters.SHARED_WAVEFRONTS[1]: 0.0, SHARED_LOADS: 10.0,
              counters.THREAD_INSTRUCTIONS: 16.0,
              counters.LOCAL_SECTORS[0]: 5.0, counters.LOCAL_SECTORS[1]: 7.0}
    got = counters.compute(["shared_wavefronts_per_request", "warp_execution_efficiency_pct",
                            "local_memory_sectors", "global_sectors_per_request"], values)
    assert got == {"shared_wavefronts_per_request": 32.0,
                   "warp_execution_efficiency_pct": 50.0,
                   "local_memory_sectors": 12.0, "global_sectors_per_request": None}
    assert counters.roofline({counters.FADD: 1.0, counters.FMUL: 2.0, counters.FFMA: 3.0,
                              counters.DRAM_BYTES: 8.0, counters.DURATION: 2e9}) == \
        {"flops": 9.0, "dram_bytes": 8.0, "duration_s": 2.0}


def test_every_counter_is_declared_completely():
    for name, c in counters.COUNTERS.items():
        assert c.name == name and c.title and c.metrics and c.unit and c.hint
        assert c.better in ("lower", "higher")
        assert "{student}" in c.explain and "{other}" in c.explain and "{against}" in c.explain
        # Every metric a counter reads is collected, under the name ncu prints.
        assert set(c.metrics) <= set(counters.metrics_for([name]))


def test_verdicts_and_sentences():
    waves = counters.COUNTERS["shared_wavefronts_per_request"]
    assert counters.verdict(waves, 32.0, 1.0) == "worse"
    assert counters.verdict(waves, 1.05, 1.0) == "same"       # within 10 %
    assert counters.verdict(waves, 1.0, 7.2) == "better"
    assert counters.verdict(waves, None, 1.0) == "unknown"
    assert counters.verdict(waves, 1.0, None) == "unknown"
    dram = counters.COUNTERS["dram_throughput_pct"]
    assert counters.verdict(dram, 45.0, 90.0) == "worse"      # higher is better
    assert counters.verdict(dram, 1.0, 2.5) == "same"         # within its slack
    sentence = counters.sentence(waves, "worse", 32.0, 1.0, "the reference")
    assert sentence.startswith("Your kernel needs 32.0 shared-memory wavefronts per request "
                               "where the reference needs 1.0: ")
    assert "32.0 times" in sentence and "tile[32][33]" in sentence and sentence.endswith(".")
    assert counters.sentence(waves, "same", 1.0, 1.0, "the reference") == \
        "Your shared-memory wavefronts per request (1.0) is close to the reference's (1.0)."
    assert "45.0%" in counters.sentence(dram, "worse", 45.0, 90.0, "the course baseline")


# ------------------------------------------------------------------------ the stage

def test_stage_profiles_each_measure_and_baseline_and_compares(bank_conflicts, options, ncu,
                                                               monkeypatch):
    log = ncu()
    asked = []

    def reference(gpu, exercise, measure, **_):
        asked.append((gpu, exercise, measure))
        return {"shared_wavefronts_per_request": 1.0}, "calibrations/nvidia-h200.json"

    monkeypatch.setattr(calibration, "reference_counters", reference)
    binary = options.build_dir / "bank_conflicts_bench"
    stage = profile.run(options, bank_conflicts, binary, "NVIDIA H200")
    assert stage.name == StageName.PROFILE and stage.status == StageStatus.PASSED, stage.message
    assert stage.points == stage.max_points == 0
    d = stage.details
    assert isinstance(d, model.ProfileDetails)
    assert d.tool == VERSION and d.reference_from == "calibrations/nvidia-h200.json"
    assert d.added_s == stage.duration_s >= 0 and d.problem == ""
    assert [(r["measure"], r["role"], r["launches"]) for r in d.rows] == [
        ("bank_conflicts_square", "student", 1), ("square_conflicted", "baseline", 1),
        ("bank_conflicts_rect", "student", 2), ("rect_conflicted", "baseline", 1)]
    square, conflicted_row = d.rows[0], d.rows[1]
    assert square["kernels"] == ["void gram_kernel<32>(const float *, float *)"]
    assert square["counters"] == {"shared_wavefronts_per_request": 1.0}
    assert conflicted_row["counters"]["shared_wavefronts_per_request"] == \
        pytest.approx(302_876_019 / 41_943_040)
    assert square["roofline"] == {"flops": 2e9, "dram_bytes": 2e8,
                                  "duration_s": pytest.approx(209_800e-9)}
    assert d.rows[2]["roofline"]["dram_bytes"] == 4e8  # two kernels, summed
    assert [(c["measure"], c["verdict"]) for c in d.comparisons] == [
        ("bank_conflicts_square", "same"), ("bank_conflicts_rect", "same")]
    first = d.comparisons[0]
    assert set(first) == {"measure", "counter", "title", "unit", "student", "reference",
                          "baseline", "better", "verdict", "sentence"}
    assert first["reference"] == 1.0 and first["baseline"] == pytest.approx(7.22, abs=0.01)
    assert asked == [("NVIDIA H200", "bank_conflicts", "bank_conflicts_square"),
                     ("NVIDIA H200", "bank_conflicts", "bank_conflicts_rect")]
    # One ncu run for every range, as the stage's command line says.
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert runs[0] == ["--version"] and len(runs) == 2
    metrics = ",".join(counters.metrics_for(["shared_wavefronts_per_request"]))
    assert runs[1][:19] == ["--nvtx", "--nvtx-include", "bank_conflicts_square/",
                            "--nvtx-include", "square_conflicted/",
                            "--nvtx-include", "bank_conflicts_rect/",
                            "--nvtx-include", "rect_conflicted/", "--metrics",
                            metrics, "--csv", "--page", "raw", "--print-units", "base",
                            "--launch-count", "256", str(binary)]
    assert runs[1][19:22] == ["--profile", "--ceilings-elsewhere", "--json"]
    # Without a reference the course baseline is what the student's value is compared with.
    no_reference(monkeypatch)
    stage = profile.run(options, bank_conflicts, binary, "NVIDIA H200")
    assert stage.details.reference_from == ""
    assert [c["verdict"] for c in stage.details.comparisons] == ["better", "better"]
    assert stage.details.comparisons[0]["reference"] is None


def test_a_worse_counter_says_what_it_means_and_what_to_try(bank_conflicts, options, ncu,
                                                            monkeypatch):
    ncu({**RANGES, "bank_conflicts_square": [conflicted()]})
    monkeypatch.setattr(calibration, "reference_counters",
                        lambda *a, **k: ({"shared_wavefronts_per_request": 1.0}, "c.json"))
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench",
                        "NVIDIA H200")
    worse = stage.details.comparisons[0]
    assert worse["verdict"] == "worse" and worse["better"] == "lower"
    assert worse["sentence"].startswith("Your kernel needs 7.2 shared-memory wavefronts per "
                                        "request where the reference needs 1.0: ")
    assert "pad the tile" in worse["sentence"]
    assert stage.message == "2 counters compared, 1 worse than the reference or baseline"


def test_no_calibration_module_means_no_reference(bank_conflicts, monkeypatch):
    monkeypatch.delattr(calibration, "reference_counters")
    assert profile.reference("NVIDIA H200", bank_conflicts, "bank_conflicts_square") == ({}, "")


def test_a_range_without_kernels_is_noted_not_an_error(bank_conflicts, options, ncu):
    ncu({**RANGES, "rect_conflicted": []})
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.PASSED
    assert stage.details.rows[3]["counters"] == {"shared_wavefronts_per_request": None}
    assert stage.details.rows[3]["launches"] == 0 and stage.details.rows[3]["kernels"] == []
    assert "rect_conflicted: no kernel ran in its NVTX range" in stage.details.problem


def test_a_report_without_the_runs_nonce_cannot_be_read(bank_conflicts, options, ncu):
    """Without the bench's own report there is no order of ranges to split ncu's kernels by."""
    ncu(nonce="forged")
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.ERROR and "without its report" in stage.message
    assert stage.details.comparisons == []


def test_kernels_are_split_at_the_markers_in_the_benchs_order():
    marker = {"kernel": "(anonymous namespace)::profile_range_marker()", "values": {}}
    a, b, c = ({"kernel": k, "values": {}} for k in "abc")
    split = profile.split_ranges([marker, a, b, marker, marker, c],
                                 ["x", "first", "second", "third"], {"first", "second", "third"})
    assert split == {"first": [a, b], "second": [], "third": [c]}
    # Ranges past the launch count's cut are missing, not misplaced.
    assert profile.split_ranges([marker, a], ["first", "second"], {"first", "second"}) == \
        {"first": [a]}
    assert profile.split_ranges([a, marker], ["first"], {"first"}) is None
    assert profile.split_ranges([marker, marker], ["first"], {"first"}) is None


def test_counters_not_permitted_skip_the_stage_with_one_line(bank_conflicts, options, ncu):
    log = ncu(mode="perm")
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.SKIPPED and stage.points == 0
    assert stage.message == profile.NOT_PERMITTED and "\n" not in stage.message
    assert "NVreg_RestrictProfilingToAdminUsers=0" in stage.message
    assert "run the grader as root" in stage.message
    assert len(log.read_text().splitlines()) == 2  # --version, then one range: no more tries


def test_no_ncu_skips_the_stage_with_one_line(bank_conflicts, options, monkeypatch, tmp_path):
    monkeypatch.setenv(profile.NCU_ENV, str(tmp_path / "nowhere" / "ncu"))
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.SKIPPED and stage.message == profile.NOT_FOUND
    assert "\n" not in stage.message and stage.details.added_s >= 0


def test_find_ncu_runs_the_install_a_toolkit_wrapper_would(monkeypatch, tmp_path):
    toolkit = tmp_path / "cuda-13.0"
    wrapper = write_script(toolkit / "bin" / "ncu",
                           "# looks for the nsight-compute-* folder beside bin/\n")
    for version in ("2025.3.1", "2025.10.0"):
        write_script(toolkit / f"nsight-compute-{version}" / "ncu", "")
    monkeypatch.delenv(profile.NCU_ENV, raising=False)
    monkeypatch.setenv("PATH", str(toolkit / "bin"))
    found = profile.find_ncu()
    assert found == str(toolkit / "nsight-compute-2025.10.0" / "ncu")
    assert profile.install_folder(found) == str(toolkit / "nsight-compute-2025.10.0")
    assert profile.real_ncu(str(wrapper)) == found
    # Named by COURSE_NCU, an ncu is run as it is.
    monkeypatch.setenv(profile.NCU_ENV, str(wrapper))
    assert profile.find_ncu() == str(wrapper)
    assert profile.install_folder(str(wrapper)) == str(toolkit)


def test_an_ncu_that_fails_is_an_error_with_its_output(bank_conflicts, options, ncu):
    ncu(mode="fail")
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.ERROR and "\n" not in stage.message
    assert stage.message == ("ncu exit status 1 while profiling bank_conflicts_square, "
                             "square_conflicted, bank_conflicts_rect, rect_conflicted (its "
                             "output is in the report)")
    assert "nsight-compute directory is not found" in stage.output


def test_the_sandbox_opens_ncus_install_and_the_scratch_folder(bank_conflicts, options, ncu,
                                                               monkeypatch, tmp_path):
    from grader import sandbox
    ncu()
    seen = []

    def wrap(self, command, scratch):
        seen.append((self.readable, command, scratch))
        return list(command)

    monkeypatch.setattr(sandbox.Sandbox, "wrap", wrap)
    box = sandbox.Sandbox(sandbox.Status.ON, launcher=tmp_path / "launcher",
                          readable=("/usr/local/cuda",))
    opts = dataclasses.replace(options, sandbox=box)
    stage = profile.run(opts, bank_conflicts, opts.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.PASSED
    readable, command, scratch = seen[0]
    assert readable == ("/usr/local/cuda", str(tmp_path / "nsight-compute-2025.3.1"))
    assert command[0] == str(tmp_path / "nsight-compute-2025.3.1" / "ncu")
    assert scratch == opts.work_dir / "bank_conflicts" / "profile"


# ------------------------------------------------------------------------ scoring, pipeline

def _stages(bench_status=StageStatus.PASSED):
    tests = StageResult("tests", StageStatus.PASSED, details={"passed": 4, "total": 4})
    bench = StageResult("benchmark", bench_status, metrics=[
        model.Metric("square_speedup", "", "bank_conflicts_square", "square_conflicted", 10.0,
                     1.0, "TFLOP/s", 5.0, 4.0, 1.3, 0.0, 20.0),
        model.Metric("rect_speedup", "", "bank_conflicts_rect", "rect_conflicted", 2.0, 1.0,
                     "TFLOP/s", 2.0, 3.0, 1.3, 0.0, 20.0)])
    return [StageResult("build", StageStatus.PASSED), StageResult("integrity",
                                                                  StageStatus.PASSED),
            StageResult("technique", StageStatus.PASSED, details={"rules": [
                {"name": "shared_memory", "passed": True, "max_points": 10.0}]}),
            tests, StageResult("sanitizer", StageStatus.PASSED), bench]


@pytest.mark.parametrize("status", [StageStatus.PASSED, StageStatus.SKIPPED, StageStatus.ERROR])
def test_scoring_passes_the_profile_stage_by(bank_conflicts, status):
    without = scoring.score(bank_conflicts, _stages())
    stage = StageResult(StageName.PROFILE, status, points=5.0, max_points=5.0,
                        message="ncu failed", details={"comparisons": []})
    stage.points = stage.max_points = 0.0  # what the stage sets; never points
    with_profile = scoring.score(bank_conflicts, _stages() + [stage])
    assert (with_profile.status, with_profile.score, with_profile.max_score,
            with_profile.message) == (without.status, without.score, without.max_score,
                                      without.message)
    assert with_profile.stage(StageName.PROFILE).status == status


def test_grade_with_profile_keeps_the_score_and_times_the_profile(grader_for, ncu, tmp_path,
                                                                  monkeypatch):
    from fakes import clean_integrity
    from grader import tools
    no_reference(monkeypatch)
    clean_integrity(monkeypatch)
    found = {"meson": str(fake_tool(tmp_path / "bin" / "meson")),
             "ninja": str(fake_tool(tmp_path / "bin" / "ninja"))}
    monkeypatch.setattr(tools, "find", lambda name, required_for="": found.get(name))
    pct = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
    ncu({"vector_add": [kernel("vector_add_kernel", 1000.0, **{pct: 80.0})],
         "copy": [kernel("copy_float4_kernel", 900.0, **{pct: 90.0})]})
    ex = manifest.load_manifest(ROOT / "chapters" / "ch01_programming_model" / "vector_add" /
                                "vector_add.toml")
    reports = {}
    for on in (False, True):
        g = grader_for(ex, gpu=model.GpuInfo("NVIDIA H200", "9.0", "580.65", 143771),
                       sanitizer=False, profile=on)
        fake_gtest(g.options.build_dir / "vector_add_test", VECTOR_ADD_CASES)
        fake_bench(g.options.build_dir / "vector_add_bench", bench_data(700, 1000))
        reports[on] = g.run()
    off, on = reports[False].exercises[0], reports[True].exercises[0]
    assert (on.status, on.score, on.max_score) == (off.status, off.score, off.max_score)
    assert on.status == ExerciseStatus.PARTIAL
    assert [s.name for s in on.stages][-2:] == ["benchmark", "profile"]
    assert StageName.PROFILE not in [s.name for s in off.stages]
    prof = on.stage(StageName.PROFILE)
    assert prof.status == StageStatus.PASSED and prof.points == prof.max_points == 0
    assert [(c["counter"], c["verdict"]) for c in prof.details.comparisons] == [
        ("dram_throughput_pct", "worse"), ("achieved_occupancy_pct", "unknown")]
    assert "profile_s" in reports[True].phases and "profile_s" not in reports[False].phases
    assert reports[True].options["profile"] is True
    # The report's JSON keeps the stage's details, and reads back as ProfileDetails.
    data = json.loads(json.dumps(reports[True].to_dict()))
    back = model.Report.from_dict(data).exercises[0].stage(StageName.PROFILE)
    assert isinstance(back.details, model.ProfileDetails)
    assert back.details.comparisons == prof.details.comparisons


def test_profile_applies_only_when_asked_declared_and_benchmarked(grader_for, bank_conflicts):
    from grader.pipeline import Context, ProfileStage
    stage = ProfileStage()
    for on, counters_named, bench, expected in [
            (True, True, StageStatus.PASSED, True), (False, True, StageStatus.PASSED, False),
            (True, False, StageStatus.PASSED, False), (True, True, StageStatus.FAILED, False),
            (True, True, StageStatus.NOT_MEASURED, False), (True, True, None, False)]:
        ex = bank_conflicts if counters_named else \
            dataclasses.replace(bank_conflicts, profile_counters=())
        g = grader_for(ex, profile=on)
        stages = [StageResult("benchmark", bench)] if bench else []
        assert stage.applies(Context(g, ex, stages)) is expected


# ------------------------------------------------------------------------ the terminal

def _report(*profiles: StageResult) -> model.Report:
    exercises = [model.ExerciseResult(f"ch04_x/ex{i}", f"ex{i}", "ch04_x", "X",
                                      ExerciseStatus.PASSED, 10.0, 10.0, "full marks",
                                      [StageResult("tests", StageStatus.PASSED), p])
                 for i, p in enumerate(profiles)]
    return model.Report(submission="s", seed=1, started_at="t", exercises=exercises)


def test_terminal_shows_each_comparison_and_a_skipped_message_once():
    sentence = "Your kernel needs 32.0 ... pad the tile (tile[32][33]) or swizzle it."
    passed = StageResult(StageName.PROFILE, StageStatus.PASSED, message="2 counters compared",
                         details={"tool": VERSION, "comparisons": [
                             {"measure": "a", "counter": "shared_wavefronts_per_request",
                              "title": "shared-memory wavefronts per request",
                              "unit": "wavefronts/request", "student": 32.0, "reference": 1.0,
                              "baseline": 32.0, "better": "lower", "verdict": "worse",
                              "sentence": sentence},
                             {"measure": "a", "counter": "dram_throughput_pct",
                              "title": "DRAM throughput", "unit": "% of peak",
                              "student": 80.0, "reference": None, "baseline": 82.0,
                              "better": "higher", "verdict": "same",
                              "sentence": "close"}]})
    skipped = StageResult(StageName.PROFILE, StageStatus.SKIPPED, message=profile.NOT_PERMITTED)
    text = render.terminal(_report(passed, skipped, dataclasses.replace(skipped)), io.StringIO())
    lines = text.splitlines()
    assert f"   profile ({VERSION}): 2 counters compared" in lines
    assert ("    shared-memory wavefronts per request: yours 32.0, reference 1.0, course "
            f"baseline 32.0 wavefronts/request - {sentence}") in lines
    assert ("    DRAM throughput: yours 80.0%, reference -, course baseline 82.0% "
            "(% of peak)") in lines
    assert "close" not in text  # only a worse counter's sentence is shown
    assert text.count(profile.NOT_PERMITTED) == 1
    assert f"PROFILE SKIPPED: {profile.NOT_PERMITTED} (2 exercises)" in lines
    # JUnit: a profile that could not be taken is skipped, never a failure.
    error = StageResult(StageName.PROFILE, StageStatus.ERROR, message="ncu failed")
    xml = render.junit_xml(_report(error))
    assert 'failures="0"' in xml and "<skipped" in xml


# ------------------------------------------------------------------------ manifests

def _manifest_with(tmp_path, text: str) -> Path:
    folder = tmp_path / "ch04_shared_memory" / "bank_conflicts"
    folder.mkdir(parents=True)
    path = folder / "bank_conflicts.toml"
    original = BANK_CONFLICTS.read_text()
    path.write_text(original.split("\n[profile]")[0].rsplit("\n#", 1)[0] + "\n" + text)
    for source in BANK_CONFLICTS.parent.glob("*_test.cpp"):
        (folder / source.name).write_text(source.read_text())
    return path


def test_manifest_refuses_unknown_counters_naming_the_valid_ones(tmp_path):
    path = _manifest_with(tmp_path, '[profile]\ncounters = ["bank_conflicts"]\n')
    with pytest.raises(ManifestError) as error:
        manifest.load_manifest(path)
    message = str(error.value)
    assert "profile.counters" in message and "unknown counter 'bank_conflicts'" in message
    assert all(name in message for name in counters.COUNTERS)


@pytest.mark.parametrize("table, why", [
    ("[profile]\ncounters = []\n", "must name at least one counter"),
    ('[profile]\ncounters = ["fma_pipe_pct", "fma_pipe_pct"]\n', "named twice"),
    ("[profile]\nmetrics = []\n", "unknown field"),
])
def test_manifest_checks_the_profile_table(tmp_path, table, why):
    with pytest.raises(ManifestError, match=why):
        manifest.load_manifest(_manifest_with(tmp_path, table))


def test_manifest_reads_the_profile_table(tmp_path):
    path = _manifest_with(tmp_path, '[profile]\ncounters = ["fma_pipe_pct", '
                                    '"shared_stall_pct"]\n')
    assert manifest.load_manifest(path).profile_counters == ("fma_pipe_pct",
                                                             "shared_stall_pct")
    assert manifest.load_manifest(_manifest_with(tmp_path / "b", "")).profile_counters == ()


def test_every_timed_exercise_names_counters_that_exist():
    for ex in manifest.discover(ROOT):
        if ex.performance:
            assert ex.profile_counters, f"{ex.key}: no [profile] counters"
        else:
            assert not ex.profile_counters, ex.key
        assert set(ex.profile_counters) <= set(counters.COUNTERS), ex.key


# ------------------------------------------------------------------------ the bench

def _built_benches() -> list[Path]:
    """Bench programs of any build folder here that are newer than the harness's sources, so
    that they have its --profile (bank_conflicts' first: it is short on a GPU)."""
    newest = max(p.stat().st_mtime for p in (ROOT / "support" / "src" / "bench.cu",
                                             ROOT / "support" / "include" / "course" / "bench.h"))
    found = []
    for path in (ROOT / "build").glob("*/*_bench"):
        try:
            fresh = path.stat().st_mtime >= newest and path.read_bytes()[:4] == b"\x7fELF"
        except OSError:
            continue
        if fresh and os.access(path, os.X_OK):
            found.append(path)
    return sorted(found, key=lambda p: (p.name != "bank_conflicts_bench", str(p)))


def test_a_built_bench_takes_profile(tmp_path):
    benches = _built_benches()
    if not benches:
        pytest.skip("no bench program built here since the harness last changed")
    bench = benches[0]
    out = tmp_path / "profile.json"
    run = subprocess.run([str(bench), "--profile", "--ceilings-elsewhere", "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 2 and "unknown argument" not in run.stderr, run.stderr
    if run.returncode == 77:  # no GPU here: the arguments were read before it looked
        assert "no CUDA device" in run.stdout
    else:
        data = json.loads(out.read_text())
        assert data["profile"] is True and data["completed"] is True
    refused = subprocess.run([str(bench), "--no-such-flag"], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2 and "[--profile]" in refused.stderr


def test_ranges_ncu_sees_no_kernel_in_are_noted_not_an_error(bank_conflicts, options, ncu):
    """A bench whose measurements are timed by hand opens no range: ncu profiles nothing and
    prints no CSV, which is a note on each measurement, not a failed stage."""
    ncu(mode="none")
    stage = profile.run(options, bank_conflicts, options.build_dir / "bank_conflicts_bench")
    assert stage.status == StageStatus.PASSED, stage.message
    assert all(row["launches"] == 0 for row in stage.details.rows)
    assert "no kernel ran in its NVTX range" in stage.details.problem
    assert {c["verdict"] for c in stage.details.comparisons} == {"unknown"}
