"""Every size limit pilot enforces, in one place. The README's "Limits" table states the same numbers.

The limits keep one visitor's input from costing the others: a workflow, a recipe file, a chat message
or a params edit bigger than this is refused (or, for a chat message, cut) with a message that names the
limit, before any search, drawing or scoring work starts. Legitimate use stays far below them: a
template workflow has 5–20 nodes, a filter a handful of venues or terms.
"""

from __future__ import annotations

import reprlib
from typing import Any

# --- chat ---------------------------------------------------------------------------------------
MAX_MESSAGE_CHARS = 4_000  # a chat message; a longer paste is cut to this, with a note (never refused)
MAX_QUERY_CHARS = 1_000  # a free-text query sent to a source (cut)
MAX_TRANSCRIPT_MESSAGES = 200  # chat messages a browser session keeps (the oldest are dropped)
MAX_EARLIER_SEARCHES = 5  # earlier searches a conversation can go back to (the oldest are dropped)

# --- workflows (checked by workflows.validate before anything runs or is drawn) --------------------
MAX_NODES = 100
MAX_EDGES = 400
MAX_ID_CHARS = 64  # a node id, an edge's port name, the output id
MAX_LABEL_CHARS = 200  # a node label, the workflow's name
MAX_DESCRIPTION_CHARS = 2_000  # the workflow's description
MAX_LIST_ITEMS = 500  # items in one list inside a node's params (venues, terms, ids)
MAX_STRING_CHARS = 2_000  # one string inside a node's params (a query, a term)
MAX_PARAM_DEPTH = 6  # nesting of lists / objects inside a node's params
MAX_PARAMS_BYTES = 64 * 1024  # one node's params as JSON (also the params editor's text)

# --- work ---------------------------------------------------------------------------------------
MAX_RUN_ITEMS = 25_000  # papers all nodes of one run produce together (templates: 2,000–9,000)
MAX_CACHED_ITEMS = 100_000  # papers an in-memory node cache keeps, over all its entries

# --- files ----------------------------------------------------------------------------------------
MAX_RECIPE_BYTES = 512 * 1024  # an uploaded workflow JSON file (also the app's upload limit)

# --- messages -------------------------------------------------------------------------------------
QUOTE_CHARS = 80  # an error quotes at most this much of an offending value

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = QUOTE_CHARS
_REPR.maxlevel = 2


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """``repr`` of a value cut to a short prefix: errors name what was wrong without echoing megabytes.

    Only a prefix of a long value is ever converted, so quoting a 10 MB string costs nothing."""
    if isinstance(value, str):
        text = repr(value[:limit])
        return text + (f"… ({len(value):,} characters)" if len(value) > limit else "")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length():,} bits"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"a {type(value).__name__} of {len(value):,} items" if len(value) > 4 else _REPR.repr(value)[:limit]
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def clip_message(text: str) -> tuple[str, str | None]:
    """A chat message cut to ``MAX_MESSAGE_CHARS`` (at a space when there is one near the end), and the
    note that says so; (text, None) when it fits."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return text, None
    cut = text[:MAX_MESSAGE_CHARS]
    space = cut.rfind(" ", MAX_MESSAGE_CHARS - 200)
    if space > 0:
        cut = cut[:space]
    note = (
        f"Your message was {len(text):,} characters long; I read the first {len(cut):,} "
        f"(messages are limited to {MAX_MESSAGE_CHARS:,} characters)."
    )
    return cut.rstrip(), note
