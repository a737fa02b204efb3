"""Read a message once, against the state of the conversation: what is the user asking for?

    msg = read("What came before GloVe?", Context(phase="results", has_results=True, ...))
    msg.kind       # "new_search"
    msg.request    # the parsed request: anchor "GloVe" (a name), direction "predecessor"

Kinds:

- ``new_search``: a different paper, person, topic or direction — whatever was going on, a new search
  starts (``target``: ``paper``, ``topic``, or ``current`` for "and what came after it?");
- ``refine``: feedback on the results on screen ("only after 2010", "not #2", "fewer", "exclude speech");
- ``answer``: the answer to the open question (an option, or words that set what it asks);
- ``entity``: a question about people, venues or institutions;
- ``command``: "search now", "start over", "undo";
- ``ambiguous``: a bare topic while results are shown — refine them, or start a new search? (asked once);
- ``unclear``: nothing to act on (constraints with nothing to search, or no words at all).

Everything downstream (anchor resolution, answer handling, refinement, the entity planner) takes the
parsed parts from the ``Message``; nothing reads the text again. An LLM (optional) is only asked about
messages the rules find ambiguous; its reply must be one of the kinds, else the rules' reading stands.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clarifier.policy import interpret_answer, match_option, match_options, merged_updates
from clarifier.question import Question
from pilot.intent import (
    DEICTIC_NOUNS,
    ID_KINDS,
    INTRODUCING,
    MIN_CITED,
    PERIOD_OF,
    ParsedRequest,
    apply_updates,
    as_topic,
    detect_direction,
    parse_constraints,
    parse_request,
    subject_of,
)
from pilot.kg.classify import KGQuery
from pilot.kg.classify import parse as parse_entity_question
from pilot.listfacts import list_fact
from pilot.models import Intent
from pilot.names import well_known_titles
from pilot.stepedit import StepEdit, read_step_edit
from pilot.text import fold, strip_markup
from pilot.topic import read_topic
from pilot.vocab import PAPER_TYPE_WORDS, paper_type_named
from pilot.zh import in_english, topic_in_english
from workflows.refine import ONLY_BY, ONLY_FROM, ORDINAL, RESULT_REF, Feedback, read_feedback, referenced_indices

log = logging.getLogger(__name__)

MessageKind = Literal["new_search", "refine", "answer", "entity", "command", "ambiguous", "unclear"]
# "result": a paper on the numbered list ("papers like the first one" after an answer); feedback.refs says which
Target = Literal["paper", "topic", "current", "result"]
Command = Literal[
    "search_now",
    "reset",
    "undo",
    "help",
    "explain",
    "keep",
    "export",
    "earlier",
    "kinds",
    "count",
    "list_fact",
    "how",
    "cite",
    "step_edit",
    "compare",
    "version",
    "clear_filters",
    "cite_named",
    "on_list",
    "which_cite",
]

_COMMANDS: list[tuple[Command, re.Pattern]] = [
    (
        "search_now",
        re.compile(
            r"^\W*(?:ok(?:ay)?,?\s+)?(?:just |please )?"
            r"(?:search|go|skip|search now|go ahead|show (?:me )?(?:the )?results|"
            r"no more questions|that'?s (?:all|it|enough)|enough questions|skip (?:the )?questions|"
            r"stop asking(?: questions| me)?|no questions|(?:just )?(?:show|give) me (?:the )?(?:papers|results|list)|"
            r"i don'?t want (?:to answer|questions))\W*(?:please)?\W*$",
            re.IGNORECASE,
        ),
    ),
    (
        "reset",
        re.compile(
            r"^\W*(?:(?:ok(?:ay)?|so|well|hmm+)[,\s]+)?(?:let'?s )?(?:start (?:over|again|afresh|a new search)|"
            r"(?:a |do a )?new search|reset|clear(?: all)?|forget (?:it|that|everything)|"
            r"try something (?:else|different)|search (?:for )?something (?:else|different))\W*$",
            re.IGNORECASE,
        ),
    ),
    (
        "undo",
        re.compile(
            r"^\W*(?:let'?s )?(?:undo|go back|back|revert)"
            r"(?: (?:that|the last change|one step|to the (?:previous|last|earlier) version))?\W*$",
            re.IGNORECASE,
        ),
    ),
    # a greeting, thanks or a plea for help is not a topic to search ("hi" once became a search for "hi")
    (
        "help",
        re.compile(
            r"^\W*(?:help(?: me)?|hi|hello|hey|hiya|good (?:morning|afternoon|evening)|thanks?(?: you)?(?: a lot)?|"
            r"thank you(?: very much)?|cheers|ok(?:ay)?|cool|great|what can you do|how does (?:this|it) work|"
            r"how do i use (?:this|it|you)|what do i (?:do|type)(?: here)?)\W*(?:there|pilot)?\W*$",
            re.IGNORECASE,
        ),
    ),
]
# About the numbered list on screen, not a search: "why is #3 here?", "tell me more about 2", "keep #1 and #4",
# "export as BibTeX".
_NUMBERS = r"#?\s*\d{1,3}(?:\s*(?:,|&|and)\s*#?\s*\d{1,3})*"
# "what is the first one?", "tell me about the third paper": a result named by its place
_ORDINAL = rf"{ORDINAL}(?: one| paper| result)?"
_EXPLAIN = re.compile(
    r"^\W*(?:why\s+(?:is|was|are|did you (?:include|pick|list|rank))|why'?s|what(?:'s| is| are)|"
    r"tell me (?:more )?about|explain|details (?:of|on|for|about)|more (?:details |info(?:rmation)? )?(?:about|on)|"
    r"show(?: me)?|open|summar(?:ize|ise)|compare)"
    r"(?:\s+(?:the\s+)?(?:abstracts?|summary|details|cards?|links?)\s+(?:of|for))?"
    rf"\s+(?:(?:the\s+)?(?:results?|papers?|numbers?|no\.?)\s*)?(?P<n>{_NUMBERS}|{_ORDINAL})"
    r"(?:\s+(?:here|there|about|for|in (?:the|this) list|on (?:the|this) list|listed|included|so high|"
    r"ranked so high))*\W*$",
    re.IGNORECASE,
)
_COUNTS = {w: i for i, w in enumerate("one two three four five six seven eight nine ten".split(), start=1)}
# "the first three", "the top 5 papers", "the first one": the head of the list
_HEAD = rf"(?:the\s+)?(?:first|top)\s+(?P<k>\d{{1,2}}|{'|'.join(_COUNTS)})(?:\s+(?:results?|papers?|ones?))?"
_KEEP = re.compile(
    rf"^\W*(?:please\s+)?(?:keep|save|bookmark|add|star)\s+(?:(?:the\s+)?(?:results?|papers?|numbers?)\s*)?"
    rf"(?:{_HEAD}|(?P<n>{_NUMBERS}|all(?: of them)?|them all|everything))"
    r"(?:\s+(?:to|in|into) (?:my|the) (?:library|list|reading list))?\W*$",
    re.IGNORECASE,
)
# single spaces (the text is collapsed by strip_markup): overlapping \s* runs would backtrack on a run of blanks
_EXPORT = re.compile(
    r"^\W*(?:please\s)?(?:(?:can|could) (?:you|i)\s)?(?:export|download|save|give me|get|send me)?\s?"
    r"(?:(?:the|my|these|this|all|them)\s)*(?:results?|library|list|papers|references|citations|them|it)?\s?"
    r"(?:as|in|to|into)?\s?(?:an?\s)?(?P<f>bibtex|bib|ris|csl(?:[- ]?json)?|csv|zotero|endnote|mendeley)"
    r"(?:\s(?:file|format|please))*\W*$"
    r"|^\W*(?:please\s)?(?:export|download)(?:\s(?:the|my|these|this|all))*(?:\s(?:results?|library|list|papers))?\W*$",
    re.IGNORECASE,
)


# "go back to the first search", "back to my GloVe results", "return to the search on parsing", "the previous
# results again": an earlier search of this conversation, named by its place or by its words
_BACK = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|now|please|so|and|let'?s|can (?:we|you|i)|i(?:'d| would) like to|i want to)[,\s]+)*"
    r"(?:(?:go|get|switch|jump|come|take me|bring me)\s+)?(?:back\s+to|return\s+to)\s+(?P<rest>.+)$"
    r"|^\W*(?:(?:show|give)(?: me)?\s+|open\s+|bring up\s+)?(?P<again>(?:the|my)\s.+)\bagain\W*$",
    re.IGNORECASE,
)
_SEARCH_NOUN = re.compile(r"\b(?:search(?:es)?|quer(?:y|ies)|requests?|results?|list|question|answer)\b", re.I)
_PLACES = {"first": 1, "original": 1, "initial": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_PLACE_NUMBER = re.compile(
    r"#\s*(\d{1,2})\b|\b(\d{1,2})(?:st|nd|rd|th)\b|\b(?:search|number|no\.?)\s+(\d{1,2})\b", re.I
)
_LATEST = re.compile(r"\b(?:previous|earlier|last|other|old|prior|preceding|before)\b", re.I)
_BACK_FILLER = re.compile(r"\b(?:the|my|our|that|this|one|on|about|for|from|of|with|i did|we did|i had|again)\b", re.I)


def _earlier_search(text: str) -> Message | None:
    """A wish to see an earlier search again: ``refs`` holds its place in the conversation (1 = the first;
    empty = the latest before this one) and ``about`` the words that name it."""
    m = _BACK.match(text)
    rest = (m.group("rest") or m.group("again") or "") if m else ""
    if not rest or not _SEARCH_NOUN.search(rest):
        return None
    place = next((n for word, n in _PLACES.items() if re.search(rf"\b{word}\b", rest, re.I)), None)
    digits = _PLACE_NUMBER.search(rest)
    if place is None and digits:
        place = int(next(g for g in digits.groups() if g))
    words = _PLACE_NUMBER.sub(" ", re.sub(r"\b(?:" + "|".join(_PLACES) + r")\b", " ", rest, flags=re.I))
    words = _BACK_FILLER.sub(" ", _LATEST.sub(" ", _SEARCH_NOUN.sub(" ", words)))
    about = " ".join(re.sub(r"[^\w\s'-]", " ", words).split())
    return Message(
        kind="command", text=text, command="earlier", refs=[place] if place else [], about=about,
        why="goes back to an earlier search",
    )  # fmt: skip


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d{1,3}", text)]


# "actually I meant the Collins parser", "no, I meant GloVe", "not that one, the 2003 CL article": the paper (or
# topic) the search should have been about; bounded repeats keep the pattern linear on long texts
_CORRECTION = re.compile(
    r"^\W*(?:(?:no|nope|sorry|oops|wait|hmm)\W+){0,3}(?:actually,? )?"
    r"(?:i (?:meant|mean|was thinking of|wanted|was asking about)|not that one\W+(?:i (?:meant?|want) )?|"
    r"wrong (?:paper|one)\W+(?:i (?:meant?|want) )?|"
    r"instead of [^,;]{1,80}[,;] (?:(?:use|try|take|search(?: for)?|do|with) )?)(?:,? )?(?P<x>\S.*)$",
    re.I,
)


# "I mean the 2014 one", "sorry, the 2007 paper", "no, the one from 1994": the paper going by the same name,
# from another year
_OTHER_YEAR = re.compile(
    r"^\W*(?:(?:no|nope|sorry|oops|wait|hmm|actually)\W+){0,3}(?:i (?:meant?|want(?:ed)?|was thinking of) |"
    r"not that one\W+)?(?:the )?(?:(?:one|paper|version|article) (?:from|of|in) (?P<a>(?:19|20)\d\d)|"
    r"(?P<b>(?:19|20)\d\d) (?:one|paper|version|article))\W*$",
    re.I,
)


# "papers that cite both GloVe and word2vec", "which papers cite both X and Y?", "work citing X and Y together"
_BOTH = re.compile(
    r"^\W*(?:(?:find|show(?: me)?|list|give me|get)\s)?(?:(?:the|all)\s)?"
    r"(?:papers?|work|articles?|what|which(?: papers?)?)\s(?:that\s|which\s)?"
    r"(?:cites?|citing|cited|co-cites?|co-citing|builds? (?:up)?on|built (?:up)?on|building (?:up)?on|extends?|"
    r"extending|combines?|combining)\s(?:both\s(?P<a>.{2,200}?)\sand\s(?P<b>.{2,200}?)"
    r"|(?P<c>.{2,200}?)\sand\s(?P<d>.{2,200}?)\s(?:together|at once|at the same time))\W*$",
    re.I,
)


# "what about word2vec?", "and for BERT?", "same but for GloVe", "now do the same for the Penn Treebank paper":
# the search on screen, asked again for another paper
_SAME_FOR = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|great|thanks|nice|and|now)\W+){0,3}(?:what about|how about|and (?:for|with)|"
    r"(?:(?:now\s)?(?:do|try|run)\s(?:it|this|that|the same(?: thing)?)(?:\sagain)?|(?:the\s)?same(?: thing)?"
    r"(?: search)?(?:,?\sbut)?|now)\s(?:for|with|on))\s(?P<x>\S.{0,300}?)[\s?!.]*$",
    re.I,
)

# "BERT", "GloVe", "word2vec", "the Penn Treebank paper" (not "Chinese", "Twitter")
_LOOKS_LIKE_A_NAME = re.compile(r"\b\w*(?:\d|[a-z][A-Z]|[A-Z]{2})\w*|\bpaper\b")


# "only the ones that also cite ROUGE", "those which also cite GloVe": the paper on screen's later work, kept to what
# cites the second paper too
_ALSO_CITE = re.compile(
    r"^\W*(?:(?:only|just|show(?: me)?|keep)\s)?(?:(?:the|those)\s)?(?:(?:ones|papers|results)\s)?(?:(?:that|which)\s)?"
    r"(?:also\s(?:cite|citing|cites)|(?:cite|citing)\s(?:also|too))\s(?P<x>.{2,200}?)(?:\s(?:too|as well))?\W*$",
    re.I,
)


# "what is the difference between GloVe and word2vec?": two named papers, side by side (not a topic "difference
# between …"); "compare BLEU and ROUGE" stays a search for the papers about both
_COMPARE = re.compile(
    r"^\W*(?:what(?:'s| is| are)\s)?(?:the\s)?differences?\s(?:between|of)\s(?P<a>.{2,120}?)\s(?:and|vs\.?)\s"
    r"(?P<b>.{2,120}?)\W*$",
    re.I,
)


def _compare(text: str, known_venues: list[str]) -> Message | None:
    """Two papers named to be compared, both named as an anchor would be (a topic is no paper to compare)."""
    m = _COMPARE.match(text)
    if m is None:
        return None
    named = [parse_request(m.group(g).strip(), known_venues) for g in ("a", "b")]
    if any(p.anchor_kind in ("none", "current", "topic") for p in named):
        return None
    return Message(kind="command", text=text, command="compare", also=named, why="two named papers, side by side")


def _cites_both(text: str, known_venues: list[str]) -> Message | None:
    """Later work citing two papers at once: a search from the first, kept to what also cites the second."""
    m = _BOTH.match(text)
    if m is None:
        return None
    first, second = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
    named = [parse_request(f"What came after {x.strip()}?", known_venues) for x in (first, second)]
    if any(p.anchor_kind in ("none", "current") for p in named):
        return None
    request = named[0].model_copy(update={"text": text})
    return Message(
        kind="new_search", text=text, target="paper", request=request, also=[named[1]],
        why="later work citing two papers",
    )  # fmt: skip


# "actually, make that Chinese", "change it to Chinese", "switch to dialogue instead": the topic on screen with its
# last part swapped ("sentiment analysis for Arabic" -> "... for Chinese"), or all of it when it has no such part
_SWAP = re.compile(
    r"^\W*(?:(?:no|nope|sorry|oops|wait|hmm|actually|ok|okay)\W+){0,3}(?:actually,? )?"
    r"(?:make (?:that|it)|change (?:that|it) to|switch (?:that|it) to|switch to|"
    r"(?:do|try) (?:that|it) (?:for|with|on))\s"
    r"(?P<x>[^\W\d][^,;.!?]{0,80}?)(?:\s(?:instead|please))?\W*$",
    re.I,
)
_TOPIC_TAIL = re.compile(r"^(?P<head>.+?\s(?:for|in|on|of|with|from|about|using)\s)(?P<tail>\S+(?:\s\S+){0,2})$", re.I)


def _swapped_topic(text: str, ctx: Context) -> Message | None:
    m = _SWAP.match(text)
    if m is None or ctx.topic is None or not _focus_words(m.group("x")) or not subject_of(m.group("x")):
        return None  # "make it shorter", "make it 20", "make it recent": the list's size or period, read as usual
    new = m.group("x").strip()
    named = parse_request(new, ctx.known_venues)
    if named.anchor_kind in ("name", "title") and _LOOKS_LIKE_A_NAME.search(new):
        return Message(
            kind="new_search", text=text, target="paper", request=named, correction=True,
            why="the search on screen, for a paper named instead",
        )  # fmt: skip
    parsed = named
    if (tail := _TOPIC_TAIL.match(ctx.topic)) is not None and len(new.split()) == 1:
        new = tail.group("head") + new  # one word swaps the last part: "for Arabic" -> "for Chinese"
        parsed = parse_request(new, ctx.known_venues)
    if parsed.anchor_kind != "topic":
        parsed = as_topic(parsed)  # "make that Chinese" on "parsing": the words as they are
    return Message(
        kind="new_search", text=text, target="topic", request=parsed, correction=True,
        why=f"the topic with its last part swapped: {new!r}",
    )  # fmt: skip


def _correction(text: str, ctx: Context) -> Message | None:
    """The search being set up or shown, about another paper or topic (its direction and choices kept)."""
    if (swapped := _swapped_topic(text, ctx)) is not None:
        return swapped
    if (y := _OTHER_YEAR.match(text)) is not None:
        year = int(y.group("a") or y.group("b"))
        if ctx.topic is not None:
            return Message(
                kind="unclear", text=text, why="another year, but the search is about a topic",
                hint=f"This search is about a topic, not one paper, so there is no “{year} one” to switch to. Name "
                "the paper (its title or short name), or keep the results of that year with “only papers published in "
                f"{year}”.",
            )  # fmt: skip
        same = ParsedRequest(text=text, anchor_query="", anchor_kind="current", intent=Intent(request=text), year=year)
        return Message(
            kind="new_search", text=text, target="paper", request=same, correction=True,
            why=f"the paper of the same name from {year}",
        )  # fmt: skip
    known_venues = ctx.known_venues
    if ctx.topic is None and (again := _SAME_FOR.match(text)) is not None:
        parsed = parse_request(again.group("x"), known_venues)
        # a paper named, not "what about surveys?" (a kind), "what about the method?" (a facet) or "the same but
        # for Chinese" (a focus for the results on screen): a short name must look like one (BERT, GloVe, word2vec)
        if parsed.intent.direction is None and (
            parsed.anchor_kind in (*ID_KINDS, "title", "cited", "described")
            or (parsed.anchor_kind == "name" and _LOOKS_LIKE_A_NAME.search(again.group("x")))
        ):
            return Message(
                kind="new_search", text=text, target="paper", request=parsed, correction=True,
                why=f"the same search for another paper ({parsed.anchor_kind})",
            )  # fmt: skip
    m = _CORRECTION.match(text)
    if m is None:
        return None
    parsed = parse_request(m.group("x"), known_venues)
    if parsed.anchor_kind in ("none", "current") or not re.search(r"[^\W\d_]{2}", parsed.anchor_query):
        return None  # "I meant papers that extend it", "I mean the 2014 one": read as usual
    target: Target = "topic" if parsed.anchor_kind == "topic" else "paper"
    return Message(
        kind="new_search", text=text, target=target, request=parsed, correction=True,
        why=f"corrects what the search is about ({parsed.anchor_kind})",
    )  # fmt: skip


# "which of these are surveys?", "are any of them datasets?": a question about the list, not a new search
_WHICH_KIND = re.compile(
    r"^\W*(?:(?:which|what)(?: ones?)?(?: of (?:these|them|those|the (?:results|papers|list)))?"
    r"|(?:are|is) (?:any|there(?: any)?)(?: of (?:these|them|those|the (?:results|papers)))?|any)"
    r" (?:are |is )?(?:an? )?"
    r"(?P<t>surveys?|reviews?|overviews?|tutorials?|datasets?|data sets?|corpora|corpus|benchmarks?|resources?|"
    r"treebanks?|method papers?|methods?)(?: (?:here|there|on the list|in the list|among them))?\W*$",
    re.IGNORECASE,
)

# "how many are from ACL?", "how many of them are after 2015?", "how many are there?": counted on the list. Only
# when nothing but a period, venue or kind of paper follows ("how many papers did Manning write?" is no count)
_HOW_MANY = re.compile(
    r"^\W*how many(?: of (?:these|them|those|the (?:results|papers|list)))?(?: (?:papers|results|ones|of them))?"
    r"(?: (?:are|were|is|did you find|have you found|do (?:we|you|i) have))?(?: there)?(?P<rest>[^?!]{0,120}?)\W*$",
    re.IGNORECASE,
)

# "how many are about attention?", "how many mention BERT?": the words the list's papers mention
ABOUT_WORDS = re.compile(
    r"(?:(?:are\s|that\s|which\s)?(?:about|on|mention(?:s|ing)?|discuss(?:es|ing)?|deal(?:s|ing)? with|"
    r"related to|use|using))\s(?P<what>[\w][\w .'’+-]{1,78}[\w+])",
    re.IGNORECASE,
)
# "how many are by Manning?", "which of these are by Collins": an author's papers on the list (a capitalised name)
BY_SOMEONE = re.compile(r"(?:(?:written|co-?authored)\s+)?by\s+(?P<who>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3})")
_WHICH_BY = re.compile(
    r"^\W*(?i:which(?: ones?)?(?: of (?:these|them|those|the (?:results|papers)))? (?:are|were)) (?P<rest>"
    + BY_SOMEONE.pattern
    + r")\W*$"
)


# "which of these are from 2020?", "which ones were published at ACL?": counted and numbered, the list kept
_WHICH_ARE = re.compile(
    r"^\W*(?i:which(?: ones?)?(?: of (?:these|them|those|the (?:results|papers)))? (?:are|were|is|was))"
    r"(?P<rest> (?i:from|published|at|in|after|before|since|older|newer)\b[^?!]{0,80}?)\W*$"
)


# "these are all irrelevant", "none of these is what I want", "not helpful": the list misses, with no word of why
_DISMISSAL = re.compile(
    r"^\W*(?:(?:hmm+|no|nope|ugh|well|sorry|but)[,.!\s]+)*(?:"
    r"(?:these|they|those|th(?:is|at)|it)(?: (?:results|papers))?(?:'re|'s| are| is)?"
    r"(?: (?:all|really|totally|completely))?(?: (?:results|papers))? (?:all )?"
    r"(?:irrelevant|useless|wrong|bad|off[- ]topic|not (?:relevant|useful|helpful|right|it|good)|"
    r"not what i (?:want(?:ed)?|need(?:ed)?|meant|asked for|was looking for))"
    r"|none of (?:these|them|those|the (?:results|papers)) (?:are|is) (?:relevant|useful|helpful|right|it|good|"
    r"what i (?:want(?:ed)?|need(?:ed)?|meant|asked for|was looking for))"
    r"|(?:that's |that is |this is )?(?:not|un)(?: very)? (?:helpful|useful|relevant)(?: at all)?"
    r"|(?:wrong|bad|useless|irrelevant) (?:papers|results|list)"
    r"|nothing (?:useful|relevant|good) (?:here|there)"
    r")(?: (?:at all|to me|for me|here))?\W*$",
    re.IGNORECASE,
)
_DISMISSAL_HINT = (
    "Sorry these miss. Tell me what is wrong and I will change the search (this list stays, to go back to):\n"
    "- off the topic: say what they should be about (“focus on …”), or “actually I meant …” for another paper or "
    "topic;\n"
    "- the wrong years: “only after 2015”, “from the 90s”;\n"
    "- the wrong kind of paper: “only surveys”, “no datasets”;\n"
    "- single papers: “not #3”, “more like #2”;\n"
    "- or “start over”."
)


# "cite #3", "give me the bibtex for #2", "how do I cite the first one?": the citation to copy, in the chat
_CITE = re.compile(
    r"^\W*(?:please\s)?(?:(?:can|could) you\s)?(?:cite|"
    r"(?:give|show|get|copy|send)(?: me)? (?:the |a |an )?(?:citations?|bibtex|bib(?:tex)? entry|references?|"
    r"apa(?: citation)?)(?: entry| entries)? (?:for|of)|"
    r"(?:the )?(?:citations?|bibtex|bib(?:tex)? entry|references?)(?: entry| entries)? (?:for|of)|"
    r"how (?:do|should|can) i cite)"
    rf"\s(?:(?:the\s)?(?:results?|papers?|numbers?)\s)?(?P<n>{_NUMBERS}|{_ORDINAL})\W*$",
    re.IGNORECASE,
)
# "link to #1", "download #2", "pdf of the third one": the card, which has the link
_LINK = re.compile(
    rf"^\W*(?:(?:the\s)?(?:link|url|pdf|doi)\s(?:to|for|of)|download|read)\s(?P<n>{_NUMBERS}|{_ORDINAL})\W*$",
    re.IGNORECASE,
)
# a result named plainly ("#3", "number 3", "the third paper") in a message that is read no other way
_NAMED_RESULT = re.compile(
    rf"#\s?\d{{1,3}}\b|\b(?:number|result|paper) \d{{1,3}}\b|\b{ORDINAL} (?:one|paper|result)\b",
    re.IGNORECASE,
)

# "how did you rank these?", "show me the workflow", "how does the ranking work?": the steps that made the list
_HOW_MADE = re.compile(
    r"^\W*(?:(?:so|ok(?:ay)?|and|but)[,\s]+)?(?:"
    r"how (?:did|do) you (?:rank|order|sort|score|find|choose|pick|select|get)(?: (?:these|them|those|the|this)"
    r"(?: (?:results|papers|list))?)?"
    r"|how (?:are|were|was|is) (?:these|they|those|the|this)(?: (?:results|papers|list))? (?:ranked|ordered|sorted|"
    r"scored|found|chosen|picked|selected|made)"
    r"|how does (?:the |your |this )?(?:ranking|search|scoring|workflow) work"
    r"|(?:explain|describe) (?:the |your |this )?(?:ranking|scoring|workflow|search steps|pipeline)"
    r"|(?:show|tell)(?: me)? (?:the |your |this )?(?:workflow|pipeline|search steps|steps)"
    r"|what(?: is| was| are| were|'s|’s) (?:the |your |this )?(?:workflow|pipeline|ranking|search steps|steps)"
    r"|what did you do"
    r")(?: (?:here|exactly|for this|to get these))?\W*$",
    re.IGNORECASE,
)
# "why is #3 ranked above #2?", "why is #5 higher than #1": both cards, side by side
_ABOVE = re.compile(
    r"^\W*why (?:is|was|did) #?\s?(?P<a>\d{1,3}) (?:(?:ranked|listed|placed|rank|come|scored?|end up) )?"
    r"(?:above|higher than|before|over|ahead of|better than) #?\s?(?P<b>\d{1,3})\W*$",
    re.IGNORECASE,
)


# asks about the list that the sources cannot answer: said plainly, with what can be done instead (these were
# topic searches for "code", "open access", "email")
_CANNOT: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:with|has|have|having|that (?:have|has|released))\s"
            r"(?:(?:open[- ]source|public|available|released)\s)?(?:code|implementations?|github(?: repos?)?|"
            r"source code)\b|\bcode (?:available|released?)\b",
            re.I,
        ),
        "The sources do not record which papers released code, so I cannot filter on it. Each result's card "
        "links to the paper's page, where code links usually are (say “tell me about #1”).",
    ),
    (
        re.compile(r"\bopen[- ]access\b|\bfree(?:ly available| to read)\b|\bnot paywalled\b", re.I),
        "The sources do not say which papers are open access, so I cannot filter on it. ACL Anthology papers are "
        "all free to read; each result's card links to the paper's page.",
    ),
    (
        re.compile(r"^\W*(?:(?:can|could) you\s|please\s)?(?:e-?mail|send|text|forward|share|post)\b", re.I),
        "I cannot send anything. Say “export as BibTeX” (or RIS, CSL-JSON) to download the list, or “keep #1 and "
        "#3” to put papers in your library.",
    ),
    (
        re.compile(r"^\W*(?:show|give|read)(?: me)? (?:the |their |all )?(?:abstracts?|full texts?|pdfs?)\W*$", re.I),
        "Each result's abstract and link are on its card: say “tell me about #3”, or pick a result in the list.",
    ),
)


def _result_command(text: str, ctx: Context) -> Message | None:
    """A question or an order about the numbered list on screen ("why is #3 here?", "keep #1 and #4", "export
    as BibTeX"); None for anything else. With no list on screen the session says so (never a search for "#3")."""
    if _EXPORT.match(text):
        return Message(kind="command", text=text, command="export", why="asks for an export")
    if m := _CITE.match(text) or _LINK.match(text):
        refs = _numbers(m.group("n")) or referenced_indices(m.group("n"))
        command: Command = "cite" if m.re is _CITE else "explain"
        return Message(kind="command", text=text, command=command, refs=refs, why="asks for a result's citation/link")
    if _HOW_MADE.match(text):
        return Message(kind="command", text=text, command="how", why="asks how the list was made")
    if m := _ABOVE.match(text):
        refs = [int(m.group("a")), int(m.group("b"))]
        return Message(kind="command", text=text, command="explain", refs=refs, why="asks why one result is above")
    if ctx.has_results and _DISMISSAL.match(text):
        return Message(kind="unclear", text=text, hint=_DISMISSAL_HINT, why="the list misses, no word of why")
    if ctx.has_results and (cannot := next((hint for rx, hint in _CANNOT if rx.search(text)), None)):
        return Message(kind="unclear", text=text, hint=cannot, why="asks for what the source does not record")
    if m := _EXPLAIN.match(text):
        return Message(
            kind="command",
            text=text,
            command="explain",
            refs=_numbers(m.group("n")) or referenced_indices(m.group("n")),
            why="asks about results",
        )
    if m := _WHICH_KIND.match(text):
        word = m.group("t").lower().replace(" ", "")  # "data sets" -> "datasets"
        kind = "method" if word.startswith("method") else PAPER_TYPE_WORDS.get(word) or PAPER_TYPE_WORDS[word + "s"]
        return Message(kind="command", text=text, command="kinds", about=kind, why=f"asks which results are {kind}")
    if ctx.listed and (fact := list_fact(text)) is not None:
        return Message(kind="command", text=text, command="list_fact", about=fact, why=f"asks the list's {fact}")
    if (m := _HOW_MANY.match(text) or _WHICH_BY.match(text) or _WHICH_ARE.match(text)) and ctx.listed:
        rest = m.group("rest").strip()
        if (
            paper_type_named(rest)
            or BY_SOMEONE.fullmatch(rest)
            or ABOUT_WORDS.fullmatch(rest)
            or not subject_of(rest, ctx.known_venues)
        ):
            return Message(kind="command", text=text, command="count", about=rest, why="counts results on the list")
    if m := _KEEP.match(text):
        if k := m.group("k"):
            refs = list(range(1, (_COUNTS.get(k.lower()) or int(k)) + 1))
        else:
            refs = _numbers(m.group("n")) or list(range(1, ctx.listed + 1))
        return Message(kind="command", text=text, command="keep", refs=refs, why="keeps results in the library")
    return None


# the intent fields each question slot asks for: text that sets them answers the question
SLOT_FIELDS: dict[str, tuple[str, ...]] = {
    "time": ("year_min", "year_max"),
    "venue": ("venues",),
    "topic": ("topic_terms",),
    "facet": ("facet",),
    "recency": ("recency",),
    "resource": ("resource_types",),
    "direction": ("direction",),
    "k": ("k",),
}
# "only those about X", "focus on X", "more about X": a topic inside the results, not a new search
_FOCUS = re.compile(
    r"^\W*(?:(?:only|just)\s+(?:those|the ones|ones|papers|results)?\s*(?:about|on|with|mentioning)"
    r"|(?:(?:and\s)?(?:show(?: me)?|give me|list|keep)\s+)(?:only\s+|just\s+)?(?:those|the ones|the papers|the results)"
    r"\s+(?:about|on|mentioning)"
    r"|focus(?:ed|ing)?\s+on|"
    r"(?:more|less)\s+(?:about|on)|especially|mostly|prefer(?:ably)?)\b",
    re.IGNORECASE,
)
# how an answer about a sub-topic begins ("Mostly about alignment and phrase tables")
_ANSWER_PHRASING = re.compile(
    r"^\W*(?:mostly|mainly|primarily|especially|particularly|above all)?\s?(?:about|on|in|regarding)\b|"
    r"^\W*(?:mostly|mainly|primarily|especially|particularly)\b|^\W*i(?:'m| am)? (?:care|interested|focus)",
    re.I,
)


# "I don't know", "not important", "up to you": an answer to the open question that picks nothing
_NO_PREFERENCE = re.compile(
    r"^\W*(?:(?:hmm+|well|honestly|really|um+)[,\s]+)?(?:"
    r"(?:i|we) (?:don'?t|do not|dont) (?:know|mind|care|have (?:a )?preference)|(?:i'?m )?not sure|dunno|no idea|"
    r"no clue|(?:it )?(?:doesn'?t|does not|dont) matter|not important|no (?:strong )?(?:preference|opinion)|"
    r"whatever|any(?:thing)?(?: is fine| is ok(?:ay)?| works)?|either(?: one| is fine)?|all(?: of them)?|"
    r"(?:up to you|you (?:choose|decide|pick))|surprise me|skip(?: (?:this|it|that)(?: one)?)?|pass|no|none|nope|"
    r"neither(?: of (?:these|them|those))?"
    r")(?: (?:really|at all|thanks|thank you|please|honestly))*\W*$",
    re.IGNORECASE,
)
_WAY_OUT = re.compile(r"^(?:any|no particular|none of|no preference|all |either)", re.IGNORECASE)


# "why are you asking?", "what do you mean?": about the open question, not a search
_WHY_ASKED = re.compile(
    r"^\W*(?:why (?:are you asking|do you ask|ask(?: me)?|does (?:it|this|that) matter|"
    r"do you need (?:to know )?(?:this|that))|what do you mean|what does (?:this|that|it) mean|"
    r"i don'?t understand(?: the question)?|what(?:'s| is) the difference|"
    r"(?:can you )?explain (?:the )?(?:options|question|choices))\W*$",
    re.IGNORECASE,
)
_NO_LIST_HINT = (
    "There is no numbered list on screen yet, so there is no #1 to act on. Name a paper or a topic to search first; "
    "once results are listed, “#3” means the third of them."
)
_WHY_ASKED_HINT = (
    "I ask so that the list fits what you need: each option changes the search (a period filters the years, a "
    "sub-area ranks its papers first, a venue keeps its papers). Pick one, type your own answer (e.g. “after "
    "2015”), say “no preference”, or press Search now to skip the questions."
)


class Context(BaseModel):
    """What the reader needs to know about the conversation."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    phase: str = "start"
    question: Question | None = None
    has_results: bool = False
    has_search: bool = False  # an anchor or a topic is being searched (for "what came after it?")
    known_venues: list[str] = Field(default_factory=list)
    listed: int = 0  # papers on the numbered list on screen (a search's results or the papers of an answer)
    asked: KGQuery | None = None  # the entity question answered last ("and which institutions?" continues it)
    topic: str | None = None  # the topic being searched, when no paper is
    direction: str | None = None  # the direction searched from the paper on screen, when one is


class Message(BaseModel):
    """One message, read: its kind and the parsed parts the session acts on."""

    kind: MessageKind
    text: str
    target: Target | None = None
    # new_search (and answers that name another anchor paper); for an entity question that may be a topic
    # request instead ("papers about Lexical Units …": a person only if the source knows one by that name)
    request: ParsedRequest | None = None
    feedback: Feedback | None = None  # refine
    option: int | None = None  # answer: the option the text names
    updates: dict[str, Any] = Field(default_factory=dict)  # answer: intent fields the words set
    entity: KGQuery | None = None  # entity
    command: Command | None = None
    refs: list[int] = Field(default_factory=list)  # explain / keep: the numbers of the results on screen
    about: str = ""  # earlier: the words that name the earlier search ("the GloVe search")
    why: str = ""  # how the reading was reached, for traces and evaluation reports
    # new_search: it corrects the paper or topic of the search being set up or shown ("actually I meant X"): the
    # direction and choices made so far carry over
    correction: bool = False
    hint: str = ""  # unclear: what to tell the user instead of the general help
    also: list[ParsedRequest] = Field(default_factory=list)  # new_search: more papers the results must cite
    step_edit: StepEdit | None = None  # command step_edit: a step of the workflow, named in words


# "ok thanks", "great, that's it", "perfect, thank you": an acknowledgement, not a topic to search
_ACK_WORDS = frozenset(
    "ok okay thanks thank you great cool perfect nice good awesome excellent cheers helpful useful that's thats it "
    "all very much a lot so these are this is they look looks those".split()
)
_ACK_FILLER = frozenset("it all a very much lot so you these are this is they look looks those".split())


def _command(text: str) -> Command | None:
    if (named := next((name for name, rx in _COMMANDS if rx.match(text)), None)) is not None:
        return named  # "that's it" during the questions: search now
    words = re.findall(r"[a-z']+", text.lower().replace("’", "'"))
    if words and set(words) <= _ACK_WORDS and not set(words) <= _ACK_FILLER and len(words) <= 8:
        return "help"
    return None


def _target(parsed: ParsedRequest) -> Target:
    if parsed.anchor_kind == "current":
        return "current"
    return "topic" if parsed.anchor_kind == "topic" else "paper"


def _feedback_only(text: str, feedback: Feedback, known_venues: list[str]) -> bool:
    """The text only says how to change the results: nothing is left once its feedback words are cut."""
    if not feedback.actionable and not _FOCUS.match(text):
        return False
    if feedback.weights:  # "more weight on citations": about the ranking, whatever words are left
        return True
    rest = re.sub(r"#\s*\d+|\b\d{1,3}\s+more\b", " ", text)
    rest = ONLY_BY.sub(" ", rest)  # "only the ones by Mikolov": the name is whose papers, not a subject
    if feedback.updates.get("orgs"):
        rest = ONLY_FROM.sub(" ", rest)  # "only the ones from Stanford": whose institution, not a subject
    rest = MIN_CITED.sub(" ", rest)
    rest = re.sub(
        r"\b(?:not|no|drop|remove|exclude|excluding|without|except|hide|more like|less like|like|fewer|less|more|"
        r"too (?:many )?(?:broad|narrow|general|specific|many|few|old)|narrow(?:er)?(?: it)? down|broader|widen|"
        rf"{ORDINAL}(?: one)?|number \d+|"
        r"any (?:year|time|venue)|all venues|(?:the )?(?:year|date|period|time|venue|conference|journal) "
        r"(?:filter|limit|restriction|range|constraint)s?|(?:is )?fine|"
        r"this one|that one|(?:is|looks?|seems?) (?:great|good|relevant|irrelevant|wrong|bad|perfect|spot on|useful)|"
        r"more of (?:that|those|these)|(?:like|of) that|please|thanks?|"
        r"thank you|find|show me|give me|papers|ones|it|them|those|these|i'?m|i am|interested in|"
        r"(?:do not|don'?t) (?:care about|want)|nothing (?:about|on)|keep|only|just|peer[- ]reviewed|"
        r"(?:journal|conference|workshop|preprint)s?|articles|"
        r"next (?:page|results|batch|ones|\d{1,3})|the top|top|shorter|longer|(?:the )?list(?: is)?|too long|"
        r"all of them|show all|all|"
        r"(?:change|set|switch|make) (?:the )?(?:venues?|years?|period|(?:year|date) range) to)\b",
        " ",
        rest,
        flags=re.IGNORECASE,
    )
    for term in feedback.updates.get("exclude_terms", []):
        rest = re.sub(re.escape(term), " ", rest, flags=re.IGNORECASE)
    if "year_min" in feedback.updates or "year_max" in feedback.updates:  # "only 2010": a year, not a paper "2010"
        rest = re.sub(r"\b(?:19|20)\d\d\b", " ", rest)
    if "k" in feedback.updates:  # "give me 10": how many, not a paper called "10"
        rest = re.sub(r"\b\d{1,3}\b", " ", rest)
    if _FOCUS.match(text):
        return True
    return not subject_of(rest, known_venues)


_QUOTED = re.compile(r"[\"“”«»]")


def _title_cut_short(topic: str, title: str) -> bool:
    """The topic is the title's start and the title goes on in capitalised words the topic reader dropped as
    instruction words ("Attention" of "Attention Is All You Need")."""
    if not fold(title).startswith(fold(topic)) or fold(title) == fold(topic):
        return False
    rest = title[len(topic) :].split()
    return bool(rest) and all(w[:1].isupper() for w in rest)


def _as_topic_request(parsed: ParsedRequest, text: str) -> ParsedRequest | None:
    """The request read as one for a field's literature ("what should I read on X", "surveys covering X",
    "I'm new to X - which papers are essential?"; ``pilot.topic``): only the topic is searched, the type words
    choose the kind of paper. None when it is not phrased so, or names a paper by id, quotes, "it" or its authors."""
    if parsed.anchor_kind in (*ID_KINDS, "current", "described", "cited") or _QUOTED.search(text):
        return None
    if parsed.anchor_kind == "name" and re.search(rf"\bthe {re.escape(parsed.anchor_query)} paper\b", text, re.I):
        return None  # "tell me about the BLEU paper": that paper, not papers about BLEU
    if parsed.anchor_kind in ("name", "title") and INTRODUCING.search(text):
        return None  # "I'm looking for the original paper on CRFs": the paper that introduced them, not the field
    req = read_topic(text)
    if req is None or not subject_of(req.topic):
        return None  # "what about later work?": the words after the cue only ask for a direction
    if parsed.anchor_kind == "title" and _title_cut_short(req.topic, parsed.anchor_query):
        return None  # "tell me about Attention Is All You Need": a title, not the topic "Attention"
    graph_direction = parsed.intent.direction in ("successor", "predecessor", "sibling")
    if graph_direction and parsed.anchor_kind in ("name", "title") and parsed.anchor_query in req.topic:
        return None  # "looking for work that builds on the Transformer for MT": that paper's successors, not a topic
    topic = req.topic
    kept = " ".join(PERIOD_OF.sub(" ", topic).split()).strip(" ,;") if parsed.period_of else ""
    topic = kept or topic  # "question answering after BERT": the paper dates the topic, it is no part of it
    # "I'm new to argument mining. Where should I start?": the type may be asked for in another clause than the topic
    types = req.paper_types or parsed.intent.paper_types
    updates = {"topic": topic, "paper_types": types, "direction": None, **req.updates}
    return parsed.model_copy(
        update={
            "anchor_query": topic,
            "anchor_kind": "topic",
            "intent": apply_updates(parsed.intent, updates),
            "constraints": {**parsed.constraints, **req.updates},
            "request_words": True,
        }
    )


def _touches_slot(question: Question, updates: dict[str, Any]) -> bool:
    return any(f in updates for f in SLOT_FIELDS.get(question.slot, ()))


# "forget it, show me surveys on X", "never mind — papers on Y": what follows starts afresh
_FRESH_START = re.compile(r"^\W*(?:forget (?:it|that|this)|never ?mind|scratch that)\s*[,;:.!—–-]+\s*(?=\w)", re.I)


# "hello, can you find …", "… graph-based parsing, thanks!": greetings and thanks around a request are no part of it
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|dear pilot|good (?:morning|afternoon|evening))(?: there| pilot)?[,.!:;\s]+(?=\w+\W+\w)",
    re.IGNORECASE,
)
# "ok now what came after it", "thanks! now what came before it?", "cool. what about surveys?": a lead-in that
# acknowledges the last reply is no part of the request (it became the topic "ok now what it")
_LEAD_IN = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|alright|all right|hmm+|so)(?:[,.!:;]+\s*|\s+)|(?:great|cool|nice|perfect|good|well|right|"
    r"excellent|awesome|interesting|got it|thanks|thank you|thx)[,.!:;]+\s*)+(?=\S+\s+\S+\s+\S)",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"(?<=\w)[,.!;\s]+(?:thanks|thank you|thx|cheers|ty)(?: (?:a lot|so much|very much|in advance))?\W*$", re.IGNORECASE
)


# "filter to ACL and EMNLP", "limit it to papers after 2015", "which of these are about Chinese?": "only …" and
# "focus on …" in other words, said of the list on screen
_NARROW_TO = re.compile(
    r"^\W*(?:please\s)?(?:(?:can|could) you\s)?(?:filter|restrict|limit|narrow|cut)(?:\s(?:it|them|this|these|those|"
    r"the (?:list|results|papers)))?(?:\sdown)?\s(?:to|by)\s(?P<x>.{1,200}?)(?:\sonly)?\W*$",
    re.I,
)
_WHICH_ABOUT = re.compile(
    r"^\W*(?:which|what)(?: ones?)?(?: of (?:these|them|those|the (?:results|papers|list)))? (?:are|is) (?:the )?"
    r"(?:most |more )?(?:relevant|related|closest|about|on)(?: to| for)?\s(?P<x>.{1,200}?)\W*$",
    re.I,
)


_CITE_NAMED = re.compile(
    r"^\W*(?:(?:what(?:'s| is)|which is|i need|give me|get me|show me|can i have|can you give me)\s)?"
    r"(?:(?:a|the|an)\s)?"
    r"(?:(?:good|canonical|right|correct|standard|proper|usual|original)\s)?(?:paper to cite|reference|citation|"
    r"bib(?:tex)?(?: entry)?|apa(?: citation)?|how to cite)\s(?:for|of|to)\s(?P<x>.{1,150}?)\W*$"
    r"|^\W*(?:how (?:do|should|can|would) (?:i|we|you) cite|which paper (?:should|do) (?:i|we) cite for|cite)\s"
    r"(?P<x2>.{1,150}?)\W*$",
    re.I,
)
_CITE_FOR = re.compile(r"^\W*what (?:should|do|can|would) (?:i|we|you) cite for (?P<x>.{1,80}?)\W*$", re.I)


def _is_a_name(words: str) -> bool:
    """Words that name one paper rather than a field: a well-known name ("dropout") or one written like a name."""
    return bool(well_known_titles(words)) or bool(_LOOKS_LIKE_A_NAME.search(words) and len(words.split()) <= 3)


_WHICH_CITE = re.compile(
    r"^\W*(?:which|what|how many)(?: ones?)?(?: of (?:these|them|those|the (?:results|papers|list)))?(?: papers| ones)?"
    r"(?: here)? (?:also )?(?:cite|cites|cited|reference|references|build on|builds on) (?P<x>.{2,150}?)\W*$",
    re.I,
)
_LISTED = r"(?:on|in)\s(?:the|this|my)\s(?:list|results)|here|there|listed|included"
_ON_LIST = re.compile(
    rf"^\W*(?:is|are)\s(?:the\s)?(?P<a>.{{2,150}}?)(?:\spaper)?\s(?:{_LISTED})\W*$"
    rf"|^\W*why\s(?:is(?:n'?t| not)|are(?:n'?t| not))\s(?:the\s)?(?P<b>.{{2,150}}?)(?:\spaper)?\s(?:{_LISTED})\W*$",
    re.I,
)
_VERSION = re.compile(
    r"^\W*(?:(?:please|let'?s|ok(?:ay)?),?\s)?(?:(?:go|switch|jump)\s)?(?:back\sto|to|restore|return\sto|revert\sto|"
    r"use|show(?:\sme)?)\s(?:the\s)?(?:workflow\s)?(?:version\s?|v)(?P<n>\d{1,3})(?:\sagain)?\W*$",
    re.I,
)
# "reset the filters", "clear all filters", "remove every filter": what the filter form's Clear button does
_CLEAR_FILTERS = re.compile(
    r"^\W*(?:please\s)?(?:reset|clear|remove|drop|undo|lift)\s(?:all\s|every\s)?(?:the\s|my\s)?(?:filters?|restrictions?|"
    r"constraints?|limits?)(?:\splease)?\W*$",
    re.I,
)


# "what about abstractive ones only?", "just the extractive ones", "only neural papers": a focus inside the list
_ONES = re.compile(
    r"^\W*(?:(?:and|so|ok|okay|now)\W+)?(?P<lead>(?:what|how) about\s|(?:show me\s)?(?:only|just)\s)?(?:the\s)?"
    r"(?P<x>[a-z][\w\-]*(?:\s[a-z][\w\-]*){0,3})\s(?:ones|papers)(?P<only>\sonly)?\W*$",
    re.I,
)
_NOT_A_FOCUS = frozenset(
    "recent new newer old older other these those good best more fewer all same first last shorter longer smaller "
    "bigger narrower broader wider".split()
)


def _focus_words(words: str) -> bool:
    """Words that name what some of the results are about, not a period, venue, kind or count of them."""
    low = words.lower()
    if detect_direction(f"{words} papers")[0] is not None:
        return False  # "what about earlier papers?": another direction for the same search
    return not parse_constraints(words) and paper_type_named(words) is None and not set(low.split()) & _NOT_A_FOCUS


def _paper_words(words: str, ctx: Context) -> ParsedRequest | None:
    """The paper a few words name ("BERT", "the transformer", a title), read as a name when they are short; None
    for a result's number ("#3"), a topic, or nothing."""
    if RESULT_REF.search(words):
        return None
    paper = parse_request(words, ctx.known_venues)
    short_topic = paper.anchor_kind == "topic" and len(paper.anchor_query.split()) <= 3  # "the transformer"
    if paper.anchor_kind in ("none", "current", "topic") and not short_topic:
        return None
    return paper.model_copy(update={"anchor_kind": "name"}) if short_topic else paper


