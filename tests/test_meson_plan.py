"""grader/meson_plan.py, the build plan meson.build reads: one record a line, its fields named
(kind=...|name=value|...), the names declared once in meson_plan and the only ones meson.build
reads."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pytest

from grader import hidden, manifest, meson_plan
from grader.errors import GraderError
from helpers import ROOT
from test_manifest import shared_folder, with_shared, write

HIDDEN_SOURCE = (ROOT / "chapters/ch01_programming_model/vector_add"
                 / f"vector_add{hidden.HIDDEN_TEST_SUFFIX}")


def plan(root) -> list[dict[str, str]]:
    out = io.StringIO()
    with redirect_stdout(out):
        assert meson_plan.main(str(root)) == 0
    return [meson_plan.parse(line) for line in out.getvalue().splitlines()]


def test_meson_plan_lists_every_exercise():
    records = plan(ROOT)
    shared = {r["key"]: r for r in records if r["kind"] == "shared"}
    lines = [r for r in records if r["kind"] == "exercise"]
    assert len(shared) + len(lines) == len(records)
    exercises = manifest.discover(ROOT)
    assert len(lines) == len(exercises)
    for fields, ex in zip(lines, exercises):
        assert list(fields) == ["kind", *meson_plan.EXERCISE_FIELDS]
        assert fields["name"] == ex.name and fields["chapter"] == ex.chapter
        assert fields["student_files"] == ",".join(ex.files)
        assert fields["rdc"] == ("true" if ex.rdc else "false")
        assert (ROOT / fields["manifest"]).resolve() == ex.manifest.resolve()
        assert fields["shared"] == (f"{ex.chapter}/{ex.shared}" if ex.shared else "")
        assert fields["test_sources"] and fields["bench_sources"]
        for path in fields["test_sources"].split(",") + fields["bench_sources"].split(","):
            assert (ROOT / path).is_file(), path
        hidden_source = fields["hidden_test_sources"]
        assert hidden_source == "" or (ROOT / hidden_source).is_file()
    # Each shared folder once, with the sources compiled once for all its exercises.
    assert set(shared) == {f"{e.chapter}/{e.shared}" for e in exercises if e.shared}
    for key, r in shared.items():
        assert list(r) == ["kind", *meson_plan.SHARED_FIELDS]
        folder, sources, ceilings = r["folder"], r["sources"], r["ceilings"]
        assert (ROOT / folder / f"{key.split('/')[1]}.h").is_file()
        assert all((ROOT / folder / s).is_file() for s in sources.split(",") if s)
        assert ceilings == "" or (ROOT / folder / ceilings).is_file()
        assert ceilings not in sources.split(",")


def test_meson_plan_lists_each_shared_folder_once(tmp_path):
    shared_folder(tmp_path, "ch02_memory", "ladder",
                  ("h", "baseline.cu", "test.cpp", "bench.cpp", "ceilings.cpp"))
    write(tmp_path, "ch02_memory", "rung_a", with_shared("ladder"))  # libraries = ["cublas"]
    write(tmp_path, "ch02_memory", "rung_b",
          with_shared("ladder").replace('libraries = ["cublas"]', 'libraries = ["cudadevrt"]'))
    records = plan(tmp_path)
    folder = "chapters/ch02_memory/ladder"
    # Its libraries are every user's: it is compiled once for all of them. The ceilings
    # program's source is not in the library: it has a main of its own.
    assert records[0] == {"kind": "shared", "key": "ch02_memory/ladder", "folder": folder,
                          "sources": "ladder_baseline.cu", "libraries": "cublas,cudadevrt",
                          "ceilings": "ladder_ceilings.cpp"}
    assert [r["name"] for r in records[1:]] == ["rung_a", "rung_b"]
    for r in records[1:]:
        assert r["kind"] == "exercise" and r["shared"] == "ch02_memory/ladder"
        assert r["test_sources"] == f"{folder}/ladder_test.cpp"
        assert r["bench_sources"] == f"{folder}/ladder_bench.cpp"
        assert r["manifest"] == f"chapters/ch02_memory/{r['name']}/{r['name']}.toml"


@pytest.mark.skipif(not HIDDEN_SOURCE.is_file(),
                    reason="no hidden test sources in a student template")
def test_meson_plan_names_the_hidden_source():
    exercises = {r["name"]: r for r in plan(ROOT) if r["kind"] == "exercise"}
    assert exercises["vector_add"]["hidden_test_sources"] == \
        "chapters/ch01_programming_model/vector_add/vector_add_hidden_test.cpp"
    assert exercises["device_query"]["hidden_test_sources"] == ""


def test_a_record_has_exactly_its_declared_fields():
    values = {"key": "ch02_x/l", "folder": "chapters/ch02_x/l", "sources": ["a.cu", "b.cpp"],
              "libraries": (), "ceilings": ""}
    line = meson_plan.record("shared", **values)
    assert line == ("kind=shared|key=ch02_x/l|folder=chapters/ch02_x/l|sources=a.cu,b.cpp|"
                    "libraries=|ceilings=")
    assert meson_plan.parse(line)["sources"] == "a.cu,b.cpp"
    with pytest.raises(ValueError, match="has the fields"):
        meson_plan.record("shared", **{k: v for k, v in values.items() if k != "ceilings"})
    with pytest.raises(ValueError, match="has the fields"):
        meson_plan.record("shared", **values, extra="x")


@pytest.mark.parametrize("field, value", [
    ("folder", "chapters/a|b"), ("folder", "chapters/a=b"), ("ceilings", "x\ny.cpp"),
    ("sources", ["a,b.cu"]), ("sources", ["a|b.cu"]),
])
def test_a_name_the_plan_cannot_carry_is_refused(field, value):
    values = {"key": "ch02_x/l", "folder": "f", "sources": [], "libraries": [], "ceilings": ""}
    with pytest.raises(GraderError, match="the build plan cannot carry"):
        meson_plan.record("shared", **{**values, field: value})


def test_meson_build_reads_only_the_declared_fields():
    """meson.build reads a record as a dictionary: every field it names is one meson_plan
    declares for that kind, and it reads every field the plan writes."""
    text = (ROOT / "meson.build").read_text(encoding="utf-8")
    exercise = set(re.findall(r"\br\['(\w+)'\]", text))
    shared = set(re.findall(r"\bsp\['(\w+)'\]", text))
    assert exercise == {"kind", "key", *meson_plan.EXERCISE_FIELDS}  # key: of a shared record
    assert shared == set(meson_plan.SHARED_FIELDS) - {"key"}  # the key is shared_plan's key
