"""A request as a search query: the researcher's words without the words that only ask (issue 33).

"Could you recommend a study that investigates guiding abstractive summarization through assessing sentence
informativeness?" is searched as "guiding abstractive summarization through assessing sentence informativeness":
every clause keeps its content, only the instruction words at its edges go ("could you recommend a study that
investigates", "where can I find", "are there studies discussing"). Words inside a clause stay, so a long question
is searched whole, never cut to one fragment. ``key_phrases`` names the parts worth more weight in a lexical
search: the multi-word noun phrases and the rare single words (acronyms, names).

    search_query("Can you point me to studies that explore data augmentation for contrastive learning?")
    # -> "data augmentation for contrastive learning"

The message reader fills ``Intent.query`` with it (``pilot.intent`` calls it for a topic request until the new
reader, issue 31, does it itself); the topic workflow searches it lexically and densely beside the topic.
"""

from __future__ import annotations

import re

from pilot.models import Intent
from pilot.text import DETERMINERS, INSTRUCTION_WORDS, PHRASE_BREAK_WORDS

# Verbs and nouns of asking about research that lead into what is asked ("studies that explore …", "research
# that examines …", "have any works tried …"): at a clause's edge they say nothing about the subject.
ASKING_WORDS = frozenset(
    """direct directs refer guide lead explore explores exploring explored investigate investigates investigating
    investigated examine examines examining examined discuss discusses discussing discussed analyse analyses
    analysing analyze analyzes analyzing assess assesses assessing study studies studying look looks looking
    focus focuses focusing focused concentrate concentrates delve delves tackle tackles address addresses
    addressing consider considers describe describes describing present presents presenting propose proposes
    proposing introduce introduces report reports deal deals dealing involve involves involving tried try tries
    trying attempted attempt attempts anything something scholarly academic notable prominent interested
    researching conducting conducted conduct available suggest recommend provide share cite cited name
    regarding concerning about on that which who whom whose if am i'm im i've ive i'd id there's theres any
    various specific particular specifically particularly especially scientific peer-reviewed reviewed
    recommendations suggestions resources sources materials information insights insight related at in of to for with
    from by as into within""".split()
)
_EDGE_WORDS = INSTRUCTION_WORDS | ASKING_WORDS
# inside a clause an instruction word can be a content word ("beam search", "contrastive learning"): phrases break
# at function words, determiners, pronouns and the asking words only
_PHRASE_BREAKS = (
    PHRASE_BREAK_WORDS
    | DETERMINERS
    | ASKING_WORDS
    | frozenset(
        "it they them such like use uses include includes including various different is are was were be been being "
        "has have had can could would should do does".split()
    )
)
# clause boundaries: sentence ends, semicolons, and ", and" / ", but" joining a second question ("…, and what
# notable work has …"); a list's ", and" ("DVDs, music, and books") is no boundary
_CLAUSES = re.compile(
    r"[.?!;:]+(?:\s+|$)|,\s+(?:and|but)\s+(?=(?:what|which|who|where|how|why|is|are|do|does|did|can|could|would|"
    r"should|has|have|had|i|also)\b)|\s+-\s+|\n+",
    re.I,
)
_TOKEN = re.compile(r"\S+")
# a pasted text's label ("Abstract: …", "My draft: …") is no part of it
_LABELS = frozenset("abstract summary draft text description paper title".split())
_PUNCT = ".,;:!?()[]{}\"'“”‘’"


def _bare(token: str) -> str:
    word = token.strip(_PUNCT).lower()
    return re.sub(r"['’]s$", "", word)


def _clause_content(clause: str) -> str:
    tokens = _TOKEN.findall(clause)
    start, end = 0, len(tokens)
    while start < end and (not _bare(tokens[start]) or _bare(tokens[start]) in _EDGE_WORDS):
        start += 1
    while end > start and (not _bare(tokens[end - 1]) or _bare(tokens[end - 1]) in _EDGE_WORDS | DETERMINERS):
        end -= 1
    return " ".join(tokens[start:end]).strip(_PUNCT + " ")


def search_query(text: str) -> str:
    """The request without its instruction words, every clause's content kept, in the user's order; the text
    itself (collapsed) when stripping would leave nothing."""
    text = " ".join((text or "").split())
    parts = [c for c in (_clause_content(clause) for clause in _CLAUSES.split(text)) if c and c.lower() not in _LABELS]
    return ". ".join(parts) if parts else text.strip()


def key_phrases(query: str, limit: int = 8) -> list[str]:
    """The query's key phrases: runs of two or more content words (no function word, no asking word inside),
    in the query's order — "passage retrieval", "clickbait headlines" — the parts a lexical search weighs more."""
    phrases: list[str] = []
    for chunk in re.split(r"[,.;:!?()\[\]{}\"“”]", query or ""):
        run: list[str] = []
        for token in [*chunk.split(), "of"]:  # a closing function word flushes the last run
            word = _bare(token)
            if not word or word in _PHRASE_BREAKS:
                if len(run) > 1:
                    phrases.append(" ".join(run))
                run = []
            else:
                run.append(word)
    return list(dict.fromkeys(phrases))[:limit]


# A request this long is a pasted document (an abstract, a draft's paragraph): searched as a whole, and a venue or
# a year inside it ("experiments on CoNLL and WikiAnn", "since 2015, neural models …") is what it says, not a filter.
DOCUMENT_WORDS = 40


def whole_request(intent: Intent, text: str) -> Intent:
    """The intent of a topic search, searched with the request's own words: ``query`` from the text when the reading
    had none (a named paper the source does not hold, searched by its words instead), and a document-length request
    searched whole, with no venue or period read from inside it. (Whether a kind of paper filters or only ranks is
    the reader's call: ``pilot.reading``.)"""
    updates: dict[str, object] = {}
    if intent.query is None and text.strip():
        updates["query"] = search_query(text)
    if len(text.split()) >= DOCUMENT_WORDS:
        updates.update(venues=[], year_min=None, year_max=None, exclude_venues=[], exclude_years=[])
        updates["topic"] = search_query(text)[:1000]  # the document is the query, not a fragment the reader cut
    return intent.model_copy(update=updates) if updates else intent
