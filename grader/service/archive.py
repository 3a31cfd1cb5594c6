"""Unpacking an uploaded archive (.zip, .tar.gz or .tar, told apart by their first bytes)
into a job's folder, after checking every entry: no absolute path, no `..`, no link, no
device or pipe, no name twice, at most `max_files` entries and `max_unpacked_bytes` in all.
Any of these refuses the whole archive before a file is written (ArchiveError, which the API
answers with 400). Only folders and regular files are made, each opened with O_EXCL and
O_NOFOLLOW under the target folder, so nothing can be written outside it; a gzip stream is
inflated into the job's folder with the same cap on its size, and a zip member cannot yield
more than its declared size (zipfile stops there and checks its CRC)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable

from grader.service.jobs import Limits

MiB = 1024 * 1024
_CHUNK = 64 * 1024
_MAX_DEPTH = 32
_MAX_PART = 255  # bytes in one name, as most file systems allow


class ArchiveError(Exception):
    """The upload is refused; the message says why, in one line."""


@dataclass
class Entry:
    parts: tuple[str, ...]
    is_dir: bool
    size: int
    open: Callable[[], IO[bytes]] | None = None


def kind(head: bytes) -> str | None:
    """"zip", "tar.gz" or "tar" from an archive's first 512 bytes; None for anything else."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    return None


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


def _parts(name: str) -> tuple[str, ...]:
    """The path of an entry as its folders and name; ArchiveError for an absolute path, a
    `..`, a control character or a name too long or too deep."""
    shown = name.encode("unicode_escape").decode("ascii")[:200]
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ArchiveError(f"the entry {shown!r} has a control character in its name")
    path = name.replace("\\", "/")  # some Windows tools write backslashes
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise ArchiveError(f"the entry {shown!r} has an absolute path; an archive's paths "
                           "must be relative to its top folder")
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"the entry {shown!r} climbs out of the archive ('..')")
    if len(parts) > _MAX_DEPTH or any(len(p.encode("utf-8", "surrogateescape")) > _MAX_PART
                                      for p in parts):
        raise ArchiveError(f"the entry {shown!r} is nested too deep or has too long a name")
    return parts


def _zip_entries(path: Path) -> tuple[list[Entry], zipfile.ZipFile]:
    try:
        archive = zipfile.ZipFile(path)
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as error:
        raise ArchiveError(f"not a valid .zip archive ({error})") from None
    entries = []
    for info in infos:
        mode = info.external_attr >> 16
        kind_bits = stat.S_IFMT(mode)
        if kind_bits == stat.S_IFLNK:
            raise ArchiveError(f"the entry {info.filename!r} is a symbolic link; links are "
                               "not accepted")
        if kind_bits not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveError(f"the entry {info.filename!r} is not a file or a folder")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"the entry {info.filename!r} is encrypted")
        is_dir = info.is_dir() or kind_bits == stat.S_IFDIR
        entries.append(Entry(_parts(info.filename), is_dir, 0 if is_dir else info.file_size,
                             None if is_dir else (lambda info=info: archive.open(info))))
    return entries, archive


def _tar_entries(path: Path) -> tuple[list[Entry], tarfile.TarFile]:
    try:
        archive = tarfile.open(path, "r:")
        members = archive.getmembers()
    except (tarfile.TarError, OSError, ValueError, UnicodeError) as error:
        raise ArchiveError(f"not a valid tar archive ({error})") from None
    entries = []
    for member in members:
        if member.issym() or member.islnk():
            raise ArchiveError(f"the entry {member.name!r} is a "
                               f"{'symbolic' if member.issym() else 'hard'} link; links are "
                               "not accepted")
        if not (member.isreg() or member.isdir()):
            raise ArchiveError(f"the entry {member.name!r} is not a file or a folder (a "
                               "device, a pipe or a socket)")
        entries.append(Entry(_parts(member.name), member.isdir(), member.size,
                             None if member.isdir() else
                             (lambda member=member: archive.extractfile(member))))
    return entries, archive


