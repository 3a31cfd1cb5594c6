"""The HTML view of a Report: one self-contained page (inline CSS and SVG; no script, nothing
fetched) with each exercise's stages, failing cases, sanitizer findings, technique rules, and
plots of the benchmark stage's measurements: each metric against its in-run baseline, the
ladders (each rung's ratio beside reference ratios from grader/reference_ratios.json), and the
sweeps a benchmark reports as families of measurements.

Jinja2 and matplotlib come from requirements.txt; the rest of the grader needs only the
standard library, so they are imported only when a page is made, and a machine without them
gets Unavailable (the grade itself goes on).
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.model import CaseStatus, ExerciseResult, Metric, Report, StageStatus

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference_ratios.json"
MISSING = ("HTML report skipped: jinja2/matplotlib not installed "
           "(pip install jinja2 matplotlib, or: pip install -r requirements.txt)")
_MAX_CASES = 20                 # failing cases shown per stage
# Families of measurements: a shape (sweep_32x8) or a number (offset_copy_offset_07,
# reduce_v5_unroll8_b256) between a shared prefix and suffix.
_SHAPE = re.compile(r"^(?P<prefix>.*?)(?P<x>\d+)x(?P<y>\d+)(?P<suffix>\D*)$")
_NUMBER = re.compile(r"^(?P<prefix>.*\D)(?P<n>\d+)(?P<suffix>\D*)$")
_COLORS = {"measure": "#1f77b4", "baseline": "#9a9a9a", "reference": "#ff7f0e",
           "full": "#2ca02c", "zero": "#d62728"}


class Unavailable(Exception):
    """Jinja2 or matplotlib cannot be imported here."""


def write(report: Report, path: Path) -> None:
    """Writes the page; Unavailable without the libraries, OSError when it cannot be written."""
    _write_whole(path, page(report))


def write_if_available(report: Report, path: Path) -> bool:
    """For batch grading: the page beside the JSON when the libraries are there; else no
    page, not an older one that no longer matches the JSON."""
    try:
        write(report, path)
    except Unavailable:
        path.unlink(missing_ok=True)
        return False
    return True


def page(report: Report) -> str:
    env = _environment()
    plots = _Plots()
    svg = _import("markupsafe").Markup  # plots are our own SVG, not text to escape
    exercises = [_exercise_view(ex, plots, svg) for ex in report.exercises]
    reference = _reference()
    ladders = [dict(title=l["title"], svg=svg(plots.ladder(l, rungs, reference)))
               for l in reference["ladders"] if (rungs := ladder_rungs(report, l))]
    return env.get_template("report.html.j2").render(
        report=report, exercises=exercises, ladders=ladders, reference=reference,
        status_text=lambda s: str(s).replace("_", " "), pts=lambda x: f"{round(x, 1):g}")


def write_leaderboard_if_available(ranked: list, path: Path) -> bool:
    """A batch's leaderboard as a page (leaderboard.html beside leaderboard.csv): per exercise
    and metric, the students' ratios best first, each linking to the student's report page.
    Without Jinja2 no page, and no older one left behind."""
    try:
        env = _environment()
    except Unavailable:
        path.unlink(missing_ok=True)
        return False
    _write_whole(path, env.get_template("leaderboard.html.j2").render(
        boards=[dict(exercise=e, metric=m, rows=rows, best=max(r for _, _, r in rows))
                for e, m, rows in ranked]))
    return True


def _environment():
    """The templates' Jinja2 environment; Unavailable without Jinja2."""
    jinja2 = _import("jinja2")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