def _reworded(text: str, ctx: Context) -> Message | None:
    """Feedback phrased another way, read as its plain form; None when that form is no feedback either."""
    if m := _NARROW_TO.match(text):
        plain = f"only {m.group('x')}"
    elif (m := _WHICH_ABOUT.match(text)) or (
        (m := _ONES.match(text))
        and (m.group("lead") or m.group("only"))
        and _focus_words(m.group("x"))
        and not set(parse_constraints(text)) - {"topic_terms"}  # "only journal papers": a kind of publication
    ):
        plain = f"focus on {m.group('x')}"
    else:
        return None
    msg = read(plain, ctx)
    if msg.kind != "refine" or msg.feedback is None:
        return None
    return msg.model_copy(update={"text": text, "feedback": msg.feedback.model_copy(update={"text": text})})


_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ya|y|sure|ok(?:ay)?|please|go ahead|do it|do that|sounds good|why not|yes please|"
    r"(?:yes|yeah|sure|ok(?:ay)?),? (?:please|do it|do that|go ahead|why not|sounds good))\W*$",
    re.I,
)
_NO = re.compile(r"^\W*(?:no|nope|nah|n|no thanks|no,? thank you|neither|not really|don'?t)\W*$", re.I)


def _yes_or_no(question: Question, text: str) -> int | None:
    """The option a bare yes or no picks, when one option starts with "Yes" and one with "No"."""
    labels = [o.label.lower() for o in question.options]
    yes = [i for i, lab in enumerate(labels) if lab.startswith("yes")]
    no = [i for i, lab in enumerate(labels) if lab.startswith("no,") or lab.startswith("no ")]
    if len(yes) != 1 or len(no) != 1:
        return None
    return yes[0] if _YES.match(text) else no[0] if _NO.match(text) else None


