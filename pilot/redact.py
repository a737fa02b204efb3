"""Secrets never leave the process in words: every configured key is cut out of every log line and of
every message a visitor (or a CLI user) is shown.

    register("sk-abc…")            # pilot.settings does this for every key, token, password and Redis URL it holds
    redact(text)                   # the text with each secret (or an echoed piece of one) as "[redacted]"

An upstream service may echo a key it rejected ("API key sk-… is not valid"), whole or in part, and that text
travels on in an error's message, a log line or a traceback. Two places catch it, whatever the path:

- the log record factory installed here rewrites each record's message and traceback text before any
  handler (pilot's, Gradio's, uvicorn's, one added later) formats it;
- the errors the UI and the CLI show — ``pilot.sources.base.SourceError``, the session's ``Reply`` and the
  UI's chat — pass their text through ``redact``.

A long key or token is also found by any piece of 8 characters of it (a truncated echo such as "sk-proj-AbCd…"),
and the whole word around the piece goes; a password only whole (a person's password holds ordinary words, and a
piece of it would cut them everywhere). A URL is not a secret, the password in it is. Secrets shorter than
``MIN_SECRET`` characters are not tracked: they are too likely to be ordinary words.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import urlsplit

REDACTED = "[redacted]"
MIN_SECRET = 6
PIECE = 8  # a long secret is also found by any run of this many of its characters
_WORD = re.compile(r"[\w\-.~+/=:%@]")  # what a key-like word is made of (where an echoed piece is widened to)


class Redactor:
    def __init__(self) -> None:
        self._secrets: dict[str, bool] = {}  # secret -> also found by its pieces
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, value: str | None, partial: bool = True) -> None:
        """Track ``value``; ``partial``: also by any 8-character piece of it (keys and tokens, not passwords). For a
        URL, only the password in it is tracked, whole."""
        text = (value or "").strip()
        if "://" in text:
            text, partial = _password(text), False
        if len(text) < MIN_SECRET or (text in self._secrets and self._secrets[text] >= partial):
            return  # too short to tell from a word, or tracked already
        with self._lock:
            self._secrets[text] = partial
            pieces = set(self._secrets)
            for s, by_piece in self._secrets.items():
                if by_piece and len(s) >= PIECE + 4:
                    pieces.update(s[i : i + PIECE] for i in range(len(s) - PIECE + 1))
            # longest first: a whole secret wins over a piece of it
            self._pattern = re.compile("|".join(re.escape(p) for p in sorted(pieces, key=len, reverse=True)))

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None or not text:
            return text
        out: list[str] = []
        end = 0
        for m in pattern.finditer(text):
            start, stop = m.start(), m.end()
            if start < end:
                continue  # inside a word already cut
            # widen to the whole word (an echoed piece is part of the key's text), linear in the text
            while start > end and _WORD.match(text, start - 1):
                start -= 1
            while stop < len(text) and _WORD.match(text, stop):
                stop += 1
            out.append(text[end:start])
            out.append(REDACTED)
            end = stop
        if not out:
            return text
        out.append(text[end:])
        return "".join(out)

    def clear(self) -> None:
        with self._lock:
            self._secrets.clear()
            self._pattern = None


def _password(url: str) -> str:
    try:
        return urlsplit(url).password or ""
    except ValueError:
        return ""


REDACTOR = Redactor()


def register(*values: str | None, partial: bool = True) -> None:
    """Never show these values: keys and tokens (``partial``: nor any piece of them), or passwords and URLs holding
    one (``partial=False``: whole only)."""
    for value in values:
        REDACTOR.add(value, partial)
    _install()


def redact(text: str) -> str:
    return REDACTOR(text)


_installed = False
_install_lock = threading.Lock()


def _install() -> None:
    """The log record factory that redacts: every record of every logger passes it before any handler."""
    global _installed
    with _install_lock:
        if _installed:
            return
        make = logging.getLogRecordFactory()

        def factory(*args, **kwargs) -> logging.LogRecord:
            record = make(*args, **kwargs)
            redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


_FORMATTER = logging.Formatter()


def redact_record(record: logging.LogRecord) -> None:
    """Rewrite a record in place: its message (arguments merged in) and its traceback text."""
    if REDACTOR._pattern is None:
        return
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record is the logging module's to report, unchanged
        return
    cleaned = redact(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and not record.exc_text:
        # handlers reuse exc_text when it is set: the traceback is formatted (and cleaned) once, here
        record.exc_text = redact(_FORMATTER.formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
