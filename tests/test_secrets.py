"""Secrets: keys never shown in words (``pilot.redact``), and the files holding them written whole, checked when
read and replaced when damaged (``pilot.keyfile``, the app's ``ui-storage-secret``)."""

from __future__ import annotations

import logging
import os
import threading

import pytest
from pydantic import SecretStr

from pilot.keyfile import looks_like_token, read_or_create, write_atomically
from pilot.redact import REDACTED, redact, register
from pilot.settings import Settings
from pilot.sources.base import SourceUnavailable
from pilot.ui.app import storage_secret

KEY = "sk-proj-Zq81XbT4kLmN0pQr7sUv2wXy"


def test_every_configured_secret_is_cut_whole_or_in_part():
    Settings(_env_file=None, s2_api_key=SecretStr(KEY), redis_url=SecretStr("redis://:hunter2-redis@db:6379/0"),
             auth=SecretStr("ann:correct-horse-battery,bob:staple-gun"))  # fmt: skip
    for text, gone in [
        (f"API key {KEY} is not valid", KEY),
        (f"key '{KEY[:14]}…' rejected", KEY[:14]),  # a truncated echo
        (f"…{KEY[-9:]} expired", KEY[-9:]),  # the tail of it
        (f"x-api-key={KEY}&q=1", KEY),
        ("AUTH failed for redis://:hunter2-redis@db:6379/0", "hunter2-redis"),
        ("login correct-horse-battery refused", "correct-horse-battery"),
    ]:
        said = redact(text)
        assert gone not in said and REDACTED in said, said
    assert redact("frame semantic parsing, 2008") == "frame semantic parsing, 2008"  # ordinary words stay
    assert redact("a correct horse, and redis://db:6379/0") == "a correct horse, and redis://db:6379/0"  # pieces of a
    # password, and a Redis URL without its password, are not secrets
    assert redact(f"keys: {KEY} and {KEY}") == f"keys: {REDACTED} and {REDACTED}"


def test_redaction_is_linear_on_a_long_paste():
    register(KEY)
    blob = "A" * 2_000_000 + KEY[:8]
    assert redact(blob).endswith(REDACTED)  # (quadratic widening would take minutes here)


def test_no_log_record_carries_a_key_whatever_logs_it(caplog):
    register(KEY)
    with caplog.at_level(logging.INFO):
        logging.getLogger("httpx").info("HTTP Request: GET https://api/paper?key=%s", KEY)
        logging.getLogger("gradio").warning(f"an f-string with {KEY}")
        try:
            raise RuntimeError(f"upstream said {KEY}")
        except RuntimeError:
            logging.getLogger("uvicorn.error").exception("request failed")
    assert KEY not in caplog.text and KEY[:10] not in caplog.text
    assert caplog.text.count(REDACTED) >= 3


def test_the_errors_the_ui_shows_are_redacted():
    register(KEY)
    err = SourceUnavailable("s2", f"Semantic Scholar said: key {KEY} unknown", f"check {KEY}")
    assert KEY not in str(err) and KEY not in err.message and KEY not in (err.hint or "")


# --- files holding a secret --------------------------------------------------------------------------------------
def test_a_zero_byte_secret_left_by_a_full_disk_is_replaced_with_a_warning(tmp_path, caplog):
    (tmp_path / "ui-storage-secret").write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        key = storage_secret(tmp_path)
    assert key is not None and looks_like_token(key)
    assert (tmp_path / "ui-storage-secret").read_text() == key
    assert "empty" in caplog.text and "replaced" in caplog.text
    assert storage_secret(tmp_path) == key  # and kept from then on: libraries sealed with it survive restarts
    assert oct((tmp_path / "ui-storage-secret").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("content", [b"\x00\x01\x02garbage", b"short", "é".encode() * 40, b"a b c d e f g h i j k l"])
def test_a_damaged_secret_is_moved_aside_and_replaced(tmp_path, caplog, content):
    (tmp_path / "ui-storage-secret").write_bytes(content)
    with caplog.at_level(logging.WARNING):
        key = storage_secret(tmp_path)
    assert key is not None and looks_like_token(key)
    aside = list(tmp_path.glob("ui-storage-secret.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == content  # kept for the operator
    assert "moved aside" in caplog.text


def test_a_good_secret_is_read_as_it_is(tmp_path):
    first = storage_secret(tmp_path)
    assert first is not None and storage_secret(tmp_path) == first
    assert not list(tmp_path.glob("*.damaged-*"))


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "secret"
    write_atomically(path, "old-token-" + "x" * 20)

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError):
        write_atomically(path, "new-token-" + "y" * 20)
    assert path.read_text() == "old-token-" + "x" * 20  # never half a key, never an empty file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret"]  # no temporary file left


def test_a_start_on_a_full_disk_runs_without_a_stable_key_and_leaves_no_empty_file(tmp_path, monkeypatch, caplog):
    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with caplog.at_level(logging.WARNING):
        assert storage_secret(tmp_path) is None
    assert not (tmp_path / "ui-storage-secret").exists()  # the next start makes one, instead of reading ""
    assert "will not survive a restart" in caplog.text
    monkeypatch.undo()
    assert looks_like_token(storage_secret(tmp_path) or "")


def test_two_processes_starting_at_once_agree_on_one_key(tmp_path):
    keys: list[str] = []
    barrier = threading.Barrier(8)

    def start() -> None:
        barrier.wait()
        keys.append(read_or_create(tmp_path / "k", lambda: os.urandom(18).hex(), looks_like_token))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 1 and (tmp_path / "k").read_text() == keys[0]