def read(text: str, ctx: Context) -> Message:
    """The deterministic reading of one message (see the module docstring for the kinds)."""
    text = strip_markup(text)
    if len(text.split()) > 2:
        text = _THANKS.sub("", _LEAD_IN.sub("", _GREETING.sub("", text))) or text
    if not text:
        return Message(kind="unclear", text=text, why="empty message (or markup only)")
    if text.strip(" .,!?;:-—").lower() in ("never mind", "nevermind"):
        return Message(kind="unclear", text=text, why="takes nothing back or forward")  # not a topic "never mind"
    if fresh := _FRESH_START.match(text):
        msg = read(text[fresh.end() :], ctx)
        if msg.kind == "ambiguous" and msg.request is not None:  # a bare topic after "never mind": a new search
            return msg.model_copy(update={"kind": "new_search", "target": "topic", "why": "a new topic"})
        return msg
    command = _command(text)
    if command is not None:
        return Message(kind="command", text=text, command=command, why=f"command: {command}")
    if (about_results := _result_command(text, ctx)) is not None:
        return about_results
    if ctx.has_results and (reworded := _reworded(text, ctx)) is not None:
        return reworded
    if ctx.has_results and (edit := read_step_edit(text)) is not None and not read_feedback(text).actionable:
        # "remove the keyword search step", "set the dense weight to 2", "rerun it" (not "change the venue to ACL")
        return Message(
            kind="command", text=text, command="step_edit", step_edit=edit, why=f"a step edit ({edit.action})"
        )
    if (m := _CITE_NAMED.match(text)) and (paper := _paper_words(m.group("x") or m.group("x2"), ctx)):
        # "bibtex for BERT", "how do I cite the transformer paper?": that paper's citation, whatever is on screen
        why = "a named paper's citation"
        return Message(kind="command", text=text, command="cite_named", request=paper, why=why)
    if (m := _CITE_FOR.match(text)) and _is_a_name(m.group("x")) and (paper := _paper_words(m.group("x"), ctx)):
        # "what should I cite for dropout?": a well-known name's paper ("… for parsing?" is the field's literature)
        return Message(kind="command", text=text, command="cite_named", request=paper, why="a named paper's citation")
    if ctx.has_results and (m := _WHICH_CITE.match(text)) and (cited := _paper_words(m.group("x"), ctx)):
        # "which of these cite ROUGE?": counted on the list (was a topic search)
        return Message(kind="command", text=text, command="which_cite", request=cited, why="counts citers on the list")
    if ctx.has_results and (m := _ON_LIST.match(text)) and not RESULT_REF.search(said := m.group("a") or m.group("b")):
        if (kind := paper_type_named(said)) is not None:  # "are surveys included?": the surveys on the list
            return Message(kind="command", text=text, command="kinds", about=kind, why=f"asks which results are {kind}")
        if asked := _paper_words(said, ctx):
            # "is BLEU on the list?", "why isn't GloVe here?": where that paper is, or why it is not listed
            return Message(kind="command", text=text, command="on_list", request=asked, why="is a paper listed")
    if m := _VERSION.match(text):  # "go back to version 2": that workflow version, run again
        return Message(kind="command", text=text, command="version", refs=[int(m.group("n"))], why="a version")
    if ctx.has_results and _CLEAR_FILTERS.match(text):
        return Message(kind="command", text=text, command="clear_filters", why="clears every filter")
    if (back := _earlier_search(text)) is not None:
        return back
    q = ctx.question
    if q is not None and (said := _yes_or_no(q, text)) is not None:
        # "yes", "sure", "nope" to "Search for papers about X instead?" (once a topic search for "yes")
        return Message(kind="answer", text=text, option=said, why=f"answers the {q.slot} question yes or no")
    if q is not None and q.slot not in ("scope", "fallback"):
        idx = match_option(q, text)
        if idx is not None:
            return Message(kind="answer", text=text, option=idx, why=f"names option {idx + 1} of the {q.slot} question")
    elif q is not None:
        idx = match_option(q, text)
        if idx is not None:
            return Message(kind="answer", text=text, option=idx, why=f"names option {idx + 1}")
    if q is not None and q.slot not in ("anchor", "scope", "fallback") and (picked := match_options(q, text)):
        # "both 1 and 2", "the first two": the options together (a period spanning both)
        return Message(kind="answer", text=text, updates=merged_updates(q, picked), why="names several options")
    if q is not None and _WHY_ASKED.match(text):
        return Message(kind="unclear", text=text, hint=_WHY_ASKED_HINT, why="asks about the question")
    # "none of these are what I want" with only the question's options on screen dismisses those options
    dismissed = not ctx.has_results and _DISMISSAL.match(text)
    if q is not None and (_NO_PREFERENCE.match(text) or dismissed):
        way_out = next((i for i, o in enumerate(q.options) if not o.sets or _WAY_OUT.match(o.label)), None)
        if way_out is not None or q.slot not in ("anchor", "scope", "fallback"):
            return Message(kind="answer", text=text, option=way_out, why=f"no preference on the {q.slot} question")
    if ctx.has_search and (corrected := _correction(text, ctx)) is not None:
        return corrected
    if (both := _cites_both(text, ctx.known_venues)) is not None:
        return both
    if (pair := _compare(text, ctx.known_venues)) is not None:
        return pair
    if ctx.has_search and (m := _ALSO_CITE.match(text)):
        second = parse_request(f"What came after {m.group('x').strip()}?", ctx.known_venues)
        if second.anchor_kind not in ("none", "current", "topic"):
            request = parse_request("What came after it?", ctx.known_venues).model_copy(update={"text": text})
            return Message(
                kind="new_search", text=text, target="current", request=request, also=[second],
                why="the paper on screen's later work, also citing another",
            )  # fmt: skip

    if ctx.phase == "answer" and (ctx.listed or ctx.asked is not None):  # a profile answer lists no papers
        follow_up = _after_answer(text, ctx)
        if follow_up is not None:
            return follow_up
    elif ctx.has_results and ctx.listed and (pivot := _from_result(text, ctx, like_means_sibling=False)):
        return pivot

    parsed = parse_request(text, ctx.known_venues)
    topical = _as_topic_request(parsed, text)
    parsed = topical or parsed
    direction = parsed.intent.direction
    no_list = not (ctx.listed or ctx.has_results)
    if no_list and parsed.anchor_kind == "topic" and re.search(r"#\s?\d", parsed.anchor_query):
        # "remove #2 and #5", "what does #1 cite?" before any list: a number of nothing, never a topic "#1"
        return Message(kind="unclear", text=text, hint=_NO_LIST_HINT, why="names a result, with no list on screen")
    names_paper = parsed.anchor_kind not in ("topic", "current", "none")
    if names_paper and parsed.anchor_kind == "name" and q is not None and q.slot == "topic":
        # "Mostly about chunking, conll" to "which sub-area?" answers it; its first word is no paper's name
        names_paper = not _ANSWER_PHRASING.match(text)
    open_slot = q is not None and q.slot not in ("scope", "fallback", "anchor")
    # words that set what the open question asks answer it ("Only papers published at EMNLP." to the venue
    # question, "I need treebanks and shared tasks" to the resource one), though they read like a request; any
    # words would "set" a sub-topic, so the topic question takes only a bare phrase (below)
    # ... unless they ask for another topic ("find work on X, not older than 2012" to the period question)
    other_topic = topical is not None and fold(topical.anchor_query) != fold(ctx.topic or "")
    # ... but "I'm interested in RST mainly" to the sub-area question answers it, though it reads like a topic request
    answers_sub_area = (
        q is not None and q.slot == "topic" and bool(_ANSWER_PHRASING.match(text)) and "instead" not in text.lower()
    )
    if (
        q is not None
        and open_slot
        and not names_paper
        and parsed.anchor_kind != "current"
        and (not other_topic or answers_sub_area)
    ):
        updates = interpret_answer(q, text, ctx.known_venues)
        if _touches_slot(q, updates) and (q.slot != "topic" or _ANSWER_PHRASING.match(text)):
            return _answer(text, q, ctx, updates)
    entity = _entity_question(text, ctx)
    if entity is None and (english := in_english(text)) is not None:
        # "关于机器翻译的综述": the request in English words, for titles in English (pilot.zh)
        msg = read(english, ctx)
        return msg.model_copy(update={"text": text, "why": f"{msg.why} (read as “{english}”)"})
    if entity is not None and entity.topic and (topic := topic_in_english(entity.topic)) is not None:
        entity = entity.model_copy(update={"topic": topic})  # "清华大学研究知识图谱的学者": the topic in English
    if (
        entity is not None
        and parsed.anchor_kind in ID_KINDS
        and entity.shape not in ("paper_authors", "paper_authors_papers")
    ):
        entity = None  # a paper's id or page ("www.semanticscholar.org/…" is no venue "WWW")
    feedback = read_feedback(text, ctx.known_venues)
    feedback_only = ctx.has_results and _feedback_only(text, feedback, ctx.known_venues)
    # "only papers published at EACL" with results on screen narrows them; it is not a question about EACL
    venue_filter = entity is not None and entity.shape == "venue_papers" and not entity.person and not names_paper
    venue_filter = venue_filter and entity is not None and (not entity.topic or parsed.anchor_kind == "none")
    # so does "just papers by Yoshua Bengio": "only … by" a person, said of the list on screen
    author_filter = entity is not None and entity.person is not None and bool(feedback.updates.get("authors"))
    # "now papers that cite it from 2016" under its predecessors: another direction for the same paper, not a filter
    other_direction = bool(direction) and parsed.anchor_kind == "current" and direction != ctx.direction
    if ctx.direction is None:
        other_direction = False  # a topic search (or a session that does not say): feedback as before
    if (
        feedback_only
        and not (direction and names_paper)
        and not other_direction
        and (entity is None or venue_filter or author_filter)
    ):
        if feedback.refs and feedback.model_copy(update={"refs": []}) == Feedback(text=text):
            # "is #3 peer reviewed?": it names a result and changes nothing: a question about that result
            return Message(kind="command", text=text, command="explain", refs=feedback.refs, why="about a result")
        return Message(kind="refine", text=text, feedback=feedback, why="feedback on the results shown")
    # "… dialogue state tracking. Recent papers, preferably from ACL or EMNLP": a topic search at those venues, not
    # a question about one venue
    several_venues = len(parsed.constraints.get("venues") or []) > 1
    # (a venue question keeps one venue; a topic at several is a topic search)
    bare_topic = topical is not None or (parsed.anchor_kind == "topic" and bool(parsed.anchor_query))
    if entity is not None and entity.shape == "venue_papers" and bare_topic and (several_venues or not entity.topic):
        entity = None  # (a venue question that lost the topic: "knowledge graph embedding before 2018 at AAAI")
    # a named paper with a search direction is a paper search, whatever the entity patterns make of the name
    if entity is not None and not (direction and names_paper):
        # "papers about <Capitalised Words>" is about a person only if the source knows one (the session asks it)
        alternative = topical if topical is not None and entity.person and not entity.org else None
        return Message(
            kind="entity", text=text, entity=entity, request=alternative, why=f"entity question ({entity.shape})"
        )

    # an anchor question is answered by naming the paper better: that is a new look-up, same request
    naming = q is not None and q.slot == "anchor" and parsed.anchor_kind not in ("none", "current")
    if naming and not direction and not parsed.constraints:
        return Message(kind="answer", text=text, request=parsed, why="names the paper the anchor question asks for")

    # words for the open question (a bare phrase, not phrased as a new request); a question offered with
    # the results is answered only by words about what it asks
    if q is not None and open_slot and parsed.anchor_kind != "current" and not parsed.request_words and not direction:
        answer = _answer(text, q, ctx)
        if not (ctx.has_results and answer.kind == "answer"):
            return answer
    # a new request: a paper (id, title, name), a topic phrased as a request, or a new direction for "it"
    if direction and ctx.has_search and parsed.anchor_kind in ("current", "none"):
        return Message(
            kind="new_search", text=text, target="current", request=parsed, why=f"{direction} of the same paper"
        )
    if names_paper:
        return Message(
            kind="new_search", text=text, target="paper", request=parsed, why=f"names a paper ({parsed.anchor_kind})"
        )
    if ctx.listed and parsed.anchor_kind == "topic" and (named := _NAMED_RESULT.search(text)):
        feedback = read_feedback(text, ctx.known_venues)
        if feedback.refs and feedback.negative:  # "I already know #1 and #2": those go
            return Message(kind="refine", text=text, feedback=feedback, why="leaves out results already known")
        # "is #3 peer reviewed?", "is there code for #2?": about that result, never a topic search for "#3"
        refs = referenced_indices(named.group(0))
        return Message(kind="command", text=text, command="explain", refs=refs, why="about a result, read no other way")
    if parsed.anchor_kind == "topic":
        if parsed.request_words or direction or not ctx.has_results:
            return Message(kind="new_search", text=text, target="topic", request=parsed, why="a topic request")
        return Message(
            kind="ambiguous", text=text, request=parsed, feedback=feedback, why="a bare topic while results are shown"
        )

    # no subject: constraints or words for the open question, or feedback
    if q is not None and q.slot not in ("scope", "fallback"):
        return _answer(text, q, ctx)
    if parsed.anchor_kind == "current" and ctx.has_results and parsed.constraints and not feedback.actionable:
        # "the same but for Chinese": what the words set about "it" narrows the results on screen
        feedback = feedback.model_copy(update={"updates": {**parsed.constraints}})
    if ctx.has_results and feedback.actionable:
        return Message(kind="refine", text=text, feedback=feedback, why="feedback on the results shown")
    return Message(kind="unclear", text=text, why="nothing to search for")


