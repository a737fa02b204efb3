"""Every finding of the adversarial review (issue 11), replayed: each hostile input is rebuilt from the
review's description, and each test asserts the bound that now holds or the clear error that is given.

1 one visitor froze everyone (huge recipes, quadratic drawing and filter)  -> limits, linear algorithms
2 quadratic regexes on chat text                                            -> linear patterns, cut paste
3 errors echoed the whole rejected value                                    -> a short prefix
4 CSV rows split by "\\r", a formula after a line break                     -> breaks collapsed first
5 cache write access was code execution; Docker root, shared volume, open   -> data-only caches, 0700, login
6 damage to the store after opening was never repaired                      -> checks at open and query time
7 the low findings (recipe parsing, markdown names, NaN, versions, "none")  -> each refused or fixed

The isolation between two live visitors is ``test_isolation.py``; the fuzzing of recipes ``test_recipe_fuzz.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import math
import os
import pickle
import re
import shutil
import signal
import sqlite3
import stat
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cache import Cache
from pilot import export, limits
from pilot.limits import MAX_MESSAGE_CHARS
from pilot.models import Author, Evidence, Paper, RankedPaper
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from pilot.sources.base import SourceUnavailable
from pilot.ui.controller import Controller
from tests.abuse_inputs import as_bytes, chain, filter_recipe, recipe, terms, union_of_searches
from tests.serving import free_port
from workflows import draw
from workflows.model import Workflow
from workflows.validate import TOO_BIG, WorkflowError, check, param_problems, validate

BLEU_TITLE = "Bleu: A Method For Automatic Evaluation Of Machine Translation"


class TookTooLong(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (instead of hanging for minutes) when the block runs longer than ``seconds``. Python's regex
    engine and pure-Python loops both check for signals, so the alarm interrupts them."""

    def alarm(*_):
        raise TookTooLong(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def runtime(local_source, tmp_path_factory) -> Runtime:
    return Runtime.for_source(local_source, Settings(cache_dir=tmp_path_factory.mktemp("cache"), max_turns=0))


def problems_of(data: dict) -> list:
    return check(Workflow.model_validate(data))


# --- 1. one visitor froze everyone --------------------------------------------------------------------


@pytest.mark.parametrize(
    "what, data",
    [
        ("20,000 venues in a filter", filter_recipe(venues=[f"Venue {i}" for i in range(20_000)])),
        ("20,000 include_terms", filter_recipe(include_terms=terms(20_000))),
        ("6,000 nodes", chain(6_000)),
        ("5,000 searches into one union", union_of_searches(5_000)),
    ],
)
def test_an_oversized_recipe_is_refused_at_once_with_the_limit_named(what, data):
    blob = as_bytes(data)
    started = time.perf_counter()
    with deadline(10), pytest.raises(export.RecipeError) as err:
        export.load_recipe(blob)
    seconds = time.perf_counter() - started
    message = str(err.value)
    assert "at most" in message and len(message) < 600, message
    assert seconds < 5, f"{what}: refusing took {seconds:.1f} s"  # the review measured 31-117 s of work
    # the same workflow reaching the session by another way (an API call, an LLM draft) is refused too
    problems = problems_of(data)
    assert problems and all(p.kind == TOO_BIG for p in problems)


async def test_a_session_refuses_an_oversized_workflow_and_keeps_working(runtime):
    s = Session(runtime)
    reply = await s.load_workflow(chain(6_000))
    assert reply.error and "at most 100" in reply.error and len(reply.error) < 600
    assert s.workflow is None  # nothing half-loaded
    ok = await s.load_workflow(filter_recipe(year_min=2000))
    assert ok.error is None and ok.results


def test_the_dag_layout_is_linear():
    """The SVG layout was quadratic (a 6,000-node recipe cost 43-57 s per click). A drawing is only made
    of workflows within the limits now, but the layout itself must scale with what it draws (nodes, edges,
    and the slots long edges pass through): 4x of each, about 4x the time, not 16x."""
    small, big = Workflow.model_validate(chain(1_500)), Workflow.model_validate(chain(6_000))
    # long edges too: the first ten nodes also feed the last one (they pass through every column)
    for wf in (small, big):
        last = wf.nodes[-1].id
        wf.edges += [wf.edges[0].model_copy(update={"source": n.id, "target": last}) for n in wf.nodes[:10]]
    with deadline(60):
        t_small = _best_of(lambda: draw.layout(small))
        t_big = _best_of(lambda: draw.layout(big))
    assert t_big < 10 * t_small + 0.5, f"layout: {t_small:.3f} s for 1,500 nodes, {t_big:.3f} s for 6,000"


def _best_of(fn, reps: int = 3) -> float:
    best = math.inf
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


async def test_the_filter_tokenises_each_term_once_not_once_per_paper(ctx, local_source, monkeypatch):
    """papers x terms re-tokenising made 20,000 include_terms cost 117 s; each term is read once now."""
    from tests.ops_helpers import as_ranked, run_op
    from workflows.ops import filtering

    papers = as_ranked([h.paper for h in await local_source.search_papers("parsing", limit=200)])
    calls = {"n": 0}
    real = filtering.tokens

    def counting(text, keep_stop=False):
        calls["n"] += 1
        return real(text, keep_stop)

    monkeypatch.setattr(filtering, "tokens", counting)
    n_terms = limits.MAX_LIST_ITEMS
    kept = await run_op(ctx, "filter", {"include_terms": terms(n_terms - 1) + ["parsing"]}, **{"in": papers})
    assert kept and all("pars" in r.paper.text.lower() for r in kept)
    assert calls["n"] <= len(papers) + n_terms  # was len(papers) * n_terms (100,000 here)


# --- 2. quadratic regexes on chat text ---------------------------------------------------------------


def test_the_organisation_and_name_readers_are_linear_on_a_long_paste():
    """The old organisation pattern took 1.7 s on 12.5k characters and 21 s on 50k; the reader's spans (names,
    organisations, Chinese organisation names) must stay linear on the worst case: capitalised words with no
    organisation word, and Chinese characters with no organisation ending."""
    from pilot.reading.lexicon import lexicon
    from pilot.reading.model import State
    from pilot.reading.spans import extract

    latin = "Aaa Bbb Ccc " * (20_000 // 12)
    chinese = "研究知识图谱的学者" * (20_000 // 9)
    with deadline(20):
        started = time.perf_counter()
        extract(latin, State())
        zh_org = lexicon().zh_org
        assert zh_org is not None
        zh_org.findall(chinese * 10)
        seconds = time.perf_counter() - started
    assert seconds < 5.0, f"{seconds:.1f} s on 20 KB of names and 200 KB of Chinese"


# What researchers type (searches, answers, feedback, entity questions in English and Chinese): every
# pattern the session applies to it is recorded while these turns run, then replayed on hostile text.
CONVERSATION = [
    f'Show me work that came after "{BLEU_TITLE}" and used its ideas.',
    "only after 2008, at ACL or EMNLP, not surveys",
    "more like 2 and 3, fewer like 1; exclude neural",
    "papers similar to BLEU from Carnegie Mellon University",
    "Which papers did Kishore Papineni publish at ACL with Salim Roukos?",
    "What does Mitchell Marcus work on?",
    "who are the researchers at the University of Pennsylvania working on treebanks?",
    "清华大学的研究人员发表了哪些论文？",
    "Ada Lovelace在NeurIPS上发表的论文",
    "surveys covering statistical parsing before 2005",
    "what does the Penn Treebank paper cite?",
    "benchmarks used by doi:10.3115/1073083.1073135",
]
HOSTILE_N = 20_000


def _literal_runs(pattern: str) -> list[str]:
    """The literal words a pattern looks for ("University", "what does "): repeated, they are the input
    that makes a backtracking pattern retry at every occurrence."""
    runs = re.findall(r"[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff' ]{1,30}", re.sub(r"\\.|\[[^\]]*\]", "|", pattern))
    return sorted(set(runs), key=lambda r: (-len(r), r))[:10]


def _hostile(pattern: str) -> list[str]:
    atoms = ["a", "A", "Aa ", "Aa", "A.", "Aa-", "A-", "1", " ", ".", "'", "Aa, ", "ab cd ", "的", "Aa de ", "A_"]
    for lit in _literal_runs(pattern):
        atoms += [lit, lit + " ", "Aa " + lit + " ", lit.title() + " "]
    return [(a * (HOSTILE_N // len(a) + 1))[:HOSTILE_N] + suffix for a in atoms for suffix in ("", "!")]


@pytest.fixture(scope="module")
def user_text_patterns(runtime):
    """Every regex the session applies while reading a conversation (module-level ones and those compiled
    on the fly from the user's words)."""
    import importlib
    from unittest import mock

    seen: dict[tuple[str, int], re.Pattern] = {}
    real = re._compile

    def spy(pattern, flags):
        compiled = real(pattern, flags)
        # pilot's own patterns only (libraries that load a model or read a config compile theirs too)
        caller = sys._getframe(2).f_globals.get("__name__", "")
        if isinstance(compiled.pattern, str) and caller.split(".")[0] in ("pilot", "workflows", "clarifier"):
            seen.setdefault((compiled.pattern, compiled.flags), compiled)
        return compiled

    async def talk():
        for text in CONVERSATION:
            s = Session(runtime)
            await s.user_says(text)
            if s.question is not None:
                await s.user_says(s.question.options[0].label)
            await s.search_now() if s.anchor is not None else None
            await s.user_says("only after 2010 and not about speech; more like 1")

    with mock.patch.object(re, "_compile", spy):
        asyncio.run(talk())
    for name in (
        "pilot.intent",
        "pilot.message",
        "pilot.reading.reader",
        "pilot.reading.spans",
        "pilot.kg.classify",
        "workflows.refine",
        "clarifier.policy",
        "pilot.session",
    ):
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, re.Pattern):
                seen.setdefault((value.pattern, value.flags), value)
    return list(seen.values())


def test_every_regex_applied_to_user_text_runs_in_linear_time(user_text_patterns):
    """Each pattern scans 20,000 characters of hostile text (runs of its own words, of capitalised words,
    of one long word) within a bound a quadratic pattern misses by orders of magnitude; a pattern that is
    merely slow is checked again on 5x the text, where quadratic work would take 25x the time."""
    assert len(user_text_patterns) > 10  # the recording saw the reader's tokens, ids, time grammar and spans
    slow = []
    for pattern in user_text_patterns:
        for text in _hostile(pattern.pattern):
            try:
                with deadline(2.0):
                    started = time.perf_counter()
                    pattern.findall(text)
                    seconds = time.perf_counter() - started
                if seconds > 0.05:  # linear patterns take a few ms here; look closer at 5x the text
                    with deadline(4.0):
                        pattern.findall(text * 5)
            except TookTooLong:
                slow.append(f"{pattern.pattern[:100]!r} on {text[:12]!r}…")
                break
    assert not slow, "super-linear patterns:\n" + "\n".join(slow)


async def test_a_50kb_message_is_cut_with_a_note_not_refused(runtime):
    s = Session(runtime)
    paste = f'papers that cite "{BLEU_TITLE}" ' + "Aaa Bbb Ccc University " * 2_500  # ~60 KB
    with deadline(60):
        reply = await s.user_says(paste)
    assert any("characters long" in n and f"{MAX_MESSAGE_CHARS:,}" in n for n in reply.notes)
    assert all(len(m["content"]) <= MAX_MESSAGE_CHARS for m in s.history)
    assert s.anchor is not None and s.anchor.title.lower().startswith("bleu")  # the request was still read


def test_the_transcript_keeps_a_cut_message_and_recent_turns_only(runtime):
    controller = Controller(runtime)
    ui = controller.new_state()
    asyncio.run(controller.send(ui, "x " * 40_000))
    assert all(len(m["content"]) <= MAX_MESSAGE_CHARS for m in ui.chat)
    for i in range(limits.MAX_TRANSCRIPT_MESSAGES + 50):
        ui.say("user", f"message {i}")
    assert len(ui.chat) == limits.MAX_TRANSCRIPT_MESSAGES and ui.chat[-1]["content"].endswith(str(i))


# --- 3. errors echo the whole rejected value ---------------------------------------------------------


def test_a_rejected_value_is_quoted_by_a_short_prefix_only():
    from workflows.registry import get_operator

    huge = "q" * 10_000_000  # the review's 10 MB query
    problems = param_problems("search", get_operator("keyword_search"), {"query": 12, "limit": huge})
    text = " ".join(p.message for p in problems)
    assert "limit" in text and len(text) < 1_000 and "10,000,000 characters" in text
    wf = Workflow.model_validate(filter_recipe())
    wf.nodes[0].params["query"] = huge
    with pytest.raises(WorkflowError) as err:
        validate(wf)
    assert len(str(err.value)) < 600 and "10,000,000 characters" in str(err.value)


async def test_a_10mb_params_edit_is_refused_without_keeping_it(runtime):
    controller = Controller(runtime)
    ui = controller.new_state()
    await controller.search_now(ui)  # nothing to search yet: fine, we need a workflow
    await controller.send(ui, f'papers that cite "{BLEU_TITLE}"')
    await controller.search_now(ui)
    assert ui.workflow is not None
    controller.select_node(ui, ui.workflow.nodes[0].id)
    before = json.dumps(ui.chat)
    await controller.apply_params(ui, json.dumps({"query": "q" * 10_000_000}))
    assert "Nothing was changed" in ui.edit_message and len(ui.edit_message) < 400
    assert len(ui.params_text) < 1_000 and len(json.dumps(ui.chat)) < len(before) + 1_000
    # within the editor's size but over the string limit: the validation's short message, not the value
    await controller.apply_params(ui, json.dumps({"query": "q" * (limits.MAX_STRING_CHARS + 1)}))
    assert "at most" in ui.edit_message and len(ui.edit_message) < 600


async def test_the_workspace_controls_refuse_oversized_values_in_a_sentence(runtime):
    """The workspace's result filters and params form reach the workflow by other ways than a recipe: a
    20,000-venue filter or a 10 MB number field is refused in a short sentence, nothing is kept or echoed."""
    controller = Controller(runtime)
    ui = controller.new_state()
    await controller.send(ui, f'papers that cite "{BLEU_TITLE}"')
    await controller.search_now(ui)
    assert ui.workflow is not None and ui.results
    version, before = ui.session.current_version, len(json.dumps(ui.chat))
    with deadline(30):
        await controller.apply_filters(ui, None, None, [f"Venue {i}" for i in range(20_000)], [], None)
    assert "at most 500" in ui.chat[-1]["content"] and len(json.dumps(ui.chat)) < before + 1_000
    node = next(n for n in ui.workflow.nodes if "limit" in n.params)
    with deadline(30):
        await controller.apply_form(ui, node.id, {"limit": "9" * 10_000_000})
    assert "Nothing was changed" in ui.edit_message and len(ui.edit_message) < 600
    assert ui.session.current_version == version  # neither control changed the workflow


# --- 4. CSV -------------------------------------------------------------------------------------------


def test_csv_rows_survive_carriage_returns_and_formulas_after_a_break():
    titles = ["Harmless\r=1+1", "Two\rlines", "Three\r\nlines\nhere", ' =HYPERLINK("http://x")', "@SUM(A1)"]
    results = [
        RankedPaper(paper=Paper(id=f"p{i}", title=t, authors=[Author(name="A\rB")]), evidence=Evidence(snippet=t))
        for i, t in enumerate(titles)
    ]
    text = export.to_csv(results)
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + len(titles)  # a bare "\r" used to end a row even in Python's csv reader
    assert len(text.splitlines()) == 1 + len(titles)  # and in a reader that splits on any line break
    for row in rows[1:]:
        assert not any(cell.lstrip()[:1] in ("=", "+", "@") for cell in row), row
        assert not any(ch in cell for cell in row for ch in "\r\n")


# --- 5. caches, files, Docker, login ------------------------------------------------------------------


class _Exploit:
    """What a planted pickle would run: it leaves a file behind."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


def test_a_planted_pickle_in_the_cache_directory_is_never_unpickled(tmp_path):
    import diskcache

    marker = tmp_path / "pwned"
    cache = Cache(tmp_path / "cache", "api")
    cache.set("k", {"answer": 1})
    assert cache.get("k") == {"answer": 1}
    # someone with write access to the directory plants a pickled value under the key (and a new key)
    raw = diskcache.Cache(str(tmp_path / "cache" / "api"))
    raw.set("k", _Exploit(marker))
    raw.set("other", _Exploit(marker))
    raw.close()
    assert Cache(tmp_path / "cache", "api").get("k", "miss") == "miss"
    assert Cache(tmp_path / "cache", "api").get("other", "miss") == "miss"
    assert not marker.exists()
    # the value written by pickle.dumps as raw bytes is refused as well: the codec reads JSON only
    raw = diskcache.Cache(str(tmp_path / "cache" / "api"))
    raw.set("bytes", pickle.dumps(_Exploit(marker)))
    raw.close()
    assert Cache(tmp_path / "cache", "api").get("bytes", "miss") == "miss" and not marker.exists()


def test_node_values_round_trip_through_the_data_only_cache(tmp_path):
    from workflows.ports import RelationEdge, RelationGraph

    cache = Cache(tmp_path, "nodes")
    ranked = [
        RankedPaper(
            paper=Paper(id="p1", title="T", authors=[Author(name="A")], year=2001),
            score=0.5,
            evidence=Evidence(nodes=["n"], scores={"dense": float("nan"), "x": 1.0}),
        )
    ]
    graph = RelationGraph(nodes=["a", "b"], edges=[RelationEdge(source="a", target="b", kind="cites")])
    vec = np.arange(384, dtype=np.float32) / 384
    for value in [(ranked, ["a note"], "fp"), graph, ["kw", "terms"], vec, {"$m": "not a tag"}, {1: "int key"}]:
        cache.set("k", value)
        got = Cache(tmp_path, "nodes").get("k")
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and np.array_equal(got, value)
        elif isinstance(value, tuple):
            assert got[1:] == value[1:] and got[0][0].paper == ranked[0].paper
            assert math.isnan(got[0][0].evidence.scores["dense"]) and got[0][0].evidence.scores["x"] == 1.0
        else:
            assert got == value


def test_cache_directories_are_private(tmp_path):
    root = tmp_path / "shared"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    Cache(root, "api").set("k", 1)
    for d in (root, root / "api"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d


def test_the_docker_image_runs_unprivileged_with_a_healthcheck_and_no_shared_volume():
    text = (Path(__file__).resolve().parents[1] / "Dockerfile").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert not any(line.startswith("VOLUME") for line in lines)
    assert any(line.startswith("HEALTHCHECK") for line in lines)


def test_listening_beyond_loopback_without_a_login_warns():
    from pilot.ui.app import exposure_warning

    assert exposure_warning("0.0.0.0", []) and "PILOT_AUTH" in exposure_warning("0.0.0.0", [])
    assert exposure_warning("0.0.0.0", [("u", "p")]) is None
    assert exposure_warning("127.0.0.1", []) is None
    with pytest.raises(ValueError) as err:
        Settings(auth="no-colon-here").logins()
    assert "no-colon-here" not in str(err.value)  # a malformed value may hold a password: never echoed
    assert Settings(auth="ann:pw1, bob:pw:2").logins() == [("ann", "pw1"), ("bob", "pw:2")]


def test_the_app_asks_for_the_login_when_one_is_set(runtime, tmp_path):
    from gradio_client import Client

    from pilot.ui.app import launch

    demo = launch(
        Settings(auth="ann:secret"),
        "127.0.0.1",
        free_port(),
        Controller(runtime),
        prevent_thread_lock=True,
        quiet=True,
    )
    try:
        with pytest.raises(ValueError):
            Client(demo.local_url, verbose=False)  # no login: not even the API description
        client = Client(demo.local_url, auth=("ann", "secret"), verbose=False)
        assert client.view_api(print_info=False, return_format="dict")
    finally:
        demo.close()


# --- 6. a damaged store repairs itself ---------------------------------------------------------------


@pytest.fixture()
def own_store(local_source, corpus_slice, tmp_path):
    """A private copy of the slice's built store (so damaging it harms no other test), and how to open it."""
    from pilot.sources.local import LocalCorpusSource

    vectors = Path(local_source.store.manifest["vectors"].removeprefix("file:"))
    cache = tmp_path / "cache"
    cache.mkdir()
    store_dir = cache / local_source.store.dir.name
    shutil.copytree(local_source.store.dir, store_dir)

    def open_source():
        return LocalCorpusSource.open(corpus_slice, cache, vectors=vectors, progress=False)

    return store_dir, open_source


def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        fh.write(data)


@pytest.mark.parametrize(
    "damage",
    [
        "sqlite header",
        "truncated vectors",
        "garbage bm25",
        "nan vectors",
    ],
)
async def test_a_store_damaged_before_opening_is_rebuilt_at_open(own_store, damage):
    store_dir, open_source = own_store
    if damage == "sqlite header":
        _overwrite(store_dir / "store.sqlite", 0, b"garbage" * 10)
    elif damage == "truncated vectors":
        with (store_dir / "vectors.npy").open("r+b") as fh:
            fh.truncate((store_dir / "vectors.npy").stat().st_size // 2)
    elif damage == "garbage bm25":
        for f in (store_dir / "bm25").iterdir():
            f.write_bytes(os.urandom(f.stat().st_size or 64))
    else:
        vecs = np.load(store_dir / "vectors.npy", mmap_mode="r+")
        vecs[::7] = np.nan
        vecs.flush()
        del vecs
    source = open_source()
    assert source.stats["built"] is True  # found at open, rebuilt from the corpus
    hits = await source.search_papers("statistical machine translation evaluation", limit=5)
    assert hits and all(math.isfinite(h.score) for h in hits)


@pytest.mark.parametrize("damage", ["sqlite pages", "nan vectors"])
async def test_a_store_damaged_after_opening_says_so_and_rebuilds_itself(own_store, damage):
    store_dir, open_source = own_store
    source = open_source()
    assert source.stats["built"] is False
    assert await source.search_papers("machine translation", limit=3)
    if damage == "sqlite pages":
        size = (store_dir / "store.sqlite").stat().st_size
        for offset in range(4096, size, 8192):  # every other page after the first, including the tables'
            _overwrite(store_dir / "store.sqlite", offset, b"\xff" * 4096)
        call = source.get_papers([source.store.ids[i] for i in range(0, len(source.store.ids), 50)])
    else:
        vecs = np.load(store_dir / "vectors.npy", mmap_mode="r+")
        vecs[5] = np.nan  # served silently before: a NaN row just vanished from every ranking
        vecs.flush()
        del vecs
        call = source.search_papers("machine translation", limit=3, mode="dense")
    with pytest.raises(SourceUnavailable) as err:
        await call
    assert "damaged" in err.value.message and "rebuilt" in err.value.message and err.value.hint
    assert await asyncio.to_thread(source.wait_for_repair, 600)
    hits = await source.search_papers("machine translation", limit=3, mode="dense")
    assert hits and all(math.isfinite(h.score) for h in hits)
    assert source.stats.get("repaired") == 1


# --- 7. the low findings -----------------------------------------------------------------------------


def test_recipes_with_deep_nesting_or_huge_numbers_get_a_clear_message():
    deep = b'{"nodes": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(export.RecipeError) as err:
        export.load_recipe(deep)
    assert "nested too deeply" in str(err.value)
    huge_int = b'{"schema_version": ' + b"9" * 5_000 + b', "nodes": []}'
    with pytest.raises(export.RecipeError) as err:
        export.load_recipe(huge_int)
    assert "number too long" in str(err.value) and len(str(err.value)) < 200
    nested_params = filter_recipe()
    value: list = []
    for _ in range(50):
        value = [value]
    nested_params["nodes"][1]["params"] = {"venues": value}
    with pytest.raises(export.RecipeError) as err:
        export.load_recipe(as_bytes(nested_params))
    assert "nested more than" in str(err.value)


def test_a_recipe_with_a_utf8_bom_loads():
    wf = export.load_recipe(b"\xef\xbb\xbf" + as_bytes(filter_recipe(year_min=2000)))
    assert wf.node("filter").params == {"year_min": 2000}


async def test_markdown_in_a_recipe_name_never_reaches_the_chat_as_markup(runtime, tmp_path):
    from markdown_it import MarkdownIt

    from pilot.ui import render

    data = filter_recipe(year_min=2000)
    data["name"] = "![b](http://127.0.0.1:9/track.png) [click](http://127.0.0.1:9/)"
    path = tmp_path / "wf.json"
    path.write_bytes(as_bytes(data))
    controller = Controller(runtime)
    ui = controller.new_state()
    await controller.load_workflow(ui, str(path))
    assert any("track.png" in m["content"] for m in ui.chat)  # the name is shown, as text
    markup = MarkdownIt("commonmark").render("\n\n".join(render.chat_text(m["content"]) for m in ui.chat))
    assert "<img" not in markup and "<a " not in markup
    assert "<img" not in MarkdownIt("commonmark").render(render.chat_text(ui.edit_message))


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("node id", "n" * 1_000_000, "at most 64"),
        ("node label", "l" * 1_000_000, "at most 200"),
        ("threshold", float("nan"), "finite number"),
        ("schema_version", -3, "not a version"),
    ],
)
def test_oversized_labels_nan_thresholds_and_negative_versions_are_refused(field, value, words):
    data = recipe(
        [
            {"id": "search", "op": "keyword_search", "params": {"query": "parsing"}},
            {"id": "cut", "op": "above", "params": {"threshold": 0.1}},
        ],
        [{"source": "search", "target": "cut"}],
        "cut",
    )
    if field == "node id":
        data["nodes"][1]["id"] = value
    elif field == "node label":
        data["nodes"][1]["label"] = value
    elif field == "threshold":
        data["nodes"][1]["params"]["threshold"] = value
    else:
        data["schema_version"] = value
    with pytest.raises(WorkflowError) as err:
        validate(Workflow.model_validate(data))
    assert words in str(err.value) and len(str(err.value)) < 600


async def test_no_usable_source_never_reads_could_not_reach_none(tmp_path):
    from pilot.sources.factory import UnavailableSource

    rt = Runtime.for_source(UnavailableSource("no paper source is usable", "set PILOT_CORPUS"), Settings())
    reply = await Session(rt).user_says(f'papers that cite "{BLEU_TITLE}"')
    assert "none" not in reply.error.replace("no paper source", "") and "PILOT_CORPUS" in reply.error


def test_the_cli_text_mode_prints_no_control_characters(monkeypatch, capsys):
    import argparse

    from pilot.commands import ask

    hostile = "Title\x1b[2J\x1b]0;pwned\x07 with \u202eevil\u202c bidi\r and a bell\x07"
    monkeypatch.setattr(
        ask,
        "answer_dict",
        lambda *a, **k: {
            "kind": "entity",
            "answer": hostile,
            "reference": {"[1]": "corpus://x\x1b[31m"},
            "trace": {"ok": True, "failed_nodes": []},
            "notes": ["note\x1b[1m"],
        },  # fmt: skip
    )
    ask.run(argparse.Namespace(question="q", corpus=None, llm=None, json=False))
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "Title" in printed and "evil" in printed
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", printed)
    # the JSON mode is for programs: it carries the text unchanged (escaped by JSON)
    ask.run(argparse.Namespace(question="q", corpus=None, llm=None, json=True))
    assert json.loads(capsys.readouterr().out)["answer"] == hostile


def test_sqlite_damage_raises_the_typed_error_not_a_database_error(own_store):
    """Query-time checks: the store turns SQLite's own errors into ``StoreDamaged``."""
    from pilot.store.integrity import StoreDamaged
    from pilot.store.store import CorpusStore

    store_dir, _ = own_store
    store = CorpusStore(store_dir)
    size = (store_dir / "store.sqlite").stat().st_size
    for offset in range(4096, size, 4096):
        _overwrite(store_dir / "store.sqlite", offset, b"\x00" * 16)
    with pytest.raises(StoreDamaged):
        store.papers(range(0, len(store), 25))
        store.search_entities("author", "Smith", 5)
    store.close()
    assert sqlite3.sqlite_version  # the damage came through SQLite, not a mock
