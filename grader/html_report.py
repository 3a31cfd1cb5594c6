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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.model import CaseStatus, ExerciseResult, Metric, Report, StageName, StageStatus

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference_ratios.json"
MISSING = ("HTML report skipped: jinja2/matplotlib not installed "
           "(pip install jinja2 matplotlib, or: pip install -r requirements.txt)")
_MAX_CASES = 20                 # failing cases shown per stage
# Families of measurements: a shape (sweep_32x8) or a number (offset_copy_offset_07,
# reduce_v5_unroll8_b256) between a shared prefix and suffix.
_SHAPE = re.compile(r"^(?P<prefix>.*?)(?P<x>\d+)x(?P<y>\d+)(?P<suffix>\D*)$")
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
    # a ladder's own date where the reference file gives one: its note names only its rungs
    ladders = [dict(title=l["title"], date=l.get("date", reference["date"]),
                    svg=svg(plots.ladder(l, rungs, reference)))
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
        if stage.name == StageName.TECHNIQUE:
            continue  # its cases are the rules, shown as their own table
        bad = [c for c in stage.cases if c.status != CaseStatus.PASSED]
        if bad:
            failing.append(dict(stage=stage.name, cases=bad[:_MAX_CASES],
                                more=max(0, len(bad) - _MAX_CASES)))
    bench = ex.stage(StageName.BENCHMARK)
    metrics = bench.metrics if bench else []
    measured = [m for m in metrics if m.value is not None and m.baseline_value]
    families = sweeps(bench.details.get("measurements", []), metrics) if bench else []
    return dict(
        ex=ex, failing=failing, sanitizer=ex.stage(StageName.SANITIZER),
        build=ex.stage(StageName.BUILD), technique=ex.stage(StageName.TECHNIQUE), metrics=metrics,
        metric_svg=svg(plots.metrics(measured)) if measured else None,
        sweeps=[dict(family=f, svg=svg(plots.sweep(f))) for f in families],
        stopped=[s for s in ex.stages if s.output
                 and s.name not in (StageName.BUILD, StageName.SANITIZER)
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
    bench = ex.stage(StageName.BENCHMARK)
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


@dataclass(frozen=True)
class _Words:
    """A sweep in words: `pattern` matches the family's pattern (offset_copy_offset_<N>); the
    title is "<subject>: <rate> by <x name>" (the subject a format string of the pattern's
    groups) and the x axis "<x name> (<x unit>)". `bare`: the x of the measurement named like
    the family without its number (group `name` of the pattern), a point of the family."""
    pattern: str
    subject: str
    x_name: str
    x_unit: str = ""
    bare: int | None = None


# The sweeps the course's benchmarks report (chapters/*/*/*_bench.cpp).
_SWEEP_WORDS = [
    _Words(r"sweep_<W>x<H>", "the course's 2D sum", "block shape", "threads in x × in y"),
    _Words(r"offset_copy_offset_<N>", "offset_copy", "offset of the first element",
           "elements"),
    _Words(r"strided_copy_stride_<N>", "strided_copy", "stride", "elements"),
    _Words(r"sweep_b<N>_(?P<rule>\w+)", "streaming_scale, grid of {rule}", "block size",
           "threads"),
    # reduce_ladder_bench.cpp: the rung unsuffixed is the rung at block size 512
    _Words(r"(?P<name>reduce_v\d+\w*)_b<N>", "{name}", "block size", "threads", bare=512),
    _Words(r"(?P<name>conv2d\w*)_r<N>", "{name}", "mask radius", "pixels"),
    _Words(r"(?P<name>[a-z]+)_(?P<input>uniform|skewed)_<N>", "{name}, {input} values",
           "number of bins"),
    _Words(r"(?P<name>\w+)_n<N>", "{name}", "problem size", "elements"),
]
_UNIT_WORDS = {"GB/s": "bandwidth", "TFLOP/s": "throughput", "Gelem/s": "throughput"}


def rate_words(unit: str) -> str:
    """A rate's axis in words: 'bandwidth (GB/s)'."""
    word = _UNIT_WORDS.get(unit, "rate")
    return f"{word} ({unit})" if unit else word


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
    gaps: list[int] = field(default_factory=list)       # the x of skipped numbers
    graded: list[str] = field(default_factory=list)     # labels of the metric's measurements
    roles: dict = field(default_factory=dict)           # line name: "yours" or "baseline"
    title: str = ""               # in words: "offset_copy: bandwidth by offset of ..."
    x_label: str = ""             # in words, with the unit: "stride (elements)"

    @property
    def pattern(self) -> str:
        return f"{self.prefix}{'<W>x<H>' if self.shape else '<N>'}{self.suffix}"

    def name(self, label: str) -> str:
        return f"{self.prefix}{label}{self.suffix}"


def sweeps(measurements: list, metrics: list[Metric]) -> list[Family]:
    """Families of two or more measurements with one unit, each point the measurement's rate.
    A name with several numbers joins the family the most names share (sweep_b128_one_block_
    per_256_elements: the block size varies). The exercise's metric measurements outside a
    family become reference lines, and those inside are marked as graded."""
    entries = [m for m in measurements if isinstance(m, dict) and isinstance(m.get("name"), str)]
    candidates = [(m, _candidates(m["name"], str(m.get("unit", "")))) for m in entries]
    shared = Counter(key for _, found in candidates for key, _, _ in found)
    families: dict[tuple, Family] = {}
    for m, found in candidates:
        if not found:
            continue
        # the largest family; of equals, the last number (reduce_v1_neighbored_b256: b)
        key, xvalue, label = max(reversed(found), key=lambda c: shared[c[0]])
        family = families.setdefault(key, Family(key[0], key[1], key[2], key[3]))
        _add(family, m, xvalue, label)
    rates = {m["name"]: _finite(m.get("rate")) for m in entries if m.get("valid") is True}
    units = {m["name"]: str(m.get("unit", "")) for m in entries}
    measures = {m.measure for m in metrics}
    out = []
    for family in families.values():
        words = _describe(family)
        if words.bare is not None and not family.shape:
            bare = re.fullmatch(words.pattern, family.pattern)["name"]
            if (m := next((e for e in entries if e["name"] == bare), None)) and \
                    str(m.get("unit", "")) == family.unit:
                _add(family, m, words.bare, str(words.bare), name=bare)
        if len(family.points) < 2:
            continue
        if not family.shape:
            family.points.sort(key=lambda p: p[0])
        members = {family.name(label) for _, label, _ in family.points}
        if words.bare is not None:
            members.add(bare)
        names = [n for m in metrics for n in (m.measure, m.baseline)]
        for name in dict.fromkeys(n for n in names if n):
            if (name not in members and rates.get(name) is not None
                    and units.get(name) == family.unit):
                family.lines.append((name, rates[name]))
                family.roles[name] = "yours" if name in measures else "baseline"
        family.graded = [label for _, label, _ in family.points
                         if family.name(label) in measures
                         or (words.bare is not None and label == str(words.bare)
                             and bare in measures)]
        out.append(family)
    return out


def _candidates(name: str, unit: str) -> list[tuple]:
    """(family key, x, label) for each way the name can belong to a family."""
    if shape := _SHAPE.match(name):
        x, y = int(shape["x"]), int(shape["y"])
        return [((shape["prefix"], shape["suffix"], unit, True), None, f"{x}x{y}")]
    return [((name[:n.start()], name[n.end():], unit, False), int(n[0]), n[0])
            for n in re.finditer(r"\d+", name) if n.start() > 0]


def _add(family: Family, m: dict, xvalue, label: str, name: str | None = None) -> None:
    rate = _finite(m.get("rate"))
    if m.get("valid") is True and rate is not None:
        family.points.append((xvalue, label, rate))
    else:
        family.skipped.append(name or m["name"])
        if xvalue is not None:
            family.gaps.append(xvalue)


def _describe(family: Family) -> _Words:
    """Sets the family's title and x axis in words; returns the words it matched."""
    rate = _UNIT_WORDS.get(family.unit, "rate")
    for words in _SWEEP_WORDS:
        if match := re.fullmatch(words.pattern, family.pattern):  # <N> matches itself
            groups = {k: v.replace("_", " ").replace(" sm", " SM") if k == "rule" else v
                      for k, v in match.groupdict().items()}
            subject = words.subject.format(**groups)
            break
    else:
        tokens = [t for t in re.split(r"[^A-Za-z]+", family.prefix) if len(t) > 2]
        words = _Words("", family.pattern, "shape" if family.shape else
                       (tokens[-1] if tokens else "N"))
        subject = family.pattern
    family.title = f"{subject}: {rate} by {words.x_name}"
    family.x_label = f"{words.x_name} ({words.x_unit})" if words.x_unit else words.x_name
    return words


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# ------------------------------------------------------------------------------ the plots

class _Plots:
    """matplotlib figures as inline SVG, each as wide as the others (a page's plots line up)
    and laid out by matplotlib's constrained layout: legends below the axes (beside them they
    would take the axes' width), every text inside the figure, value labels that would
    overlap another text moved up or left out, axes in words with units. Each figure gets its
    own hash salt, so the ids inside one page's SVGs (clip paths) never collide."""

    WIDTH = 7.5                   # inches: 720 CSS pixels, scaled down on a narrow window

    def __init__(self):
        self._matplotlib = _import("matplotlib")
        from matplotlib import ticker
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # to measure texts
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
        self._figure = Figure
        self._canvas = FigureCanvasAgg
        self._ticker = ticker
        self._count = 0

    def _new(self, height: float):
        return self._figure(figsize=(self.WIDTH, height), layout="constrained")

    def _svg(self, fig) -> str:
        self._count += 1
        buffer = io.StringIO()
        with self._matplotlib.rc_context({"svg.fonttype": "none",
                                          "svg.hashsalt": f"figure{self._count}"}):
            # No metadata: no date (the same report gives the same page) and no RDF block.
            # The figure's own size, not a tight box: the layout keeps every text inside it,
            # and every plot of a page is as wide as the others.
            fig.savefig(buffer, format="svg",
                        metadata=dict.fromkeys(("Creator", "Date", "Format", "Type")))
        text = buffer.getvalue()
        return text[text.index("<svg"):]  # the page is HTML: no XML prolog or DOCTYPE

    @staticmethod
    def _lay_out(fig) -> None:
        """The constrained layout, once and for good: the SVG has the layout checked here."""
        if fig.get_layout_engine() is not None:
            fig.draw_without_rendering()
            fig.set_layout_engine("none")  # moving a label inside moves nothing else

    def _declutter(self, fig, labels: list, fixed: list = (), move: bool = True) -> None:
        """Keeps value labels (most important first) inside their axes and clear of one
        another and of the fixed texts: one that is not is moved up by its height (twice at
        most) when `move`, and else left out."""
        renderer = self._canvas(fig).get_renderer()
        self._lay_out(fig)
        taken = [t.get_window_extent(renderer) for t in fixed]
        for label in labels:
            frame = label.axes.get_window_extent(renderer)
            for attempt in range(3 if move else 1):
                box = label.get_window_extent(renderer)
                clear = (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
                         and box.y1 <= frame.y1 and not any(box.overlaps(t) for t in taken))
                if clear:
                    taken.append(box)
                    break
                if move:
                    dx, dy = label.xyann
                    label.xyann = (dx, dy + box.height * 72 / fig.dpi + 1)
            else:
                label.remove()

    def _legend(self, fig, ax, first: tuple = ()) -> None:
        """The axes' legend below them, across the (sub)figure's width (not beside: that would
        take the axes' width), in as many columns (four at most) as fit that width; entries
        starting with `first` ahead of the others."""
        handles, names = ax.get_legend_handles_labels()
        if not handles:
            return
        order = sorted(range(len(names)), key=lambda i: not names[i].startswith(first))
        renderer = self._canvas(fig.figure).get_renderer()
        for ncol in range(min(4, len(names)), 0, -1):
            legend = fig.legend([handles[i] for i in order], [names[i] for i in order],
                                fontsize=8, loc="outside lower center", ncol=ncol,
                                frameon=False)
            if ncol == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
                return
            legend.remove()

    @staticmethod
    def _label(ax, text: str, xy, lift: float = 3):
        """A value label `lift` points above a bar's top or a point."""
        return ax.annotate(text, xy, xytext=(0, lift), textcoords="offset points",
                           ha="center", va="bottom", fontsize=7)

    def metrics(self, metrics: list[Metric]) -> str:
        """Per metric: the measure's and the baseline's rates, with the rates at which the
        metric earns full marks and none."""
        fig = self._new(1.75 * len(metrics) + 0.1)
        # one subfigure a metric: each its axes and, below them, its legend
        parts = fig.subfigures(len(metrics), 1, squeeze=False)[:, 0]
        labels = []
        for part, m in zip(parts, metrics):
            ax = part.subplots()
            values = [m.value, m.baseline_value]
            ax.barh([1, 0], values, color=[_COLORS["measure"], _COLORS["baseline"]],
                    height=0.6)
            ax.set_yticks([1, 0], [f"yours: {m.measure}", f"baseline: {m.baseline}"])
            for at, what in ((m.full_at, "full"), (m.zero_at, "zero")):
                ax.axvline(at * m.baseline_value, color=_COLORS[what], linestyle="--",
                           linewidth=1.2, label=f"{what} marks at {at:.3g}× {m.baseline}")
            top = max(values + [m.full_at * m.baseline_value]) * 1.12
            ax.set_xlim(0, top)
            for y, value in zip((1, 0), values):  # at the bar's end, inside where it fits
                inside = value > 0.25 * top
                labels.append(ax.annotate(
                    f"{_number(value)} {m.unit}", (value, y), xytext=(-4 if inside else 4, 0),
                    textcoords="offset points", ha="right" if inside else "left",
                    va="center", fontsize=8, color="white" if inside else "#222222"))
            ax.set_title(f"{m.name}: {m.ratio:.2f}× {m.baseline}, {m.points:g} of "
                         f"{m.max_points:g} points", fontsize=10, loc="left")
            ax.set_xlabel(rate_words(m.unit), fontsize=9)
            ax.tick_params(labelsize=8)
            self._legend(part, ax)
        self._lay_out(fig)
        axes = [part.axes[0] for part in parts]  # their left edges lined up
        left = max(ax.get_position().x0 for ax in axes)
        for ax in axes:
            box = ax.get_position()
            ax.set_position([left, box.y0, box.x1 - left, box.height])
        self._declutter(fig, labels, move=False)
        return self._svg(fig)

    def ladder(self, ladder: dict, rungs: list[Rung], reference: dict) -> str:
        """Per rung: this report's ratio and the reference's, side by side, with the ratio
        that earns full marks; the legend below, naming only this ladder's things."""
        fig = self._new(3.6)
        ax = fig.subplots()
        xs = list(range(len(rungs)))
        width = 0.38
        mine = [(x, r.ratio) for x, r in zip(xs, rungs) if r.ratio is not None]
        theirs = [(x, r.reference) for x, r in zip(xs, rungs) if r.reference is not None]
        labels, fixed = [], []
        for points, offset, color, name in (
                (mine, -width / 2, _COLORS["measure"], "this report"),
                (theirs, width / 2 if mine else 0, _COLORS["reference"],
                 f"reference solutions on {reference['gpu']}")):
            if points:
                ax.bar([x + offset for x, _ in points], [v for _, v in points], width,
                       color=color, label=name)
                labels += [self._label(ax, f"{v:.2f}", (x + offset, v)) for x, v in points]
        full = [(x, r.full_at) for x, r in zip(xs, rungs) if r.full_at is not None]
        if full:
            ax.hlines([v for _, v in full], [x - 0.45 for x, _ in full],
                      [x + 0.45 for x, _ in full], color=_COLORS["full"], linewidth=2,
                      label="full marks at", zorder=3)
        if not mine:  # e.g. --build-only: one note above the axes, not one per rung
            ax.set_title("no rung measured in this report", loc="left", fontsize=9,
                         color="#555555")
        for x, r in zip(xs, rungs):
            if r.ratio is None and mine:
                fixed.append(ax.annotate(
                    "not measured", (x - width / 2, 0), xytext=(0, 3),
                    textcoords="offset points", rotation=90, fontsize=7, ha="center",
                    va="bottom", color="#555555"))
        ax.axhline(1.0, color="#444444", linewidth=0.8,
                   label=f"as fast as {ladder['baseline']}")
        ax.set_xticks(xs, [f"v{r.number}" for r in rungs])
        ax.set_xlim(-0.6, len(rungs) - 0.4)
        ax.set_xlabel("rung", fontsize=9)
        ax.set_ylabel(f"rate as a fraction of {ladder['baseline']}", fontsize=9)
        ax.set_ylim(0, 1.2 * max([1.0] + [v for _, v in mine + theirs + full]))
        ax.tick_params(labelsize=8)
        self._legend(fig, ax, first=("this report", "reference"))
        self._declutter(fig, labels, fixed)
        return self._svg(fig)

    def sweep(self, family: Family) -> str:
        """Rate against the swept number or shape: bars for shapes, a line through three or
        more numbers (broken where a point is missing), points where there are two; the
        graded measurement ringed, reference lines inside the frame, the legend below."""
        fig = self._new(3.2)
        ax = fig.subplots()
        rates = [rate for _, _, rate in family.points]
        labels = []
        if family.shape:
            xs = list(range(len(rates)))
            ax.bar(xs, rates, color=_COLORS["measure"], width=0.7)
            ax.set_xticks(xs, [label.replace("x", "×") for _, label, _ in family.points])
            ax.set_xlim(-0.6, len(xs) - 0.4)
        elif len(rates) < 3:  # two points are not a curve
            xs = list(range(len(rates)))
            ax.plot(xs, rates, linestyle="none", marker="o", markersize=8,
                    color=_COLORS["measure"])
            ax.set_xticks(xs, [label for _, label, _ in family.points])
            ax.set_xlim(-0.6, len(xs) - 0.4)
        else:
            xs = [x for x, _, _ in family.points]
            line = sorted([(x, rate) for x, _, rate in family.points]
                          + [(x, math.nan) for x in family.gaps])
            ax.plot([x for x, _ in line], [y for _, y in line], marker="o",
                    markersize=4 if len(xs) > 12 else 6, color=_COLORS["measure"])
            if len(xs) <= 12:
                if min(xs) > 0 and max(xs) / min(xs) >= 4:
                    ax.set_xscale("log", base=2)
                ax.set_xticks(xs, [str(x) for x in xs])
                ax.minorticks_off()
            else:
                ax.xaxis.set_major_locator(self._ticker.MaxNLocator(
                    nbins=10, integer=True, steps=[1, 2, 4, 5, 10]))
        where = {label: x for x, (_, label, _) in zip(xs, family.points)}
        if family.graded:
            ax.plot([where[g] for g in family.graded],
                    [rate for _, label, rate in family.points if label in family.graded],
                    linestyle="none", marker="o", markersize=14, markerfacecolor="none",
                    markeredgecolor=_COLORS["full"], markeredgewidth=2,
                    label="graded measurement")
        if family.shape or len(rates) <= 12:
            labels = [self._label(ax, _number(rate), (x, rate),
                                  lift=9 if label in family.graded else 3 if family.shape else 5)
                      for x, (_, label, rate) in zip(xs, family.points)]
        styles = iter(["--", ":", "-."])
        for name, rate in family.lines[:3]:
            role = family.roles.get(name)
            ax.axhline(rate, color=_COLORS["baseline"], linestyle=next(styles),
                       label=f"{name} ({role})" if role else name)
        ax.set_ylim(0, 1.18 * (max(rates + [rate for _, rate in family.lines[:3]]) or 1.0))
        ax.set_xlabel(family.x_label, fontsize=9)
        ax.set_ylabel(rate_words(family.unit), fontsize=9)
        ax.tick_params(labelsize=8)
        self._legend(fig, ax)
        self._declutter(fig, labels)
        return self._svg(fig)


def _number(value: float) -> str:
    """A rate as a label: 2,790 · 412 · 54.3 · 0.86."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"