# "and which institutions?", "what about venues?" after an answer about a topic's researchers (or the reverse)
_OTHER_GROUP = re.compile(  # the text's blanks are single spaces (read() collapses them): one per optional word
    r"^\W*(?:(?:and|so|ok|okay|now),? )?(?:(?:what|how) about |and )?(?:(?:which|what|the|its|their) )?"
    r"(?:(?:top|main|leading) )?(?P<what>institutions?|universities|organi[sz]ations?|labs?|venues?|conferences?|"
    r"journals?|researchers?|authors?|people)\W*$",
    re.I,
)
_GROUP_SHAPES: dict[str, tuple[str, ...]] = {
    "topic_orgs": ("institution", "universit", "organi", "lab"),
    "topic_venues": ("venue", "conference", "journal"),
    "topic_researchers": ("researcher", "author", "people"),
}


def _entity_question(text: str, ctx: Context) -> KGQuery | None:
    """The entity question in ``text``, where "this", "this topic" and no topic at all ("what conferences should I
    target?") mean the topic being searched (they were questions about the words "this", "topic")."""
    said = text.rstrip(" ?.!")
    bare = _THIS_TOPIC_END.sub("", said)
    on_the_topic = f"{bare} on {ctx.topic}?"
    entity = parse_entity_question(on_the_topic if ctx.topic and bare != said else text)
    if entity is not None and entity.topic and _THIS_TOPIC.fullmatch(entity.topic):
        entity = entity.model_copy(update={"topic": ctx.topic}) if ctx.topic else None
    if entity is None and ctx.topic and ctx.has_results and bare == said:
        again = parse_entity_question(on_the_topic)
        if again is not None and again.shape in _TOPIC_SHAPES and again.topic == ctx.topic:
            entity = again
    return entity


