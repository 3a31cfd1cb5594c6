"""An SVG timeline of the stage lines a benchmark prints, e.g. overlap_pipeline's:

    timeline <variant> <stream> <stage> <chunk> <start_ms> <end_ms>

One lane per variant and stream, one box per stage of a chunk coloured by stage, every variant
on the same time axis in ms, so a pipelined run can be shown beside the sequential one.
Other lines (the benchmark's table) are skipped.

    python3 scripts/draw_timeline.py [BENCH_OUTPUT | -] [-o TIMELINE.svg] [--title TEXT]

Reads standard input without a file (or with -), writes standard output without -o.
Standard library only. A problem is reported on one line and the exit status is 2.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

# Stages the course prints, in legend order, with their colours; any other stage name gets the
# next colour of EXTRA_COLOURS.
STAGE_COLOURS = {"h2d": "#4e79a7", "kernel": "#f28e2b", "d2h": "#59a14f"}
EXTRA_COLOURS = ("#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")
NAME = re.compile(r"^[A-Za-z0-9_.-]+$")

LABEL_WIDTH = 190      # px, left of the plot
PLOT_WIDTH = 900       # px, the longest variant's span
MARGIN = 16
TITLE_HEIGHT = 30
HEADING_HEIGHT = 20    # a variant's name and span above its lanes
LANE_HEIGHT = 22
LANE_GAP = 4
VARIANT_GAP = 12
AXIS_HEIGHT = 34
LEGEND_HEIGHT = 26


class TimelineError(Exception):
    """A problem with the input or the arguments: one line, exit status 2."""


@dataclass(frozen=True)
class Stage:
    variant: str
    stream: int
    stage: str
    chunk: int
    start_ms: float
    end_ms: float


def parse(lines, source: str) -> list[Stage]:
    """The stages of every line that starts with 'timeline'."""
    stages = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0] != "timeline":
            continue
        where = f"{source}:{number}"
        if len(fields) != 7:
            raise TimelineError(f"{where}: expected 'timeline <variant> <stream> <stage> "
                                f"<chunk> <start_ms> <end_ms>', got {len(fields) - 1} fields")
        _, variant, stream, stage, chunk, start, end = fields
        for what, value in (("variant", variant), ("stage", stage)):
            if not NAME.match(value):
                raise TimelineError(f"{where}: {what} {value!r} is not a plain name")
        numbers = []
        for what, value in (("stream", stream), ("chunk", chunk)):
            if not value.isdigit():
                raise TimelineError(f"{where}: {what} {value!r} is not a whole number >= 0")
            numbers.append(int(value))
        times = []
        for what, value in (("start_ms", start), ("end_ms", end)):
            try:
                times.append(float(value))
            except ValueError:
                raise TimelineError(f"{where}: {what} {value!r} is not a number") from None
            if not math.isfinite(times[-1]) or times[-1] < 0:
                raise TimelineError(f"{where}: {what} {value} is not a finite time >= 0")
        if times[1] < times[0]:
            raise TimelineError(f"{where}: the stage ends ({end} ms) before it starts "
                                f"({start} ms)")
        stages.append(Stage(variant, numbers[0], stage, numbers[1], times[0], times[1]))
    if not stages:
        raise TimelineError(f"{source}: no 'timeline ...' lines (run the benchmark and pass "
                            "its output)")
    return stages


def nice_step(span: float, most_ticks: int = 10) -> float:
    """The smallest 1, 2 or 5 times a power of ten that divides span into at most most_ticks."""
    raw = span / most_ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def stage_colours(stages: list[Stage]) -> dict[str, str]:
    """A colour per stage present: the course's stages first, in their order, then the rest."""
    present = dict.fromkeys(s.stage for s in stages)
    order = [n for n in STAGE_COLOURS if n in present] + \
        [n for n in present if n not in STAGE_COLOURS]
    extra = itertools.cycle(EXTRA_COLOURS)
    return {name: STAGE_COLOURS.get(name) or next(extra) for name in order}


