"""Calibrations (grader/calibration.py, `python3 -m grader calibrate`): the statistics of the
reference's runs, the file's schema, flagged thresholds, the instructor's decisions and what
they do to the scored points, and `grade`'s record of the calibration it used. Every report is
built by hand (no GPU)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fakes import bench_data, fake_bench, fake_gtest, use_fake_build_tools
from grader import calibration, cli, manifest, model, render, scoring, template, tools
from grader.errors import GraderError
from helpers import ROOT, assert_one_line_error, run_cli, vector_add

H100 = "NVIDIA H100 80GB HBM3"
C, S = model.CaseResult, model.StageResult


def _exercise(name: str, chapter: str, metrics: list[tuple[str, float | None, float]],
              measurements: list[dict] = (), profile: list[dict] | None = None
              ) -> model.ExerciseResult:
    """A graded exercise whose benchmark measured `metrics` (name, ratio, full_at)."""
    bench = S("benchmark", "passed", details={"measurements": list(measurements)},
              metrics=[model.Metric(m, "d", name, "copy", None if r is None else 900.0 * r,
                                    900.0, "GB/s", r, full, 0.3, 40.0, 40.0)
                       for m, r, full in metrics])
    stages = [S("build", "passed"), S("tests", "passed", 60, 60, details={"passed": 2,
                                                                          "total": 2}), bench]
    if profile is not None:
        stages.append(S("profile", "passed", details={"rows": profile}))
    return model.ExerciseResult(f"{chapter}/{name}", name, chapter, name.title(),
                                model.ExerciseStatus.PASSED, 100.0, 100.0, "", stages)


def _copy(rate: float, size: int = 402653184) -> dict:
    return {"name": "copy", "key": f"copy:{size}", "rate": rate, "unit": "GB/s", "valid": True,
            "elsewhere": True, "measured_by": "course_ceilings"}


def run_report(ratio: float, *, gpu: str = H100, second: float | None = 1.5, copy: float = 3000.0,
               sgemm: float | None = 50.0, started: str = "2025-03-04T10:00:00+00:00",
               counters: dict | None = None) -> model.Report:
    """One grade of the solutions: vector_add's bandwidth at `ratio` (full marks at 0.80),
    matmul_v4_warp_tiling's first metric at `second`, with the copy and SGEMM ceilings."""
    measurements = [_copy(copy), _copy(copy * 0.9, 268435456)]
    vec = _exercise("vector_add", "ch01_programming_model", [("bandwidth", ratio, 0.8)],
                    measurements,
                    profile=None if counters is None else [
                        {"measure": "vector_add", "role": "student", "counters": counters},
                        {"measure": "vector_add", "role": "baseline",
                         "counters": {"dram_bytes": 1.0}}])
    matmul = _manifest("matmul_v4_warp_tiling")
    perf = matmul.performance[0]
    sgemm_entries = [] if sgemm is None else [
        {"name": "cublas_sgemm", "key": "matmul_ladder/cublas_sgemm:4096x4096x4096",
         "rate": sgemm, "unit": "TFLOP/s", "valid": True, "elsewhere": True}]
    mm = _exercise(matmul.name, matmul.chapter, [(perf.name, second, perf.full_at)],
                   sgemm_entries)
    return model.Report(submission=str(ROOT / "solutions"), seed=1, started_at=started,
                        grader_version="0.1.0", gpu=model.GpuInfo(gpu, "9.0", "580", 81559),
                        options={"build_only": False}, exercises=[vec, mm])


def _manifest(name: str) -> manifest.Exercise:
    return next(ex for ex in manifest.discover(ROOT) if ex.name == name)


def save(reports: list[model.Report], folder: Path) -> list[Path]:
    paths = []
    for i, report in enumerate(reports, 1):
        path = folder / f"run-{i}.json"
        path.write_text(json.dumps(report.to_dict(), indent=2))
        paths.append(path)
    return paths


