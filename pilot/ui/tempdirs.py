"""Where the app's temporary files live, and how they go away: one folder per server process, cleaned at
start (what a killed predecessor left) and at stop.

    root = process_root()           # /tmp/pilot-ui-<pid>-<random>/ (0700), made once per process
    session_dir()                   # a folder in it for one visitor's downloads (removed with the visitor)
    clean_stale()                   # at start: the roots of processes that no longer run

Each visitor's exports are written to a folder of their own, and Gradio copies what it serves into its cache
(``GRADIO_TEMP_DIR``). Before, 157 visitor folders and Gradio's copies stayed in /tmp after a shutdown: a
visitor's folder went only when Gradio dropped their state, which it never does at shutdown. Now every folder
is under the process's root, Gradio's cache too (unless the operator set ``GRADIO_TEMP_DIR``), and the root
goes at exit — a normal one, Ctrl-C or SIGTERM; a SIGKILL's leftovers go at the next start.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "pilot-ui-"
_OURS = re.compile(rf"{PREFIX}(\d+)-[\w]+$")

_root: Path | None = None
_lock = threading.Lock()


def base() -> Path:
    return Path(tempfile.gettempdir())


def process_root() -> Path:
    """This process's folder for temporary files (made on first use, removed at exit)."""
    global _root
    with _lock:
        if _root is None or not _root.is_dir():
            _root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base()))
            atexit.register(remove_root)
        return _root


def session_dir() -> str:
    """A fresh folder for one visitor's files, inside the process's root."""
    return tempfile.mkdtemp(prefix="session-", dir=process_root())


def gradio_dir() -> Path:
    """Where Gradio keeps the files it serves, under the process's root (so they go with it)."""
    path = process_root() / "gradio"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def remove_root() -> None:
    global _root
    with _lock:
        root, _root = _root, None
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to judge
    return True


def clean_stale(where: Path | None = None) -> int:
    """Remove the roots of pilot processes that no longer run; how many were removed. Only this user's folders
    of this layout are touched (another server's, running, is alive; folders of other programs are not ours)."""
    removed = 0
    for path in (where or base()).glob(f"{PREFIX}*"):
        m = _OURS.match(path.name)
        try:
            st = path.lstat()
        except OSError:
            continue
        if m is None or not path.is_dir() or path.is_symlink() or st.st_uid != os.getuid():
            continue
        if int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
                removed += 1
    if removed:
        log.info("removed %d temporary folder(s) left by earlier runs", removed)
    return removed
