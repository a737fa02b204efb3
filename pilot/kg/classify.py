"""Read an academic knowledge-graph question: is it about people / venues / institutions, and what exactly.

``parse`` pulls the slots (person, organisation, venue, topic, years) and the question shape out of
English or Chinese text with patterns; ``classify`` uses the same reading so the chat and the planner
never disagree about what an "entity question" is. Names and organisations are passed through as the
user wrote them (any script); nothing here translates or guesses spellings.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from pilot.intent import FIELD_ACRONYMS, parse_request
from pilot.text import org_alias_names

Kind = Literal["entity", "papers", "unsure"]
Shape = Literal[
    "author_papers",
    "author_profile",
    "author_topics",
    "most_cited",
    "coauthors",
    "org_researchers",
    "org_profile",
    "venue_papers",
    "venue_profile",
    "topic_researchers",
    "topic_venues",
    "topic_orgs",
    "paper_authors",
    "paper_authors_papers",
    "org_papers",
]


class KGQuery(BaseModel):
    """The slots of an entity question."""

    shape: Shape
    person: str | None = None
    org: str | None = None
    venue: str | None = None
    topic: str | None = None
    year_min: int | None = None
    year_max: int | None = None
    coauthor: str | None = None  # "papers by X with Y": joint papers
    paper: str | None = None  # "who wrote the Penn Treebank paper?": the paper, as the user named it


# --- vocabulary ------------------------------------------------------------------------------------

# Venues a user names by acronym; a lone all-caps word after "at/in" is taken as a venue too.
KNOWN_VENUES = (
    "NeurIPS",
    "NIPS",
    "ICML",
    "ICLR",
    "AAAI",
    "IJCAI",
    "AISTATS",
    "COLT",
    "UAI",
    "ACML",
    "COLM",
    "CoRL",
    "RSS",
    "ACL",
    "EMNLP",
    "NAACL",
    "EACL",
    "COLING",
    "CoNLL",
    "LREC",
    "TACL",
    "CVPR",
    "ICCV",
    "ECCV",
    "WACV",
    "3DV",
    "KDD",
    "SIGKDD",
    "WWW",
    "SIGIR",
    "CIKM",
    "WSDM",
    "ICDE",
    "ICDM",
    "SDM",
    "VLDB",
    "SIGMOD",
    "ICASSP",
    "INTERSPEECH",
    "MICCAI",
    "ICRA",
    "IROS",
)
# ASCII boundaries, so a venue glued to Chinese text ("在NeurIPS上") is still found.
_VENUE_RE = re.compile(
    r"(?<![A-Za-z0-9-])(" + "|".join(re.escape(v) for v in KNOWN_VENUES) + r")(?![A-Za-z0-9-])", re.I
)
_VENUE_CANON = {v.lower(): v for v in KNOWN_VENUES}
_VENUE_PHRASE = re.compile(r"\b(Computational Linguistics)\b")

_ORG_WORDS = (
    r"University|Universit[éäà]|Institute|Institut|College|School|Academy|Laborator(?:y|ies)|Lab|Labs|"
    r"Research|Center|Centre|Inc\.?|Corporation|Corp\.?|Group|Foundation|Polytechnic"
)
# Organisations commonly named without an organisation word.
KNOWN_ORGS = (
    "Google",
    "DeepMind",
    "Microsoft",
    "Meta",
    "Facebook",
    "OpenAI",
    "IBM",
    "Amazon",
    "Apple",
    "NVIDIA",
    "Adobe",
    "Alibaba",
    "Tencent",
    "Baidu",
    "ByteDance",
    "Huawei",
    "Samsung",
    "Intel",
    "Salesforce",
    "Allen Institute",
    "MIT",
    "CMU",
    "ETH Zurich",
    "ETH",
    "EPFL",
    "INRIA",
    "Inria",
    "Tsinghua",
    "Peking",
    "Stanford",
    "Berkeley",
    "UC Berkeley",
    "Oxford",
    "Cambridge",
    "Harvard",
    "Princeton",
    "Yale",
    "Cornell",
    "Columbia",
    "Toronto",
    "Edinburgh",
    "Mila",
    "KAIST",
    "NTU",
    "NUS",
    "CUHK",
    "HKUST",
    "Zhejiang",
    "Fudan",
    "SJTU",
    "USTC",
)
# and the Latin short names of the alias table ("UW", "UIUC", "Georgia Tech"), longest first
_ORG_NAMES = sorted({*KNOWN_ORGS, *(o for o in org_alias_names() if o.isascii())}, key=len, reverse=True)
_KNOWN_ORG_RE = re.compile(r"(?<![A-Za-z0-9-])(" + "|".join(re.escape(o) for o in _ORG_NAMES) + r")(?![A-Za-z0-9-])")
# Patterns over user text must run in linear time on any input (tests/test_abuse.py replays adversarial
# ones). Two rules keep them so: a repeated word starts only where a word starts (a look-behind for the
# word's own characters, so "AAAA…" or "A-A-A-…" offers one start, not one per letter), and a run of
# words is bounded ({0,8}, not *), so each start costs a few words at most.
_ORG_CHARS = r"A-Za-z0-9À-ÖØ-öø-ɏ'’.\-"  # Latin only: "在Carnegie Mellon University研究" starts and ends at the Chinese
_ORG_WORD = rf"[A-Z][{_ORG_CHARS}]*"
_CAP = rf"(?:{_ORG_WORD}|of|the|and|for|de|di|du|del|la|le|von|van|der|&)"
_ORG_PHRASE = re.compile(
    rf"((?<![{_ORG_CHARS}])(?:{_ORG_WORD}\s+){{0,8}}\b(?:{_ORG_WORDS})(?![A-Za-z])(?:\s+{_CAP}){{0,12}}"
    rf"|\b(?:{_ORG_WORDS})\s+of\s+{_ORG_WORD}(?:\s+{_ORG_WORD}){{0,12}})"
)
_ZH_ORG = re.compile(r"([\u4e00-\u9fff]{2,12}?(?:大学|学院|研究院|研究所|实验室|科学院|公司|集团))")

# A person's name: 2-4 capitalised words (initials, hyphens and name particles allowed), or 2-4 CJK chars.
# Latin letters only: in "Ada Lovelace在…" the name must stop where the Chinese starts.
_NAME_CHARS = r"A-Za-zÀ-ÖØ-öø-ɏ'’\-"
_NAME_WORD = rf"[A-ZÀ-ÞĀ-ſ][{_NAME_CHARS}]*\.?"
_PARTICLE = r"(?:van|von|der|de|den|la|le|di|da|du|dos|del|bin|al)"
# starts where a word starts (see _ORG_PHRASE); at most two particles between words ("van der")
EN_NAME = rf"(?<![{_NAME_CHARS}]){_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{_NAME_WORD}){{1,3}}"
LATIN_NAME = rf"(?<![{_NAME_CHARS}]){_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{_NAME_WORD}){{0,3}}"  # 1-4 words
ZH_NAME = r"[\u4e00-\u9fff·]{2,5}"

_COAUTHOR = re.compile(
    r"co-?authors?|collaborat\w*|co-?workers?|\b(?:work|publish|write|wrote|written|author)\w*\s+(?:\w+\s+){0,2}with\b|"
    r"\bwith whom\b|\bwith\s*\?\s*$|合作",
    re.I,
)
_MOST_CITED = re.compile(
    r"most[- ](?:highly[- ])?(?:cited|influential|famous|popular|impactful|well[- ]known)|highly[- ]cited|"
    r"highest[- ]cited|top[- ]cited|cited the most|most citations|highest citation|best[- ]known|"
    r"引用最多|被引最多|最有影响|引用最高|被引最高",
    re.I,
)
_TOPICS = re.compile(
    r"research (?:topics?|interests?|areas?|fields?|directions?)|topics|interests|"
    r"what (?:does|did|do) .{1,80}? (?:work|research|study|focus) on|what (?:does|did) .{1,80}? (?:research|study)\b|"
    r"works? on what|what(?:'s|’s| is| are) .{1,80}?['’]s? (?:research|work)(?: about)?\s*[?？.]?\s*$|"
    r"研究方向|研究兴趣|研究领域|研究什么|做什么研究",
    re.I,
)
_PROFILE = re.compile(
    r"\bwho is\b|\bwho's\b|\btell me about\b|\bprofile\b|\bh-?index\b|\baffiliation\b|\boverview\b|\bwhat is\b|"
    r"\bdescribe\b|\binformation (?:on|about)\b|\binfo (?:on|about)\b|\bwhat (?:kind|sort|type) of\b|"
    r"\bwho\b.+\b(?:is|was)\s*[?？.]?\s*$|是谁|介绍|简介|概况|h指数",
    re.I,
)
# "where does Noah Smith work?", "which conferences does X publish at?": what a profile says (affiliation, venues),
# though the words ("work", "publish") also ask for papers
_PROFILE_ASKED = re.compile(
    r"\bwhere (?:does|did|do|is|was) .{1,80}? (?:work|working|based)\b|"
    r"\b(?:which|what) (?:university|institution|lab|company|organi[sz]ation|conferences|venues|journals)\b",
    re.I,
)
_PAPERS = re.compile(
    # "works" as a noun ("his works"), not the verb ("works on X")
    r"\b(?:papers?|publications?|articles?|works?(?!\s+(?:on|with|at|in|for)\b)"
    r"|published|publish|wrote|write|written|authored)\b"
    r"|论文|文章|发表|著作",
    re.I,
)
_PEOPLE = re.compile(
    r"\b(?:researchers?|scientists?|scholars?|people|professors?|faculty|authors?|who|experts?|members?)\b|"
    r"研究者|研究人员|学者|科学家|教授|作者|哪些人|谁|专家",
    re.I,
)
# "Which venues publish the most on X?", "Where is X published?", "Which institutions work on X?"
_VENUES_ASKED = re.compile(
    r"\b(?:which|what|top|main|best|leading)\s+(?:\w+\s+){0,2}?(?:venues?|conferences?|journals?)\b|"
    r"\bwhere\s+(?:is|are|do|does|should)\b.{0,80}?\bpublish|"
    r"\bwhere\s+(?:should|could|can|do|would)\s+(?:i|we)\s+(?:submit|send|publish)",
    re.I,
)
_ORGS_ASKED = re.compile(
    r"\b(?:which|what|top|main|best|leading)\s+(?:\w+\s+){0,2}?(?:institutions?|universities|organi[sz]ations?|"
    r"labs?|companies|(?:research\s+)?groups?|teams?)\b",
    re.I,
)
# Requests that are about papers relative to an anchor or a topic search, not about entities.
_PAPER_SEARCH = re.compile(
    r"\b(?:cit(?:e|es|ed|ing|ation|ations)|build(?:s)? (?:on|upon)|follow[- ]?ups?|successors?|predecessors?|"
    r"related work|similar (?:to|papers)|like the paper|survey(?:s)?|benchmarks?|datasets?|"
    r"this paper|the paper|arxiv|doi|recommend)\b|引用|相关工作|综述|类似|后续工作|基准|数据集",
    re.I,
)
_TOPIC_SEARCH = re.compile(
    # each optional word takes its own blanks: "\s*X?\s*Y?\s*" would try every split of a run of spaces
    r"^\s*(?:(?:find|search|look for|show me|list|give me|any|get)\s*)?(?:(?:some|recent|the)\s*)?"
    r"(?:papers?|articles?|publications?|work|literature)\s+(?:on|about|regarding|related to|in)\b|"
    r"关于.+的(?:论文|文章|研究)",
    re.I,
)


# --- slot extraction -------------------------------------------------------------------------------

_YEAR = r"((?:19|20)\d{2})"
_RANGE = re.compile(
    rf"(?:(?:between|from|during)\s*)?{_YEAR}\s*(?:年\s*)?(?:-|–|—|to|until|till|through|thru|and|~|至|到|－)\s*{_YEAR}\s*年?",
    re.I,
)
_SINCE = re.compile(
    rf"(?:since|from|starting|after|later than|post)\s+(?:the year\s+)?{_YEAR}|{_YEAR}\s*年?\s*(以来|以后|之后|后)",
    re.I,
)
_BEFORE = re.compile(
    rf"(?:before|until|till|up to|prior to|earlier than|by)\s+{_YEAR}|{_YEAR}\s*年?\s*(以前|之前|前)", re.I
)
_SINGLE = re.compile(rf"(?<!\d){_YEAR}(?!\d)\s*年?")


_NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
_RECENT = re.compile(
    r"(?:in\s+)?(?:the\s+)?(?:last|past|recent)\s+(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)\s+years?"
    r"|(?:近|最近|过去)\s*(\d{1,2}|[两二三四五六七八九十])\s*年",
    re.I,
)


_DECADE = re.compile(r"(?:the\s+)?((?:19|20)\d0)'?s\b")


def this_year() -> int:
    import datetime

    return datetime.date.today().year


def extract_years(text: str) -> tuple[int | None, int | None, str]:
    """(year_min, year_max, text with the year phrase removed)."""
    m = _RECENT.search(text)
    if m:
        raw = (m.group(1) or m.group(2)).lower()
        n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
        return this_year() - n + 1, None, _cut(text, m)
    m = _RANGE.search(text)
    if m:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return a, b, _cut(text, m)
    m = _DECADE.search(text)
    if m:  # "from the 2000s", "in the 1990s": the decade, not its first year
        first = int(m.group(1))
        return first, first + 9, _cut(text, m)
    m = _SINCE.search(text)
    if m:
        year = int(m.group(1) or m.group(2))
        strict = bool(re.match(r"after|later than|post", m.group(0), re.I)) or m.group(3) in ("以后", "之后", "后")
        return year + (1 if strict else 0), None, _cut(text, m)
    m = _BEFORE.search(text)
    if m:
        year = int(m.group(1) or m.group(2))
        strict = bool(re.match(r"before|prior to|earlier than", m.group(0), re.I)) or m.group(3) in (
            "以前",
            "之前",
            "前",
        )
        return None, year - (1 if strict else 0), _cut(text, m)
    m = _SINGLE.search(text)
    if m:
        year = int(m.group(1))
        return year, year, _cut(text, m)
    return None, None, text


def _cut(text: str, m: re.Match) -> str:
    # drop a dangling preposition left in front of the removed year phrase ("papers at ACL in")
    head = re.sub(r"\b(?:in|during|from|between|of|the years?)\s*$", "", text[: m.start()], flags=re.I)
    return (head + " " + text[m.end() :]).strip()


_FINDINGS_RE = re.compile(r"\bfindings\s+of\s+(?:the\s+)?" + _VENUE_RE.pattern, re.I)


def extract_venue(text: str) -> tuple[str | None, str]:
    m = _FINDINGS_RE.search(text)
    if m:  # "Findings of EMNLP" is a venue of its own, not EMNLP
        return "Findings of " + _VENUE_CANON.get(m.group(1).lower(), m.group(1)), _cut_prep(text, m)
    m = _VENUE_RE.search(text)
    if m:
        return _VENUE_CANON.get(m.group(1).lower(), m.group(1)), _cut_prep(text, m)
    m = re.search(
        r"\b(?:at|in|published (?:at|in)|appeared (?:at|in))\s+(?:the\s+)?([A-Z][A-Z0-9]{1,9})(?![\w-])", text
    )
    # an unknown acronym is a venue only in a question about papers ("researchers at UCLA" is an org), and a field's
    # acronym is none ("attention mechanisms in NLP")
    field = m is not None and m.group(1).lower().rstrip("s") in FIELD_ACRONYMS
    if m and m.group(1) not in KNOWN_ORGS and not field and _PAPERS.search(text):
        return m.group(1), text[: m.start()] + " " + text[m.end() :]
    m = _VENUE_PHRASE.search(text)
    if m:
        return m.group(1), _cut_prep(text, m)
    return None, text


def _cut_prep(text: str, m: re.Match) -> str:
    head = re.sub(r"\b(?:at|in|published (?:at|in)|appeared (?:at|in)|the)\s*$", "", text[: m.start()], flags=re.I)
    tail = re.sub(r"^\s*(?:conference|proceedings|会议|上|期刊)", "", text[m.end() :])
    head = re.sub(r"在\s*$", "", head)
    return (head + " " + tail).strip()


def extract_org(text: str) -> tuple[str | None, str]:
    for rx in (_ZH_ORG, _ORG_PHRASE, _KNOWN_ORG_RE):
        m = rx.search(text)
        if m:
            org = m.group(1).strip(" ,.'’")
            org = re.sub(
                r"^(?:(?:The|At|From|In|Of|Describe|Tell|Show|List|Find|Give|What|Who|Which|About|Profile|"
                r"Overview|Information|Info)\s+)+",
                "",
                org,
            )
            org = re.sub(r"^(?:请问|请|介绍一下|介绍|关于|来自|在|谁是|有哪些|哪些)+", "", org)
            if org:
                return org, _cut_prep(text, m)
    return None, text


# The cue words are matched case-insensitively ((?i:...)); the name itself must be capitalised.
_NAME_PATTERNS_EN = [
    rf"(?i:papers?|publications?|articles?|works?|research)\s+"
    rf"(?i:written\s+|authored\s+|published\s+)?(?i:by)\s+(?P<n>{EN_NAME})",
    rf"(?i:written|authored|published|co-?authored)\s+(?i:by)\s+(?P<n>{EN_NAME})",
    rf"(?P<n>{EN_NAME})['’]s?\s",
    rf"(?i:co-?authors?|collaborators?|co-?workers?|topics?|interests?|areas?|profile|h-?index|affiliation|"
    rf"(?:most|highest|top)[- ]cited (?:paper|work|publication|article)s?|papers?|publications?|information|info)"
    rf"\s+(?i:of|by|from|about|on)\s+(?P<n>{EN_NAME})",
    rf"(?i:does|did|has|have|is|was)\s+(?P<n>{EN_NAME})"
    rf"\s+(?i:work|collaborate|publish|write|research|study|focus|co-?author|written|published|been)",
    # "What did Chris Manning and Dan Klein write together?": the first; the second is the co-author
    rf"(?i:does|did|have|do)\s+(?P<n>{EN_NAME})\s+(?i:and|&)\s+{EN_NAME}"
    rf"\s+(?i:work|collaborate|publish|write|co-?author|written|published)",
    rf"(?i:who is|who's|tell me about|about|describe|is)\s+(?P<n>{EN_NAME})",
    rf"(?i:who)\s+(?P<n>{EN_NAME})\s+(?i:is|was)\b",  # "tell me who Jane Doe is"
    # "what Jane Doe published", "Jane Doe's" without the s, "Jane Doe ICLR 2017 publications", "Jane Doe: ..."
    rf"(?P<n>{EN_NAME})\s+(?:has\s+|have\s+|had\s+)?(?:published|publish|wrote|written|authored|works|worked|"
    rf"researches|researched|studies|studied|collaborates|collaborated|co-?authored)\b",
    rf"(?P<n>{EN_NAME})\s+(?:papers?|publications?|articles?)\b",
    rf"^(?P<n>{EN_NAME})\s*[:,–—-]\s",
    rf"(?P<n>{EN_NAME})\s+(?i:h-?index|profile|affiliation|homepage|biography|bio)\b",
    rf"(?i:with|by)\s+(?P<n>{EN_NAME})",  # last: in "X wrote with Y", X is the subject
    # a name in Chinese script inside an English question ("papers by 山田太郎 at ACL")
    rf"(?i:papers?|publications?|articles?|works?|written|authored|published|by|of|with)\s+(?i:by\s+)?(?P<n>{ZH_NAME})",
]
# Capitalised research words: "Knowledge Graph papers" names a topic, not a person.
_TOPIC_WORDS = frozenset(
    [
        "learning",
        "neural",
        "graph",
        "graphs",
        "knowledge",
        "language",
        "languages",
        "machine",
        "deep",
        "network",
        "networks",
        "vision",
        "translation",
        "model",
        "models",
        "question",
        "questions",
        "answering",
        "reinforcement",
        "data",
        "parsing",
        "semantic",
        "semantics",
        "generation",
        "retrieval",
        "recognition",
        "detection",
        "segmentation",
        "speech",
        "text",
        "image",
        "images",
        "video",
        "robot",
        "robotics",
        "optimization",
        "bayesian",
        "statistical",
        "natural",
        "processing",
        "computer",
        "information",
        "attention",
        "transformer",
        "transformers",
        "embedding",
        "embeddings",
        "dialogue",
        "summarization",
        "classification",
        "clustering",
        "inference",
        "causal",
        "adversarial",
        "generative",
        "federated",
    ]
)
_NAME_PATTERNS_ZH = [
    rf"(?P<n>{LATIN_NAME})\s*(?:的|在|于|是谁|和谁|与谁|跟谁|发表|有哪些)",
    rf"(?P<n>{ZH_NAME}?)(?:在|于).{{0,30}}(?:发表|的论文)",
    rf"(?P<n>{ZH_NAME}?)的(?:论文|文章|研究|合作者|合作|引用|被引|研究方向|研究兴趣|研究领域|代表作|简介|h指数)",
    rf"(?P<n>{ZH_NAME}?)(?:是谁|发表|和谁|与谁|跟谁)",
    rf"(?:谁是|介绍一下|介绍)(?P<n>{ZH_NAME})",
    rf"(?:谁是|介绍一下|介绍)\s*(?P<n>{LATIN_NAME})",
    # a Latin name run straight into Chinese text ("Hermann Ney引用最多的论文")
    rf"(?P<n>{LATIN_NAME})\s*(?=[\u4e00-\u9fff])",
]
# Characters that end up in a CJK "name" only when the pattern grabbed a verb or particle instead.
_ZH_NOT_NAME = set("发表论文研究上在的于和与跟是有哪些什么谁最被引用")
_NOT_NAMES = re.compile(
    r"^(?:What|Who|Which|Where|When|How|Tell|Show|List|Find|Give|Papers?|The|This|That|Researchers?|Please|"
    r"Does|Did|Is|Are|Most|Top|Any|All|Some)\b"
)
# Lower-case words that are never a person ("papers by the team at ..."), unlike _NOT_NAMES, which are the
# capitalised question words a name pattern can grab at the start of a sentence.
_NOT_A_NAME = frozenset(
    "the a an this that these those them they he she it people researchers someone anyone others other authors "
    "team group lab labs company companies google microsoft university students experts you we i".split()
)
_ZH_STOP = (
    "合作",
    "一下",
    "哪些",
    "什么",
    "关于",
    "哪个",
    "谁的",
    "这个",
    "那个",
    "一些",
    "所有",
    "最近",
    "请问",
    "有哪",
    "列出",
    "查找",
)


def extract_person(text: str) -> str | None:
    for pat in _NAME_PATTERNS_ZH:
        for m in re.finditer(pat, text):
            name = m.group("n").strip()
            if re.fullmatch(r"[\x00-\x7f]+", name):
                # in Chinese text a Latin name is delimited by the Chinese around it: one word is enough
                name = _trim_name(name, min_words=1) or ""
            elif set(name) & _ZH_NOT_NAME or any(s in name for s in _ZH_STOP) or _ZH_ORG.fullmatch(name):
                continue
            if len(name) >= 2:
                return name
    for pat in _NAME_PATTERNS_EN:
        for m in re.finditer(pat, text):
            raw = m.group("n")
            if re.fullmatch(ZH_NAME, raw):  # one "word" of Chinese script: a name if it is not a verb or an org
                name = raw if len(raw) >= 2 and not set(raw) & _ZH_NOT_NAME and not _ZH_ORG.fullmatch(raw) else None
            else:
                name = _trim_name(raw)
            if name:
                return name
    for pat in _SURNAME_PATTERNS:
        found = re.search(pat, text)
        if found and (name := _trim_name(found.group("n"), min_words=1)):
            return name
    return None


# What may follow a person's name: a place or period ("... at ACL", "... since 2015"); after the author of
# "papers by X" also a co-author or a topic ("... with Y", "... about parsing", "... using attention").
_AFTER_A_NAME = "on|at|in|since|before|after|between|during"
_AFTER_AN_AUTHOR = f"{_AFTER_A_NAME}|from|with|using|about"


def _name_ends(words: str) -> str:
    return rf"(?=\s*$|\s*[?.!,]|\s+(?i:{words})\b)"


# A surname alone is a person only where the verb leaves no doubt: "What did Mikolov publish in 2013?",
# "papers by Manning", "Hinton's papers" (a capitalised word alone is otherwise a topic or a system)
_SURNAME_PATTERNS = [
    rf"(?i:did|does|has|have)\s+(?P<n>{_NAME_WORD})\s+(?i:publish|write|author|co-?author|written|published)\b",
    rf"(?i:papers?|publications?|articles?)\s+(?i:written\s+|(?:co-?)?authored\s+)?(?i:by)\s+(?P<n>{_NAME_WORD})"
    + _name_ends(_AFTER_AN_AUTHOR + "|and|&"),  # "papers by Manning and Klein": two surnames
    rf"(?<![{_NAME_CHARS}])(?P<n>{_NAME_WORD})['’]s\s+(?i:papers?|publications?|articles?|work)\b",
]


def extract_coauthor(text: str, person: str) -> str | None:
    """The second person of "papers by X with/and Y" / "X和Y合作的论文"."""
    p = re.escape(person)
    for pat in (
        rf"{p}['’]?s?\s+(?i:and|with|&)\s+(?P<n>{EN_NAME})",
        rf"(?P<n>{EN_NAME})\s+(?i:and|&)\s+{p}",
        rf"{p}.{{0,80}}?(?i:together with|jointly with|with|and)\s+(?P<n>{EN_NAME})",
        rf"(?i:with|and)\s+(?P<n>{EN_NAME}).{{0,80}}?{p}",
        # "papers by Manning and Klein": a surname after a surname
        rf"(?i:by)\s+{p}\s+(?i:and|&)\s+(?P<n>{_NAME_WORD})" + _name_ends(_AFTER_AN_AUTHOR),
        rf"{p}\s*(?:和|与|跟)\s*(?P<n>(?<![{_NAME_CHARS}]){_NAME_WORD}(?:\s+{_NAME_WORD}){{0,3}}|{ZH_NAME}?)(?:合作|共同|一起|的)",
    ):
        m = re.search(pat, text)
        if m:
            name = m.group("n").strip()
            one_word = " " not in name and " " not in person  # a surname with a surname
            name = name if re.search(r"[\u4e00-\u9fff]", name) else _trim_name(name, min_words=1 if one_word else 2)
            if name and name != person and not (set(name) & _ZH_NOT_NAME):
                return name
    return None


def _trim_name(name: str, min_words: int = 2) -> str | None:
    words = name.split()
    # "Jian Pei At" cannot happen (at is lower case) but "Tell Me" can; drop question words at the front
    while words and _NOT_NAMES.match(words[0]):
        words.pop(0)
    while words and words[-1] in KNOWN_VENUES:
        words.pop()
    name = " ".join(words).strip(" ,.?!'’")
    if len(words) < min_words or _VENUE_RE.fullmatch(name) or _KNOWN_ORG_RE.fullmatch(name):
        return None
    if re.search(_ORG_WORDS, name) or any(w.lower() in _TOPIC_WORDS for w in words):
        return None
    return name


_TOPIC_RE = [
    re.compile(
        r"\b(?:working|work|works|worked|research(?:ing)?|focus(?:ing)?|specializ(?:ing|e)|publish(?:ing)?)"
        r"\s+(?:on|in|about)\s+(?P<t>.+)",
        re.I,
    ),
    re.compile(r"\b(?:on|about|regarding|related to|in the (?:area|field) of|concerning)\s+(?P<t>.+)", re.I),
    # "what conferences should I target for dialogue?", "where should I submit my paper on parsing?"
    re.compile(
        r"\b(?:target|submit|send)\s+(?:(?:a|my|our)\s+paper\s+|it\s+|work\s+)?(?:for|on|about|in)\s+(?P<t>.+)", re.I
    ),
    # "who are the top researchers in parsing?", "the most cited author in machine translation"
    re.compile(r"\b(?:researchers?|authors?|scientists?|experts?|people|names)\s+in\s+(?P<t>.+)", re.I),
    # "top venues for NLP", "the best conferences for dialogue research", "leading labs in parsing"
    re.compile(
        r"\b(?:venues?|conferences?|journals?|institutions?|universities|organi[sz]ations?|labs?)\s+(?:for|in)\s+(?P<t>.+)",
        re.I,
    ),
    re.compile(
        r"\b(?:study|studies|studied|studying|investigat(?:e|es|ed|ing)|explor(?:e|es|ed|ing)|researching|doing|"
        r"specializing in|interested in)\s+(?P<t>.+)",
        re.I,
    ),
    re.compile(r"(?:研究|从事|做|关于)(?P<t>[^，。？?！!的]{2,30}?)(?:研究|方向|领域|的|$)"),
    re.compile(r"的(?P<t>[^，。？?！!的]{2,30}?)(?:研究者|研究人员|学者|专家|科学家)"),
]
_TOPIC_END = re.compile(
    r"(?<!\s)\s+(?:at|by|from|in|published|since|before|after|between|during|who|that|which|with)\b|[?？.。!！,，]",
    re.I,
)


def extract_topic(text: str) -> str | None:
    for rx in _TOPIC_RE:
        m = rx.search(text)
        if not m:
            continue
        topic = _TOPIC_END.split(m.group("t"), maxsplit=1)[0].strip(" \"'“”‘’")
        topic = re.sub(r"^(?:the topic of|the|topics? of)\s+", "", topic, flags=re.I).strip()
        if topic and not re.fullmatch(r"(?:what|which|it|them|this|that|[^\w]*)", topic, re.I):
            return topic
    return None


# "papers by X with neural networks" / "... using attention": the method as the topic, in lower case, since a
# capitalised word after "with" is a co-author.
_WITH_TOPIC = re.compile(r"\b(?:with|using|that use|which use)\s+(?P<t>[a-z][\w\- ]+)")


def _topic_after_with(text: str) -> str | None:
    m = _WITH_TOPIC.search(text)
    if m is None:
        return None
    topic = _TOPIC_END.split(m.group("t"), maxsplit=1)[0].strip()
    return topic if topic and topic.split()[0] not in _NOT_A_NAME else None


_LEADING_REQUEST = re.compile(
    r"^(?:please\s+)?(?:list|show(?:\s+me)?|find|give\s+me|get|search(?:\s+for)?|i\s+want|i'd\s+like(?:\s+to\s+see)?|"
    r"what\s+are(?:\s+the)?|what(?:'s|\s+is|\s+was)(?:\s+the)?|which(?:\s+are|\s+is)?)\s+(?:the\s+|some\s+|all\s+)?",
    re.I,
)


def _topic_before_papers(text: str) -> str | None:
    """The topic in "question answering papers from ACL 2010" (words in front of "papers")."""
    m = re.match(
        r"^\s*(?P<t>[^\W\d_][\w\s'-]{1,60}?)\s+(?:papers?|publications?|articles?|work)\b",
        _LEADING_REQUEST.sub("", text.strip()),
        re.I,
    )
    if not m:
        return None
    topic = _MOST_CITED.sub(" ", m.group("t")).strip()  # "most cited papers at ACL 2010": a ranking, not a topic
    topic = re.sub(r"^(?:how many|the number of|number of|count of)\b\s*", "", topic, flags=re.I).strip()
    topic = re.sub(r"^(?:only|just)\b\s*(?:the\s+)?", "", topic, flags=re.I).strip()  # "only papers from ACL"
    if not topic or re.fullmatch(r"(?:the|all|any|some|recent|new|good|best|top|only|just|\w{1,2})", topic, re.I):
        return None  # "how many papers were published at NAACL 2012?": a count, not a topic
    return topic


# "Who wrote X?", "the authors of X": a question about one paper's authors. Not "who wrote papers on X" (the
# topic's researchers) nor "who wrote with X" (co-authors).
_WHO_WROTE = re.compile(
    r"^(?:who\s+(?:wrote|authored|is\s+behind|(?:are|were)\s+the\s+authors\s+of|(?:is|was)\s+the\s+author\s+of|"
    r"(?:first\s+)?(?:invented|proposed|introduced|created|developed|came\s+up\s+with|made))|"
    r"(?:(?:list|show(?:\s+me)?|give\s+me|what\s+are|which\s+are|name)\s+)?(?:the\s+)?(?:authors?|writers?)\s+of)"
    r"\s+(?P<p>.+?)[\s?.!]*$",
    re.I,
)
_ITS_AUTHORS = re.compile(
    r"^(?:(?:and\s+)?(?:who\s+(?:are|were|is|was)|(?:list|show(?:\s+me)?|give\s+me|what\s+are|name)))?\s*"
    r"(?:its|the)\s+(?:authors?|writers?)\W*$",
    re.I,
)
_NOT_ONE_PAPER = re.compile(
    r"^(?:papers?|work|works|articles?|publications?|about|on|with|most|the\s+most|many|several|some|any|all)\b", re.I
)


# "where was BERT published?", "when did the GloVe paper come out?": the paper's record (venue, year, authors)
_WHERE_PUBLISHED = re.compile(
    r"^(?:where|when|in which (?:venue|conference|journal|year)|at which (?:venue|conference))\s+"
    r"(?:was|did)\s+(?P<p>.+?)\s+(?:published|appear|presented|come out)[\s?.!]*$",
    re.I,
)


# "what else did the authors of GloVe write?", "other papers by the authors of BLEU", "more from the same authors as
# the Penn Treebank paper": the other work of a paper's authors
_THEIR_OTHER_WORK = re.compile(
    r"^\W*(?:(?:what|which)(?: other| else)?(?: papers?| work)?(?: else)? (?:did|have|has|do) the (?:same )?authors? "
    r"(?:of|behind) (?P<p>.+?) (?:also )?(?:write|written|publish|published|do|done|work on|worked on)"
    r"|(?:(?:show me |list |find )?(?:the )?(?:(?:other|more) )?(?:papers|work|publications) (?:by|from|of) "
    r"(?:the )?(?:same )?authors? (?:of|behind|as) (?P<p2>.+?)))\W*$",
    re.IGNORECASE,
)


def extract_paper_ref(text: str) -> str | None:
    """The paper in "who wrote <paper>?" / "authors of <paper>" / "where was <paper> published?", without the
    word "paper" around it."""
    if _ITS_AUTHORS.match(text.strip()):
        return "it"  # "who are its authors?": the paper being talked about, which the caller knows
    m = _WHO_WROTE.match(text.strip()) or _WHERE_PUBLISHED.match(text.strip())
    if m is None or _NOT_ONE_PAPER.match(m.group("p")):
        return None
    ref = re.sub(r"\s+(?:paper|article|publication)$", "", m.group("p").strip(), flags=re.I)
    return ref or None


# People typed in lower case where only a person can stand ("papers by manning", "what did chris manning and
# dan klein write together?"): the names are capitalised and the question read again.
_LOWER_WORD = rf"(?!(?:{_AFTER_AN_AUTHOR}|and|or|for|of)\b)[a-z][a-z'\-]+"
_LOWER_NAMES = rf"{_LOWER_WORD}(?:\s+{_LOWER_WORD}){{0,2}}(?:\s+and\s+{_LOWER_WORD}(?:\s+{_LOWER_WORD}){{0,2}})?"


_LOWER_PERSON = (
    re.compile(rf"\b(?:papers?|work|works|articles?|publications?)\s+(?:written\s+|authored\s+)?by\s+(?P<n>{_LOWER_NAMES})"
               + _name_ends(_AFTER_AN_AUTHOR)),
    re.compile(rf"\bwhat\s+(?:did|has|have|does|do)\s+(?P<n>{_LOWER_NAMES})\s+"
               r"(?:publish|published|write|written|work(?:ed)?\s+on|co-?author)"),
)  # fmt: skip


_LOWER_COAUTHOR = re.compile(rf"\b(?:with|and)\s+(?P<n>{_LOWER_NAMES})" + _name_ends(_AFTER_A_NAME))


def _capitalised_people(text: str) -> list[str]:
    """``text`` with a person typed in lower case capitalised: first with a co-author after "with" capitalised
    too, then without (the words after "with" may be a topic: "papers by manning with neural networks");
    empty when it names nobody that way."""

    def capitalise(text: str, m: re.Match) -> str | None:
        names = m.group("n")
        if set(names.split()) & _NOT_A_NAME:
            return None
        fixed = " ".join(w if w == "and" else w[:1].upper() + w[1:] for w in names.split())
        return text[: m.start("n")] + fixed + text[m.end("n") :]

    for rx in _LOWER_PERSON:
        if (m := rx.search(text)) is not None and (fixed := capitalise(text, m)) is not None:
            other = _LOWER_COAUTHOR.search(fixed)
            both = capitalise(fixed, other) if other is not None else None
            return [both, fixed] if both else [fixed]
    return []


def parse(text: str) -> KGQuery | None:
    """The entity question in ``text``, or None when it is not recognisably one."""
    text = " ".join((text or "").split())
    if not text or not re.search(r"[^\W\d_]", text):
        return None
    if (m := _THEIR_OTHER_WORK.match(text)) is not None:
        ref = re.sub(r"\s+(?:paper|article|publication)$", "", (m.group("p") or m.group("p2")).strip(), flags=re.I)
        return KGQuery(shape="paper_authors_papers", paper=ref)
    if (paper := extract_paper_ref(text)) is not None:
        return KGQuery(shape="paper_authors", paper=paper)
    query = _parse(text)
    if query is None or query.person is None:
        readings = [q for q in map(_parse, _capitalised_people(text)) if q is not None and q.person]
        # the co-author reading only when it found a second person; otherwise the words after "with" are a topic
        if readings:
            return next((q for q in readings if q.coauthor), readings[-1])
    return query


def _parse(text: str) -> KGQuery | None:
    year_min, year_max, rest = extract_years(text)
    no_years = rest
    venue, rest = extract_venue(rest)
    org, rest_no_org = extract_org(rest)
    person = extract_person(rest_no_org if org else rest)
    if person is None and venue:
        # cutting the venue can take the verb with it ("what X published in COLT")
        person = extract_person(no_years)
    if person is None and re.search(r"[\u4e00-\u9fff]", text):
        person = extract_person(text)
    if person and org and person in org:
        person = None
    topic = extract_topic(rest_no_org)
    if topic is None and person is None:
        topic = _topic_before_papers(rest_no_org)
    if topic is None and person is not None:
        topic = _topic_after_with(rest_no_org)
    if topic and person and (person.lower() in topic.lower() or topic.lower() in person.lower()):
        topic = None  # "information about Mark Johnson": the person, not a topic
    if topic and venue and topic.strip().lower() == venue.lower():
        topic = None
    slots = dict(person=person, org=org, venue=venue, topic=topic, year_min=year_min, year_max=year_max)

    if person:
        slots["coauthor"] = extract_coauthor(no_years, person)
        if slots["coauthor"] and not _MOST_CITED.search(text):
            return KGQuery(shape="author_papers", **slots)  # joint papers, even when phrased with "worked with"
        if _PROFILE_ASKED.search(text) and not _MOST_CITED.search(text):
            shape = "author_profile"
        elif _MOST_CITED.search(text):
            shape = "most_cited"
        elif _COAUTHOR.search(text):
            shape = "coauthors"
        elif _TOPICS.search(text) and not (venue or year_min or year_max):
            shape = "author_topics"
            slots["topic"] = None
        elif _PAPERS.search(text) or venue or year_min or year_max or topic:
            shape = "author_papers"
        else:
            shape = "author_profile"
        if shape != "author_papers":
            slots["topic"] = None if shape != "most_cited" else slots["topic"]
        return KGQuery(shape=shape, **slots)
    if org and _PEOPLE.search(text):
        return KGQuery(shape="org_researchers", **slots)
    if org and topic and not venue and _PAPERS.search(text) and not _PROFILE.search(text):
        return KGQuery(shape="org_papers", **slots)  # "what did Stanford publish on parsing?"
    if topic and not org and not venue and _VENUES_ASKED.search(text):
        return KGQuery(shape="topic_venues", **slots)
    if topic and not org and not venue and _ORGS_ASKED.search(text):
        return KGQuery(shape="topic_orgs", **slots)
    if topic and not org and not venue and _PEOPLE.search(text) and not _PAPERS.search(text):
        return KGQuery(shape="topic_researchers", **slots)
    if org and _PROFILE.search(text):
        return KGQuery(shape="org_profile", **slots)
    if venue and not person and _VENUE_AUTHORS.search(text):
        return KGQuery(shape="venue_profile", **{**slots, "topic": None})  # "the most prolific authors at COLT"
    if venue and not person and _TOPICS.search(text) and not _PAPERS.search(text):
        return KGQuery(shape="venue_profile", **slots)  # "what are the main topics at COLING?"
    if venue and (year_min or year_max or _PAPERS.search(text)):
        if _PAPER_SEARCH.search(_MOST_CITED.sub(" ", text)):
            return None  # "papers citing BLEU at ACL 2010" is a paper search with a venue filter
        return KGQuery(shape="most_cited" if _MOST_CITED.search(text) else "venue_papers", **slots)
    if venue and _PROFILE.search(text):
        return KGQuery(shape="venue_profile", **slots)
    return None


# "who are the most prolific authors at COLT?", "who publishes most at ACL?": a venue's frequent authors
_VENUE_AUTHORS = re.compile(
    r"\b(?:prolific|top|leading|main|key|most (?:active|frequent|published|productive)|frequent)\s"
    r"(?:authors?|researchers?|people|contributors?|scientists?)\b|\bwho (?:publishes|published|writes|has published)"
    r"(?: the)? most\b",
    re.I,
)


def _names_a_paper_with_direction(text: str) -> bool:
    parsed = parse_request(text)
    return parsed.anchor_kind not in ("topic", "current", "none") and parsed.intent.direction is not None


def classify(text: str) -> Kind:
    """ "entity" for questions about people / venues / institutions, "papers" for paper searches,
    "unsure" when the text gives no cue either way (the chat then asks)."""
    text = " ".join((text or "").split())
    if not text or not re.search(r"[^\W\d_]", text):
        return "unsure"
    # A named paper (quoted title or id) plus a search direction is a paper search, whatever else it says
    # ("Who has built on "X"?" asks for papers, not people).
    if _names_a_paper_with_direction(text):
        return "papers"
    # "most cited" is an entity cue, not a citation search
    if _PAPER_SEARCH.search(_MOST_CITED.sub(" ", text)) and not re.search(r"\bpapers?\s+by\b|的论文", text, re.I):
        return "papers"
    if parse(text) is not None:
        return "entity"
    if _TOPIC_SEARCH.search(text):
        return "papers"
    # A bare name ("Jian Pei") or a lone acronym could be a person, a venue or a topic: ask.
    if re.fullmatch(EN_NAME, text.strip(" ?!.")) or re.fullmatch(ZH_NAME, text.strip(" ?!.？")):
        return "unsure"
    if _VENUE_RE.fullmatch(text.strip(" ?!.")) or _KNOWN_ORG_RE.fullmatch(text.strip(" ?!.")):
        return "unsure"
    if _PEOPLE.search(text) and re.search(r"\b(?:who|which)\b|哪些|谁", text, re.I):
        return "entity"
    # A few words with lower-case content: a topic to search papers for.
    if len(re.findall(r"[^\W\d_]{3,}", text)) >= 2:
        return "papers"
    return "unsure"
