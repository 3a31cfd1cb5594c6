"""The build stage's configure is skipped when the build directory was configured for exactly
the same course and submission (grader.stages.build.configure_key), and run again when
anything it depends on changed; a failed configure leaves nothing that would skip the next."""

from __future__ import annotations

import json

import pytest

from fakes import fake_tool
from grader import tools
from grader.errors import GraderError
from grader.stages import build
from grader.stages.common import GradeOptions

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A small course (meson.build, one manifest), a submission, fake meson writing
    build.ninja as the real one would; returns (options, meson log, course root)."""
    root = tmp_path / "course"
    (root / "chapters" / "ch01_a" / "one").mkdir(parents=True)
    (root / "meson.build").write_text("project('x')\n")
    (root / "chapters" / "ch01_a" / "one" / "one.toml").write_text("[exercise]\n")
    submission = tmp_path / "sub"
    (submission / "ch01_a").mkdir(parents=True)
    (submission / "ch01_a" / "one.cu").write_text("// mine\n")
    log = tmp_path / "meson.log"
    meson = fake_tool(tmp_path / "bin" / "meson", argv_log=log)
    monkeypatch.setattr(tools, "find", lambda name, required_for="": str(meson))
    options = GradeOptions(root=root, submission=submission, build_dir=tmp_path / "build", seed=1)
    options.build_dir.mkdir()
    return options, log, root


def configures(options, log) -> int:
    """Runs configure as the pipeline does (fake meson: build.ninja appears); returns how many
    times meson has run so far."""
    build.configure(options, lambda message: None)
    (options.build_dir / "build.ninja").write_text("# made by meson\n")
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_configure_runs_once_for_the_same_course_and_submission(setup):
    options, log, _ = setup
    assert configures(options, log) == 1
    assert configures(options, log) == 1  # nothing changed: skipped
    # Editing a student's file changes nothing Meson decides: ninja rebuilds it by itself.
    (options.submission / "ch01_a" / "one.cu").write_text("// mine, edited\n")
    assert configures(options, log) == 1


@pytest.mark.parametrize("change", ["file added", "file removed", "manifest", "meson.build",
                                    "new exercise", "course source added", "hidden tests",
                                    "gpu arch", "machine"])
def test_configure_runs_again_when_what_it_reads_changed(setup, change, monkeypatch):
    options, log, root = setup
    assert configures(options, log) == 1
    if change == "file added":
        (options.submission / "ch01_a" / "two.cu").write_text("// new\n")
    elif change == "file removed":
        (options.submission / "ch01_a" / "one.cu").unlink()
    elif change == "manifest":
        (root / "chapters" / "ch01_a" / "one" / "one.toml").write_text("[exercise]\nx = 1\n")
    elif change == "meson.build":
        (root / "meson.build").write_text("project('y')\n")
    elif change == "new exercise":
        (root / "chapters" / "ch01_a" / "two").mkdir()
        (root / "chapters" / "ch01_a" / "two" / "two.toml").write_text("[exercise]\n")
    elif change == "course source added":  # a course update's new file in a shared folder
        (root / "chapters" / "ch01_a" / "one" / "one_rungs.cu").write_text("// course\n")
    elif change == "hidden tests":
        options.hidden = True
    elif change == "gpu arch":
        options.cuda_arch = "8.0"
    elif change == "machine":  # gpu_arch=auto was resolved for another machine's GPU
        monkeypatch.setattr(build.platform, "node", lambda: "another-host")
    assert configures(options, log) == 2
    assert "--reconfigure" in json.loads(log.read_text().splitlines()[1])


def test_a_failed_configure_leaves_no_stamp(setup, tmp_path, monkeypatch):
    options, log, _ = setup
    assert configures(options, log) == 1
    (options.submission / "ch01_a" / "two.cu").write_text("// new\n")
    failing = fake_tool(tmp_path / "bin" / "meson-bad", "meson.build:1:0: ERROR: broken\n", 1)
    monkeypatch.setattr(tools, "find", lambda name, required_for="": str(failing))
    with pytest.raises(GraderError, match="configuring the build failed"):
        build.configure(options, lambda message: None)
    assert not (options.build_dir / build.CONFIGURE_STAMP).exists()
