"""grader.html_report: the self-contained HTML page, its plots, the --html flags, the page
beside each batch report, and the page as a real headless browser draws it.

tests/data/html/ holds two reports: full_report.json (full marks) and failing_report.json
(failing cases, sanitizer findings, a broken technique rule, a crash, a compile error, a rung
that was not measured, an invalid sweep point); both have both ladders and several sweeps.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from grader import batch, cli, html_report, model
from helpers import PYTHON, ROOT, TESTS, sample_report
from test_batch import Grades, run_batch  # noqa: F401 (a batch with a fake grade function)
from test_cli import faked_grade  # noqa: F401 (fixture: a whole grade with stand-ins)
from fakes import bench_data

DATA = TESTS / "data" / "html"
REPORTS = {"full": DATA / "full_report.json", "failing": DATA / "failing_report.json"}
SCREENSHOTS = ROOT / "build" / "html-report-test"
IN_CI = os.environ.get("CI") == "true"


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


def _page(name: str) -> str:
    return html_report.page(model.Report.load(REPORTS[name]))


def _text(html: str) -> str:
    """What a reader sees: the page without tags (SVG text elements included)."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", "", html, flags=re.S))


# ------------------------------------------------------------------------ the page itself

@needs_libraries
@pytest.mark.parametrize("name", ["full", "failing"])
def test_page_has_every_exercise_and_its_plots(name):
    report = model.Report.load(REPORTS[name])
    html = html_report.page(report)
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


def test_sweeps_group_names_by_number_or_shape():
    def m(name, rate, unit="GB/s", valid=True):
        return {"name": name, "unit": unit, "median_ms": 1, "rate": rate, "valid": valid}
    measurements = [m("cub_reduce_sum", 100), m("reduce_v2_x", 50), m("reduce_v2_x_b1024", 40),
                    m("reduce_v2_x_b256", 30), m("sweep_32x8", 9), m("sweep_16x16", 8),
                    m("sweep_4x4", None), m("off_07", 1, "GB/s"), m("off_08", 2, "ms"),
                    m("alone_3", 5)]
    metric = model.Metric("vs_cub", "", "reduce_v2_x", "cub_reduce_sum", 50, 100, "GB/s", 0.5,
                          0.8, 0.3, 0, 60)
    families = {f.title: f for f in html_report.sweeps(measurements, [metric])}
    assert set(families) == {"reduce_v2_x_b<N>", "sweep_<W>x<H>"}  # off_: two units; alone
    rungs = families["reduce_v2_x_b<N>"]
    assert [(x, rate) for x, _, rate in rungs.points] == [(256, 30), (1024, 40)]
    # the graded (unsuffixed) measurement and the baseline as reference lines
    assert rungs.lines == [("reduce_v2_x", 50), ("cub_reduce_sum", 100)]
    shapes = families["sweep_<W>x<H>"]
    assert [label for _, label, _ in shapes.points] == ["32x8", "16x16"]  # reported order
    assert shapes.skipped == ["sweep_4x4"]


def test_ladder_rungs_pair_the_report_with_the_reference():
    report = model.Report.load(REPORTS["failing"])
    reduce, matmul = html_report._reference()["ladders"]
    rungs = html_report.ladder_rungs(report, matmul)
    assert [(r.number, r.reference) for r in rungs] == [(1, 0.12), (2, 0.17), (3, 0.69),
                                                         (4, 0.86)]
    assert rungs[3].ratio is None  # the report has no rung 4
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
    html_report.write(model.Report.load(REPORTS[name]), page)
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
    report = sample_report()
    report.exercises.append(model.ExerciseResult(
        "ch02_b/reduce_v1_neighbored", "reduce_v1_neighbored", "ch02_b", "Rung 1", "skipped",
        0.0, 100.0, "compiled (--build-only: not run)", [model.StageResult("build", "passed")]))
    html = html_report.page(report)
    assert html.count("no rung measured in this report") == 1 and "not measured" not in html
