"""scripts/draw_timeline.py on sample benchmark output, run as 'python3 scripts/draw_timeline.py'
is (no GPU): the SVG's boxes and lanes, one time scale for every variant, and one-line
errors with exit status 2."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET

import pytest

from helpers import PYTHON, ROOT

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

SVG = "{http://www.w3.org/2000/svg}"

# What scripts/instructor/pipeline_timeline.cu prints: a comment line, then the timeline.
SAMPLE = """\
# NVIDIA H100 80GB HBM3, 3 copy engines; upload 4.000 ms; kernel at 2700 iterations 4.100 ms
timeline sequential 0 h2d 0 0.0000 4.0000
timeline sequential 0 kernel 0 4.0000 8.1000
timeline sequential 0 d2h 0 8.1000 12.0000
timeline pipelined 0 h2d 0 0.0000 1.0000
timeline pipelined 0 kernel 0 1.0000 2.0000
timeline pipelined 0 d2h 0 2.0000 3.0000
timeline pipelined 1 h2d 1 1.0000 2.0000
timeline pipelined 1 kernel 1 2.0000 3.0000
timeline pipelined 1 d2h 1 3.0000 4.0000
timeline pipelined 0 h2d 2 3.0000 4.0000
timeline pipelined 0 kernel 2 4.0000 5.0000
timeline pipelined 0 d2h 2 5.0000 6.0000

overlap_pipeline_bench on NVIDIA H100 (cc 9.0, 132 SMs, 52 MB L2)
measurement                             median ms           rate repeats
"""


def draw(*args, stdin: str | None = None):
    return subprocess.run([PYTHON, str(ROOT / "scripts" / "draw_timeline.py"), *map(str, args)],
                          input=stdin, capture_output=True, text=True, timeout=60, cwd="/")


def boxes(svg: ET.Element) -> list[ET.Element]:
    return [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "box"]


def lanes(svg: ET.Element) -> list[tuple[str, str]]:
    return [(r.get("data-variant"), r.get("data-stream"))
            for r in svg.iter(f"{SVG}rect") if r.get("class") == "lane"]


def test_boxes_lanes_and_one_scale(tmp_path):
    source = tmp_path / "bench.txt"
    source.write_text(SAMPLE)
    out = tmp_path / "timeline.svg"
    r = draw(source, "-o", out, "--title", "overlap_pipeline")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr
    svg = ET.parse(out).getroot()
    assert svg.tag == f"{SVG}svg"
    # A lane per variant and stream, sequential first, as they came.
    assert lanes(svg) == [("sequential", "0"), ("pipelined", "0"), ("pipelined", "1")]
    found = boxes(svg)
    assert len(found) == 12
    assert {b.get("data-stage") for b in found} == {"h2d", "kernel", "d2h"}
    # Coloured by stage: one colour per stage, the same in both variants.
    colours = {(b.get("data-stage"), b.get("fill")) for b in found}
    assert len(colours) == 3
    # One time scale: x = left + start * scale, width = (end - start) * scale, for every box.
    sequential_d2h = next(b for b in found if b.get("data-variant") == "sequential"
                          and b.get("data-stage") == "d2h")
    pipelined_kernel = next(b for b in found if b.get("data-variant") == "pipelined"
                            and b.get("data-chunk") == "2" and b.get("data-stage") == "kernel")
    scale = float(sequential_d2h.get("width")) / (12.0 - 8.1)
    assert float(pipelined_kernel.get("width")) == pytest.approx(1.0 * scale, abs=0.02)
    left = float(sequential_d2h.get("x")) - 8.1 * scale
    assert float(pipelined_kernel.get("x")) == pytest.approx(left + 4.0 * scale, abs=0.02)
    # Each box names itself on hover, and each variant's span is written beside it.
    titles = [b.find(f"{SVG}title").text for b in found]
    assert "pipelined stream 1 kernel chunk 1: 2.000 to 3.000 ms" in titles
    headings = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "variant"]
    assert headings == ["sequential: 12.00 ms", "pipelined: 6.00 ms"]
    ticks = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "tick"]
    assert ticks[0] == "0" and ticks[-1] == "12"


def test_reads_stdin_writes_stdout():
    lines = "timeline pipelined 3 kernel 7 0.5 0.75\ntimeline pipelined 2 custom 1 0 1\n"
    r = draw(stdin=lines)
    assert r.returncode == 0, r.stderr
    svg = ET.fromstring(r.stdout)
    assert lanes(svg) == [("pipelined", "2"), ("pipelined", "3")]
    # A stage the course does not print still gets a colour of its own.
    assert len({b.get("fill") for b in boxes(svg)}) == 2


@pytest.mark.parametrize("text, fragment", [
    ("timeline pipelined 0 h2d 0 1.0\n", "<stdin>:1: expected 'timeline <variant>"),
    ("x\ntimeline pipelined zero h2d 0 0 1\n", "<stdin>:2: stream 'zero' is not a whole"),
    ("timeline pipelined 0 h2d 0 0 soon\n", "end_ms 'soon' is not a number"),
    ("timeline pipelined 0 h2d 0 2.0 1.0\n", "ends (1.0 ms) before it starts (2.0 ms)"),
    ("timeline pipelined 0 h2d 0 0 inf\n", "not a finite time"),
    ("timeline pipe<lined 0 h2d 0 0 1\n", "variant 'pipe<lined' is not a plain name"),
    ("measurement median\n", "no 'timeline ...' lines"),
])
def test_bad_input_is_one_line_and_status_2(text, fragment):
    r = draw(stdin=text)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("draw_timeline: "), r.stderr
    assert fragment in lines[0], lines[0]


def test_missing_file_and_bad_option_are_one_line(tmp_path):
    for args in ([tmp_path / "nothing.txt"], ["--colour", "red"]):
        r = draw(*args)
        assert r.returncode == 2 and r.stdout == ""
        lines = r.stderr.strip("\n").splitlines()
        assert len(lines) == 1 and lines[0].startswith("draw_timeline: "), r.stderr