def _inflate(source: Path, target: Path, cap: int) -> None:
    """A .tar.gz's tar, written to `target`; ArchiveError past `cap` bytes (a gzip bomb stops
    there, not at the end of its stream) or for a broken stream."""
    written = 0
    try:
        with gzip.open(source, "rb") as inflated, target.open("wb") as out:
            while chunk := inflated.read(_CHUNK):
                written += len(chunk)
                if written > cap:
                    raise ArchiveError(f"the archive unpacks to more than {_size(cap)}")
                out.write(chunk)
    except (OSError, EOFError, zlib.error) as error:
        raise ArchiveError(f"not a valid .tar.gz archive ({error})") from None


def check(entries: list[Entry], limits: Limits) -> None:
    """Every refusal that the list of entries alone shows, before anything is written."""
    if len(entries) > limits.max_files:
        raise ArchiveError(f"the archive has {len(entries)} entries, more than the "
                           f"{limits.max_files} this service takes")
    total = sum(e.size for e in entries)
    if total > limits.max_unpacked_bytes:
        raise ArchiveError(f"the archive unpacks to {_size(total)}, more than the "
                           f"{_size(limits.max_unpacked_bytes)} this service takes")
    files: set[tuple[str, ...]] = set()
    folders: set[tuple[str, ...]] = set()
    for e in entries:
        if not e.parts:
            if e.is_dir:
                continue
            raise ArchiveError("an entry of the archive has no name")
        if not e.is_dir:
            if e.parts in files:
                raise ArchiveError(f"the entry {'/'.join(e.parts)!r} appears twice")
            files.add(e.parts)
        folders.update(e.parts[:i] for i in range(1, len(e.parts) + (1 if e.is_dir else 0)))
    clash = files & folders
    if clash:
        raise ArchiveError(f"{'/'.join(sorted(clash)[0])!r} is both a file and a folder in "
                           "the archive")


def _write(entry: Entry, into: Path, budget: list[int]) -> None:
    target = into.joinpath(*entry.parts)
    if into not in target.parents and target != into:  # _parts already made sure; once more
        raise ArchiveError(f"the entry {'/'.join(entry.parts)!r} would land outside the job")
    if entry.is_dir:
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    left = entry.size
    with os.fdopen(fd, "wb") as out, entry.open() as source:
        while chunk := source.read(min(_CHUNK, max(left, 0) + 1)):
            left -= len(chunk)
            budget[0] -= len(chunk)
            if left < 0 or budget[0] < 0:
                raise ArchiveError(f"the entry {'/'.join(entry.parts)!r} holds more than it "
                                   "declares")
            out.write(chunk)


def unpack(archive: Path, into: Path, limits: Limits) -> list[str]:
    """Checks the archive and unpacks it into the new folder `into`; the files written, as
    relative paths. ArchiveError (nothing of it kept: `into` removed) when it is refused."""
    with archive.open("rb") as f:
        found = kind(f.read(512))
    if found is None:
        raise ArchiveError("the upload is not a .zip or .tar.gz archive")
    inflated = archive.with_name(archive.name + ".tar")
    opened = None
    try:
        if found == "tar.gz":
            # Headers and padding on top of the files themselves: 512-byte blocks, a few per
            # entry, and the end of the archive.
            _inflate(archive, inflated, limits.max_unpacked_bytes
                     + 3 * 512 * (limits.max_files + 1) + 20 * 512)
        entries, opened = _zip_entries(archive) if found == "zip" else \
            _tar_entries(inflated if found == "tar.gz" else archive)
        check(entries, limits)
        into.mkdir()
        budget = [limits.max_unpacked_bytes]
        for entry in entries:
            if entry.parts:
                _write(entry, into, budget)
        return ["/".join(e.parts) for e in entries if e.parts and not e.is_dir]
    except ArchiveError:
        shutil.rmtree(into, ignore_errors=True)
        raise
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error,
            RuntimeError) as error:  # a CRC that does not match, a truncated member
        shutil.rmtree(into, ignore_errors=True)
        raise ArchiveError(f"the archive could not be unpacked ({error})") from None
    finally:
        if opened is not None:
            opened.close()
        inflated.unlink(missing_ok=True)
