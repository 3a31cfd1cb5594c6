"""grader.html_report: the self-contained HTML page, its plots, the --html flags, the page
beside each batch report, and the page as a real headless browser draws it.

tests/data/html/ holds three reports: full_report.json (full marks) and failing_report.json
(failing cases, sanitizer findings, a broken technique rule, a crash, a compile error, a rung
that was not measured, an invalid sweep point), both with both ladders and several sweeps; and
h200_report.json, the reference solutions graded on an H200 (the passed test cases left out):
one rung of each ladder, a reduction rung's block sizes, several metrics per exercise.
tests/data/profile_report.json is a grade --profile on an H100: the counters and roofline
points of bank_conflicts (the student's tile still conflicts), coalescing (copies: no FP32
work) and matmul rung 2 beside the course's baselines, vector_add's profile stage skipped, and
the calibration the grade read (its comparisons and sentences as grader/counters.py makes
them).
_every_plot_kind() adds the course's other sweeps to the failing report: two-point sweeps
(conv2d_constant's mask radii, histogram's bins) and occupancy's block sizes per grid rule.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from html import unescape

import pytest

from grader import batch, cli, html_report, model
from helpers import PYTHON, ROOT, TESTS, sample_report
from test_batch import Grades, run_batch  # noqa: F401 (a batch with a fake grade function)
from test_cli import faked_grade  # noqa: F401 (fixture: a whole grade with stand-ins)
from fakes import bench_data

DATA = TESTS / "data" / "html"
REPORTS = {"full": DATA / "full_report.json", "failing": DATA / "failing_report.json",
           "h200": DATA / "h200_report.json"}
PROFILED = TESTS / "data" / "profile_report.json"
SCREENSHOTS = ROOT / "build" / "html-report-test"
IN_CI = os.environ.get("CI") == "true"
# Sample reports, matplotlib and a headless browser: nothing the student template leaves out
# (pytest.ini).
pytestmark = pytest.mark.same_in_template


def _need(condition: bool, reason: str) -> None:
    """CI must run the page's tests: there a missing library or browser is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: scripts/setup.sh installs it)")
        pytest.skip(reason)


def _libraries() -> bool:
    try:
        import jinja2, matplotlib  # noqa: F401, E401
    except ImportError:
        return False
    return True


needs_libraries = pytest.mark.usefixtures("libraries")


@pytest.fixture
def libraries():
    _need(_libraries(), "jinja2/matplotlib not installed (pip install -r requirements.txt)")


