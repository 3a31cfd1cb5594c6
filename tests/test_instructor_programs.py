"""The instructor programs under scripts/instructor/ (worked answers, left out of a student
template) are built by hand on a GPU machine with the command their header gives: CI runs that
very command, with the GPU architecture spelled out and the output in a temporary folder, so
the header stays true and the program keeps compiling."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from grader import template
from helpers import ROOT

pytestmark = pytest.mark.skipif(template.is_template(ROOT),
                                reason="instructor tools: a student template leaves them out")

PROGRAMS = sorted((ROOT / "scripts" / "instructor").glob("*.cu"))


def build_command(source) -> list[str]:
    """The nvcc command of the header's "Build" paragraph (comment lines joined at '\\')."""
    lines = source.read_text(encoding="utf-8").splitlines()
    start = next(i for i, l in enumerate(lines) if re.match(r"//\s+nvcc ", l))
    text = ""
    for line in lines[start:]:
        part = line.removeprefix("//").strip()
        text += " " + part.removesuffix("\\").strip()
        if not part.endswith("\\"):
            break
    return shlex.split(text)


def test_there_are_instructor_programs():
    assert {p.name for p in PROGRAMS} >= {"pipeline_timeline.cu", "launch_cost.cu"}


@pytest.mark.parametrize("source", PROGRAMS, ids=lambda p: p.stem)
def test_the_header_command_builds_it(source, tmp_path):
    from grader import tools
    nvcc = tools.find("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    command = build_command(source)
    assert command[0] == "nvcc" and "-o" in command, command
    assert "-arch=native" in command, "the header's command should build for the GPU at hand"
    command[0] = nvcc
    command[command.index("-arch=native")] = "-arch=sm_90"  # CI has no GPU to be native to
    output = tmp_path / source.stem
    command[command.index("-o") + 1] = str(output)
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert output.is_file()
