"""Boolean match expressions in Semantic Scholar's bulk-search syntax: the subset pilot writes, and a reader.

``GET /paper/search/bulk`` returns up to 1,000 matching papers per request (one request where the
relevance search needs ten pages of 100), but unranked: which papers match is all its ``query`` says.
So a search that wants many results states what a match is — for a per-keyword search, any of its type
words and the keyword: ``(survey | overview) + "dependency parsing"``.

Syntax (the documented one, of which pilot writes terms, phrases, ``|``, ``+`` and parentheses):
terms are AND-ed (``+`` says so explicitly), ``|`` is OR, ``-`` negates, ``"…"`` is a phrase, ``word*``
a prefix, ``( )`` groups; every term is matched stemmed, in the title and abstract.

The reader (``matches``) is the emulator's, and the source's check of what an answer holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pilot.text import root

_TOKEN = re.compile(r'\s*(?:(\()|(\))|(\|)|(\+)|(-)|"([^"]*)"(?:~\d*)?|([^\s()|+"]+))')
_WORD = re.compile(r"[a-z0-9]+")


class ExpressionError(ValueError):
    """Not a boolean match expression (unbalanced parentheses or quotes, an operator with nothing to join)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _term(text: str) -> str:
    """A keyword as one term: a phrase in quotes when it has several words (quotes inside dropped)."""
    words = _words(text)
    return words[0] if len(words) == 1 else '"' + " ".join(words) + '"'


def any_of(terms: Sequence[str]) -> str:
    """``(a | b | "c d")``: a paper matches with any one of them."""
    parts = list(dict.fromkeys(_term(t) for t in terms if _words(t)))
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"


def all_of(groups: Sequence[str]) -> str:
    """``x + y``: a paper matches with every one of the (already written) parts."""
    return " + ".join(g for g in groups if g)


# --- reading ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Node:
    op: str  # "and" | "or" | "not" | "term" | "phrase" | "prefix"
    args: tuple[_Node, ...] = ()
    words: tuple[str, ...] = ()


def _tokens(expr: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            raise ExpressionError(f"cannot read {expr[pos : pos + 20]!r}")
        pos = m.end()
        lp, rp, bar, plus, minus, phrase, word = m.groups()
        if lp:
            out.append(("(", ""))
        elif rp:
            out.append((")", ""))
        elif bar:
            out.append(("|", ""))
        elif plus:
            out.append(("+", ""))
        elif minus:
            out.append(("-", ""))
        elif phrase is not None:
            out.append(("phrase", phrase))
        elif word:
            out.append(("word", word))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens, self.i = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def either(self) -> _Node:
        parts = [self.both()]
        while self.peek() == "|":
            self.take()
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else _Node("or", tuple(parts))

    def both(self) -> _Node:
        parts = [self.unary()]
        while self.peek() not in (None, "|", ")"):
            if self.peek() == "+":
                self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else _Node("and", tuple(parts))

    def unary(self) -> _Node:
        kind = self.peek()
        if kind is None or kind in ("|", ")", "+"):
            raise ExpressionError("an operator with nothing to join")
        if kind == "-":
            self.take()
            return _Node("not", (self.unary(),))
        if kind == "(":
            self.take()
            inner = self.either()
            if self.peek() != ")":
                raise ExpressionError("unbalanced parentheses")
            self.take()
            return inner
        _, text = self.take()
        if kind == "phrase":
            words = tuple(_words(text))
            return _Node("phrase", words=words) if words else _Node("and")
        if text.endswith("*"):
            return _Node("prefix", words=tuple(_words(text)[:1]))
        words = tuple(_words(text))
        if not words:
            return _Node("and")  # punctuation only: matches anything, as an empty AND
        return _Node("term", words=words) if len(words) == 1 else _Node("phrase", words=words)


def parse(expr: str) -> _Node:
    """The expression's tree; raises ExpressionError when it is not one."""
    if expr.count('"') % 2:
        raise ExpressionError("unbalanced quotes")
    parser = _Parser(_tokens(expr))
    if parser.peek() is None:
        raise ExpressionError("empty expression")
    node = parser.either()
    if parser.peek() is not None:
        raise ExpressionError("unbalanced parentheses")
    return node


def _has_phrase(stems: list[str], words: tuple[str, ...]) -> bool:
    roots = tuple(root(w) for w in words)
    n = len(roots)
    return any(tuple(stems[i : i + n]) == roots for i in range(len(stems) - n + 1))


def _holds(node: _Node, stems: list[str], bag: set[str], raw: list[str]) -> bool:
    if node.op == "and":
        return all(_holds(a, stems, bag, raw) for a in node.args)
    if node.op == "or":
        return any(_holds(a, stems, bag, raw) for a in node.args)
    if node.op == "not":
        return not _holds(node.args[0], stems, bag, raw)
    if node.op == "term":
        return root(node.words[0]) in bag
    if node.op == "prefix":
        return bool(node.words) and any(w.startswith(node.words[0]) for w in raw)
    return _has_phrase(stems, node.words)


def matcher(expr: str) -> Callable[[str], bool]:
    """A predicate: does a text (title and abstract) match ``expr``?"""
    tree = parse(expr)

    def test(text: str) -> bool:
        raw = _words(text)
        stems = [root(w) for w in raw]
        return _holds(tree, stems, set(stems), raw)

    return test


def candidates(expr: str, rows_with: Callable[[str], set[int]], everything: set[int]) -> set[int]:
    """A superset of the rows matching ``expr``, from an index: ``rows_with(word)`` = the rows holding the
    word (stemmed as the index stems). Phrases count as their words AND-ed and prefixes as anything, so the
    caller checks the candidates' texts with ``matcher`` when ``exact_from_index`` says so."""

    def rows(node: _Node) -> set[int]:
        if node.op == "and":
            out = set(everything)
            for a in node.args:
                out &= rows(a)
            return out
        if node.op == "or":
            return set().union(*(rows(a) for a in node.args))
        if node.op == "not":
            return everything - rows(node.args[0]) if _exact(node.args[0]) else set(everything)
        if node.op == "prefix":
            return set(everything)
        out = set(everything)
        for w in node.words:
            out &= rows_with(w)
        return out

    return rows(parse(expr))


def _exact(node: _Node) -> bool:
    return node.op == "term" or (node.op in ("and", "or", "not") and all(_exact(a) for a in node.args))


def exact_from_index(expr: str) -> bool:
    """Whether ``candidates`` is exactly the matching rows (only terms, no phrase or prefix)."""
    return _exact(parse(expr))
