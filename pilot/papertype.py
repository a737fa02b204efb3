"""What kind of paper a record is: a survey, a data resource, a position paper, or a method paper (everything else).

A researcher who asks for "surveys on dialogue systems" or "datasets for question answering" wants papers
of that kind; a title usually says so ("A Survey of …", "… : An Annotated Corpus of …", "Overview of the
… Shared Task"), and an abstract's first words often do ("This article reviews …", "We present a new
corpus …"). Deterministic patterns, tuned for precision: a method paper that merely *uses* a corpus
("Learning Subjective Language from Corpora", "corpus-based …") stays a method paper, and a shared task's
own overview is a resource (it defines the data and the evaluation), not a survey.

    paper_type(paper)            # "survey" | "resource" | "position" | "method"

Measured on a hand-labelled sample of 305 corpus papers (``scripts/papertype_eval.py``, docs/paper-types.md).
    paper_type_reason(paper)     # ("survey", "title says 'a survey of'")
"""

from __future__ import annotations

import re
from functools import cache

from pilot.domain import Profile, profile
from pilot.models import Paper, PaperType

# Evaluation campaigns: their overview / introduction / task-description papers define data and metrics.
# The field's own campaign names (SemEval, TREC, …) come from its domain profile.
_GENERIC_CAMPAIGN = r"shared[- ]tasks?|bake-?off|evaluation campaign|evaluation exercise"


def _alternatives(names: tuple[str, ...]) -> str:
    return "|".join(re.escape(n).replace(r"\ ", r"[- ]") for n in sorted(names, key=len, reverse=True))


_REVIEW = r"(?:a\s+|an\s+)?(?:critical\s+|systematic\s+|comprehensive\s+|brief\s+|short\s+)?(?:literature\s+)?review"
_SURVEY_TITLE = re.compile(
    r"\bsurvey(?:s|ing)?\b(?!\s+(?:data|responses?|respondents|questions?|questionnaires?)\b)"
    r"|\btutorial (?:on|of|for|introduction)\b|^tutorials?\b(?!\s+(?:dialog\w*|systems?|agents?)\b)"
    r"|(?::|\s[-–—]\s|—)\s*(?:a\s+)?tutorial\s*$"
    r"|\boverview\b(?!\s+(?:summar\w*|generation|sentences?)\b)"
    rf"|^{_REVIEW}\s+(?:of|on)\b|(?::|\s[-–—]\s|—)\s*{_REVIEW}\s*$|\b(?:a|an)\s+{_REVIEW}\s+(?:of|on)\b"
    r"|\breview\s+(?:of|on)\s+(?:the\s+)?(?:literature|research|recent|current|methods|approaches|techniques)\b"
    r"|\bliterature review\b|\bstate[- ]of[- ]the[- ]art\s+(?:in|of|on|and)\b(?!.*\b(?:improv\w*|beat\w*)\b)"
    r"|^(?:an?\s+)?introduction\s+to\b|\brecent advances (?:in|and)\b",
    re.IGNORECASE,
)
# An "overview" of (or "recent advances in") a system, a project or a meeting describes that thing, not a field.
_NOT_A_FIELD = re.compile(
    r"\b(?:system|project|program|programme|architecture|toolkit|platform|prototype|implementation|"
    r"conference|workshop|meeting|session|panel)\b",
    re.IGNORECASE,
)
_SURVEY_ABSTRACT = re.compile(
    r"^(?:[^.]{0,40}\b)?(?:this|the present|our) (?:paper|article|chapter|survey|review|tutorial)\s+"
    r"(?:surveys|reviews|presents an overview|gives an overview|provides an overview|offers an overview|"
    r"summari[sz]es (?:the )?(?:research|work|literature|state))"
    r"|^\s*we (?:survey|review) (?:the |recent |current |existing )",
    re.IGNORECASE,
)


