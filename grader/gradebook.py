"""A batch's gradebook: each student's report or failure record under OUT, and gradebook.csv
and leaderboard.csv (leaderboard.html where Jinja2 is installed) rebuilt from those files
alone."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from grader import html_report, model, render
from grader.batch_roster import Student
from grader.batch_state import write_atomically
from grader.errors import GraderError
from grader.manifest import Exercise

GRADED, NOT_YET = "graded", "not graded yet"
INCOMPLETE_PREFIX = "incomplete, not measured: "  # the GPU was busy: graded again on a re-run
FAILED_PREFIX = "failed to grade: "
# A --build-only report measures no score: its gradebook row says whether the files compiled,
# and its score cells stay empty.
COMPILED, COMPILE_ERRORS_PREFIX = "compiled", "compile errors: "
REJECTED_PREFIX, NOT_SUBMITTED_PREFIX = "rejected: ", "not submitted: "
# matplotlib's rc_context changes process-wide settings while a page's plots are drawn: workers
# draw their students' pages one at a time.
_DRAWING = threading.Lock()


@dataclass
class Summary:
    """What the gradebook and leaderboard need from one report."""
    scores: dict[str, float]
    total: float
    max_total: float
    percent: float
    ratios: list[tuple[str, str, float]]  # (exercise, metric, ratio) measured
    incomplete: list[str] = dataclasses.field(default_factory=list)  # exercises not measured
    # A --build-only report: what compiled, not what it scores.
    build_only: bool = False
    compile_errors: list[str] = dataclasses.field(default_factory=list)
    rejected: list[str] = dataclasses.field(default_factory=list)  # refused or forbidden calls
    not_submitted: list[str] = dataclasses.field(default_factory=list)

    @property
    def did_not_compile(self) -> bool:
        """A build-only report whose files did not all compile into code the grader takes."""
        return self.build_only and bool(self.compile_errors or self.rejected)

    @property
    def status(self) -> str:
        """The gradebook's status of a student with this report."""
        if self.incomplete:
            return INCOMPLETE_PREFIX + " ".join(self.incomplete)
        if not self.build_only:
            return GRADED
        parts = [prefix + ", ".join(names) for prefix, names in (
            (COMPILE_ERRORS_PREFIX, self.compile_errors), (REJECTED_PREFIX, self.rejected))
            if names] or [COMPILED]
        if self.not_submitted:
            parts.append(NOT_SUBMITTED_PREFIX + ", ".join(self.not_submitted))
        return "; ".join(parts)


