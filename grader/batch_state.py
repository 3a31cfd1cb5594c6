"""What a batch keeps between runs, under OUT: its folders (made and proven writable before any
student is graded), batch.json (the seed, a salted fingerprint of the secret, a --regrade
still under way, the roster of a Slurm submission), each written atomically."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from grader.errors import GraderError


def write_atomically(path: Path, text: str) -> None:
    """Readers (and a re-run after a kill) see the old file or the new one, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def prepare_out(out: Path, roster: Path | None = None) -> None:
    """OUT and its folders, made and proven writable before any student is graded; never
    inside a roster folder, where a re-run would take it for a student."""
    if out.exists() and not out.is_dir():
        raise GraderError(f"--out {out} is a file, not a folder")
    if roster is not None and roster.is_dir() and out.is_relative_to(roster):
        raise GraderError(f"--out {out} is inside the roster folder {roster}, where it would "
                          "be taken for a student; put it elsewhere")
    try:
        for sub in ("reports", "failed", "logs", "builds"):
            (out / sub).mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        raise GraderError(f"--out {out} is not writable ({error.strerror or error})") from None


def secret_fingerprint(secret: str | None, salt: str) -> str | None:
    """Tells a re-run whether it got the batch's secret, without keeping the secret."""
    if not secret:
        return None
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()[:16]


def load_record(path: Path, kind: type, what: str, empty):
    """A JSON file the grader keeps (batch.json, slurm/rounds.json): `empty` when it is not
    there; GraderError saying how to start afresh when it cannot be read or is not a `kind`."""
    if not path.exists():
        return empty
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise GraderError(f"{path} cannot be read ({error}); remove it to start {what} "
                          "afresh") from None
    if not isinstance(record, kind):
        raise GraderError(f"{path} is not a record of {what}; remove it to start afresh")
    return record


def load_state(out: Path) -> dict:
    return load_record(out / "batch.json", dict, "the batch", {})


def save_state(out: Path, state: dict) -> None:
    write_atomically(out / "batch.json", json.dumps(state, indent=2) + "\n")

