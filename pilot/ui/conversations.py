"""Conversations that survive a page reload, and the "recent searches" a researcher comes back to.

Kept on the server, under an unguessable visitor token, not in the browser like the library
(``pilot.library``): a conversation holds its results with their evidence and abstracts, its workflow
versions and up to five earlier searches — 100 KB to 1 MB of JSON each, twenty of them for the recent list.
localStorage holds about 5 MB per site (shared with the library), and a browser-kept value travels to the
browser with every answer that changes it. Here the browser keeps only a 256-bit random token (sealed in
localStorage like the library) and, per tab, a conversation id (sessionStorage: a reload keeps it, another
tab has its own). Records are stored under a hash of the token (``PILOT_CACHE_DIR/conversations``, or
Redis when replicas share one), compressed, capped in size, and forgotten ``PILOT_CONVERSATION_DAYS``
after their last change; nothing lists them, so a token that is not yours finds nothing.

    store = ConversationStore.open(settings)
    token = new_token()                                # the browser keeps it
    store.save(token, tab, record)                     # after each action that changed the conversation
    record, problem = store.load(token, tab)           # on a reload; problem: why an old one was dropped
    store.remember(token, key, record, label, n)       # the search on screen, for the recent list
    entries = store.recent(token)                      # newest first, at most MAX_RECENT

Loading never raises: a record written by another version of pilot, or damaged, is dropped with a sentence
that says so, and the page starts afresh.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
import secrets
import threading
import time
import zlib
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from cache import Cache, RedisCache, open_cache
from pilot import limits
from pilot.settings import Settings
from workflows.model import RunTrace

log = logging.getLogger(__name__)

RECORD_VERSION = 1
MAX_RECENT = 20  # searches the recent list keeps (their records go with them)
MAX_TABS = 40  # conversations (tabs) one visitor keeps besides those
MAX_RECORD_BYTES = 2_000_000  # one compressed record; a larger conversation sheds its oldest earlier searches
MAX_JSON_BYTES = 40_000_000  # what a record may inflate to when read back
MAX_KEPT_CHARS = 20_000  # one chat message, as kept
_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


def new_token() -> str:
    """A visitor token: 256 random bits, URL-safe (what the browser keeps)."""
    return secrets.token_urlsafe(32)


def new_id() -> str:
    """A tab's conversation id, or a recent search's key."""
    return secrets.token_urlsafe(12)


def valid_id(value: Any) -> str | None:
    """``value`` when it can be a token or an id (whatever a browser sends is untrusted), else None."""
    return value if isinstance(value, str) and _ID.match(value) else None


class ChatLine(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(max_length=MAX_KEPT_CHARS)
    details: list[str] = Field(default_factory=list, max_length=50)


class ConversationRecord(BaseModel):
    """Everything the page needs to show a conversation again, as it was left."""

    version: int = RECORD_VERSION
    saved_at: float = 0.0
    chat: list[ChatLine] = Field(default_factory=list, max_length=limits.MAX_TRANSCRIPT_MESSAGES)
    session: dict[str, Any] | None = Field(None, description="pilot.session.Session, dumped as JSON")
    trace: RunTrace | None = None
    ratings: dict[str, bool] = Field(default_factory=dict)
    selected: str | None = None
    map_paper: str | None = None
    open_groups: list[str] = Field(default_factory=list)
    search_keys: dict[str, str] = Field(default_factory=dict, description="search number -> its key in the recent list")


class RecentSearch(BaseModel):
    key: str
    label: str = Field(max_length=500)
    saved_at: float
    results: int = 0
    answer: bool = False


class StoreProblem(Exception):
    """A record could not be kept or read back; the message is for the researcher."""


def _encode(record: ConversationRecord) -> str:
    raw = record.model_dump_json(exclude_none=True).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _decode(blob: Any) -> ConversationRecord:
    """The record in ``blob``; ``StoreProblem`` (with the reason in words) for anything else."""
    if not isinstance(blob, dict) or not isinstance(blob.get("z"), str):
        raise StoreProblem("it is not a conversation record")
    if blob.get("v") != RECORD_VERSION:
        raise StoreProblem(f"it was saved by another version of pilot (record format {blob.get('v')!r})")
    try:
        packed = base64.b64decode(blob["z"], validate=True)
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, MAX_JSON_BYTES)
        if inflate.unconsumed_tail:
            raise StoreProblem("it is larger than a conversation can be")
        return ConversationRecord.model_validate_json(raw)
    except (binascii.Error, zlib.error, ValueError) as exc:  # ValidationError is a ValueError
        what = "its fields do not fit this version of pilot" if isinstance(exc, ValidationError) else "it is damaged"
        raise StoreProblem(what) from exc


def _shrunk(record: ConversationRecord) -> ConversationRecord:
    """The record without its oldest earlier searches, one at a time, until it fits ``MAX_RECORD_BYTES``."""
    session = dict(record.session or {})
    earlier = list(session.get("earlier") or [])
    while earlier:
        earlier.pop(0)
        session["earlier"] = earlier
        smaller = record.model_copy(update={"session": session})
        if len(_encode(smaller)) <= MAX_RECORD_BYTES:
            return smaller
    raise StoreProblem(
        f"this conversation is larger than {MAX_RECORD_BYTES // 1_000_000} MB even without its earlier searches"
    )


class ConversationStore:
    """Records by visitor and tab, and each visitor's recent searches, in one never-failing cache."""

    def __init__(self, cache: Cache | RedisCache):
        self._cache = cache
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings) -> ConversationStore:
        ttl = settings.conversation_days * 24 * 3600
        return cls(open_cache(settings.cache_dir, "conversations", ttl_s=ttl, size_mb=1024, redis_url=settings.redis()))

    @property
    def enabled(self) -> bool:
        return self._cache.enabled

    # --- keys -------------------------------------------------------------------------------------
    @staticmethod
    def _visitor(token: str) -> str:
        # the token itself is never stored: whoever reads the cache directory cannot act as the visitor
        return hashlib.sha256(token.encode("ascii")).hexdigest()[:40]

    def _lock(self, visitor: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(visitor, threading.Lock())

    # --- conversations (one per tab) ----------------------------------------------------------------
    def save(self, token: str, tab: str, record: ConversationRecord) -> None:
        """Keep the tab's conversation; ``StoreProblem`` when it cannot be kept (too large)."""
        visitor = self._visitor(token)
        blob = self._pack(record)
        with self._lock(visitor):
            self._cache.set(f"{visitor}:tab:{tab}", blob)
            tabs = [t for t in self._cache.get(f"{visitor}:tabs", []) or [] if isinstance(t, str) and t != tab]
            tabs.append(tab)
            for old in tabs[:-MAX_TABS]:  # a visitor who opens a thousand tabs keeps the last MAX_TABS
                self._cache.set(f"{visitor}:tab:{old}", None)
            self._cache.set(f"{visitor}:tabs", tabs[-MAX_TABS:])

    def load(self, token: str, tab: str) -> tuple[ConversationRecord | None, str | None]:
        """The tab's conversation (None when there is none), and why one was dropped instead."""
        return self._read(f"{self._visitor(token)}:tab:{tab}")

    # --- recent searches ------------------------------------------------------------------------------
    def remember(
        self, token: str, key: str, record: ConversationRecord, label: str, results: int, answer: bool
    ) -> None:
        """Keep ``record`` as the search ``key`` of the recent list (moved to the top); the oldest beyond
        ``MAX_RECENT`` are forgotten with their records."""
        visitor = self._visitor(token)
        blob = self._pack(record)
        entry = RecentSearch(key=key, label=" ".join(label.split())[:500], saved_at=time.time(), results=results,
                             answer=answer)  # fmt: skip
        with self._lock(visitor):
            self._cache.set(f"{visitor}:search:{key}", blob)
            entries = [e for e in self._entries(visitor) if e.key != key]
            entries.insert(0, entry)
            for gone in entries[MAX_RECENT:]:
                self._cache.set(f"{visitor}:search:{gone.key}", None)
            self._cache.set(f"{visitor}:recent", [e.model_dump() for e in entries[:MAX_RECENT]])

    def recent(self, token: str) -> list[RecentSearch]:
        return self._entries(self._visitor(token))

    def search(self, token: str, key: str) -> tuple[ConversationRecord | None, str | None]:
        """The record of a recent search; an unreadable one is also taken off the list."""
        visitor = self._visitor(token)
        record, problem = self._read(f"{visitor}:search:{key}")
        if record is None:
            with self._lock(visitor):
                entries = [e for e in self._entries(visitor) if e.key != key]
                self._cache.set(f"{visitor}:recent", [e.model_dump() for e in entries])
        return record, problem

    # --- storage ---------------------------------------------------------------------------------------
    def _entries(self, visitor: str) -> list[RecentSearch]:
        out = []
        for raw in (self._cache.get(f"{visitor}:recent", []) or [])[:MAX_RECENT]:
            try:
                out.append(RecentSearch.model_validate(raw))
            except ValidationError:
                continue  # one damaged entry costs only itself
        return out

    @staticmethod
    def _pack(record: ConversationRecord) -> dict[str, Any]:
        record = record.model_copy(update={"saved_at": time.time()})
        text = _encode(record)
        if len(text) > MAX_RECORD_BYTES:
            text = _encode(_shrunk(record))
        return {"v": RECORD_VERSION, "z": text}

    def _read(self, key: str) -> tuple[ConversationRecord | None, str | None]:
        blob = self._cache.get(key)
        if blob is None:
            return None, None
        try:
            return _decode(blob), None
        except StoreProblem as exc:
            log.info("dropping the conversation record %s: %s", key.split(":", 1)[-1], exc)
            self._cache.set(key, None)
            return None, str(exc)


def record_json(record: ConversationRecord) -> str:
    """The record as JSON (tests and the benchmark measure what is kept)."""
    return json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