@pytest.fixture
def no_libraries(monkeypatch):
    """An offline machine with the standard library only: importing them fails."""
    monkeypatch.setitem(sys.modules, "jinja2", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def _bench_exercise(key: str, title: str, rates: dict, unit: str, metric: tuple):
    """A passed exercise whose benchmark measured `rates` and scored one metric:
    (name, measure, baseline, full at, zero at)."""
    name, measure, baseline, full_at, zero_at = metric
    ratio = rates[measure] / rates[baseline]
    scored = model.Metric(name, "d", measure, baseline, rates[measure], rates[baseline], unit,
                          ratio, full_at, zero_at, 40.0, 40.0, f"{ratio:.2f}x {baseline}")
    S = model.StageResult
    return model.ExerciseResult(
        key, key.split("/")[1], key.split("/")[0], title, "passed", 100.0, 100.0, "full marks",
        [S("build", "passed"),
         S("benchmark", "passed", 40, 40, message=scored.message, metrics=[scored],
           details={"measurements": [_m(n, rate, unit) for n, rate in rates.items()]})])


def _every_plot_kind(compact: bool = False) -> model.Report:
    """The failing report and the course's other sweeps: every kind of plot the page draws
    (metrics; both ladders, a rung not measured; shapes as bars; numbers as a line with a gap
    and with a graded point; two-point sweeps as points; reference lines). `compact`: three
    rungs of the reduction ladder, two of the matrix product's (one that did not compile) and
    two of occupancy's grid rules: a page short enough for one screenshot."""
    report = model.Report.load(REPORTS["failing"])
    blocks = {32: 0.55, 64: 0.8, 128: 0.93, 256: 0.95, 512: 0.94, 1024: 0.9}
    rules = {"one_block_per_sm": 0.35, "one_wave": 0.9, "four_waves": 0.97,
             "one_block_per_256_elements": 1.0}
    if compact:
        rules = {"one_wave": 0.9, "one_block_per_256_elements": 1.0}
    occupancy = {f"sweep_b{b}_{rule}": round(3000 * f * g) for b, f in blocks.items()
                 for rule, g in rules.items()}
    occupancy.update(sweep_best=2950, chosen_config=2900)
    report.exercises += [
        _bench_exercise("ch02_execution_model/occupancy", "Occupancy", occupancy, "GB/s",
                        ("vs_best", "chosen_config", "sweep_best", 0.9, 0.6)),
        _bench_exercise("ch05_constant_memory/conv2d_constant", "Constant-memory filter",
                        {"copy": 3000, "conv2d_global_mask_r2": 2400, "conv2d_constant_r2": 2500,
                         "conv2d_global_mask_r7": 700, "conv2d_constant_r7": 1100}, "GB/s",
                        ("speedup_r7", "conv2d_constant_r7", "conv2d_global_mask_r7", 1.3, 1.0)),
        _bench_exercise("ch04_shared_memory/histogram", "Shared-memory histogram",
                        {"cub_uniform_256": 60, "global_uniform_256": 9.5,
                         "global_uniform_4096": 30, "histogram_uniform_256": 55,
                         "histogram_uniform_4096": 48, "cub_skewed_256": 58,
                         "global_skewed_256": 4, "histogram_skewed_256": 40}, "Gelem/s",
                        ("vs_cub", "histogram_uniform_256", "cub_uniform_256", 0.8, 0.3))]
    if compact:
        keep = ("vector_add", "matrix_sum_2d", "coalescing", "reduce_v1_neighbored",
                "reduce_v5_unroll8", "reduce_v7_complete_unroll", "matmul_v1_naive",
                "matmul_v3_register_blocking", "occupancy", "conv2d_constant", "histogram")
        report.exercises = [ex for ex in report.exercises if ex.name in keep]
    return report


@functools.cache
def _page(name: str) -> str:
    """The page of a saved report, drawn once for the session (drawing the plots is what takes
    the time; the tests only read it)."""
    return html_report.page(model.Report.load(REPORTS[name]))


def _text(html: str) -> str:
    """What a reader sees: the page without tags (SVG text elements included)."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", "", html, flags=re.S))


# ------------------------------------------------------------------------ the page itself

@needs_libraries
@pytest.mark.parametrize("name", ["full", "failing"])
def test_page_has_every_exercise_and_its_plots(name):
    report = model.Report.load(REPORTS[name])
    html = _page(name)
    assert html.startswith("<!DOCTYPE html>")
    for ex in report.exercises:
        assert f'<section class="exercise" id="{ex.key}">' in html
    assert "<script" not in html
    # nothing to fetch: the only addresses are the SVG and XLink namespaces
    assert set(re.findall(r"https?://[^\"' ]+", html)) <= {"http://www.w3.org/2000/svg",
                                                          "http://www.w3.org/1999/xlink"}
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html
    text = _text(html)
    assert "undefined" not in text and "NaN" not in html and "None" not in text
    assert "Reduction ladder" in html and "Matrix-product ladder" in html
    measured = sum(1 for ex in report.exercises for s in ex.stages for m in s.metrics
                   if m.value is not None)
    assert html.count('class="plot metric-plot"') > 0
    assert html.count('class="plot sweep-plot"') >= 3 + 8  # shapes, offsets, strides, rungs
    assert html.count("<svg") == 2 + html.count('class="plot metric-plot"') + html.count(
        'class="plot sweep-plot"')
    assert measured >= html.count('class="plot metric-plot"')
    # one id per SVG element across the page: the plots' clip paths do not collide
    ids = re.findall(r'<clipPath id="([^"]+)"', html)
    assert len(ids) == len(set(ids)) > 0


@needs_libraries
def test_failing_page_shows_what_went_wrong():
    text = _text(_page("failing"))
    assert "first differing element: index 0, expected 123456, actual 123200" in text
    assert "never written" in text
    assert "Sanitizer findings" in text and "RACECHECK SUMMARY: 2 hazards" in text
    assert "Technique rules" in text and "Try: __shfl_down_sync" in text
    assert 'error: expected a ";"' in text.replace("&#34;", '"')
    assert "crashed with SIGSEGV" in text and "not submitted: pitched_2d.cu" in text
    assert "offset_copy_offset_04" in text  # the invalid sweep point is named, not plotted


@needs_libraries
def test_text_from_the_report_is_escaped():
    report = sample_report()
    report.exercises[2].stage("tests").cases[1].message = "<script>alert(1)</script> & more"
    html = html_report.page(report)
    assert "<script>" not in html and "&lt;script&gt;" in html


def _m(name, rate, unit="GB/s", valid=True):
    return {"name": name, "unit": unit, "median_ms": 1, "rate": rate, "valid": valid}


def test_sweeps_group_names_by_number_or_shape():
    measurements = [_m("cub_reduce_sum", 100), _m("reduce_v2_x", 50),
                    _m("reduce_v2_x_b1024", 40), _m("reduce_v2_x_b256", 30),
                    _m("sweep_32x8", 9), _m("sweep_16x16", 8), _m("sweep_4x4", None),
                    _m("off_07", 1, "GB/s"), _m("off_08", 2, "ms"), _m("alone_3", 5),
                    _m("offset_copy_offset_00", 7), _m("offset_copy_offset_01", 6),
                    _m("offset_copy_offset_02", 6, valid=False), _m("offset_copy_offset_03", 6)]
    metric = model.Metric("vs_cub", "", "reduce_v2_x", "cub_reduce_sum", 50, 100, "GB/s", 0.5,
                          0.8, 0.3, 0, 60)
    families = {f.pattern: f for f in html_report.sweeps(measurements, [metric])}
    # off_: two units; alone: one point
    assert set(families) == {"reduce_v2_x_b<N>", "sweep_<W>x<H>", "offset_copy_offset_<N>"}
    rungs = families["reduce_v2_x_b<N>"]
    # the unsuffixed rung is the rung at block size 512 (reduce_ladder_bench.cpp), here graded
    assert [(x, rate) for x, _, rate in rungs.points] == [(256, 30), (512, 50), (1024, 40)]
    assert rungs.graded == ["512"] and rungs.lines == [("cub_reduce_sum", 100)]
    assert rungs.roles == {"cub_reduce_sum": "baseline"}
    assert (rungs.title, rungs.x_label) == ("reduce_v2_x: bandwidth by block size",
                                            "block size (threads)")
    shapes = families["sweep_<W>x<H>"]
    assert [label for _, label, _ in shapes.points] == ["32x8", "16x16"]  # reported order
    assert shapes.skipped == ["sweep_4x4"] and shapes.graded == []
    assert shapes.x_label == "block shape (threads in x × in y)"
    offsets = families["offset_copy_offset_<N>"]
    assert [x for x, _, _ in offsets.points] == [0, 1, 3] and offsets.gaps == [2]
    assert offsets.title == "offset_copy: bandwidth by offset of the first element"
    assert offsets.x_label == "offset of the first element (elements)"


def test_sweeps_in_words_for_every_sweep_the_course_measures():
    """The families chapters/*/*/*_bench.cpp report, their titles and axes in words."""
    blocks = (32, 64, 128, 256, 512, 1024)
    measurements = [
        *(_m(f"sweep_b{b}_{rule}", b) for b in blocks
          for rule in ("one_block_per_sm", "one_block_per_256_elements")),
        _m("conv2d_constant_r2", 900), _m("conv2d_constant_r7", 300),
        _m("global_uniform_256", 5, "Gelem/s"), _m("global_uniform_4096", 9, "Gelem/s"),
        _m("cub_uniform_256", 20, "Gelem/s"), _m("strided_copy_stride_01", 9),
        _m("strided_copy_stride_02", 5), _m("course_per_sweep_n2", 3, "Gelem/s"),
        _m("course_per_sweep_n4", 4, "Gelem/s"), _m("odd_size_4", 1), _m("odd_size_8", 2)]
    found = {f.pattern: (f.title, f.x_label, [x for x, _, _ in f.points])
             for f in html_report.sweeps(measurements, [])}
    assert found == {
        # two numbers in a name: the family is the one most names share
        "sweep_b<N>_one_block_per_sm": ("streaming_scale, grid of one block per SM: "
                                        "bandwidth by block size", "block size (threads)",
                                        list(blocks)),
        "sweep_b<N>_one_block_per_256_elements": (
            "streaming_scale, grid of one block per 256 elements: bandwidth by block size",
            "block size (threads)", list(blocks)),
        "conv2d_constant_r<N>": ("conv2d_constant: bandwidth by mask radius",
                                 "mask radius (pixels)", [2, 7]),
        "global_uniform_<N>": ("global, uniform values: throughput by number of bins",
                               "number of bins", [256, 4096]),
        "strided_copy_stride_<N>": ("strided_copy: bandwidth by stride", "stride (elements)",
                                    [1, 2]),
        "course_per_sweep_n<N>": ("course_per_sweep: throughput by problem size",
                                  "problem size (elements)", [2, 4]),
        "odd_size_<N>": ("odd_size_<N>: bandwidth by size", "size", [4, 8]),  # not known
    }
    assert html_report.rate_words("TFLOP/s") == "throughput (TFLOP/s)"
    assert html_report.rate_words("GB/s") == "bandwidth (GB/s)"


def test_ladder_rungs_pair_the_report_with_the_reference():
    report = model.Report.load(REPORTS["failing"])
    reduce, matmul = html_report._reference()["ladders"]
    rungs = html_report.ladder_rungs(report, matmul)
    assert [(r.number, r.reference) for r in rungs] == [(1, 0.12), (2, 0.17), (3, 0.69),
                                                         (4, 0.86), (5, 0.94)]
    assert rungs[3].ratio is None and rungs[4].ratio is None  # the report has no rung 4 or 5
    assert rungs[2].ratio is None and rungs[0].ratio == pytest.approx(0.13)  # v3 did not build
    assert [r.reference for r in html_report.ladder_rungs(report, reduce)] == [
        0.11, 0.19, 0.24, 0.45, 0.95, 0.93, 1.00, 1.01]
    assert html_report.ladder_rungs(sample_report(), reduce) == []  # no rung: no chart


def test_reference_file_says_where_it_comes_from():
    reference = html_report._reference()
    assert reference["gpu"] == "NVIDIA H100 80GB HBM3"
    assert reference["date"].startswith("2026-11-23")


# ------------------------------------------------------------------ the commands and batch

@needs_libraries
def test_render_html(tmp_path, capsys):
    out = tmp_path / "deep" / "page.html"
    assert cli.main(["render", str(REPORTS["failing"]), "--html", str(out)]) == 0
    assert "Matrix-product ladder" in out.read_text(encoding="utf-8")
    assert capsys.readouterr().err == ""
    assert cli.main(["render", str(REPORTS["failing"]), "--html", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


@needs_libraries
def test_grade_html(faked_grade, tmp_path, capsys):  # noqa: F811
    page = tmp_path / "page.html"
    assert faked_grade(["S.a", "Small/S.b"], bench_data(900, 1000), "--html", str(page)) == 0
    html = page.read_text(encoding="utf-8")
    assert 'id="ch01_programming_model/vector_add"' in html and "metric-plot" in html


@pytest.mark.parametrize("fail_under, status", [(None, 0), ("50", 1)])
def test_grade_html_without_the_libraries_warns_and_grades(faked_grade, tmp_path, capsys,
                                                           no_libraries, fail_under, status):  # noqa: F811
    cases = ["S.a", "Small/S.b"] if status == 0 else [{"name": "Small/S.b", "status": "failed"}]
    extra = ["--fail-under", fail_under] if fail_under else []
    page = tmp_path / "page.html"
    assert faked_grade(cases, bench_data(900, 1000), "--html", str(page), *extra) == status
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "HTML report skipped" in line]
    assert warnings == ["grader: warning: HTML report skipped: jinja2/matplotlib not installed "
                        "(pip install jinja2 matplotlib, or: pip install -r requirements.txt)"]
    assert not page.exists() and (tmp_path / "r.json").is_file()


def test_render_html_without_the_libraries_in_a_fresh_interpreter(tmp_path):
    """As an offline GPU machine runs it: the import fails in a real process."""
    code = ("import sys; sys.modules['matplotlib'] = None; from grader import cli; "
            f"sys.exit(cli.main(['render', {str(REPORTS['full'])!r}, '--html', "
            f"{str(tmp_path / 'p.html')!r}]))")
    result = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("\n") == 1 and "HTML report skipped" in result.stderr
    assert "1350.0/1350.0" in result.stdout and not (tmp_path / "p.html").exists()


@needs_libraries
def test_batch_writes_a_page_beside_each_report(tmp_path):
    roster = tmp_path / "students"
    for sid in ("alice", "bob"):
        (roster / sid / "ch01_programming_model").mkdir(parents=True)
        (roster / sid / "ch01_programming_model" / "vector_add.cu").write_text("//\n")
    out = tmp_path / "out"
    status, _ = run_batch(roster, out, Grades({"alice": (100, 0.9), "bob": (10, None)}))
    assert status == 0
    for sid in ("alice", "bob"):
        assert (out / "reports" / f"{sid}.json").is_file()
        assert 'id="ch01_programming_model/vector_add"' in (
            out / "reports" / f"{sid}.html").read_text(encoding="utf-8")
    assert batch.read_roster(roster)  # the pages do not disturb the roster or gradebook
    assert (out / "gradebook.csv").read_text().count("\n") == 3
    assert 'href="reports/alice.html"' in (out / "leaderboard.html").read_text()


@needs_libraries
def test_leaderboard_page_in_a_headless_browser(tmp_path):
    _need(_chromium() is not None, "chromium not found (apt-get install chromium, as root; "
          "scripts/setup.sh does it with CI=true)")
    roster = tmp_path / "students"
    for sid in ("alice", "bob", "carol"):
        (roster / sid / "ch01_programming_model").mkdir(parents=True)
        (roster / sid / "ch01_programming_model" / "vector_add.cu").write_text("//\n")
    out = tmp_path / "out"
    run_batch(roster, out, Grades({"alice": (100, 0.9), "bob": (60, 0.45), "carol": (0, None)}))
    dom = _browser("--dump-dom", (out / "leaderboard.html").as_uri(),
                   profile=tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = _text(dom.stdout)
    assert "vector_add: bandwidth" in text and "0.900" in text and "0.450" in text
    assert text.index("alice") < text.index("bob") and "carol" not in text


# ------------------------------------------------------------------ in a headless browser

def _chromium() -> str | None:
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


def _browser(*args: str, profile) -> subprocess.CompletedProcess:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=120)


@needs_libraries
@pytest.mark.parametrize("name", ["full", "failing"])
def test_page_in_a_headless_browser(name, tmp_path):
    _need(_chromium() is not None, "chromium not found (apt-get install chromium, as root; "
          "scripts/setup.sh does it with CI=true)")
    from PIL import Image  # comes with matplotlib

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / f"{name}.html"
    page.write_text(_page(name), encoding="utf-8")  # html_report.write's page, drawn once
    shot = SCREENSHOTS / f"{name}.png"
    shot.unlink(missing_ok=True)

    dom = _browser("--dump-dom", page.as_uri(), profile=tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    report = model.Report.load(REPORTS[name])
    for ex in report.exercises:
        assert f'id="{ex.key}"' in dom.stdout
    assert dom.stdout.count("<svg") >= 2 + 11
    assert "undefined" not in _text(dom.stdout) and "NaN" not in dom.stdout

    drawn = _browser("--window-size=1280,4000", f"--screenshot={shot}", page.as_uri(),
                     profile=tmp_path / "profile")
    assert drawn.returncode == 0 and shot.is_file(), drawn.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000
    with Image.open(shot) as image:
        assert image.size == (1280, 4000)
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50  # text, status badges, bars: not blank
    white = max(count for count, color in colors if color == (255, 255, 255))
    assert white < 0.97 * 1280 * 4000
    # the plots' own colours are there: the blue of this report's bars, the reference orange
    palette = {color for _, color in colors}
    assert (31, 119, 180) in palette and (255, 127, 14) in palette


# ------------------------------------------------------------- plots a reader can read

def _no_rung_measured() -> model.Report:
    """As after --build-only: a rung compiled, nothing was measured."""
    report = sample_report()
    report.exercises.append(model.ExerciseResult(
        "ch02_b/reduce_v1_neighbored", "reduce_v1_neighbored", "ch02_b", "Rung 1", "skipped",
        0.0, 100.0, "compiled (--build-only: not run)", [model.StageResult("build", "passed")]))
    return report


_REPORTS_FOR_FIGURES = {"every": _every_plot_kind, "no_rung": _no_rung_measured,
                        "h200": lambda: model.Report.load(REPORTS["h200"])}


@pytest.fixture(scope="module")
def figures():
    """name -> the matplotlib figures of that report's page, as drawn into it (each page is
    drawn once for the module's tests: drawing is what takes the time)."""
    drawn, cache, svg = [], {}, html_report._Plots._svg

    def keep(plots, fig):
        drawn.append(fig)
        return svg(plots, fig)

    def get(name: str) -> list:
        if name not in cache:
            _need(_libraries(), "jinja2/matplotlib not installed")
            drawn.clear()
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(html_report._Plots, "_svg", keep)
                html_report.page(_REPORTS_FOR_FIGURES[name]())
            cache[name] = list(drawn)
        return cache[name]
    return get


def _drawn_texts(fig, renderer) -> list:
    """The figure's visible, non-empty texts, tick labels only where their ticks are drawn
    (inside the axis' view)."""
    from matplotlib.text import Text

    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = 1e-9 * (high - low)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - slack <= tick.get_loc() <= high + slack:
                    hidden.update((tick.label1, tick.label2))
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and t not in hidden and t.get_window_extent(renderer).width > 0]