class _Rules:
    """The patterns that need the domain profile's names, compiled once per profile."""

    def __init__(self, domain: Profile):
        named = rf"(?:{_GENERIC_CAMPAIGN}|(?:{_alternatives(domain.campaign_names)})(?:[- ]?\d+)?"
        named += r"(?:\s+(?:evaluation|workshop|conference))?)" if domain.campaign_names else ")"
        campaign = rf"(?:{named}|competition|challenge|track)"
        self.shared_task = re.compile(
            rf"\b(?:overview|introduction|findings|results|description)\b[^:]{{0,80}}\b{campaign}\b"
            rf"|^(?:the\s+)?(?:[\w\-]+\s+){{0,4}}{named}\b"  # "The CoNLL-2009 Shared Task: …"
            r"|^[\w\-]+[- ]?\d{0,4}\s+task\s+\d+\s*:",  # "<campaign>-2010 Task 9: …", not a participant's system
            re.IGNORECASE,
        )
        names = rf"|{_alternatives(domain.resource_names)}" if domain.resource_names else ""
        noun = (
            r"(?:corpus|corpora|treebanks?|tree-?bank|datasets?|data sets?|benchmarks?|test (?:collection|suite)s?|"
            r"lexicons?|lexical (?:resource|database)s?|annotation (?:scheme|guidelines|framework)|annotated|"
            rf"gold standard|(?:language|lexical|linguistic) resources?{names})"
        )
        # a resource noun modifying another noun ("Lexicon Models", "Corpus Analysis") names a method's part
        modified = (
            r"models?|features?|extraction|induction|learning|acquisition|analysis|augmentation|generation|"
            r"distillation|expansion"
        )
        self.resource_title = re.compile(rf"\b{noun}\b(?!\s+(?:{modified})\b)", re.IGNORECASE)
        # a method that uses data: "corpus-based …", "… from corpora", "learning … with a treebank"
        self.uses_data = re.compile(
            r"\b(?:corpus|data|treebank|lexicon|resource)[- ](?:based|driven|derived|induced|free)\b"
            r"|^(?:learning|inducing|acquiring|extracting|mining)\b"
            r"|\b(?:from|using|with|on|via|across|over|in|within|without|for|of|to)\s+(?:(?:a|an|the|large|small|raw|"
            r"unlabell?ed|unannotated|parallel|comparable|monolingual|bilingual|multiple|web|english|annotated)\s+)*"
            rf"(?:[\w\-]+\s+){{0,3}}{noun}\b",
            re.IGNORECASE,
        )
        # "CCGbank: A Corpus of CCG Derivations … from the Penn Treebank": the subtitle says what the named thing is,
        # whatever it was made from (no preposition before the noun: "X: Parsing with a Treebank" uses one)
        self.named_resource = re.compile(
            r"^[^:]{1,60}:\s+(?:(?:a|an|the)\s+)?(?:(?!(?:with|from|using|on|for|of|in|to|via|by|over|across)\b)"
            rf"[\w\-]+\s+){{0,4}}?{noun}\b(?![- ](?:based|driven|{modified})\b)",
            re.IGNORECASE,
        )
        self.builds_resource = re.compile(
            r"\b(?:build(?:ing)?|creat(?:e|ing|ion of)|construct(?:ing|ion of)|develop(?:ing|ment of)|"
            r"compil(?:e|ing|ation of)|annotat(?:e|ing|ion of)|collect(?:ing|ion of)|introduc(?:e|ing)|releas(?:e|ing)|"
            rf"design(?:ing)?)\b[^:]{{0,60}}\b{noun}\b",
            re.IGNORECASE,
        )