_DEICTIC = "|".join(DEICTIC_NOUNS)
_THIS_TOPIC = re.compile(rf"(?:this|that|it)(?: (?:{_DEICTIC}))?|(?:the same|our|my) (?:{_DEICTIC})", re.I)
_THIS_TOPIC_END = re.compile(rf"\s(?:on|about|in)\s(?:this|that|it)(?:\s(?:{_DEICTIC}))?$", re.I)
_TOPIC_SHAPES = ("topic_venues", "topic_orgs", "topic_researchers")
_IS_IT_A = re.compile(
    r"^\W*(?:is|isn'?t|was)\s(?:#\s?\d{1,3}|(?:number|result|paper)\s\d{1,3}|the \w+ one)\s"
    r"(?:really\s|also\s)?(?:a|an)\s",
    re.I,
)


def _from_result(text: str, ctx: Context, like_means_sibling: bool) -> Message | None:
    """ "Who cites #2?", "what does the first one cite?", "surveys covering #4": a new search from that result,
    in the direction the words ask for. "More like #3" is one only after an answer (``like_means_sibling``);
    under a search's results it is feedback on them."""
    if _IS_IT_A.match(text):
        return None  # "is #1 a survey?" asks what #1 is; it asks for no surveys of it
    feedback = read_feedback(text, ctx.known_venues)
    refs = [i for i in feedback.refs if 1 <= i <= ctx.listed]
    if not refs:
        return None
    parsed = parse_request(RESULT_REF.sub("it", text), ctx.known_venues)
    if parsed.anchor_kind not in ("current", "none"):
        return None  # "papers citing both #2 and GloVe" names another paper
    direction = parsed.intent.direction
    if direction == "sibling" and not like_means_sibling:
        if not parsed.constraints:
            return None  # "more like #3": feedback, read as usual
        # "more like #3 but about Chinese": that result liked, with what the words add
        feedback = feedback.model_copy(update={"positive": True, "updates": {**feedback.updates, **parsed.constraints}})
        return Message(kind="refine", text=text, feedback=feedback, why=f"more like result #{refs[0]}, and more")
    direction = direction or ("sibling" if like_means_sibling and feedback.positive else None)
    if direction is None:
        return None
    parsed = parsed.model_copy(update={"intent": apply_updates(parsed.intent, {"direction": direction})})
    return Message(
        kind="new_search", text=text, target="result", request=parsed, feedback=feedback,
        why=f"{direction} of result #{refs[0]}",
    )  # fmt: skip


