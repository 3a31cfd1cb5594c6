"""The merge job of a Slurm round (`grader slurm-merge`): reads each array task's final state,
records the students a task left without a report as not graded (with what its state means),
rebuilds the gradebook and writes round-<n>/merge.json and slurm/summary.txt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from grader import model
from grader.batch_roster import read_roster
from grader.batch_state import load_state, write_atomically
from grader.gradebook import Book
from grader.manifest import Exercise
from grader.slurm_queue import ENDED_EARLY, task_states
from grader.slurm_scripts import load_round, load_rounds, round_dir, slurm_dir

EXIT_ALL_GRADED, EXIT_SOME_NOT_GRADED = 0, 1


def merge(out: Path, number: int, exercises: list[Exercise],
          states: dict[int, str] | None = None, say: Callable[[str], None] = print) -> int:
    """Rebuilds the gradebook from the reports; names the tasks that ended early and
    records their students without a report as not graded, with the reason."""
    record = load_round(out, number)
    rounds = load_rounds(out)
    info = next((r for r in rounds if r.get("round") == number), {})
    array_job = info.get("array_job") or "?"
    source = "given"
    if states is None:
        states, source = task_states(array_job) if info.get("array_job") else ({}, "none")
    book = Book(out)
    roster_path = _roster_of(out)
    students = read_roster(roster_path) if roster_path else []
    findings = {"round": number, "array_job": array_job, "states_from": source,
                "merged_at": model.now(), "tasks": [], "not_graded": []}
    for index, task in enumerate(record["tasks"]):
        state = states.get(index, "UNKNOWN")
        ended = _load_json(round_dir(out, number) / "ended" / f"{index}.json")
        missing = [s["id"] for s in task if book.summary(s["id"]) is None]
        entry = {"task": index, "job": f"{array_job}_{index}", "state": state,
                 "students": [s["id"] for s in task], "without_report": missing,
                 "node": (ended or {}).get("node")}
        findings["tasks"].append(entry)
        if not missing:
            continue
        if state in ENDED_EARLY:
            why = f"its Slurm task {array_job}_{index} {ENDED_EARLY[state]} ({state})"
        elif ended is None:
            why = (f"its Slurm task {array_job}_{index} ended ({state}) without saying so: "
                   "killed before it could write, or never started")
        elif ended.get("stopped_by"):
            why = f"its Slurm task {array_job}_{index} was stopped by {ended['stopped_by']}"
        else:
            why = ""  # the task recorded its own failure for this student
        for sid in missing:
            if why:
                book.record_failure(sid, why + "; submitting again grades it")
            findings["not_graded"].append({"student": sid, "task": index,
                                           "reason": why or book.failure(sid) or "unknown"})
    book.rebuild(students, exercises)
    # A --build-only round: whose files do not compile, as a local batch's last line says.
    findings["do_not_compile"] = [s.id for s in students if (summary := book.summary(s.id))
                                  and summary.did_not_compile]
    write_atomically(round_dir(out, number) / "merge.json",
                           json.dumps(findings, indent=2) + "\n")
    text = summary_text(findings, len(students))
    write_atomically(slurm_dir(out) / "summary.txt", text)
    say(text.rstrip())
    return EXIT_SOME_NOT_GRADED if findings["not_graded"] or findings["do_not_compile"] \
        else EXIT_ALL_GRADED


def summary_text(findings: dict, roster_size: int) -> str:
    early = [t for t in findings["tasks"] if t["state"] in ENDED_EARLY]
    lines = [f"round {findings['round']} (job array {findings['array_job']}): "
             f"{count(len(findings['tasks']), 'task')}, {len(early)} ended early; "
             f"{count(len(findings['not_graded']), 'student')} not graded "
             f"(task states from {findings['states_from']})"]
    for t in early:
        lines.append(f"  task {t['task']} ({t['job']}) {t['state']}: {ENDED_EARLY[t['state']]}; "
                     f"students {', '.join(t['students'])}")
    for n in findings["not_graded"]:
        lines.append(f"  not graded: {n['student']}: {n['reason']}")
    if findings["not_graded"]:
        lines.append("submit the same command again to grade only these students")
    unbuilt = findings.get("do_not_compile") or []
    if unbuilt:
        lines.append(f"{count(len(unbuilt), 'student')} whose files do not compile: "
                     f"{', '.join(unbuilt)}")
    lines.append(f"roster: {roster_size} students; gradebook.csv rebuilt from the reports")
    return "\n".join(lines) + "\n"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _load_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _roster_of(out: Path) -> Path | None:
    state = load_state(out)
    roster = state.get("roster")
    return Path(roster) if roster else None