def render(stages: list[Stage], title: str) -> str:
    """The SVG document: variants in order of appearance, streams in numeric order."""
    variants = list(dict.fromkeys(s.variant for s in stages))
    lanes = {v: sorted({s.stream for s in stages if s.variant == v}) for v in variants}
    span_ms = max(s.end_ms for s in stages) or 1.0
    scale = PLOT_WIDTH / span_ms  # px per ms, the same for every variant
    colours = stage_colours(stages)
    x0 = MARGIN + LABEL_WIDTH
    height = (MARGIN + TITLE_HEIGHT + LEGEND_HEIGHT
              + sum(HEADING_HEIGHT + len(lanes[v]) * (LANE_HEIGHT + LANE_GAP) + VARIANT_GAP
                    for v in variants)
              + AXIS_HEIGHT + MARGIN)
    width = x0 + PLOT_WIDTH + 2 * MARGIN

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{MARGIN}" y="{MARGIN + 16}" font-size="15" font-weight="bold">'
           f'{escape(title)}</text>']
    # The legend, one swatch per stage.
    y = MARGIN + TITLE_HEIGHT
    x = x0
    for name, colour in colours.items():
        out.append(f'<rect class="legend" x="{x}" y="{y}" width="12" height="12" '
                   f'fill="{colour}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}">{escape(name)}</text>')
        x += 24 + 8 * len(name) + 12
    y += LEGEND_HEIGHT
    plot_top = y

    boxes = []
    lane_lines = []
    for variant in variants:
        own = [s for s in stages if s.variant == variant]
        variant_span = max(s.end_ms for s in own) - min(s.start_ms for s in own)
        lane_lines.append(f'<text class="variant" x="{MARGIN}" y="{y + 14}" '
                          f'font-weight="bold">{escape(variant)}: {variant_span:.2f} ms</text>')
        y += HEADING_HEIGHT
        for stream in lanes[variant]:
            lane_lines.append(
                f'<rect class="lane" data-variant={quoteattr(variant)} data-stream="{stream}" '
                f'x="{x0}" y="{y}" width="{PLOT_WIDTH}" height="{LANE_HEIGHT}" '
                f'fill="#f4f4f4"/>')
            lane_lines.append(f'<text x="{MARGIN + 12}" y="{y + 15}">stream {stream}</text>')
            for s in own:
                if s.stream != stream:
                    continue
                left = x0 + s.start_ms * scale
                box_width = max((s.end_ms - s.start_ms) * scale, 0.5)
                tip = (f"{s.variant} stream {s.stream} {s.stage} chunk {s.chunk}: "
                       f"{s.start_ms:.3f} to {s.end_ms:.3f} ms")
                boxes.append(
                    f'<rect class="box" data-variant={quoteattr(s.variant)} '
                    f'data-stream="{s.stream}" data-stage={quoteattr(s.stage)} '
                    f'data-chunk="{s.chunk}" x="{left:.2f}" y="{y + 2}" '
                    f'width="{box_width:.2f}" height="{LANE_HEIGHT - 4}" '
                    f'fill="{colours[s.stage]}" stroke="white" stroke-width="0.5">'
                    f'<title>{escape(tip)}</title></rect>')
                label = str(s.chunk)
                if box_width >= 7 * len(label) + 4:
                    boxes.append(f'<text x="{left + box_width / 2:.2f}" y="{y + 15}" '
                                 f'text-anchor="middle" fill="white" font-size="10">'
                                 f'{label}</text>')
            y += LANE_HEIGHT + LANE_GAP
        y += VARIANT_GAP

    # The time axis: ticks at round numbers of ms, and grid lines across every lane.
    grid = []
    axis = [f'<line x1="{x0}" y1="{y}" x2="{x0 + PLOT_WIDTH}" y2="{y}" stroke="black"/>']
    step = nice_step(span_ms)
    for k in range(int(span_ms / step * (1 + 1e-9)) + 1):
        tick = k * step
        x = x0 + tick * scale
        grid.append(f'<line x1="{x:.2f}" y1="{plot_top}" x2="{x:.2f}" y2="{y}" '
                    f'stroke="#d8d8d8"/>')
        axis.append(f'<line x1="{x:.2f}" y1="{y}" x2="{x:.2f}" y2="{y + 5}" stroke="black"/>')
        axis.append(f'<text class="tick" x="{x:.2f}" y="{y + 18}" text-anchor="middle">'
                    f'{tick:g}</text>')
    axis.append(f'<text x="{x0 + PLOT_WIDTH}" y="{y + 32}" text-anchor="end">time (ms)</text>')

    # Lanes, then the grid over them, then the boxes on top.
    out += lane_lines + grid + boxes + axis
    out.append("</svg>")
    return "\n".join(out) + "\n"


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise TimelineError(message)


def main(argv: list[str]) -> int:
    parser = Parser(prog="draw_timeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", default="-",
                        help="the benchmark's output (default: standard input)")
    parser.add_argument("-o", "--output", default="-", help="SVG file (default: standard output)")
    parser.add_argument("--title", default="Stages per stream", help="the picture's title")
    try:
        args = parser.parse_args(argv)
        if args.input == "-":
            stages = parse(sys.stdin.read().splitlines(), "<stdin>")
        else:
            try:
                text = Path(args.input).read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                raise TimelineError(f"cannot read {args.input}: {error.strerror}") from None
            stages = parse(text.splitlines(), args.input)
        svg = render(stages, args.title)
        if args.output == "-":
            sys.stdout.write(svg)
        else:
            try:
                Path(args.output).write_text(svg, encoding="utf-8")
            except OSError as error:
                raise TimelineError(f"cannot write {args.output}: {error.strerror}") from None
    except TimelineError as error:
        print(f"draw_timeline: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