# "he", "his papers", "her work", "them": the person the last answer was about
_HE = re.compile(r"\b(?:he|she|him|they|them|his|their|her(?=\s(?P<noun>\w+))?)\b", re.I)
_POSSESSED = frozenset(
    "papers paper work works research publications articles most latest recent newest first earliest best "
    "coauthors co-authors collaborators affiliation institution citations".split()
)
_THEIR_OTHER_PAPERS = re.compile(
    r"\b(?:what else|other (?:papers|work)|(?:their|his|her) other)\b[^.?!]{0,80}?"
    r"\b(?:they|them|their|he|she|his|her)\b"
    r"|\b(?:they|he|she)\s(?:also\s)?(?:write|wrote|written|publish(?:ed)?)\b"
    r"|\b(?:their|his|her)\s(?:other\s)?(?:papers|work|publications)\b",
    re.I,
)
_IT = re.compile(r"\b(?:it|(?:this|that) (?:paper|one))\b", re.I)
_WHAT_ABOUT = re.compile(r"^\W*(?:(?:and|so|ok|okay|now),? )?(?:what|how) about ", re.I)


def _about_the_same_person(text: str, ctx: Context) -> Message | None:
    """ "What about his papers on parsing?", "where does she work?", "who does he write with?" after an answer
    about one person: the same person, asked something else."""
    asked = ctx.asked
    if asked is not None and asked.shape == "paper_authors" and asked.paper and _THEIR_OTHER_PAPERS.search(text):
        # "what else did they write?" after "who wrote the BLEU paper?"
        query = KGQuery(shape="paper_authors_papers", paper=asked.paper)
        return Message(kind="entity", text=text, entity=query, why="the same paper's authors, asked about again")
    person = asked.person if asked is not None else None
    if not person or not _HE.search(text):
        return None

    def name(m: re.Match[str]) -> str:
        word = m.group(0).lower()
        owned = word in ("his", "their") or (word == "her" and (m.group("noun") or "").lower() in _POSSESSED)
        return f"{person}'s" if owned else person

    again = parse_entity_question(_WHAT_ABOUT.sub("", _HE.sub(name, text)))
    if again is None or again.person is None or fold(again.person) != fold(person):
        return None
    return Message(kind="entity", text=text, entity=again, why=f"the same person ({person}), asked about again")