class Book:
    """The files under OUT: reports, failure records, gradebook and leaderboard."""

    def __init__(self, out: Path):
        self.out = out
        # Read and filled by one thread (a batch's main thread): workers write only their own
        # student's files.
        self._cache: dict[Path, tuple[tuple[int, int], Summary | None]] = {}

    def report_path(self, sid: str) -> Path:
        return self.out / "reports" / f"{sid}.json"

    def failure_path(self, sid: str) -> Path:
        return self.out / "failed" / f"{sid}.json"

    def log_path(self, sid: str) -> Path:
        return self.out / "logs" / f"{sid}.log"

    def build_dir(self, sid: str) -> Path:
        return self.out / "builds" / sid

    def summary(self, sid: str) -> Summary | None:
        """The student's complete report, summarised; None when there is none (missing,
        unreadable, cut short, or without its end time)."""
        path = self.report_path(sid)
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            report = model.Report.load(path)
        except GraderError:
            report = None
        summary = summarise(report) if report is not None and report.finished_at else None
        self._cache[path] = (key, summary)
        return summary

    def failure(self, sid: str) -> str | None:
        try:
            return str(json.loads(self.failure_path(sid).read_text(encoding="utf-8"))["reason"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def record(self, sid: str, report: model.Report) -> None:
        render.write_json(report, self.report_path(sid))
        with _DRAWING:
            html_report.write_if_available(report, self.report_path(sid).with_suffix(".html"))
        self.failure_path(sid).unlink(missing_ok=True)

    def record_failure(self, sid: str, reason: str) -> None:
        # The old report no longer says how this student's work grades now.
        self.report_path(sid).unlink(missing_ok=True)
        self.report_path(sid).with_suffix(".html").unlink(missing_ok=True)
        write_atomically(self.failure_path(sid), json.dumps(
            {"student": sid, "reason": reason, "at": model.now()}, indent=2) + "\n")

    def rebuild(self, students: list[Student], exercises: list[Exercise]) -> None:
        """gradebook.csv and leaderboard.csv, from the files under reports/ alone."""
        summaries = {s.id: self.summary(s.id) for s in students}
        columns = [ex.name for ex in exercises]
        for summary in summaries.values():
            columns += [name for name in (summary.scores if summary else {})
                        if name not in columns]
        book = io.StringIO()
        w = csv.writer(book, lineterminator="\n")
        w.writerow(["student", *columns, "total", "max", "percent", "status"])
        for s in students:
            summary = summaries[s.id]
            if summary is None:
                reason = self.failure(s.id)
                w.writerow([s.id, *[""] * len(columns), "", "", "",
                            FAILED_PREFIX + reason if reason is not None else NOT_YET])
                continue
            if summary.build_only:  # nothing ran: no score, not even 0
                w.writerow([s.id, *[""] * len(columns), "", "", "", summary.status])
                continue
            w.writerow([s.id, *[number(summary.scores[c]) if c in summary.scores else ""
                                for c in columns],
                        number(summary.total), number(summary.max_total),
                        number(summary.percent), summary.status])
        write_atomically(self.out / "gradebook.csv", book.getvalue())
        ranked = ranked_leaderboard(summaries, columns)
        write_atomically(self.out / "leaderboard.csv", leaderboard_csv(ranked))
        html_report.write_leaderboard_if_available(ranked, self.out / "leaderboard.html")


Ranked = list[tuple[str, str, list[tuple[int, str, float]]]]


def ranked_leaderboard(summaries: dict[str, Summary | None], order: list[str]) -> Ranked:
    """Per exercise (in `order`) and metric, every measured ratio with its rank, best first;
    equal ratios share a rank (1, 2, 2, 4)."""
    groups: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for sid, summary in summaries.items():
        for exercise, metric, ratio in (summary.ratios if summary else []):
            groups.setdefault((exercise, metric), []).append((sid, ratio))
    position = {name: i for i, name in enumerate(order)}
    ranked: Ranked = []
    for (exercise, metric) in sorted(groups, key=lambda k: (position.get(k[0], len(order)),
                                                            k[0])):
        entries = sorted(groups[(exercise, metric)], key=lambda e: (-e[1], e[0]))
        rows, rank = [], 0
        for i, (sid, ratio) in enumerate(entries):
            if i == 0 or ratio != entries[i - 1][1]:
                rank = i + 1
            rows.append((rank, sid, ratio))
        ranked.append((exercise, metric, rows))
    return ranked


def leaderboard_csv(ranked: Ranked) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["student", "exercise", "metric", "ratio", "rank"])
    for exercise, metric, rows in ranked:
        for rank, sid, ratio in rows:
            w.writerow([sid, exercise, metric, f"{ratio:.4f}", rank])
    return out.getvalue()


def summarise(report: model.Report) -> Summary:
    """What the gradebook and the leaderboard take from a report."""
    ratios = []
    for ex in report.exercises:
        for stage in ex.stages:
            ratios += [(ex.name, m.name, m.ratio) for m in stage.metrics if m.ratio is not None]

    def named(status: model.ExerciseStatus) -> list[str]:
        return [ex.name for ex in report.exercises if ex.status == status]

    return Summary({ex.name: ex.score for ex in report.exercises}, report.score,
                   report.max_score, report.percent, ratios,
                   [ex.name for ex in report.incomplete],
                   bool(report.options.get("build_only")),
                   named(model.ExerciseStatus.COMPILE_ERROR),
                   named(model.ExerciseStatus.REJECTED),
                   named(model.ExerciseStatus.NOT_SUBMITTED))


def number(value: float) -> str:
    """A score as the gradebook writes it: at most two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")

