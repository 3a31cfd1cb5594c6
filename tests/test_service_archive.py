"""The grading service's parts that need no server: the archive checks (each refusal before
anything is written, nothing outside the target folder), tokens, the rate limit, the queue in
SQLite and start-up recovery. Standard library only: these run without Flask."""

from __future__ import annotations

import gzip
import io
import sqlite3
import tarfile
import zipfile
from pathlib import Path

import pytest

from grader.errors import GraderError
from grader.service import archive, tokens, workers
from grader.service.jobs import Job, JobState, Limits, Mode
from grader.service.store import Store
from grader.service.submissions import RateLimiter
from service_support import file_info, tar_of, zip_of

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

LIMITS = Limits(max_unpacked_bytes=64 * 1024, max_files=10)


def unpack(tmp_path: Path, data: bytes, limits: Limits = LIMITS) -> list[str]:
    job = tmp_path / "jobs" / "j1"
    job.mkdir(parents=True, exist_ok=True)
    upload = job / "upload"
    upload.write_bytes(data)
    return archive.unpack(upload, job / "unpacked", limits)


def everything(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_a_workspace_zip_and_tar_unpack_as_they_were(tmp_path):
    files = {"workspace/ch01_programming_model/vector_add.cu": "// mine\n",
             "workspace/notes.txt": "hello\n"}
    assert sorted(unpack(tmp_path, zip_of(files))) == sorted(files)
    unpacked = tmp_path / "jobs" / "j1" / "unpacked"
    assert (unpacked / "workspace/ch01_programming_model/vector_add.cu").read_text() == \
        "// mine\n"
    for gz in (True, False):
        other = tmp_path / f"tar-{gz}"
        members = [(file_info("ch01_programming_model", tarfile.DIRTYPE), None),
                   (file_info("ch01_programming_model/vector_add.cu"), b"// tar\n")]
        assert unpack(other, tar_of(members, gz)) == ["ch01_programming_model/vector_add.cu"]


BAD = {
    "path traversal (zip)": (lambda: zip_of({"../../escaped.cu": "x"}), "climbs out"),
    "path traversal, backslashes": (lambda: zip_of({"a\\..\\..\\escaped.cu": "x"}),
                                    "climbs out"),
    "path traversal (tar)": (lambda: tar_of([(file_info("ok/../../escaped.cu"), b"x")]),
                             "climbs out"),
    "absolute path (zip)": (lambda: zip_of({"/tmp/escaped.cu": "x"}), "absolute path"),
    "absolute path (tar)": (lambda: tar_of([(file_info("/tmp/escaped.cu"), b"x")]),
                            "absolute path"),
    "a drive letter": (lambda: zip_of({"C:/escaped.cu": "x"}), "absolute path"),
    "symbolic link (tar)": (lambda: tar_of([(file_info("link", tarfile.SYMTYPE, "/etc"), None),
                                            (file_info("link/passwd"), b"x")]),
                            "symbolic link"),
    "hard link (tar)": (lambda: tar_of([(file_info("hard", tarfile.LNKTYPE, "/etc/passwd"),
                                         None)]), "hard link"),
    "a device (tar)": (lambda: tar_of([(file_info("dev", tarfile.CHRTYPE), None)]),
                       "not a file or a folder"),
    "too many files": (lambda: zip_of({f"f{i}.cu": "x" for i in range(11)}), "11 entries"),
    "too large unpacked": (lambda: zip_of({"big.cu": b"\0" * 70000}), "unpacks to"),
    "a name twice": (lambda: tar_of([(file_info("a.cu"), b"1"), (file_info("a.cu"), b"2")]),
                     "appears twice"),
    "a file and a folder": (lambda: tar_of([(file_info("a"), b"1"), (file_info("a/b"), b"2")]),
                            "both a file and a folder"),
    "a control character": (lambda: zip_of({"a\nb.cu": "x"}), "control character"),
    "not an archive": (lambda: b"int main() { return 0; }\n", "not a .zip or .tar.gz"),
    "a broken zip": (lambda: zip_of({"a.cu": "x" * 100})[:60], "not a valid .zip"),
    "a broken tar.gz": (lambda: tar_of([(file_info("a.cu"), b"x" * 5000)])[:40],
                        "not a valid .tar.gz"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_refused_archive_writes_nothing(tmp_path, case):
    make, said = BAD[case]
    with pytest.raises(archive.ArchiveError, match=said):
        unpack(tmp_path, make())
    # Only the upload itself, in the job's folder: no unpacked folder, nothing beside it.
    assert everything(tmp_path) == {"jobs", "jobs/j1", "jobs/j1/upload"}
    assert not Path("/tmp/escaped.cu").exists()


def test_a_symbolic_link_in_a_zip_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as made:
        info = zipfile.ZipInfo("link")
        info.external_attr = (0o120777 << 16)  # S_IFLNK, as zip -y writes a link
        made.writestr(info, "/etc/passwd")
    with pytest.raises(archive.ArchiveError, match="symbolic link"):
        unpack(tmp_path, buffer.getvalue())


def test_a_gzip_bomb_stops_at_the_cap_not_at_its_end(tmp_path):
    # 20 MiB of zeros in a tar, compressed to about 20 KiB: refused while inflating.
    tar = tar_of([(file_info("zeros.cu"), b"\0" * (20 * 1024 * 1024))], gz=False)
    with pytest.raises(archive.ArchiveError, match="unpacks to more than"):
        unpack(tmp_path, gzip.compress(tar))
    assert everything(tmp_path) == {"jobs", "jobs/j1", "jobs/j1/upload"}


def test_the_archive_kinds_are_told_by_their_first_bytes():
    assert archive.kind(zip_of({"a": "b"})) == "zip"
    assert archive.kind(tar_of([(file_info("a"), b"b")])) == "tar.gz"
    assert archive.kind(tar_of([(file_info("a"), b"b")], gz=False)) == "tar"
    assert archive.kind(b"PK") is None and archive.kind(b"") is None


# ------------------------------------------------------------------------------ tokens

def test_a_token_is_kept_hashed_and_checked(tmp_path):
    store = Store(tmp_path / "service.db")
    token = tokens.create(store, "gradescope", "gpu101")
    raw = (tmp_path / "service.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("service.db-*"))
    assert token.split("_", 2)[2].encode() not in raw  # the secret is nowhere in the files
    verifier = tokens.Verifier(store)
    row = verifier.check(token)
    assert (row.name, row.course, row.revoked_at) == ("gradescope", "gpu101", None)
    assert verifier.check(token) == row  # remembered: no second scrypt
    assert verifier.check(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert verifier.check("ccs_000000000000_x") is None and verifier.check("nonsense") is None
    with pytest.raises(GraderError, match="exists already"):
        tokens.create(store, "gradescope", "gpu101")
    assert store.revoke("gradescope") and not store.revoke("gradescope")
    assert verifier.check(token).revoked_at  # still genuine, now revoked: the API says 403
    tokens.create(store, "gradescope", "gpu101")  # the name is free again
    with pytest.raises(GraderError, match="--name"):
        tokens.create(store, "bad name", "gpu101")


def test_the_rate_limit_counts_a_minute_per_token():
    now = [0.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    assert [limiter.retry_after(1) for _ in range(3)] == [0, 0, 0]
    assert limiter.retry_after(1) == 60
    assert limiter.retry_after(2) == 0  # another token has its own
    now[0] = 45.0
    assert limiter.retry_after(1) == 15
    now[0] = 60.0
    assert limiter.retry_after(1) == 0


# ------------------------------------------------------------------------------ the queue

def _job(store: Store, data: Path, job_id: str) -> Job:
    (data / "jobs" / job_id).mkdir(parents=True)
    return store.insert(Job(id=job_id, token_id=1, course="c", exercises=[], files=["f"]))


def test_jobs_are_claimed_oldest_first_once_each(tmp_path):
    store = Store(tmp_path / "service.db")
    for name in ("a1", "b2", "c3"):
        _job(store, tmp_path, name)
    assert [store.position(j) for j in store.jobs_in(JobState.QUEUED)] == [1, 2, 3]
    first, second = store.claim("w0"), store.claim("w1")
    assert (first.id, first.state, first.attempts, second.id) == ("a1", JobState.RUNNING, 1, "b2")
    assert store.position(store.job("c3")) == 1 and store.active_of(1) == 3
    store.finish("a1", JobState.DONE, exit_code=0, score=1.0, max_score=2.0)
    assert store.counts() == {"queued": 1, "running": 1, "done": 1, "failed": 0}
    with sqlite3.connect(tmp_path / "service.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_start_up_requeues_running_jobs_and_removes_unaccepted_uploads(tmp_path):
    store = Store(tmp_path / "service.db")
    _job(store, tmp_path, "a1")
    _job(store, tmp_path, "b2")
    store.claim("w0")
    store.claim("slurm")
    store.set_slurm_job("b2", "4242")
    (tmp_path / "jobs" / "half").mkdir()  # an upload cut short before its row was written
    assert workers.recover(store, tmp_path, Mode.BUILD_ONLY) == ["a1", "b2"]
    assert not (tmp_path / "jobs" / "half").exists()
    again = store.job("a1")
    assert (again.state, again.progress) == (JobState.QUEUED, workers.RESTARTED)
    # Under Slurm, a job the scheduler has goes on being watched, not graded twice.
    store.claim("w0"), store.claim("slurm")
    store.set_slurm_job("b2", "4243")
    assert workers.recover(store, tmp_path, Mode.SLURM) == ["a1"]
    assert store.job("b2").state == JobState.RUNNING