def calibrate(tmp_path: Path, reports: list[model.Report], *extra: str, capsys=None) -> dict:
    """cli.main(calibrate --from-report ...) into tmp_path/cal; the file it wrote."""
    paths = save(reports, tmp_path)
    status = cli.main(["calibrate", "--from-report", *map(str, paths),
                       "--out", str(tmp_path / "cal"), *extra])
    assert status == 0
    return json.loads((tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json").read_text())


# ------------------------------------------------------------------------- the statistics

def test_slug():
    assert calibration.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert calibration.slug("NVIDIA H200") == "nvidia-h200"
    assert calibration.slug("  Tesla V100-SXM2-16GB  ") == "tesla-v100-sxm2-16gb"
    with pytest.raises(GraderError):
        calibration.slug("---")


def test_the_statistics_of_the_runs(tmp_path, capsys):
    data = calibrate(tmp_path, [run_report(0.90, copy=3000.0), run_report(0.86, copy=3100.0),
                                run_report(0.88, copy=2900.0, sgemm=52.0)])
    vec = data["metrics"]["vector_add/bandwidth"]
    assert vec["ratios"] == [0.9, 0.86, 0.88]
    assert vec["median"] == 0.88
    assert vec["spread"] == pytest.approx((0.90 - 0.86) / 0.88, abs=1e-4)
    assert vec["margin_above_full"] == pytest.approx(0.86 / 0.80 - 1, abs=1e-4)
    assert vec["full_at"] == 0.8 and vec["zero_at"] == 0.3  # the manifest's
    assert vec["flagged"] is False and vec["decision"] == "keep"
    assert vec["lowered_full_at"] is None
    # The copy ceiling: each run's largest copy, median over runs; SGEMM likewise.
    assert data["gpu"]["memory_bandwidth_gbs"] == 3000.0
    assert data["gpu"]["fp32_tflops"] == 50.0
    out = capsys.readouterr().out
    assert "vector_add/bandwidth" in out and "0.880x" in out and "flagged" in out


def test_the_file_has_the_schema(tmp_path):
    data = calibrate(tmp_path, [run_report(0.9), run_report(0.9)], "--margin", "0.1")
    assert list(data) == ["schema", "gpu", "measured_at", "profile_measured_at",
                          "grader_version", "runs", "margin", "metrics", "profile"]
    assert data["schema"] == 1 and data["runs"] == 2 and data["margin"] == 0.1
    assert data["gpu"] == {"name": H100, "compute_capability": "9.0", "memory_mib": 81559,
                           "memory_bandwidth_gbs": 3000.0, "fp32_tflops": 50.0}
    assert data["measured_at"] == "2025-03-04"
    assert data["grader_version"] == cli.__version__
    for entry in data["metrics"].values():
        assert list(entry) == ["full_at", "zero_at", "ratios", "median", "spread",
                               "margin_above_full", "flagged", "decision", "lowered_full_at"]
    assert data["profile"] == {} and data["profile_measured_at"] is None  # nothing profiled
    assert calibration.load(tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json") == data


def test_no_ceiling_measured_is_null(tmp_path):
    data = calibrate(tmp_path, [run_report(0.9, sgemm=None)])
    assert data["gpu"]["fp32_tflops"] is None


def test_a_ladder_rung_is_a_metric_like_any(tmp_path):
    matmul = _manifest("matmul_v4_warp_tiling")
    data = calibrate(tmp_path, [run_report(0.9, second=matmul.performance[0].full_at * 1.2)])
    entry = data["metrics"][f"matmul_v4_warp_tiling/{matmul.performance[0].name}"]
    assert entry["full_at"] == matmul.performance[0].full_at and entry["flagged"] is False


# -------------------------------------------------------------------- flagged thresholds

def test_an_unreachable_threshold_is_flagged_and_a_reachable_one_is_not(tmp_path, capsys):
    reports = [run_report(0.90), run_report(0.88), run_report(0.89)]
    data = calibrate(tmp_path, reports, "--full-at", "vector_add/bandwidth=5")
    vec = data["metrics"]["vector_add/bandwidth"]
    assert vec["full_at"] == 5.0 and vec["flagged"] is True
    assert vec["margin_above_full"] == pytest.approx(0.88 / 5 - 1, abs=1e-4)
    assert "1 of 2 thresholds flagged" in capsys.readouterr().out
    # Within the margin is flagged too: the worst run clears 0.85 by 3.5%, not 5%.
    data = calibrate(tmp_path, reports, "--full-at", "vector_add/bandwidth=0.85")
    assert data["metrics"]["vector_add/bandwidth"]["flagged"] is True
    data = calibrate(tmp_path, reports)
    assert data["metrics"]["vector_add/bandwidth"]["flagged"] is False


def test_a_run_without_a_ratio_flags_the_metric(tmp_path):
    data = calibrate(tmp_path, [run_report(0.9), run_report(None)])
    vec = data["metrics"]["vector_add/bandwidth"]
    assert vec["ratios"] == [0.9] and vec["flagged"] is True


def test_exactly_at_the_margin_is_not_flagged():
    assert calibration.entry([1.05], 1.0, 0.3, 1, 0.05)["flagged"] is False
    assert calibration.entry([1.0499], 1.0, 0.3, 1, 0.05)["flagged"] is True


# ------------------------------------------------------------------------------ decisions

def _decide(path: Path, *items: str) -> int:
    return cli.main(["calibrate", *[a for item in items for a in ("--decide", item)],
                     "--file", str(path)])


def _score(ex: manifest.Exercise, ratio: float) -> model.ExerciseResult:
    """The real scorer on a passing exercise whose benchmark measured `ratio`."""
    from grader.stages import benchmark
    metrics = [benchmark.metric(p, {p.measure: {"rate": ratio, "valid": True, "unit": "GB/s"},
                                    p.baseline: {"rate": 1.0, "valid": True}}, "")
               for p in ex.performance]
    stages = [S("build", "passed"), S("integrity", "passed"),
              S("tests", "passed", details={"passed": 2, "total": 2}),
              S("sanitizer", "passed"), S("benchmark", "passed", metrics=metrics)]
    return scoring.score(ex, stages)


def test_keep_lower_and_drop_and_the_points_they_give(tmp_path, capsys):
    reports = [run_report(0.70), run_report(0.72), run_report(0.74)]
    data = calibrate(tmp_path, reports)
    path = tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json"
    assert data["metrics"]["vector_add/bandwidth"]["flagged"] is True
    ex = vector_add()
    course = _score(ex, 0.72)
    assert course.score < course.max_score  # 0.72x: below full marks at 0.80x

    # keep: the manifest's thresholds, unchanged.
    assert _decide(path, "vector_add/bandwidth=keep") == 0
    [kept], notes = calibration.apply([ex], calibration.load(path))
    assert kept == ex and notes == []

    # lower: full marks at the median less the margin, zero marks scaled alike.
    assert _decide(path, "vector_add/bandwidth=lower") == 0
    decided = calibration.load(path)["metrics"]["vector_add/bandwidth"]
    assert decided["decision"] == "lower"
    assert decided["lowered_full_at"] == pytest.approx(0.72 * 0.95, abs=1e-4)
    [lowered], notes = calibration.apply([ex], calibration.load(path))
    perf = lowered.performance[0]
    assert perf.full_at == pytest.approx(0.684) and perf.zero_at == pytest.approx(0.3 * 0.684 / 0.8)
    assert notes == ["vector_add/bandwidth: full marks at 0.68 instead of 0.8 (lowered by "
                     "calibration)"]
    result = _score(lowered, 0.72)
    assert result.score == result.max_score == course.max_score
    assert result.status == model.ExerciseStatus.PASSED

    # drop: the metric is measured and earns nothing; the exercise's maximum loses its points.
    assert _decide(path, "vector_add/bandwidth=drop") == 0
    [dropped], notes = calibration.apply([ex], calibration.load(path))
    assert notes == ["vector_add/bandwidth: no points (dropped by calibration; it had 40)"]
    result = _score(dropped, 0.1)
    assert result.max_score == course.max_score - 40
    assert result.score == result.max_score
    bench = result.stage(model.StageName.BENCHMARK)
    assert bench.metrics[0].ratio == pytest.approx(0.1) and bench.metrics[0].points == 0
    assert "vector_add/bandwidth: drop" in capsys.readouterr().out


def test_lower_never_raises_a_threshold(tmp_path):
    # Flagged by its spread (the worst run), while its median less the margin is above 0.80.
    data = calibrate(tmp_path, [run_report(0.81), run_report(1.2), run_report(1.2)])
    assert data["metrics"]["vector_add/bandwidth"]["flagged"] is True
    path = tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json"
    with pytest.raises(GraderError, match="not below full marks"):
        calibration.decide(calibration.load(path), {"vector_add/bandwidth": "lower"})


def test_recalibrating_keeps_the_decisions(tmp_path):
    calibrate(tmp_path, [run_report(0.70), run_report(0.72)])
    path = tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json"
    assert _decide(path, "vector_add/bandwidth=lower") == 0
    data = calibrate(tmp_path, [run_report(0.60), run_report(0.62), run_report(0.64)])
    vec = data["metrics"]["vector_add/bandwidth"]
    assert vec["decision"] == "lower" and vec["ratios"] == [0.6, 0.62, 0.64]
    assert vec["lowered_full_at"] == pytest.approx(0.62 * 0.95, abs=1e-4)  # the new median's


def test_calibrating_some_exercises_keeps_the_others(tmp_path):
    first = calibrate(tmp_path, [run_report(0.9, counters={"dram_bytes": 3.0})])
    assert first["measured_at"] == first["profile_measured_at"] == "2025-03-04"
    data = calibrate(tmp_path, [run_report(0.7, second=None, started="2025-04-01T09:00:00Z")],
                     "-e", "matmul_v4_warp_tiling")
    assert data["metrics"]["vector_add/bandwidth"]["ratios"] == [0.9]
    assert data["profile"] == {"vector_add": {"vector_add": {"dram_bytes": 3.0}}}
    # The counters kept are of the first calibration's day, which the table of counters says.
    assert data["measured_at"] == "2025-04-01" and data["profile_measured_at"] == "2025-03-04"
    matmul = next(k for k in data["metrics"] if k.startswith("matmul_v4_warp_tiling/"))
    assert data["metrics"][matmul]["ratios"] == [] and data["metrics"][matmul]["flagged"]


# ------------------------------------------------------------------------------- profile

def test_the_profile_keeps_the_solutions_counters(tmp_path):
    data = calibrate(tmp_path, [run_report(0.9, counters={"dram_bytes": 10.0, "sm_pct": 50}),
                                run_report(0.9, counters={"dram_bytes": 14.0, "sm_pct": 60}),
                                run_report(0.9, counters={"dram_bytes": 12.0, "sm_pct": 70})])
    assert data["profile"] == {"vector_add": {"vector_add": {"dram_bytes": 12.0,
                                                             "sm_pct": 60.0}}}
    # No calibrations/ folder under the root: nothing to compare with.
    assert calibration.reference_counters(H100, "vector_add", "vector_add",
                                          root=tmp_path) == ({}, "")
    (tmp_path / "course" / "calibrations").mkdir(parents=True)
    (tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json").rename(
        tmp_path / "course" / "calibrations" / "nvidia-h100-80gb-hbm3.json")
    for exercise in ("vector_add", "ch01_programming_model/vector_add"):
        counters, where = calibration.reference_counters(H100, exercise, "vector_add",
                                                         root=tmp_path / "course")
        assert counters == {"dram_bytes": 12.0, "sm_pct": 60.0}
        assert where == "calibrations/nvidia-h100-80gb-hbm3.json"
    assert calibration.reference_counters(H100, "vector_add", "other",
                                          root=tmp_path / "course") == ({}, "")
    assert calibration.reference_counters("NVIDIA H200", "vector_add", "vector_add",
                                          root=tmp_path / "course") == ({}, "")


# ----------------------------------------------------------------------- grade's record

def test_grade_records_the_calibration_it_applies(tmp_path, monkeypatch, capsys):
    course = tmp_path / "course"
    (course / "calibrations").mkdir(parents=True)
    gpu = model.GpuInfo("Fake GPU", "9.0", "1", 1)
    exercises = [vector_add()]
    chosen, record = calibration.for_grade(course, exercises, gpu)
    assert chosen == exercises
    assert record == {"status": "none", "file": "", "gpu": "fake-gpu", "applied": [],
                      "flagged": []}
    assert calibration.for_grade(course, exercises, None) == (exercises, {})
    data = calibration.compute([run_report(0.7, gpu="Fake GPU"), run_report(0.72, gpu="Fake GPU")],
                               exercises=manifest.discover(ROOT))
    calibration.decide(data, {"vector_add/bandwidth": "lower"})
    calibration.write(course / "calibrations" / "fake-gpu.json", data)
    chosen, record = calibration.for_grade(course, exercises, gpu)
    assert record["status"] == "found" and record["file"] == "calibrations/fake-gpu.json"
    assert record["applied"] == ["vector_add/bandwidth: full marks at 0.67 instead of 0.8 "
                                 "(lowered by calibration)"]
    matmul = next(k for k in data["metrics"] if k.startswith("matmul"))
    assert record["flagged"] == []  # only vector_add was graded; its flag is decided
    assert calibration.for_grade(course, manifest.discover(ROOT), gpu)[1]["flagged"] == \
        ([matmul] if data["metrics"][matmul]["flagged"] else [])


def test_the_report_keeps_its_calibration_and_says_when_there_is_none():
    from helpers import sample_report
    report = sample_report()
    report.calibration = {"status": "none", "file": "", "gpu": "fake-gpu", "applied": [],
                          "flagged": []}
    again = model.Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.calibration == report.calibration
    text = render.terminal(again)
    line = ("no calibration for Fake GPU: thresholds are the course's, measured on the H100 "
            "and H200; python3 -m grader calibrate checks them here")
    assert text.count(line) == 1
    report.calibration = {"status": "found", "file": "calibrations/fake-gpu.json",
                          "gpu": "fake-gpu", "applied": [], "flagged": []}
    assert "no calibration" not in render.terminal(report)
    assert model.Report.from_dict({k: v for k, v in report.to_dict().items()
                                   if k != "calibration"}).calibration == {}


def test_a_faked_grade_applies_this_gpus_calibration(tmp_path, monkeypatch, capsys):
    """cli grade with stand-ins: 0.72x the copy earns full marks once this GPU's calibration
    lowers full marks to 0.684x, and the report says so."""
    use_fake_build_tools(monkeypatch, tmp_path)
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo("Fake GPU", "9.0", "1", 1))
    calibrations = tmp_path / "calibrations"
    monkeypatch.setattr(calibration, "folder", lambda root: calibrations)
    submission = tmp_path / "submission" / "ch01_programming_model"
    submission.mkdir(parents=True)
    (submission / "vector_add.cu").write_text("// mine\n")
    build = tmp_path / "build"
    fake_gtest(build / "vector_add_test", ["S.a", "Small/S.b"])
    fake_bench(build / "vector_add_bench", bench_data(720, 1000))
    args = ["grade", str(submission.parent), "-e", "vector_add", "-q", "--build-dir",
            str(build), "--seed", "1", "--json", str(tmp_path / "r.json")]
    assert cli.main(args) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["calibration"]["status"] == "none" and data["percent"] < 100
    assert "no calibration for Fake GPU" in capsys.readouterr().out

    calibrations.mkdir()
    cal = calibration.compute([run_report(0.70, gpu="Fake GPU"), run_report(0.72, gpu="Fake GPU"),
                               run_report(0.74, gpu="Fake GPU")], exercises=[vector_add()])
    calibration.decide(cal, {"vector_add/bandwidth": "lower"})
    calibration.write(calibrations / "fake-gpu.json", cal)
    assert cli.main(args) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["percent"] == 100.0
    assert data["calibration"]["status"] == "found"
    assert data["calibration"]["applied"] == [
        "vector_add/bandwidth: full marks at 0.68 instead of 0.8 (lowered by calibration)"]
    [bench] = [s for s in data["exercises"][0]["stages"] if s["name"] == "benchmark"]
    [metric] = bench["metrics"]
    assert metric["full_at"] == pytest.approx(0.684)
    assert "no calibration" not in capsys.readouterr().out


def test_a_batch_grades_with_the_calibration_too(tmp_path, monkeypatch):
    from helpers import make_student
    use_fake_build_tools(monkeypatch, tmp_path, sanitizer=False)
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo("Fake GPU", "9.0", "1", 1))
    calibrations = tmp_path / "calibrations"
    calibrations.mkdir()
    monkeypatch.setattr(calibration, "folder", lambda root: calibrations)
    cal = calibration.compute([run_report(0.70, gpu="Fake GPU"), run_report(0.72, gpu="Fake GPU"),
                               run_report(0.74, gpu="Fake GPU")], exercises=[vector_add()])
    calibration.decide(cal, {"vector_add/bandwidth": "lower"})
    calibration.write(calibrations / "fake-gpu.json", cal)
    make_student(tmp_path / "students", "alice")
    out = tmp_path / "out"
    fake_gtest(out / "builds" / "alice" / "vector_add_test", ["Small/S.a", "S.b"])
    fake_bench(out / "builds" / "alice" / "vector_add_bench", bench_data(720, 1000))
    assert cli.main(["batch", str(tmp_path / "students"), "--out", str(out), "-e", "vector_add",
                     "--no-sanitizer", "--seed", "5", "--no-sandbox"]) == 0
    report = json.loads((out / "reports" / "alice.json").read_text())
    assert report["percent"] == 100.0 and report["calibration"]["status"] == "found"


# ---------------------------------------------------------------- grading the solutions

def test_calibrate_grades_the_solutions_r_times(tmp_path, monkeypatch, capsys):
    """The grade command is a stand-in that writes a saved report to --json and logs its
    arguments: each run is `grade solutions --json <tmp>/run-i.json -q`, with --profile and
    -e passed on."""
    reports = save([run_report(0.90), run_report(0.86), run_report(0.88)], tmp_path)
    log = tmp_path / "argv.log"
    fake = tmp_path / "fake_grade.py"
    fake.write_text(f"""import json, shutil, sys
log = {str(log)!r}
with open(log, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
n = sum(1 for _ in open(log))
shutil.copy({[str(p) for p in reports]!r}[n - 1], sys.argv[sys.argv.index("--json") + 1])
""")
    monkeypatch.setattr(calibration, "GRADE", [sys.executable, str(fake), "grade"])
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo(H100, "9.0", "1", 1))
    monkeypatch.setattr(template, "is_template", lambda root: False)
    assert cli.main(["calibrate", "--out", str(tmp_path / "cal"), "--profile",
                     "-e", "vector_add"]) == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 3
    for i, call in enumerate(calls, 1):
        assert call[:3] == ["grade", "solutions", "--json"]
        assert call[3].endswith(f"run-{i}.json")
        assert call[4:] == ["-q", "--profile", "-e", "vector_add"]
    data = json.loads((tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json").read_text())
    assert data["runs"] == 3 and list(data["metrics"]) == ["vector_add/bandwidth"]
    assert "run 3 of 3" in capsys.readouterr().err


def test_a_failed_grade_of_the_solutions_is_one_line(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "fail.py"
    fake.write_text("import sys\nprint('grader: error: the build broke', file=sys.stderr)\n"
                    "sys.exit(2)\n")
    monkeypatch.setattr(calibration, "GRADE", [sys.executable, str(fake), "grade"])
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo(H100, "9.0", "1", 1))
    monkeypatch.setattr(template, "is_template", lambda root: False)
    assert cli.main(["calibrate", "--out", str(tmp_path / "cal"), "--runs", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("grader: error: calibrate: grading solutions/ failed in run 1: the "
                       "build broke")


# ------------------------------------------------------------------------- bad arguments

def test_different_gpu_models_are_refused(tmp_path):
    paths = save([run_report(0.9), run_report(0.9, gpu="NVIDIA H200")], tmp_path)
    result = run_cli("calibrate", "--from-report", *paths, "--out", tmp_path / "cal")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "different GPU models", H100, "NVIDIA H200")
    assert not (tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json").exists()


def test_the_student_template_refuses_to_grade_solutions(monkeypatch, capsys):
    monkeypatch.setattr(template, "is_template", lambda root: True)
    assert cli.main(["calibrate"]) == 2
    err = capsys.readouterr().err
    assert_one_line_error(err, template.NO_SOLUTIONS, "--from-report")


@pytest.mark.parametrize("args, fragments", [
    (["--margin", "1.5"], ["--margin 1.5", "fraction"]),
    (["--margin", "nan"], ["--margin nan"]),
    (["--full-at", "vector_add/bandwidth"], ["--full-at", "EXERCISE/METRIC=VALUE"]),
    (["--full-at", "vector_add/bandwidth=-1"], ["--full-at", "above 0"]),
    (["--full-at", "vector_add/nothing=2"], ["--full-at vector_add/nothing", "no such metric"]),
    (["--runs", "0"], ["--runs", "positive"]),
    (["--runs", "2"], ["--runs", "--from-report"]),
    (["--profile"], ["--profile", "--from-report"]),
    (["-e", "no_such_exercise"], ["unknown exercise"]),
    (["--file", "x.json"], ["--file", "--decide"]),
])
def test_bad_calibrate_arguments_are_one_line(tmp_path, args, fragments):
    [path] = save([run_report(0.9)], tmp_path)
    result = run_cli("calibrate", "--from-report", path, "--out", tmp_path / "cal", *args)
    assert result.returncode == 2, result.stderr
    assert_one_line_error(result.stderr, *fragments)
    assert result.stdout == ""


def test_bad_decisions_are_one_line(tmp_path):
    calibrate(tmp_path, [run_report(0.9)])
    path = tmp_path / "cal" / "nvidia-h100-80gb-hbm3.json"
    before = path.read_text()
    for args, fragments in (
            (["--decide", "vector_add/bandwidth=raise"], ["keep", "lower", "drop"]),
            (["--decide", "vector_add/nothing=keep"], ["no such metric"]),
            (["--decide", "vector_add/bandwidth=keep", "--runs", "2"], ["--runs", "--decide"]),
            (["--decide", "vector_add/bandwidth=keep", "--file", str(tmp_path / "no.json")],
             ["does not exist"])):
        extra = [] if "--file" in args else ["--file", str(path)]
        result = run_cli("calibrate", *args, *extra)
        assert result.returncode == 2, result.stderr
        assert_one_line_error(result.stderr, *fragments)
    assert path.read_text() == before
    path.write_text("{\"schema\": 1}")
    result = run_cli("calibrate", "--decide", "vector_add/bandwidth=keep", "--file", path)
    assert_one_line_error(result.stderr, "malformed", "gpu.name")


def test_a_report_that_is_not_one_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = run_cli("calibrate", "--from-report", bad, "--out", tmp_path / "cal")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "bad.json")


# ---------------------------------------------------------------------------- shipping

def test_the_template_ships_the_calibrations():
    shipped = template.files(ROOT)
    assert "calibrations/README.md" in shipped
    assert not template.excluded("calibrations/nvidia-h100-80gb-hbm3.json")


def test_every_shipped_calibration_is_valid():
    for path in sorted(calibration.folder(ROOT).glob("*.json")):
        data = calibration.load(path)
        assert path.stem == calibration.slug(data["gpu"]["name"]), path