def _layout_problems(fig) -> list[str]:
    """What a reader would squint at, as found in the drawn figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Annotation

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    problems = []
    texts = _drawn_texts(fig, renderer)
    boxes = [t.get_window_extent(renderer).padded(-0.5) for t in texts]
    for i, (a, box_a) in enumerate(zip(texts, boxes)):
        for b, box_b in zip(texts[i + 1:], boxes[i + 1:]):
            if box_a.overlaps(box_b):
                problems.append(f"texts overlap: {a.get_text()!r} and {b.get_text()!r}")
        if "<N>" in a.get_text() or "<W>" in a.get_text():
            problems.append(f"a raw measurement pattern: {a.get_text()!r}")
    for t in texts:  # value labels stay inside their axes
        if isinstance(t, Annotation) and t.axes and not t.axes.bbox.padded(0.5).contains(
                *t.get_window_extent(renderer).min) or isinstance(t, Annotation) and t.axes \
                and not t.axes.bbox.padded(0.5).contains(*t.get_window_extent(renderer).max):
            problems.append(f"a value label outside its axes: {t.get_text()!r}")
    frames = [ax.get_window_extent(renderer) for ax in fig.axes]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    for legend in legends:
        if any(legend.get_window_extent(renderer).overlaps(frame) for frame in frames):
            problems.append("a legend over the data: " + ", ".join(
                t.get_text() for t in legend.get_texts()))
    # Inside the figure: what sticks out widens the SVG (bbox_inches="tight"), and the page
    # then shrinks the whole plot, axes to a strip.
    for thing in texts + legends:
        if not fig.bbox.padded(1).contains(*thing.get_window_extent(renderer).min) or \
                not fig.bbox.padded(1).contains(*thing.get_window_extent(renderer).max):
            words = thing.get_text() if hasattr(thing, "get_text") else ", ".join(
                t.get_text() for t in thing.get_texts())
            problems.append(f"outside the figure: {words!r}")
    if any(frame.width < 0.5 * fig.bbox.width for frame in frames):
        problems.append("axes narrower than half the figure")
    for ax in fig.axes:
        if not ax.get_xlabel():
            problems.append("an x axis without words")
        bottom, top = ax.get_ylim()
        for line in ax.get_lines():
            ys = [y for y in line.get_ydata() if math.isfinite(y)]
            data = line.get_transform() == ax.transData  # not a full-height or -width line
            if not ys or not (data or line.get_transform() == ax.get_yaxis_transform()):
                continue  # y in the data: the points and the horizontal reference lines
            if max(ys) > bottom + 0.95 * (top - bottom) or min(ys) < bottom:
                problems.append(f"a line on the frame: {line.get_label()} at {max(ys):g}")
            joined = line.get_linestyle() not in ("None", "none", "", " ")
            if data and joined and len(ys) < 3:
                problems.append(f"{len(ys)} points drawn as a line")
    return problems


@needs_libraries
@pytest.mark.parametrize("name", ["every", "h200", "no_rung"])
def test_plots_have_no_overlapping_text_and_legends_off_the_data(name, figures):
    """Every figure of the page with every kind of plot, of a real report from an H200, and
    of a ladder with no rung measured."""
    drawn = figures(name)
    assert drawn
    problems = {i: found for i, fig in enumerate(drawn) if (found := _layout_problems(fig))}
    assert problems == {}
    if name == "every":  # every kind of plot was drawn
        ylabels = [ax.get_ylabel() for fig in drawn for ax in fig.axes]
        xlabels = [ax.get_xlabel() for fig in drawn for ax in fig.axes]
        assert {"rate as a fraction of CUB", "rate as a fraction of cuBLAS", "bandwidth (GB/s)",
                "throughput (Gelem/s)"} <= set(ylabels)
        assert {"block shape (threads in x × in y)", "offset of the first element (elements)",
                "stride (elements)", "block size (threads)", "mask radius (pixels)",
                "number of bins", "throughput (TFLOP/s)", "rung"} <= set(xlabels)


@needs_libraries
def test_each_ladder_legend_names_only_its_own_ladder(figures):
    legends = {fig.axes[0].get_ylabel(): [t.get_text() for t in fig.legends[0].get_texts()]
               for fig in figures("every")
               if fig.legends and fig.axes[0].get_xlabel() == "rung"}
    assert legends == {
        "rate as a fraction of CUB": ["this report", "reference solutions on NVIDIA H100 80GB "
                                      "HBM3", "full marks at", "as fast as CUB"],
        "rate as a fraction of cuBLAS": ["this report", "reference solutions on NVIDIA H100 "
                                         "80GB HBM3", "full marks at", "as fast as cuBLAS"]}


@needs_libraries
def test_two_point_sweeps_are_points_and_gaps_break_the_line(figures):
    by_x = {}
    for fig in figures("every"):
        by_x.setdefault(fig.axes[0].get_xlabel(), []).append(fig.axes[0])
    radius = by_x["mask radius (pixels)"]
    assert len(radius) == 2  # conv2d_global_mask and conv2d_constant
    for ax in radius + by_x["number of bins"]:
        measured = ax.get_lines()[0]
        assert measured.get_linestyle() == "None" and measured.get_marker() == "o"
        assert len(measured.get_xdata()) == 2
    offsets = by_x["offset of the first element (elements)"][0].get_lines()[0]
    assert sum(1 for y in offsets.get_ydata() if math.isnan(y)) == 1  # offset 04 is invalid


@pytest.fixture(scope="module")
def plots_page():
    """build/html-report-test/plots.html: a page with one plot of every kind, written once."""
    _need(_libraries(), "jinja2/matplotlib not installed (pip install -r requirements.txt)")
    page = SCREENSHOTS / "plots.html"
    html_report.write(_every_plot_kind(compact=True), page)
    return page


@pytest.mark.parametrize("width", [1280, 600])
def test_plots_in_a_headless_browser_at_two_widths(width, plots_page, tmp_path):
    """The page with every kind of plot, as Chromium draws it in a wide and a narrow window
    (build/html-report-test/plots-1280.png, plots-600.png): drawn (not blank, the plots'
    colours there), nothing running off the right edge (no plot or table wider than the
    window), the page's end inside the window's height, and every plot on the screenshot."""
    _need(_chromium() is not None, "chromium not found (apt-get install chromium, as root; "
          "scripts/setup.sh does it with CI=true)")
    import numpy  # numpy and PIL come with matplotlib
    from PIL import Image

    page = plots_page
    shot = SCREENSHOTS / f"plots-{width}.png"
    shot.unlink(missing_ok=True)
    height = 15000
    drawn = _browser(f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri(),
                     profile=tmp_path / "profile")
    assert drawn.returncode == 0 and shot.is_file(), drawn.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (width, height)
        screen = numpy.asarray(image.convert("RGB"))  # rows x columns x RGB

    def rows_with(color) -> numpy.ndarray:
        return numpy.flatnonzero((screen == color).all(axis=2).any(axis=1))
    # this report's blue, the reference's orange, the full-marks green, the baseline grey
    for color in ((31, 119, 180), (255, 127, 14), (44, 160, 44), (154, 154, 154)):
        assert rows_with(color).size, color
    rows = numpy.flatnonzero((screen != 255).any(axis=(1, 2)))
    assert rows.size and rows[-1] < height - 200, "the page is longer than the window"
    assert rows[-1] > 3000  # a page of plots, not an error message
    # The page's padding stays white: no plot, table or heading runs off the right edge.
    edge = numpy.flatnonzero((screen[:, -6:] != 255).any(axis=(1, 2)))
    assert edge.size == 0, f"something runs off the right edge at rows {edge[:3]}"
    # Every plot was drawn: each has this report's blue, in a band of rows of its own.
    blue = rows_with((31, 119, 180))
    bands = 1 + int((numpy.diff(blue) > 40).sum()) if blue.size else 0
    assert bands >= page.read_text(encoding="utf-8").count("<svg")


@needs_libraries
def test_batch_leaves_no_page_older_than_the_report(tmp_path, monkeypatch):
    roster = tmp_path / "students"
    for sid in ("alice", "bob"):
        (roster / sid / "ch01_programming_model").mkdir(parents=True)
        (roster / sid / "ch01_programming_model" / "vector_add.cu").write_text("//\n")
    out = tmp_path / "out"
    run_batch(roster, out, Grades({"alice": (100, 0.9), "bob": (10, None)}))
    pages = {sid: out / "reports" / f"{sid}.html" for sid in ("alice", "bob")}
    assert all(page.is_file() for page in pages.values())
    # alice cannot be graded any more; bob is graded where the libraries are missing
    monkeypatch.setitem(sys.modules, "jinja2", None)
    run_batch(roster, out, Grades({"alice": RuntimeError("gone"), "bob": (20, None)}),
              regrade=[batch.ALL_STUDENTS])
    assert not pages["alice"].exists() and not pages["bob"].exists()
    assert (out / "reports" / "bob.json").is_file()


@needs_libraries
def test_a_ladder_with_no_rung_measured_says_so_once():
    """As after --build-only: the rungs compiled, nothing was measured."""
    html = html_report.page(_no_rung_measured())
    assert html.count("no rung measured in this report") == 1 and "not measured" not in html


# ------------------------------------------------------- grade --profile: counters, roofline

def _profiled() -> model.Report:
    return model.Report.load(PROFILED)


def _section(html: str, start: str) -> str:
    """From `start` to the end of its section."""
    begin = html.index(start)
    return html[begin:html.index("</section>", begin)]


@needs_libraries
def test_counters_table_rows_and_the_worse_rows_sentences():
    report = _profiled()
    html = html_report.page(report)
    shown = 0
    for ex in report.exercises:
        stage = ex.stage(model.StageName.PROFILE)
        section = _section(html, f'<section class="exercise" id="{ex.key}">')
        comparisons = stage.details["comparisons"]
        if not comparisons:  # vector_add: skipped, its message in one line and no table
            assert 'class="counters"' not in section
            line = re.search(r'<p class="profile-status">(.*?)</p>', section, re.S)[1]
            assert "\n" not in line and stage.message in unescape(_text(line))
            continue
        table = re.search(r'<table class="counters">.*?</table>', section, re.S)[0]
        text = unescape(_text(table))
        worse = [c for c in comparisons if c["verdict"] == "worse"]
        assert len(re.findall(r'<tr class="worse"[ >]', table)) == len(worse)
        assert table.count('<tr class="worse sentence">') == len(worse)
        shown += len(worse)
        for c in comparisons:
            assert c["title"] in text
            # a worse row's sentence is shown under it; the others' are tooltips only
            assert (c["sentence"] in text) == (c["verdict"] == "worse")
    assert shown == 3  # both of bank_conflicts' measures, matmul rung 2's FMA pipe
    text = " ".join(unescape(_text(html)).split())
    # bank_conflicts: 31.9 wavefronts against the reference's 1.00 and the course's 32.0
    assert "31.9 1.00 32.0 wavefronts/request" in text
    assert "86.9 — 94.6 % of peak" in text  # no reference DRAM throughput for coalescing
    assert "None" not in text and "nan" not in text.lower()
    # the calibration in one line near the top
    calibration = unescape(re.search(r'<td class="calibration">(.*?)</td>', html, re.S)[1])
    assert html.index('class="calibration"') < html.index('<h2>Exercises</h2>')
    assert calibration == (
        "calibrations/nvidia-h100-80gb-hbm3.json (NVIDIA H100 80GB HBM3); applied: "
        "coalescing/aligned_copy: full marks at 0.55 instead of 0.6 (lowered by calibration); "
        '<span class="flagged">flagged, kept as the manifests say: '
        'matmul_v2_shared_tiles/throughput</span>')


@needs_libraries
def test_an_errored_profile_stage_is_one_line_and_no_calibration_says_so():
    report = _profiled()
    stage = report.exercises[2].stage(model.StageName.PROFILE)
    stage.status = model.StageStatus.ERROR
    stage.message = "ncu could not profile bank_conflicts_bench: ERR_NVGPUCTRPERM"
    stage.details = model.Details.from_dict({"tool": "2025.3.1.0", "rows": [],
                                             "comparisons": [], "problem": "ERR_NVGPUCTRPERM"})
    stage.output = "==PROF== Connected to process 4242\n==ERROR== Failed to profile kernel"
    report.calibration = {"status": "none", "file": "", "gpu": "nvidia-h100-80gb-hbm3",
                          "applied": [], "flagged": []}
    html = html_report.page(report)
    section = _section(html, f'<section class="exercise" id="{report.exercises[2].key}">')
    assert 'class="counters"' not in section
    assert re.search(r'<p class="profile-status"><span class="status error">error</span> '
                     r'ncu could not profile bank_conflicts_bench: ERR_NVGPUCTRPERM</p>', section)
    assert "==ERROR== Failed to profile kernel</pre></details>" in section
    assert re.search(r'<td class="calibration">none for NVIDIA H100 80GB HBM3: the thresholds '
                     r"are the course&#39;s, measured on the H100 and H200</td>", html)
    report.calibration = {}  # a report from before calibrations: no line at all
    assert 'class="calibration"' not in html_report.page(report)


def _roofline(report: model.Report, memory=None, fp32=None) -> str:
    points, _, _ = html_report.roofline_points(report)
    found = html_report.roof_ceilings(report)
    return html_report.Roofline(points, memory or found[0], fp32 or found[1]).svg()


def test_roofline_has_both_roofs_and_one_point_per_profiled_row():
    """The standard library alone draws it (no plotting package)."""
    report = _profiled()
    rows = [(ex.name, r) for ex in report.exercises
            for r in ex.stage(model.StageName.PROFILE).details["rows"]]
    assert len(rows) == 8
    svg = _roofline(report)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and svg.endswith("</svg>")
    assert svg.count('class="roof memory"') == 1 and svg.count('class="roof fp32"') == 1
    points = re.findall(r'<g class="point (\w+)"><title>(.*?)</title><circle cx="([\d.]+)" '
                        r'cy="([\d.]+)"', svg, re.S)
    assert sorted(role for role, *_ in points) == sorted(r["role"] for _, r in rows)
    tooltips = [unescape(title) for _, title, _, _ in points]
    for name, row in rows:  # each row's point, its tooltip first naming it, its label
        label = f"{name}/{row['measure']}"
        assert sum(t.startswith(label + ":") for t in tooltips) == 1, label
        assert row["measure"] in " ".join(re.findall(r'class="point-label"[^>]*>([^<]*)<', svg))
    # copies do no FP32 work: placed at the floor intensity, and their tooltips say so
    copies = [t for t in tooltips if t.startswith("coalescing/")]
    assert len(copies) == 2 and all("no FP32 work (a copy): placed at the floor intensity "
                                    "0.01 FLOP/byte" in t for t in copies)
    assert "no FP32 work" in svg
    # cuBLAS is the FP32 ceiling the run measured: its point lies on the FP32 roof
    roof_y = float(re.search(r'class="roof fp32" x1="[\d.]+" y1="([\d.]+)"', svg)[1])
    cublas = next(p for p in points if unescape(p[1]).startswith(
        "matmul_v2_shared_tiles/cublas_sgemm:"))
    assert float(cublas[3]) == pytest.approx(roof_y, abs=1.0)
    student = next(unescape(t) for t in tooltips if t.startswith("matmul_v2_shared_tiles/matmul"))
    assert "arithmetic intensity: 58.4 FLOP/byte" in student  # 2 * 4096^3 / 2.35 GB
    assert "achieved: 7,602 GFLOP/s, 15% of the roof here (51,495 GFLOP/s)" in student
    assert "NaN" not in svg and "inf" not in svg


def test_roofline_ceilings_come_from_the_report_before_the_calibration(tmp_path, monkeypatch):
    """The course's own measured ceilings (the copy ceiling, cuBLAS SGEMM) when the report
    has them; else calibrations/<slug>.json's figures for the report's GPU; else no roof."""
    monkeypatch.setattr(html_report, "COURSE", tmp_path)
    (tmp_path / "calibrations").mkdir()
    (tmp_path / "calibrations" / "nvidia-h100-80gb-hbm3.json").write_text(json.dumps(
        {"gpu": {"name": "NVIDIA H100 80GB HBM3", "memory_bandwidth_gbs": 3350.0,
                 "fp32_tflops": 67.0}}))
    report = _profiled()
    memory, fp32 = html_report.roof_ceilings(report)
    # the larger of the two copy ceilings: vector_add's copy:402653184, not copy:67108864
    assert memory.value == pytest.approx(805306368 / 0.2846e-3 / 1e9)
    assert fp32.value == pytest.approx(2 * 4096 ** 3 / 2.669e-3 / 1e9)  # cuBLAS SGEMM
    assert "measured in this run" in memory.source and "copy:402653184" in memory.detail
    assert "measured in this run" in fp32.source and "cublas_sgemm" in fp32.detail
    # without the copy ceiling: the memory roof from the calibration, the FP32 roof still
    # the run's own
    for ex in report.exercises:
        bench = ex.stage(model.StageName.BENCHMARK)
        if bench and bench.details.get("measurements"):
            for m in bench.details["measurements"]:
                if m["key"].startswith("copy:"):
                    m["valid"] = False
    memory, fp32 = html_report.roof_ceilings(report)
    assert memory.value == 3350.0
    assert memory.source == "the course's copy ceiling in calibrations/nvidia-h100-80gb-hbm3.json"
    assert "measured in this run" in fp32.source
    svg = _roofline(report)
    assert ("memory roof: 3,350 GB/s, the course's copy ceiling in "
            "calibrations/nvidia-h100-80gb-hbm3.json") in unescape(svg)
    assert "FP32 roof: 51.5 TFLOP/s, cuBLAS SGEMM, measured in this run" in svg
    # neither measured nor calibrated: no roofs, the points still placed
    for ex in report.exercises:
        for stage in ex.stages:
            if stage.name == model.StageName.BENCHMARK:
                stage.details = model.Details.from_dict({})
    (tmp_path / "calibrations" / "nvidia-h100-80gb-hbm3.json").unlink()
    assert html_report.roof_ceilings(report) == (None, None)
    svg = _roofline(report)
    assert 'class="roof ' not in svg and svg.count('<g class="point') == 8
    assert "no memory roof" in svg and "no FP32 roof" in svg


@needs_libraries
def test_roofline_section_only_where_an_exercise_was_profiled():
    html = html_report.page(_profiled())
    section = _section(html, '<section class="roofline" id="roofline">')
    assert html.index("<h2>Exercises</h2>") < html.index('id="roofline"') < html.index(
        '<section class="exercise"')  # after the summary, before the exercises
    assert section.count("<svg") == 1 and section.count('<g class="point') == 8
    assert "Memory roof: 2,830 GB/s, the course's copy ceiling, measured in this run" in \
        unescape(_text(section))
    for name in REPORTS:  # no profile stage: no section
        assert html_report._roofline_view(model.Report.load(REPORTS[name]), str) is None
    report = _profiled()
    report.exercises = report.exercises[:1]  # vector_add: a profile stage, skipped
    assert html_report.roofline_points(report) == ([], [], False)
    assert 'id="roofline"' not in html_report.page(report)


def _png_pixels(path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit RGB or RGBA PNG, decoded with the
    standard library (zlib and the PNG filters), alpha dropped."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, [], None
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", data[pos + 8:pos + 8 + size])
        elif kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + size])
        pos += 12 + size
    width, height, depth, color, _, _, interlaced = head
    assert depth == 8 and color in (2, 6) and not interlaced, head
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    prev, rows = bytearray(stride), []
    for r in range(height):
        start = r * (stride + 1)  # each row: its filter's byte, then the filtered bytes
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:    # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                line[i] = (line[i] + (((line[i - bpp] if i >= bpp else 0) + prev[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a, c = (line[i - bpp], prev[i - bpp]) if i >= bpp else (0, 0)
                b = prev[i]
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(
            v for i, v in enumerate(line) if i % 4 != 3))
        prev = line
    return width, height, rows


@pytest.mark.same_in_template  # a headless browser, as the other browser tests
@needs_libraries
def test_roofline_in_a_headless_browser(tmp_path):
    """build/html-report-test/roofline.png: the saved profiled report as Chromium draws it,
    its top (the calibration line, the summary, the roofline). The chart is found by its plot
    area's background; inside it, many colours (lines, points and text anti-aliased, not a
    blank box), the two roofs' and the exercises' point colours among them."""
    _need(_chromium() is not None, "chromium not found (apt-get install chromium, as root; "
          "scripts/setup.sh does it with CI=true)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / "roofline.html"
    html_report.write(_profiled(), page)
    shot = SCREENSHOTS / "roofline.png"
    shot.unlink(missing_ok=True)
    drawn = _browser("--window-size=1280,1400", f"--screenshot={shot}", page.as_uri(),
                     profile=tmp_path / "profile")
    assert drawn.returncode == 0 and shot.is_file(), drawn.stderr[-2000:]
    width, height, rows = _png_pixels(shot)
    assert (width, height) == (1280, 1400)
    background = bytes(int(html_report._PLOT_BACKGROUND[i:i + 2], 16) for i in (1, 3, 5))
    found = [(y, [x // 3 for x in range(0, len(row), 3) if row[x:x + 3] == background])
             for y, row in enumerate(rows)]
    found = [(y, xs[0], xs[-1]) for y, xs in found if xs]
    assert found, "no roofline plot on the screenshot"
    top, bottom = found[0][0], found[-1][0]
    left, right = min(x for _, x, _ in found), max(x for _, _, x in found)
    assert right - left > 500 and bottom - top > 300  # the whole plot, not a sliver
    area = [rows[y][3 * x:3 * x + 3] for y in range(top, bottom + 1)
            for x in range(left, right + 1)]
    colors = set(area)
    assert len(colors) > 200
    assert area.count(background) < 0.97 * len(area)
    expected = [html_report._ROOF_COLORS["memory"], html_report._ROOF_COLORS["fp32"],
                *html_report._POINT_COLORS[:3]]  # the three profiled exercises' points
    for color in expected:
        assert bytes(int(color[i:i + 2], 16) for i in (1, 3, 5)) in colors, color
