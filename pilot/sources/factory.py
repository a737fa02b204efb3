"""Open the sources the settings ask for, and say in plain words what was left out and why.

    source, notes = open_source(settings)   # never hangs, never raises for a missing backend

Semantic Scholar (and AMiner, when a token is set) are probed once with a short timeout; a good
verdict is remembered for the process and, for a few minutes, in the cache directory, so a dead
network costs one connect timeout per start rather than one per search. A bad verdict is kept only
briefly (``NEGATIVE_TTL_S``): a network that was down for the first seconds of a start must not cost
the next five minutes. A service left out for being unreachable is ``Pending``: the app re-probes it in
the background (``pilot.runtime.Runtime.start_recovery``) and takes it in when it answers. With nothing
usable the app still starts: it gets a source whose every call raises ``SourceUnavailable`` naming
exactly what to set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from cache import Cache, fingerprint, open_cache
from pilot.settings import Settings, get_settings
from pilot.sources.aminer import AMinerSource
from pilot.sources.base import NO_SOURCE, Source, SourceError, SourceUnavailable
from pilot.sources.local import LocalCorpusSource
from pilot.sources.multi import MultiSource
from pilot.sources.s2 import SemanticScholarSource

log = logging.getLogger(__name__)

KNOWN = ("local", "s2", "aminer")
PROBE_TTL_S = 300
NEGATIVE_TTL_S = 30  # "unreachable" is news for this long only
CORPUS_HINT = (
    "set PILOT_CORPUS=/path/to/papers.jsonl.gz (e.g. ../shared/corpus/papers.jsonl.gz) to search the offline corpus"
)


@dataclass(frozen=True)
class Probe:
    reachable: bool
    detail: str


_PROBES: dict[str, tuple[float, Probe]] = {}


def probe(url: str, settings: Settings, *, headers: dict[str, str] | None = None) -> Probe:
    """Can we reach ``url`` at all? Any HTTP answer (even 403 or 429) counts as reachable.

    Cached per URL in the process and in the cache directory: "reachable" for ``PROBE_TTL_S`` seconds,
    "unreachable" for ``NEGATIVE_TTL_S`` only. ``fresh``: probe now whatever is remembered (a re-probe).
    """
    now = time.time()
    hit = _PROBES.get(url)
    if hit and now - hit[0] < _ttl(hit[1]):
        return hit[1]
    disk = Cache(settings.cache_dir, "probe", ttl_s=PROBE_TTL_S, size_mb=1)
    key = fingerprint("probe", url)
    stored = disk.get(key)
    if (
        isinstance(stored, dict)
        and "reachable" in stored
        and now - float(stored.get("at", 0)) < _ttl(Probe(bool(stored["reachable"]), ""))
    ):
        result = Probe(bool(stored["reachable"]), str(stored.get("detail", "")))
    else:
        result = _probe_now(url, settings, headers or {})
        remember(url, result, settings, disk)
    disk.close()
    _PROBES[url] = (now, result)
    return result


def _ttl(verdict: Probe) -> float:
    return PROBE_TTL_S if verdict.reachable else NEGATIVE_TTL_S


def remember(url: str, verdict: Probe, settings: Settings, disk: Cache | None = None) -> None:
    """Record a verdict for this process and for the next ones (the cache directory)."""
    _PROBES[url] = (time.time(), verdict)
    own = disk is None
    disk = disk or Cache(settings.cache_dir, "probe", ttl_s=PROBE_TTL_S, size_mb=1)
    disk.set(fingerprint("probe", url), {"reachable": verdict.reachable, "detail": verdict.detail, "at": time.time()})
    if own:
        disk.close()


def probe_now(url: str, settings: Settings, headers: dict[str, str] | None = None) -> Probe:
    """Probe ``url`` now (nothing remembered is used) and remember the verdict."""
    verdict = _probe_now(url, settings, headers or {})
    remember(url, verdict, settings)
    return verdict


def _probe_now(url: str, settings: Settings, headers: dict[str, str]) -> Probe:
    read_s = min(settings.connect_timeout_s * 2, 10.0)
    timeout = httpx.Timeout(read_s, connect=settings.connect_timeout_s)
    started = time.monotonic()
    box: list[Probe] = []

    def attempt() -> None:
        try:
            with httpx.Client(timeout=timeout) as client:
                r = client.get(url, headers=headers)
            box.append(Probe(True, f"HTTP {r.status_code}"))
        except httpx.ReadTimeout:
            # connected, but the answer is slow (a cold index, a long queue): a slow service is still there,
            # and calling it unreachable would turn every search away
            box.append(Probe(True, f"connected; no answer within {time.monotonic() - started:.1f}s"))
        except httpx.HTTPError as exc:
            box.append(Probe(False, f"{type(exc).__name__} after {time.monotonic() - started:.1f}s"))

    # The sync client's connect timeout does not cover DNS look-ups, which can stall for long on a
    # dead network; a daemon thread with a hard deadline keeps the start-up bounded.
    worker = threading.Thread(target=attempt, name="pilot-probe", daemon=True)
    worker.start()
    worker.join(settings.connect_timeout_s + read_s + 1.0)
    return box[0] if box else Probe(False, f"no answer within {time.monotonic() - started:.1f}s")


def clear_probe_cache() -> None:
    """Forget process-level verdicts (the on-disk ones expire on their own)."""
    _PROBES.clear()


class UnavailableSource(Source):
    """What the app gets when no source can be used: every call says what to set."""

    name = NO_SOURCE

    def __init__(self, message: str, hint: str):
        self.message = message
        self.hint = hint

    def _fail(self) -> SourceUnavailable:
        return SourceUnavailable(self.name, self.message, self.hint)


def _make_failing(method: str):
    async def failing(self: UnavailableSource, *args, **kwargs):
        raise self._fail()

    failing.__name__ = method
    failing.__doc__ = f"Always raises SourceUnavailable (no source is configured or reachable): {method}."
    return failing


for _m in (
    "search_papers", "get_papers", "get_paper", "match_paper", "references", "citations", "recommend",
    "search_authors", "get_author", "author_papers", "search_venues", "get_venue", "search_orgs", "get_org",
    "org_authors",
):  # fmt: skip
    setattr(UnavailableSource, _m, _make_failing(_m))


def _open_local(settings: Settings, notes: list[str], progress: bool) -> Source | None:
    if settings.corpus is None:
        notes.append(f"Offline corpus not configured — {CORPUS_HINT}.")
        return None
    if not Path(settings.corpus).is_file():
        notes.append(
            f"Offline corpus file not found: {settings.corpus}"
            f" — set PILOT_CORPUS to an existing papers.jsonl(.gz) file."
        )
        return None
    try:
        return LocalCorpusSource.open(
            settings.corpus, settings.cache_dir, vectors=settings.corpus_vectors, progress=progress
        )
    except SourceError as exc:
        notes.append(f"Offline corpus unavailable: {exc.message}" + (f" — {exc.hint}" if exc.hint else ""))
    except Exception as exc:  # a broken store must not stop the app from starting
        log.exception("opening the offline corpus failed")
        notes.append(
            f"Offline corpus could not be opened ({type(exc).__name__}: {exc})"
            f" — check PILOT_CORPUS and PILOT_CACHE_DIR."
        )
    return None


@dataclass
class Pending:
    """A remote service left out because it did not answer its probe: re-probed later, taken in when it answers."""

    name: str  # "s2"
    label: str  # "Semantic Scholar"
    url: str  # what is probed
    opener: Callable[[], Source]
    detail: str  # why it was left out ("ConnectError after 0.0s")
    note: str  # the start-up note that says so (replaced when it comes back)
    since: float = field(default_factory=time.time)


def _open_s2(settings: Settings, notes: list[str], pending: list[Pending], do_probe: bool, have_local: bool,
             cache: Any) -> Source | None:  # fmt: skip
    def opener() -> Source:
        return SemanticScholarSource(settings, cache=cache)

    if do_probe:
        url = settings.s2_base_url.rstrip("/") + "/paper/search?query=test&limit=1&fields=title"
        verdict = probe(url, settings)
        if not verdict.reachable:
            rest = "using the offline corpus only" if have_local else CORPUS_HINT
            note = f"Semantic Scholar unreachable ({verdict.detail}) — {rest}; re-checked every {RECHECK_S:.0f} s."
            notes.append(note)
            pending.append(Pending("s2", "Semantic Scholar", url, opener, verdict.detail, note))
            return None
    return opener()


def _open_aminer(settings: Settings, notes: list[str], pending: list[Pending], do_probe: bool,
                 cache: Any) -> Source | None:  # fmt: skip
    if settings.aminer_token is None or not settings.aminer_token.get_secret_value().strip():
        notes.append("AMiner not used — set PILOT_AMINER_TOKEN to add it.")
        return None

    def opener() -> Source:
        return AMinerSource(settings, cache=cache)

    if do_probe:
        url = settings.aminer_base_url.rstrip("/") + "/api/venue/search"
        verdict = probe(url, settings)
        if not verdict.reachable:
            note = f"AMiner unreachable ({verdict.detail}) — continuing without it; re-checked every {RECHECK_S:.0f} s."
            notes.append(note)
            pending.append(Pending("aminer", "AMiner", url, opener, verdict.detail, note))
            return None
    return opener()


RECHECK_S = 15.0  # how often a pending service is probed again


@dataclass
class Opened:
    """What ``open_sources`` found: the source to use, notes for the user, the sources it is made of, and the
    services left out for now (``pending``)."""

    source: Source
    notes: list[str]
    members: list[Source]
    pending: list[Pending]
    wanted: list[str]


def combine(members: list[Source], wanted: list[str]) -> Source:
    """One source over ``members``: a MultiSource when several, the stand-in that says what to set when none."""
    if not members:
        names = ", ".join(wanted) or "none"
        hint = f"{CORPUS_HINT}; or restore network access for Semantic Scholar; or set PILOT_AMINER_TOKEN for AMiner"
        return UnavailableSource(f"no paper source is usable (asked for: {names})", hint)
    if len(members) == 1:
        return members[0]
    return MultiSource(members)


def open_sources(settings: Settings | None = None, *, do_probe: bool = True, progress: bool = True) -> Opened:
    """The source for these settings (a MultiSource when several are usable), notes for the user, and the
    remote services that did not answer their probe (to re-probe)."""
    settings = settings or get_settings()
    notes: list[str] = []
    pending: list[Pending] = []
    names = settings.source_names()
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        notes.append(
            f"Unknown source(s) in PILOT_SOURCES: {', '.join(unknown)}"
            f" — use a comma list of s2, aminer, local (or auto)."
        )
    opened: list[Source] = []
    # One handle on the response cache, shared by the remote sources (and by every replica, through Redis).
    api_cache = open_cache(
        settings.cache_dir, "api", ttl_s=settings.api_ttl_s, size_mb=settings.cache_size_mb, redis_url=settings.redis()
    )
    if "local" in names and (src := _open_local(settings, notes, progress)):
        opened.append(src)
    if "s2" in names and (src := _open_s2(settings, notes, pending, do_probe, bool(opened), api_cache)):
        opened.append(src)
    if "aminer" in names and (src := _open_aminer(settings, notes, pending, do_probe, api_cache)):
        opened.append(src)
    wanted = [n for n in names if n in KNOWN]
    if not opened:
        notes.append("No paper source is usable: the app runs, and every search answers with what to set.")
    return Opened(combine(opened, wanted), notes, opened, pending, wanted)


def open_source(
    settings: Settings | None = None, *, do_probe: bool = True, progress: bool = True
) -> tuple[Source, list[str]]:
    """The source for these settings (a MultiSource when several are usable) and notes for the user."""
    opened = open_sources(settings, do_probe=do_probe, progress=progress)
    return opened.source, opened.notes
