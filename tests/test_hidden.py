"""Hidden test cases and the secret seed: hidden cases counted but never named or explained in
the JSON, terminal or JUnit output; the secret changes the programs' seed and is never
recorded; the hidden source is built only on request (one real --build-only check)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess

import pytest

from fakes import bench_data, fake_bench, fake_gtest, use_fake_build_tools
from grader import cli, hidden, manifest, model, render
from grader.stages.common import GradeOptions, program_env
from helpers import ROOT, VECTOR_ADD, run_cli, vector_add

GPU = model.GpuInfo("Fake GPU", "9.0", "555", 80000)
PUBLIC = ["Small/VectorAdd.MatchesReference/n_1", "VectorAddEdge.Empty"]
HIDDEN_SOURCE = VECTOR_ADD.parent / f"vector_add{hidden.HIDDEN_TEST_SUFFIX}"
# The student template (grader export-template) leaves the instructors' sources out.
needs_hidden_source = pytest.mark.skipif(not HIDDEN_SOURCE.is_file(),
                                         reason="no hidden test sources in a student template")
SECRETS = ("Sizes/HiddenVectorAdd.MatchesReference/n_2_shift_2", "HiddenEdge.Overflow",
           "n_2_shift_2", "HiddenEdge", "expected 3.5", "the hidden input was 12289",
           "vector_add_hidden_test.cpp")


@pytest.fixture
def graded(grader_for, monkeypatch, tmp_path):
    """graded(cases, **options) -> (report, JSON text, terminal text, JUnit text), graded by
    Grader.run with stand-in meson, ninja, compute-sanitizer and binaries."""
    use_fake_build_tools(monkeypatch, tmp_path)

    def go(cases, **options):
        g = grader_for(vector_add(sanitizer_filter="*", test_timeout_s=10), gpu=GPU, **options)
        fake_gtest(g.options.build_dir / "vector_add_test", cases)
        fake_bench(g.options.build_dir / "vector_add_bench", bench_data(900, 1000))
        report = g.run()
        path = tmp_path / "report.json"
        render.write_json(report, path)
        return (report, path.read_text(), render.terminal(report, io.StringIO(), verbose=True),
                render.junit_xml(report))

    return go


def assert_nothing_hidden_in(*texts):
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text)


def test_hidden_cases_are_counted_never_named(graded):
    cases = PUBLIC + [
        {"name": SECRETS[0], "status": "failed",
         "message": "vector_add_hidden_test.cpp:40\nc: 1 of 2 differ: [1] expected 3.5, got "
                    "nan (the hidden input was 12289)"},
        SECRETS[1]]
    report, data, terminal, junit = graded(cases, hidden=True)
    assert_nothing_hidden_in(data, terminal, junit)
    tests = report.exercises[0].stage("tests")
    assert tests.details["hidden"] == {"total": 2, "ran": 2, "passed": 1}
    assert [c.name for c in tests.cases] == PUBLIC + ["hidden case 1", "hidden case 2"]
    assert tests.cases[2].message == "failed (hidden case: details withheld)"
    assert tests.cases[3].message == ""
    assert "(hidden cases: 1 of 2 passed)" in tests.message
    assert "Hidden cases: 1 of 2 passed (names and messages withheld)" in terminal
    assert "hidden case 1" in junit and "failed (hidden case: details withheld)" in junit
    assert "[ RUN      ] hidden case 1: output withheld" in tests.output
    assert json.loads(data)["options"]["hidden"] is True


def test_a_crash_in_a_hidden_case_under_the_sanitizer_names_only_its_alias(graded):
    cases = PUBLIC + [{"name": SECRETS[0], "action_under_sanitizer": "segv"}, SECRETS[1]]
    report, data, terminal, junit = graded(cases, hidden=True)
    assert_nothing_hidden_in(data, terminal, junit)
    sanitizer = report.exercises[0].stage("sanitizer")
    assert "while running hidden case 1" in sanitizer.message


def test_output_of_hidden_cases_is_removed_and_summary_lines_cut():
    aliases = {SECRETS[0]: "hidden case 1", SECRETS[1]: "hidden case 2"}
    output = "\n".join([
        "course seed: 99 (rerun with COURSE_SEED=99)",
        "[ RUN      ] VectorAddEdge.Empty", "[       OK ] VectorAddEdge.Empty (1 ms)",
        f"[ RUN      ] {SECRETS[0]}", "vector_add_hidden_test.cpp:40: Failure",
        "expected 3.5", f"[  FAILED  ] {SECRETS[0]}, where GetParam() = (2, 2) (3 ms)",
        f"[ RUN      ] {SECRETS[1]}", "the hidden input was 12289",
        "[----------] 2 tests from HiddenEdge (4 ms total)",
        f"[  FAILED  ] {SECRETS[0]}, where GetParam() = (2, 2)",
        "    at HiddenEdge_Overflow_Test::TestBody() in vector_add_hidden_test.cpp:88"])
    cleaned = hidden._Scrubber(aliases, 99).output(output)
    assert_nothing_hidden_in(cleaned)
    assert "99" not in cleaned and "course seed: <secret seed>" in cleaned
    assert "[       OK ] VectorAddEdge.Empty (1 ms)" in cleaned
    assert cleaned.count("[  FAILED  ] hidden case 1\n") == 2
    assert "[ RUN      ] hidden case 2: output withheld" in cleaned


def test_hidden_case_names():
    for name in ("HiddenEdge.x", "Sizes/HiddenVectorAdd.Matches/n_1", "HiddenLarge/V.x/1"):
        assert hidden.is_hidden_case(name), name
    for name in ("VectorAddEdge.Hidden", "Small/VectorAdd.HiddenSize/n_1", "Hide.x"):
        assert not hidden.is_hidden_case(name), name


# ------------------------------------------------------------------------------ secret

def test_the_secret_changes_the_seed_the_programs_get(monkeypatch, tmp_path):
    def options(secret):
        return GradeOptions(root=ROOT, submission=tmp_path, build_dir=tmp_path, seed=1234,
                            secret=secret)

    assert options(None).input_seed == 1234
    assert options("a").input_seed not in (1234, options("b").input_seed)
    assert options("a").input_seed == options("a").input_seed
    monkeypatch.setenv("COURSE_SECRET", "from-env")
    env = program_env(options("a"))
    assert env["COURSE_SEED"] == str(options("a").input_seed)
    assert "COURSE_SECRET" not in env  # student code runs there
    assert "s3cret" not in repr(options("s3cret"))


def test_the_secret_is_never_in_the_report(graded):
    cases = PUBLIC + [{"name": "Large/VectorAdd.MatchesReference/n_65537", "status": "failed",
                       "message": "mismatch"}]
    report, data, terminal, junit = graded(cases, secret="s3cret")
    seed = GradeOptions(root=ROOT, submission=ROOT, build_dir=ROOT, seed=1234,
                        secret="s3cret").input_seed
    for text in (data, terminal, junit):
        assert "s3cret" not in text and str(seed) not in text
    assert json.loads(data)["options"]["secret"] is True and report.seed == 1234
    assert "course seed: <secret seed>" in report.exercises[0].stage("tests").output
    assert "--seed" not in terminal.splitlines()[2]
    assert "mixed with the instructor's secret" in terminal


def test_cli_secret_from_the_environment(monkeypatch):
    args = cli._parser().parse_args(["grade", "--build-only"])
    monkeypatch.setenv("COURSE_SECRET", "env-secret")
    assert cli._instructor_options(args) == {"secret": "env-secret", "hidden": False}
    args = cli._parser().parse_args(["grade", "--secret", "flag", "--hidden"])
    assert cli._instructor_options(args) == {"secret": "flag", "hidden": True}


# ------------------------------------------------------------------------------ the build

@needs_hidden_source
def test_the_hidden_source_is_neither_course_code_nor_a_public_test():
    ex = manifest.load_manifest(VECTOR_ADD)
    assert hidden.is_hidden_source(HIDDEN_SOURCE)
    assert HIDDEN_SOURCE.name not in manifest.course_sources(ex)
    assert HIDDEN_SOURCE not in manifest.test_sources(ex)


@needs_hidden_source
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_hidden_source_compiles_only_with_hidden(course_build_dir):
    build = course_build_dir

    def listed():
        r = run_cli("grade", "solutions", "-e", "vector_add", "--build-only", "-q",
                    "--build-dir", build, *extra, timeout=900)
        assert r.returncode == 0, r.stderr
        return subprocess.run([str(build / "vector_add_test"), "--gtest_list_tests"],
                              capture_output=True, text=True, check=True).stdout

    extra = ["--hidden"]
    assert "HiddenVectorAdd" in listed()
    extra = []
    assert "HiddenVectorAdd" not in listed()
