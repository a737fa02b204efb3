"""Files that hold a secret (the key the browser-stored libraries are sealed with): written whole or not at
all, checked when read, and replaced — with a warning — when empty or damaged.

    key = read_or_create(path, make=lambda: secrets.token_urlsafe(24), valid=looks_like_token)

A start on a full disk once left a 0-byte key file that every later start read back as "no key" and used
silently (each start then sealed libraries with a fresh key, and lost them at the next). Now a key is written
to a private temporary file beside its place, flushed to disk, and renamed over it (atomic on POSIX), so a
reader sees the old file or the whole new one; a file that does not pass ``valid`` is moved aside (kept for
the operator, never read again) and replaced.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"[A-Za-z0-9_\-]{24,256}")


def looks_like_token(text: str) -> bool:
    """A URL-safe token of 24–256 characters (what ``secrets.token_urlsafe`` writes)."""
    return bool(_TOKEN.fullmatch(text))


def write_atomically(path: Path, text: str, *, replace: bool = True) -> bool:
    """``text`` in ``path`` whole, readable by its owner only, or ``OSError`` and ``path`` as it was.
    ``replace=False``: only if ``path`` does not exist yet (False when another process was first)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # never readable by others, not even briefly
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # atomic "create if absent": two processes starting at once agree on one key
            except FileExistsError:
                return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    with contextlib.suppress(OSError):  # the rename itself made durable where the file system allows
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return True


def read_or_create(path: Path, make: Callable[[], str], valid: Callable[[str], bool]) -> str:
    """The secret in ``path``; a new one from ``make`` when there is none or it fails ``valid`` (the damaged file
    is moved aside with a warning). ``OSError`` when no secret can be kept there (the caller decides what then)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("the secret in %s cannot be read (%s); replacing it", path, exc)
        text = ""
    if text is not None and valid(text):
        return text
    if text is not None:
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        what = "empty" if not text else "not a valid key"
        log.warning(
            "%s is %s; moved aside to %s and replaced with a new key (what was sealed with the old one cannot be read)",
            path,
            what,
            aside.name,
        )
        with contextlib.suppress(OSError):
            path.rename(aside)
    secret = make()
    if not write_atomically(path, secret, replace=text is not None):
        return read_or_create(path, make, valid)  # another process created it a moment ago: use theirs
    return secret