def _write_whole(path: Path, text: str) -> None:
    """Written beside and renamed: a reader never sees half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _import(name: str):
    try:
        return __import__(name)
    except ImportError:
        raise Unavailable(MISSING) from None


def _reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ what the page shows

def _exercise_view(ex: ExerciseResult, plots: _Plots, svg) -> dict:
    failing = []
    for stage in ex.stages:
        if stage.name == "technique":
            continue  # its cases are the rules, shown as their own table
        bad = [c for c in stage.cases if c.status != CaseStatus.PASSED]
        if bad:
            failing.append(dict(stage=stage.name, cases=bad[:_MAX_CASES],
                                more=max(0, len(bad) - _MAX_CASES)))
    bench = ex.stage("benchmark")
    metrics = bench.metrics if bench else []
    measured = [m for m in metrics if m.value is not None and m.baseline_value]
    families = sweeps(bench.details.get("measurements", []), metrics) if bench else []
    return dict(
        ex=ex, failing=failing, sanitizer=ex.stage("sanitizer"), build=ex.stage("build"),
        technique=ex.stage("technique"), metrics=metrics,
        metric_svg=svg(plots.metrics(measured)) if measured else None,
        sweeps=[dict(family=f, svg=svg(plots.sweep(f))) for f in families],
        stopped=[s for s in ex.stages if s.output and s.name not in ("build", "sanitizer")
                 and s.status in (StageStatus.CRASHED, StageStatus.TIMED_OUT,
                                  StageStatus.EXITED_EARLY)])


@dataclass
class Rung:
    number: int
    ratio: float | None           # this report's; None when not measured
    reference: float | None
    full_at: float | None


def ladder_rungs(report: Report, ladder: dict) -> list[Rung]:
    """The ladder's rungs graded in this report (by exercise name), with the reference ratio
    of every rung the reference file has. A ladder with `metric` plots that metric's ratio; one
    with `over` plots each rung's graded measurement (its first metric's measure) over the
    measurement `over` names in the same benchmark, whatever baseline the rung is scored
    against, and moves the full-marks line onto the same scale."""
    pattern = re.compile(re.escape(ladder["exercise_prefix"]) + r"(\d+)(_|$)")
    found = {}
    for ex in report.exercises:
        if match := pattern.match(ex.name):
            found[int(match.group(1))] = _ladder_point(ex, ladder)
    if not found:
        return []
    reference = {int(k): v for k, v in ladder["ratios"].items()}
    rungs = []
    for n in sorted(set(found) | set(reference)):
        ratio, full_at = found.get(n, (None, None))
        rungs.append(Rung(n, ratio, reference.get(n), full_at))
    return rungs


def _ladder_point(ex: ExerciseResult, ladder: dict) -> tuple[float | None, float | None]:
    """(ratio, full-marks ratio) of one rung on the ladder's scale; None where not measured."""
    bench = ex.stage("benchmark")
    metrics = bench.metrics if bench else []
    if "over" not in ladder:
        metric = next((m for m in metrics if m.name == ladder["metric"]), None)
        return (_finite(metric.ratio), metric.full_at) if metric else (None, None)
    metric = metrics[0] if metrics else None
    rates = {m.get("name"): _finite(m.get("rate")) for m in bench.details.get("measurements", [])
             if isinstance(m, dict) and m.get("valid") is True} if bench else {}
    over = rates.get(ladder["over"])
    value = _finite(metric.value) if metric else None
    baseline = _finite(metric.baseline_value) if metric else None
    if not over or value is None:
        return None, None
    return value / over, (metric.full_at * baseline / over if baseline else None)


@dataclass
class Family:
    """Measurements that differ only by a number or a shape in their names."""
    prefix: str
    suffix: str
    unit: str
    shape: bool                   # x is a shape label (32x8), plotted as categories
    points: list[tuple] = field(default_factory=list)   # (x, label, rate)
    skipped: list[str] = field(default_factory=list)    # invalid or without a rate
    lines: list[tuple] = field(default_factory=list)    # (name, rate): reference lines

    @property
    def title(self) -> str:
        return f"{self.prefix}{'<W>x<H>' if self.shape else '<N>'}{self.suffix}"


def sweeps(measurements: list, metrics: list[Metric]) -> list[Family]:
    """Families of two or more measurements with one unit, each point the measurement's rate.
    The exercise's metric measurements outside a family, and a measurement named like the
    family without its number (the reduction ladder's graded block size), become reference
    lines."""
    entries = [m for m in measurements if isinstance(m, dict) and isinstance(m.get("name"), str)]
    families: dict[tuple, Family] = {}
    for m in entries:
        name, unit = m["name"], str(m.get("unit", ""))
        if shape := _SHAPE.match(name):
            x, y = int(shape["x"]), int(shape["y"])
            key, xvalue, label = (shape["prefix"], shape["suffix"], unit, True), None, f"{x}x{y}"
        elif number := _NUMBER.match(name):
            key, xvalue, label = ((number["prefix"], number["suffix"], unit, False),
                                  int(number["n"]), number["n"])
        else:
            continue
        family = families.setdefault(key, Family(key[0], key[1], unit, key[3]))
        rate = _finite(m.get("rate"))
        if m.get("valid") is True and rate is not None:
            family.points.append((xvalue, label, rate))
        else:
            family.skipped.append(name)
    rates = {m["name"]: _finite(m.get("rate")) for m in entries if m.get("valid") is True}
    units = {m["name"]: str(m.get("unit", "")) for m in entries}
    out = []
    for family in families.values():
        if len(family.points) < 2:
            continue
        if not family.shape:
            family.points.sort(key=lambda p: p[0])
        members = {f"{family.prefix}{label}{family.suffix}" for _, label, _ in family.points}
        bare = family.prefix.rstrip("_").removesuffix("_b") if family.prefix.endswith("_b") \
            else None
        names = [bare] + [n for m in metrics for n in (m.measure, m.baseline)]
        for name in dict.fromkeys(n for n in names if n):
            if (name not in members and rates.get(name) is not None
                    and units.get(name) == family.unit):
                family.lines.append((name, rates[name]))
        out.append(family)
    return out


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# ------------------------------------------------------------------------------ the plots

