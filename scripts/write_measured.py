#!/usr/bin/env python3
"""Writes a grader report's "measured on" tables into a Markdown page, between markers, so that
the measurements a page shows come from a saved report and never by hand.

    python3 scripts/write_measured.py REPORT.json PAGE.md [--chapter ch02] [--skip REGEX]
                                      [--block NAME] [--append]

The tables are scripts/measured_table.py's (the GPU, driver, date and seed of the run, every
benchmark measurement, then each graded ratio with the thresholds the run was scored against).
They replace the lines between

    <!-- measured:NAME:begin -->   and   <!-- measured:NAME:end -->

in PAGE, where NAME is --block, else the --chapter given, else "all". Without those markers
the page is left alone and the exit status is 1, unless --append adds the block at its end
(a new run gets a new block: docs/measurements/<chapter>.md keeps one per run). Exit status 2
when the report cannot be read.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURED_TABLE = ROOT / "scripts" / "measured_table.py"


def tables(report: Path, chapter: str = "", skip: str = "") -> str:
    """measured_table.py's output for this report; raises RuntimeError with its message."""
    command = [sys.executable, str(MEASURED_TABLE), str(report)]
    if chapter:
        command += ["--chapter", chapter]
    if skip:
        command += ["--skip", skip]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).strip()
                           or f"measured_table.py exited {result.returncode}")
    return result.stdout.strip("\n")


def place(page_text: str, name: str, body: str, append: bool = False) -> str | None:
    """The page with the block NAME holding BODY; None when it has no such block (and not
    append)."""
    begin = re.compile(rf"^<!--\s*measured:{re.escape(name)}:begin\b[^>]*-->[ \t]*$", re.M)
    end = re.compile(rf"^<!--\s*measured:{re.escape(name)}:end\s*-->[ \t]*$", re.M)
    block = (f"<!-- measured:{name}:begin (written by scripts/write_measured.py from a report; "
             f"do not edit) -->\n{body}\n<!-- measured:{name}:end -->")
    b, e = begin.search(page_text), end.search(page_text)
    if b and e and b.start() < e.start():
        return page_text[:b.start()] + block + page_text[e.end():]
    if not append:
        return None
    return page_text.rstrip("\n") + "\n\n" + block + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("page", type=Path)
    parser.add_argument("--chapter", default="", help="only this chapter's exercises (ch02)")
    parser.add_argument("--skip", default="", help="regular expression of measurement names "
                                                   "to leave out")
    parser.add_argument("--block", default="", help="the markers' name (default: the chapter, "
                                                    "or all)")
    parser.add_argument("--append", action="store_true",
                        help="add the block at the end of the page when it has none")
    args = parser.parse_args(argv)
    name = args.block or args.chapter or "all"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        print(f"write_measured: block name {name!r}: letters, digits, '_', '.', '-' only",
              file=sys.stderr)
        return 2
    try:
        body = tables(args.report, args.chapter, args.skip)
    except RuntimeError as error:
        print(f"write_measured: {error}", file=sys.stderr)
        return 2
    try:
        text = args.page.read_text(encoding="utf-8") if args.page.exists() else ""
    except OSError as error:
        print(f"write_measured: cannot read {args.page}: {error.strerror}", file=sys.stderr)
        return 2
    new = place(text, name, body, args.append)
    if new is None:
        print(f"write_measured: {args.page} has no <!-- measured:{name}:begin --> ... "
              f"<!-- measured:{name}:end --> block (--append adds one)", file=sys.stderr)
        return 1
    if new != text:
        try:
            args.page.write_text(new, encoding="utf-8")
        except OSError as error:
            print(f"write_measured: cannot write {args.page}: {error.strerror}", file=sys.stderr)
            return 2
        print(f"wrote the measured:{name} block of {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
