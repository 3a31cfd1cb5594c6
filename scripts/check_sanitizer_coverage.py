"""Checks, on a build of the exercises, that each sanitizer filter still covers every test of
the small cases (memcheck's filter, gtest_filter; a tool's own in [sanitizer.tool_filters] need
only select something): each test of the Small* instantiations ("Reduce.SumsFromAMisalignedPointer")
and each of those instantiations ("SmallEveryBlockSize/Reduce") runs at least once under
compute-sanitizer. Filters are trimmed to save time (issue 16); this keeps a trim from leaving
a way of calling the kernel unchecked.

    python3 scripts/check_sanitizer_coverage.py BUILD_DIR

The cases come from each <exercise>_test --gtest_list_tests, which needs no GPU. Exit 1 naming
each exercise whose filter leaves a test out, or whose exemption below is no longer needed;
exit 2 when a test program is missing or cannot list its cases.
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader import manifest  # noqa: E402
from grader.gtest import parse_list, selects  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# Tests that may stay out of an exercise's sanitizer run, with the reason.
EXEMPT = {
    "event_dependencies": ("RunDag.WaitsFor*",
                           "they hold a stream shut with a gate kernel, which the sanitizer's "
                           "serialised launches cannot run past"),
}


def units_of(case: str) -> list[str]:
    """What a case of a Small* instantiation ("Small/Reduce.SumsRandomInts/n_1_block_64")
    stands for: its test ("Reduce.SumsRandomInts", whichever instantiation) and its
    instantiation ("Small/Reduce"); nothing for other cases."""
    prefix, slash, rest = case.partition("/")
    suite, dot, name = rest.partition(".")
    if not slash or not dot or not prefix.startswith("Small"):
        return []
    return [f"{suite}.{name.split('/', 1)[0]}", f"{prefix}/{suite}"]


def uncovered(cases: list[str], gtest_filter: str) -> list[str]:
    """The tests and the instantiations of the Small* cases of which `gtest_filter` runs no
    case."""
    run: dict[str, bool] = {}
    for case in cases:
        for unit in units_of(case):
            run[unit] = run.get(unit, False) or selects(gtest_filter, case)
    return sorted(u for u, covered in run.items() if not covered)


def problems(name: str, cases: list[str], gtest_filter: str) -> list[str]:
    """What is wrong with one exercise's sanitizer filter, given its test program's cases."""
    exempt, _why = EXEMPT.get(name, ("", ""))
    left_out = uncovered(cases, gtest_filter)
    excused = [u for u in left_out if exempt and fnmatch.fnmatchcase(u, exempt)]
    out = [f"{name}: the sanitizer filter {gtest_filter!r} runs no case of {unit}"
           for unit in left_out if unit not in excused]
    if exempt and not excused:
        out.append(f"{name}: the exemption {exempt!r} in {Path(__file__).name} is no longer "
                   "needed: remove it")
    return out


def tool_filter_problems(name: str, cases: list[str],
                         tool_filters: tuple[tuple[str, str], ...]) -> list[str]:
    """A tool's own filter ([sanitizer.tool_filters]) need not cover every small test, but it
    must select some case: a filter that selects none checks nothing."""
    return [f"{name}: {tool}'s filter {narrower!r} ([sanitizer.tool_filters]) selects no test "
            "case" for tool, narrower in tool_filters
            if not any(selects(narrower, case) for case in cases)]


def list_cases(binary: Path) -> list[str]:
    try:
        result = subprocess.run([str(binary), "--gtest_list_tests"], capture_output=True,
                                text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        sys.exit(f"check_sanitizer_coverage: {binary} did not list its cases: {error}")
    if result.returncode != 0:
        sys.exit(f"check_sanitizer_coverage: {binary} --gtest_list_tests ended with "
                 f"{result.returncode}: {result.stderr.strip()[:300]}")
    return parse_list(result.stdout)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: check_sanitizer_coverage.py BUILD_DIR (a build of the exercises)",
              file=sys.stderr)
        return 2
    build = Path(argv[0])
    bad: list[str] = []
    exercises = manifest.discover(ROOT)
    for ex in exercises:
        binary = build / f"{ex.name}_test"
        if not binary.is_file():
            print(f"check_sanitizer_coverage: {binary} was not built", file=sys.stderr)
            return 2
        cases = list_cases(binary)
        bad += problems(ex.name, cases, ex.sanitizer_filter)
        bad += tool_filter_problems(ex.name, cases, ex.sanitizer_tool_filters)
    for line in bad:
        print(line, file=sys.stderr)
    if not bad:
        print(f"check_sanitizer_coverage: {len(exercises)} exercises, every small test runs "
              "under the sanitizer")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
