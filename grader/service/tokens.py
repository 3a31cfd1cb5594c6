"""Bearer tokens, one per course and platform: `ccs_<prefix>_<secret>`. The database keeps
the prefix (to find the row) and a salted scrypt hash of the secret, never the token; a token
is shown once, when it is made."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading

from grader.errors import GraderError
from grader.service.store import Store, TokenRow

_PREFIX = "ccs"
_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1, "dklen": 32}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def digest(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode("utf-8"), salt=salt, **_SCRYPT)


def check_name(name: str, what: str) -> str:
    if not NAME.fullmatch(name):
        raise GraderError(f"{what} {name!r}: use letters, digits, '.', '_' and '-' (at most "
                          "64, starting with a letter or digit)")
    return name


def create(store: Store, name: str, course: str) -> str:
    """A new token for platform `name` of `course`; the token itself, to show once."""
    check_name(name, "--name")
    check_name(course, "--course")
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    store.add_token(name, course, prefix, salt, digest(secret, salt))
    return f"{_PREFIX}_{prefix}_{secret}"


def split(token: str) -> tuple[str, str] | None:
    """(prefix, secret) of a well-formed token, else None."""
    parts = token.split("_", 2)
    if len(parts) != 3 or parts[0] != _PREFIX or not re.fullmatch(r"[0-9a-f]{12}", parts[1]) \
            or not parts[2]:
        return None
    return parts[1], parts[2]


class Verifier:
    """Checks a presented token against the database. scrypt is slow on purpose, so a token
    once verified is remembered (by its SHA-256, in memory only); revocation is read from the
    database on every request all the same."""

    def __init__(self, store: Store):
        self.store = store
        self._known: dict[bytes, int] = {}
        self._lock = threading.Lock()

    def check(self, token: str) -> TokenRow | None:
        """The token's row (revoked or not) when the token is genuine, else None."""
        parts = split(token)
        if parts is None:
            return None
        row = self.store.token_by_prefix(parts[0])
        if row is None:
            return None
        seen = hashlib.sha256(token.encode("utf-8")).digest()
        with self._lock:
            if self._known.get(seen) == row.id:
                return row
        if not hmac.compare_digest(digest(parts[1], row.salt), row.hash):
            return None
        with self._lock:
            self._known[seen] = row.id
        return row