class _Plots:
    """matplotlib figures as inline SVG. Each figure gets its own hash salt, so the ids inside
    one page's SVGs (clip paths) never collide."""

    def __init__(self):
        self._matplotlib = _import("matplotlib")
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
        self._figure = Figure
        self._count = 0

    def _svg(self, fig) -> str:
        self._count += 1
        buffer = io.StringIO()
        with self._matplotlib.rc_context({"svg.fonttype": "none",
                                          "svg.hashsalt": f"figure{self._count}"}):
            # No metadata: no date (the same report gives the same page) and no RDF block.
            fig.savefig(buffer, format="svg", bbox_inches="tight",
                        metadata=dict.fromkeys(("Creator", "Date", "Format", "Type")))
        text = buffer.getvalue()
        return text[text.index("<svg"):]  # the page is HTML: no XML prolog or DOCTYPE

    def metrics(self, metrics: list[Metric]) -> str:
        """Per metric: the measure's and the baseline's rates, with the rates at which the
        metric earns full marks and none."""
        fig = self._figure(figsize=(7.5, 1.35 * len(metrics) + 0.3))
        axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
        for ax, m in zip(axes, metrics):
            ax.barh([1, 0], [m.value, m.baseline_value],
                    color=[_COLORS["measure"], _COLORS["baseline"]], height=0.6)
            ax.set_yticks([1, 0], [f"{m.measure} (yours)", f"{m.baseline} (baseline)"])
            for at, what in ((m.full_at, "full"), (m.zero_at, "zero")):
                ax.axvline(at * m.baseline_value, color=_COLORS[what], linestyle="--",
                           linewidth=1.2, label=f"{what} marks at {at:g}x")
            ax.set_title(f"{m.name}: {m.ratio:.2f}x {m.baseline}, {m.points:g}/"
                         f"{m.max_points:g} points", fontsize=10, loc="left")
            ax.set_xlabel(m.unit, fontsize=9)
            ax.set_xlim(0, max(m.value, m.baseline_value, m.full_at * m.baseline_value) * 1.1)
            ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
            ax.tick_params(labelsize=8)
        fig.tight_layout()
        return self._svg(fig)

    def ladder(self, ladder: dict, rungs: list[Rung], reference: dict) -> str:
        fig = self._figure(figsize=(max(4.5, 0.9 * len(rungs) + 2), 3.2))
        ax = fig.subplots()
        xs = list(range(len(rungs)))
        width = 0.38
        mine = [(x, r.ratio) for x, r in zip(xs, rungs) if r.ratio is not None]
        theirs = [(x, r.reference) for x, r in zip(xs, rungs) if r.reference is not None]
        if mine:
            bars = ax.bar([x - width / 2 for x, _ in mine], [v for _, v in mine], width,
                          color=_COLORS["measure"], label="this report")
            ax.bar_label(bars, fmt="%.2f", fontsize=7)
        if theirs:
            bars = ax.bar([x + width / 2 for x, _ in theirs], [v for _, v in theirs], width,
                          color=_COLORS["reference"],
                          label=f"reference ({reference['gpu']}, {reference['date']})")
            ax.bar_label(bars, fmt="%.2f", fontsize=7)
        full = [(x, r.full_at) for x, r in zip(xs, rungs) if r.full_at is not None]
        if full:
            ax.scatter([x for x, _ in full], [v for _, v in full], marker="_", s=400,
                       color=_COLORS["full"], label="full marks at", zorder=3)
        if not mine:  # e.g. --build-only: one note, not one per rung
            ax.text(0.5, 0.8, "no rung measured in this report", transform=ax.transAxes,
                    ha="center", fontsize=9, color="#555555")
        for x, r in zip(xs, rungs):
            if r.ratio is None and mine:
                ax.text(x - width / 2, 0.02, "not measured", rotation=90, fontsize=7,
                        ha="center", va="bottom", color="#555555")
        ax.axhline(1.0, color="#444444", linewidth=0.8)
        ax.set_xticks(xs, [f"v{r.number}" for r in rungs])
        ax.set_ylabel(f"ratio to {ladder['baseline']}")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
        ax.set_ylim(0, max([1.15] + [v * 1.15 for _, v in mine + theirs]))
        fig.tight_layout()
        return self._svg(fig)

    def sweep(self, family: Family) -> str:
        fig = self._figure(figsize=(7.5, 3.0))
        ax = fig.subplots()
        if family.shape:
            xs = list(range(len(family.points)))
            ax.bar(xs, [rate for _, _, rate in family.points], color=_COLORS["measure"])
            ax.set_xticks(xs, [label for _, label, _ in family.points], rotation=45,
                          fontsize=8)
        else:
            numbers = [x for x, _, _ in family.points]
            ax.plot(numbers, [rate for _, _, rate in family.points], marker="o",
                    color=_COLORS["measure"])
            if min(numbers) > 0 and max(numbers) / min(numbers) >= 16:
                ax.set_xscale("log", base=2)
            if len(numbers) <= 12:
                ax.set_xticks(numbers, [str(n) for n in numbers], fontsize=8)
        styles = iter(["--", ":", "-."])
        for name, rate in family.lines[:3]:
            ax.axhline(rate, color=_COLORS["baseline"], linestyle=next(styles), label=name)
        if family.lines:
            ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
        ax.set_title(family.title, fontsize=10, loc="left")
        ax.set_ylabel(family.unit)
        ax.set_ylim(bottom=0)
        fig.tight_layout()
        return self._svg(fig)