def _after_answer(text: str, ctx: Context) -> Message | None:
    """After an answer about people or venues, with its papers listed: "only after 2010" narrows the question,
    "papers like the first one" starts a search from that paper. None: read the message as usual."""
    if (same := _about_the_same_person(text, ctx)) is not None:
        return same
    if ctx.asked is not None and ctx.asked.topic and (m := _OTHER_GROUP.match(text)):
        word = m.group("what").lower()
        shape = next(shape for shape, words in _GROUP_SHAPES.items() if word.startswith(words))
        query = KGQuery(shape=shape, topic=ctx.asked.topic, year_min=ctx.asked.year_min, year_max=ctx.asked.year_max)
        return Message(kind="entity", text=text, entity=query, why=f"the same topic, asked about its {word}")
    if (pivot := _from_result(text, ctx, like_means_sibling=True)) is not None:
        return pivot
    if ctx.listed == 1 and _IT.search(text):  # "who cites it?" under the one paper an answer named
        one = _from_result(_IT.sub("#1", text), ctx, like_means_sibling=True)
        if one is not None:
            return one.model_copy(update={"text": text})
    feedback = read_feedback(text, ctx.known_venues)
    # issue 33: a citation floor narrows the answer's papers too ("only the ones with more than 100 citations")
    narrows = {k: v for k, v in feedback.updates.items() if k in ("year_min", "year_max", "venues", "min_citations")}
    if narrows and not subject_of(text, ctx.known_venues) and parse_entity_question(text) is None:
        return Message(kind="refine", text=text, feedback=feedback, updates=narrows, why="narrows the question asked")
    return None


