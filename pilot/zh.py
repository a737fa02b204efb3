"""A literature-search request typed in Chinese, said in English for a source whose titles are English:
"关于机器翻译的综述" -> "surveys on machine translation". Only the words of ``pilot/data/zh_terms.json`` are
put into English (longest first); a request with none of them is left as typed, and so are names and Latin
words inside it. People, venues and institutions in Chinese are the entity reader's (``pilot.kg.classify``)."""

from __future__ import annotations

import re
from functools import lru_cache

from pilot.text import data_json

_HAN = re.compile(r"[\u4e00-\u9fff]")


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, str]]:
    return data_json("zh_terms.json")


@lru_cache(maxsize=1)
def _longest_first() -> tuple[str, ...]:
    return tuple(sorted(_table()["terms"], key=len, reverse=True))


def _terms(text: str) -> tuple[list[str], str]:
    """The known terms in ``text`` in English (longest first), and what is left of it."""
    terms = _table()["terms"]
    found: list[str] = []
    rest = text
    for zh in _longest_first():
        if zh in rest:
            found.append(terms[zh])
            rest = rest.replace(zh, " ")
    return found, rest


def topic_in_english(topic: str) -> str | None:
    """A topic the entity reader kept in Chinese ("知识图谱") in English, or None when it holds no known term."""
    if not _HAN.search(topic or ""):
        return None
    found, _ = _terms(topic)
    return " and ".join(dict.fromkeys(found)) or None


def in_english(text: str) -> str | None:
    """The request in English words, or None when it is not Chinese or names none of the known terms."""
    if not _HAN.search(text or ""):
        return None
    table = _table()
    found, rest = _terms(text)
    if not found:
        return None
    kind = next((en for zh, en in table["kinds"].items() if zh in text), "papers on")
    recency = next((en for zh, en in table["recency"].items() if zh in text), "")
    latin = " ".join(re.findall(r"[A-Za-z][A-Za-z0-9\-]*", rest))  # "BERT", "ACL" typed among the Chinese
    topic = " and ".join(dict.fromkeys(found)) + (f" {latin}" if latin else "")
    return " ".join(w for w in (recency, kind, topic) if w)