# "We present a new corpus of …": a resource paper whatever its title says.
_RESOURCE_ABSTRACT = re.compile(
    r"\bwe (?:present|introduce|describe|release|create|build|construct|compile|develop|report on)\s+"
    r"(?:a|an|the)\s+(?:[\w\-,]+\s+){0,5}?"
    r"(?:corpus|corpora|dataset|data set|treebank|benchmark|test collection|lexicon|lexical resource)\b"
    r"(?![- ](?:based|driven))",
    re.IGNORECASE,
)
_DATA_NOUN = (
    r"(?:corpus|corpora|datasets?|data sets?|treebanks?|benchmarks?|test (?:collection|suite)s?|lexicons?|"
    r"lexical resources?|challenge sets?|testbeds?)"
)
# Anywhere in the abstract, a contribution of data: "To facilitate the study, we curate a corpus of …", "we also
# release WikiSQL, a dataset of …", "We introduce BiRdQA, a bilingual … dataset". The words between the verb and the
# noun hold no preposition or evaluation word, so "we present experiments on three benchmark datasets" is no resource.
_NOT_BETWEEN = r"(?:on|across|over|with|using|in|for|from|to|experiments?|results?|evaluations?)\b"
_BETWEEN = rf"(?:(?!{_NOT_BETWEEN})[\w\-/]+,?\s+){{0,6}}?"
_CONTRIBUTES_DATA = re.compile(
    r"\b(?i:we|this (?:paper|work))\s+(?i:also\s+|first\s+|further\s+|then\s+)?"
    r"(?i:present|introduce|release|create|construct|collect|build|compile|curate|contribute|propose|develop|publish|"
    r"annotate|crowdsource|provide)(?:s|d|ed)?\s+"
    rf"(?i:(?:a|an|the|two|three|several|our|this)\s+)?(?i:{_BETWEEN}{_DATA_NOUN})\b(?![- ](?:based|driven))"
    rf"|\b[A-Z][\w\-]+,\s+an?\s+(?i:{_BETWEEN}{_DATA_NOUN})\b(?![- ](?:based|driven))"
)
# A position paper argues where a field should go rather than presenting a method, data or a survey.
_POSITION = re.compile(
    r"\bposition paper\b|^position\s*:|\bthis (?:paper|article|essay) argues\b|\bopinion (?:paper|piece)\b"
    r"|\bwe argue that (?:the (?:field|community|research community)|(?:nlp|ml|ai) (?:research|researchers)|"
    r"researchers|practitioners|we (?:should|need|must))\b|\bcall (?:to action|for action)\b|\bmanifesto\b"
    r"|\bconsidered harmful\b|^the case (?:for|against)\b|\bin this (?:perspective|opinion) (?:paper|piece|article)\b",
    re.IGNORECASE,
)
# Surveys that say so in their abstract's opening sentences ("This book is a useful survey of …", "We present a
# literature and empirical survey …", "In this study, we summarize the recent progress in …").
_SURVEY_OPENING = re.compile(
    r"\b(?:this|the present|our) (?:paper|article|chapter|book|survey|review|tutorial|study)\s+"
    r"(?:is|provides|presents|gives|offers|contains)\s+(?:a|an)\s+(?:[\w\-]+\s+){0,3}?(?:survey|review|overview)\b"
    r"(?!\s+of\s+(?:our|the proposed|this)\b)"
    r"|\bwe (?:present|provide|give|offer|conduct|carry out)\s+(?:a|an)\s+(?:[\w\-]+\s+){0,4}?(?:survey|review)\b"
    r"|\bin this (?:survey|review)\b|\bwe summari[sz]e (?:the )?(?:recent |current )?(?:[\w\-]+\s+)?"
    r"(?:progress|advances|developments|research|literature)\b",
    re.IGNORECASE,
)


@cache
def _rules() -> _Rules:
    return _Rules(profile())


def _first_sentence(paper: Paper, n: int = 1) -> str:
    text = (paper.abstract or "").strip()
    return " ".join(re.split(r"(?<=[.!?])\s+", text, maxsplit=n)[:n])[: 400 * n] if text else ""


def paper_type_reason(paper: Paper) -> tuple[PaperType, str]:
    """The paper's type and the words that decided it (shown as evidence)."""
    title = " ".join((paper.title or "").split())
    opening = _first_sentence(paper)
    rules = _rules()
    if m := rules.shared_task.search(title):
        return "resource", f"title names an evaluation campaign ('{m.group(0).strip()}')"
    if m := _POSITION.search(title) or _POSITION.search(_first_sentence(paper, 3)):
        return "position", f"it says '{m.group(0).strip()}'"
    m = _SURVEY_TITLE.search(title)
    if m and not (re.search(r"overview|advances", m.group(0), re.IGNORECASE) and _NOT_A_FIELD.search(title)):
        return "survey", f"title says '{m.group(0).strip()}'"
    if m := _SURVEY_ABSTRACT.search(opening) or _SURVEY_OPENING.search(_first_sentence(paper, 2)):
        return "survey", f"abstract says '{m.group(0).strip()}'"
    if m := rules.builds_resource.search(title) or rules.named_resource.search(title):
        return "resource", f"title says '{m.group(0).strip()}'"
    if (m := rules.resource_title.search(title)) and not rules.uses_data.search(title):
        return "resource", f"title names a resource ('{m.group(0)}')"
    if m := _RESOURCE_ABSTRACT.search(opening) or _CONTRIBUTES_DATA.search(paper.abstract or ""):
        return "resource", f"abstract says '{m.group(0).strip()}'"
    return "method", "neither a survey, a position paper nor a data resource"


def paper_type(paper: Paper) -> PaperType:
    """ "survey" (survey, review, overview, tutorial), "resource" (dataset, corpus, treebank, benchmark,
    lexical resource, shared task) or "method" (everything else)."""
    return paper_type_reason(paper)[0]