def _answer(text: str, q: Question, ctx: Context, updates: dict[str, Any] | None = None) -> Message:
    """Words for the open question. With results on screen they are feedback on the results — and, when they
    set what the question offered with them asks, its answer too (``updates``: the fields they set)."""
    updates = interpret_answer(q, text, ctx.known_venues) if updates is None else updates
    if not ctx.has_results and updates and not _touches_slot(q, updates):
        # "only CVPR" while the period is asked: it narrows the search being set up, it answers nothing
        return Message(
            kind="refine",
            text=text,
            feedback=read_feedback(text, ctx.known_venues),
            updates=updates,
            why=f"a constraint for the search being set up, not an answer to the {q.slot} question",
        )
    if ctx.has_results:
        feedback = read_feedback(text, ctx.known_venues)
        if _touches_slot(q, updates):
            return Message(
                kind="refine",
                text=text,
                feedback=feedback,
                updates=updates,
                why=f"feedback that answers the {q.slot} question",
            )
        if feedback.actionable:
            return Message(kind="refine", text=text, feedback=feedback, why="feedback while a question is offered")
    return Message(kind="answer", text=text, updates=updates, why=f"words for the {q.slot} question")


# --- the optional LLM reading of ambiguous messages ------------------------------------------------------


class _LLMReading(BaseModel):
    kind: Literal["refine", "new_search"]


async def read_with_llm(llm: Any, msg: Message, ctx: Context) -> Message:
    """Let a model settle an ambiguous message (refine vs new search); any failure keeps the rules' reading."""
    if llm is None or msg.kind != "ambiguous":
        return msg
    from pilot.llm import LLMError

    system = (
        "A researcher is looking at a list of papers from a literature search and types a message. Decide whether "
        'it refines the current results or starts a new search. Reply with JSON {"kind": "refine" | "new_search"}.'
    )
    try:
        verdict = await llm.json(system, f"Current search: {ctx.phase}\nMessage: {msg.text}", _LLMReading)
    except LLMError as exc:
        log.info("LLM reading unavailable: %s", exc)
        return msg
    if verdict.kind == "new_search":
        return msg.model_copy(update={"kind": "new_search", "target": "topic", "why": "the model read a new search"})
    feedback = msg.feedback or read_feedback(msg.text, ctx.known_venues)
    return msg.model_copy(update={"kind": "refine", "feedback": feedback, "why": "the model read feedback"})


# --- what lives beside the conversation: the library and the list's last change ------------------------

WorkspaceAction = Literal["show", "count", "clear", "clear_confirmed", "remove", "changes"]


class WorkspaceRequest(BaseModel):
    """A message about the researcher's library or about what the last change did to the list: the UI owns
    both (the library is kept in their browser), so it answers these, not the search session."""

    action: WorkspaceAction
    refs: list[int] = Field(default_factory=list)  # remove: the numbers of the results on screen


_LIBRARY = r"(?:my |the )?(?:library|saved papers|kept papers|reading list)"
_WORKSPACE: list[tuple[WorkspaceAction, re.Pattern]] = [
    ("clear_confirmed", re.compile(rf"^\W*yes,? (?:please )?(?:clear|empty) {_LIBRARY}\W*$", re.I)),
    (
        "show",
        re.compile(
            rf"^\W*(?:what(?:'s| is) in {_LIBRARY}|(?:show|list|open)(?: me)? {_LIBRARY}|"
            r"what (?:papers )?(?:have i|did i) (?:kept|saved|keep|save)(?: so far)?)\W*$",
            re.I,
        ),
    ),
    (
        "count",
        re.compile(
            rf"^\W*how many (?:papers )?(?:are (?:there )?in|do i have in|have i (?:got )?in) {_LIBRARY}\W*$"
            r"|^\W*how many (?:papers )?(?:have i|did i) (?:kept|saved)(?: so far)?\W*$",
            re.I,
        ),
    ),
    ("clear", re.compile(rf"^\W*(?:please )?(?:clear|empty|reset|wipe) {_LIBRARY}\W*$", re.I)),
    (
        "remove",
        re.compile(
            rf"^\W*(?:please )?(?:(?:remove|delete|drop|take)(?: out)? (?P<a>{_NUMBERS}) from {_LIBRARY}|"
            rf"(?:unsave|unkeep|un-save|un-keep|forget) (?P<b>{_NUMBERS}))\W*$",
            re.I,
        ),
    ),
    (
        "changes",
        re.compile(
            r"^\W*(?:what(?:'s| has| did)? changed|which (?:ones|papers|results) (?:are|were) new|what(?:'s| is) new "
            r"(?:here|on the list|in the list)|what did (?:that|this|it) change)\W*$",
            re.I,
        ),
    ),
]


def workspace_request(text: str) -> WorkspaceRequest | None:
    """The library or list-change request in ``text``, or None."""
    text = strip_markup(text)
    for action, rx in _WORKSPACE:
        if m := rx.match(text):
            numbers = (m.groupdict().get("a") or m.groupdict().get("b") or "") if action == "remove" else ""
            return WorkspaceRequest(action=action, refs=_numbers(numbers))
    return None
