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

A long secret is also found by any piece of 8 characters of it (a truncated echo such as "sk-proj-AbCd…"), and
the whole word around the piece goes. Secrets shorter than ``MIN_SECRET`` characters are not tracked: they are
too likely to be ordinary words.
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
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, value: str | None) -> None:
        """Track ``value`` (and, for a URL, the password in it)."""
        for secret in _parts(value):
            if len(secret) < MIN_SECRET or secret in self._secrets:
                continue
            with self._lock:
                self._secrets.add(secret)
                pieces = set(self._secrets)
                for s in self._secrets:
                    if len(s) >= PIECE + 4:
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


def _parts(value: str | None) -> list[str]:
    text = (value or "").strip()
    if not text:
        return []
    parts = [text]
    if "://" in text:
        try:
            password = urlsplit(text).password
        except ValueError:
            password = None
        if password:
            parts.append(password)
    return parts


REDACTOR = Redactor()


def register(*values: str | None) -> None:
    """Never show these values: they are keys, tokens, passwords or URLs holding one."""
    for value in values:
        REDACTOR.add(value)
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
