"""What a good answer of each remote endpoint looks like, checked before anything is cached.

A 2xx answer that does not parse into its endpoint's model (``200 {}`` for a search, a dict for a batch) is an
``InvalidAnswer`` for that request: counted (in the turn's usage and in ``INVALID`` per endpoint), logged, never
cached, and asked again next time. Cached as it came, it would have answered every later identical request
for the cache's lifetime (a week) with "nothing matches".

Only the envelope is checked (the list or the record the caller reads); the records inside are mapped
leniently by each source (a null title is a paper without a title, not a broken answer).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator

from pilot.sources.base import SourceUnavailable
from pilot.sources.budget import current_budget

log = logging.getLogger(__name__)

Record = dict[str, Any]
# answers of the wrong shape since the process started, by (source, endpoint)
INVALID: Counter[tuple[str, str]] = Counter()


class InvalidAnswer(SourceUnavailable):
    """A 2xx answer that is not what the endpoint returns: an error for this request, never cached."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class S2Page(_Open):
    """A page of a list (search, bulk search, references, citations, an author's papers): ``data``, or
    ``total`` alone when nothing matched (S2's empty answer is ``{"total": 0, "offset": 0}``)."""

    data: list[Record | None] | None = None
    total: int | None = None

    @model_validator(mode="after")
    def _has_list(self) -> S2Page:
        if self.data is None and self.total is None:
            raise ValueError("neither 'data' nor 'total'")
        return self


class S2Match(_Open):
    data: list[Record | None]


class S2Recommendations(_Open):
    recommendedPapers: list[Record | None]


class S2Paper(_Open):
    paperId: str


class S2Author(_Open):
    authorId: str


class AMinerEnvelope(_Open):
    """Every AMiner answer: ``{code, success, msg, data, total}``; ``data`` may be null for nothing found."""

    data: Any

    @model_validator(mode="before")
    @classmethod
    def _has_data(cls, value: Any) -> Any:
        if isinstance(value, dict) and "data" not in value:
            raise ValueError("no 'data'")
        return value


_BATCH = TypeAdapter(list[Record | None])

# S2 endpoints by the end of their path (first match wins: the specific before the general)
_ROUTES: list[tuple[str, str, Callable[[Any], Any]]] = [
    (r"/paper/search/match$", "paper/search/match", S2Match.model_validate),
    (r"/paper/search/bulk$", "paper/search/bulk", S2Page.model_validate),
    (r"/(paper|author)/search$", "search", S2Page.model_validate),
    (r"/(paper|author)/batch$", "batch", _BATCH.validate_python),
    (r"/author/[^/]+/papers$", "author/papers", S2Page.model_validate),
    (r"/papers/forpaper/.+$", "recommendations", S2Recommendations.model_validate),
    (r"/paper/.+/(references|citations)$", "references/citations", S2Page.model_validate),
    (r"/papers/?$", "recommendations", S2Recommendations.model_validate),  # from lists of papers
    (r"/paper/.+$", "paper", S2Paper.model_validate),  # ids may hold '/' (DOIs)
    (r"/author/[^/]+$", "author", S2Author.model_validate),
]
_S2_ROUTES = [(re.compile(p), name, check) for p, name, check in _ROUTES]


def s2_endpoint(path: str) -> tuple[str, Callable[[Any], Any]] | None:
    """The endpoint's name and check for an S2 URL path (None: an endpoint without a model here)."""
    for pattern, name, check in _S2_ROUTES:
        if pattern.search(path):
            return name, check
    return None


def checked(source: str, label: str, endpoint: str, check: Callable[[Any], Any], data: Any) -> Any:
    """``data`` unchanged when ``check`` accepts it; otherwise an ``InvalidAnswer`` (counted and logged)."""
    try:
        check(data)
    except (ValidationError, ValueError, TypeError) as exc:
        INVALID[(source, endpoint)] += 1
        if (budget := current_budget()) is not None:
            budget.usage.invalid += 1
        got = _kind(data)
        log.warning("%s: %s answered %s, not the endpoint's shape (%s); not cached", source, endpoint, got, _why(exc))
        raise InvalidAnswer(
            source, f"{label} sent an answer of the wrong shape ({endpoint}: {got})", "try again in a moment"
        ) from None
    return data


def _kind(data: Any) -> str:
    """What came instead, in words: "an empty JSON object", "a JSON object with message, code", "a JSON list"."""
    if isinstance(data, dict):
        return f"a JSON object with {', '.join(sorted(map(str, data))[:5])}" if data else "an empty JSON object"
    if isinstance(data, list):
        return "a JSON list" if data else "an empty JSON list"
    return f"a JSON {type(data).__name__}"


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        e = exc.errors()[0]
        return f"{'.'.join(str(p) for p in e['loc'][:3]) or 'answer'}: {e['msg']}"
    return str(exc)[:120]
