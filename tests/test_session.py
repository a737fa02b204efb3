"""The multi-turn loop on the corpus slice: request -> questions -> workflow -> results -> feedback."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pilot.citations import count_of
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from workflows.explain import why
from workflows.model import ModifyNode

BLEU = "acl:P02-1040"
BLEU_TITLE = "Bleu: A Method For Automatic Evaluation Of Machine Translation"


@pytest.fixture(scope="module")
def runtime(local_source, tmp_path_factory) -> Runtime:
    return Runtime.for_source(local_source, Settings(cache_dir=tmp_path_factory.mktemp("cache"), max_turns=4))


async def test_scripted_session_question_answer_results_then_only_after_2008(runtime):
    s = Session(runtime)
    reply = await s.user_says(f'Show me work that came after "{BLEU_TITLE}" and used its ideas.')
    assert reply.error is None
    assert s.anchor is not None and s.anchor.id == BLEU and s.intent.direction == "successor"
    # one question, 3–5 options, each setting intent fields
    q = reply.question
    assert q is not None and 3 <= len(q.options) <= 5 and q.slot != "direction"
    # answer: the last option is always "no preference"; then skip the rest
    reply = await s.choose(len(q.options) - 1)
    assert reply.error is None
    reply = await s.search_now()
    assert reply.error is None and reply.workflow is not None and len(reply.results) > 10
    first_ids = [r.paper.id for r in reply.results]
    assert BLEU not in first_ids
    assert all(r.evidence.nodes for r in reply.results)  # every result says which node brought it in
    assert any((r.paper.year or 0) < 2008 for r in reply.results)  # so the feedback has something to remove

    reply = await s.user_says("only after 2008")
    assert reply.error is None
    assert s.workflow.node("filter").params["year_min"] == 2009
    assert any("filter" in line and "year_min" in line for line in reply.diff)
    assert len(s.versions) == 2 and s.versions[-1].diff == reply.diff
    assert reply.results and all(r.paper.year is not None and r.paper.year >= 2008 for r in reply.results)
    assert [r.paper.id for r in reply.results] != first_ids

    # the trace shows that only the filter and what follows it ran again
    statuses = {t.node_id: t.status for t in reply.trace.nodes}
    assert statuses["citers"] == "cached" and statuses["filter"] == "ok"

    # undo goes back to version 1 and its results
    back = await s.undo()
    assert back.error is None and [r.paper.id for r in back.results] == first_ids


async def test_session_round_trips_through_json(runtime):
    s = Session(runtime)
    await s.user_says(f'Find papers similar to "{BLEU_TITLE}".')
    assert s.question is not None and s.question.slot == "facet"
    saved = s.model_dump_json()
    r = Session.restore(saved, runtime)
    assert r.model_dump() == s.model_dump()
    reply = await r.choose(1)  # "its method" -> next question or results, on the restored session
    assert reply.error is None and r.intent.facet == "method"


async def test_ambiguous_title_asks_did_you_mean_and_the_choice_sets_the_anchor(runtime):
    s = Session(runtime)
    reply = await s.user_says('What later papers cite or extend "machine translation evaluation"?')
    assert reply.question is not None and reply.question.slot == "anchor"
    assert 2 <= len(reply.candidates) <= 4 and len(reply.question.options) == len(reply.candidates) + 1
    pick = reply.candidates[0]
    reply = await s.choose(0)
    assert s.anchor.id == pick.id and reply.error is None


async def test_a_family_name_many_authors_share_is_asked_about_and_the_choice_answers_for_that_author(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers by Li")
    assert reply.answer is None and reply.question is not None
    assert "Which one do you mean?" in reply.question.text
    labels = [o.label for o in reply.question.options]
    assert "Ping Li" in labels and all(" " in o for o in labels[:-1])  # full names, then a way out
    reply = await s.choose(labels.index("Ping Li"))
    assert reply.error is None and s.intent.kind == "entity"
    assert reply.answer is not None and "Ping Li" in reply.answer.answer


async def test_which_institutions_a_papers_authors_are_from_names_them(runtime, corpus_slice_rows):
    paper = next(
        r for r in corpus_slice_rows
        if len(r["title"].split()) >= 5 and len({a["affiliation"] for a in r["authors"] if a.get("affiliation")}) >= 2
    )  # fmt: skip
    s = Session(runtime)
    reply = await s.user_says(f'Which organisations are the authors of "{paper["title"]}" from?')
    assert reply.error is None and reply.answer is not None and s.intent.kind == "entity"
    affiliations = {a["affiliation"] for a in paper["authors"] if a.get("affiliation")}
    # the institutions, counted (not the list of its authors)
    assert reply.answer.answer.startswith("Institutions") and any(a in reply.answer.answer for a in affiliations)


async def test_drop_it_with_no_result_named_asks_which_and_keeps_the_list(runtime):
    s = Session(runtime)
    await s.user_says(f'Show me work that came after "{BLEU_TITLE}".')
    await s.search_now()
    before = [r.paper.id for r in s.results]
    assert before
    reply = await s.user_says("drop it")
    assert "Which result should I leave out?" in reply.message
    assert [r.paper.id for r in s.results] == before


async def test_no_preference_typed_to_the_question_beside_the_results_is_an_answer(runtime):
    s = Session(runtime)
    reply = await s.user_says(f'Show me work that came after "{BLEU_TITLE}" and used its ideas.')
    while not reply.results and reply.question is not None:
        reply = await s.choose(len(reply.question.options) - 1)  # the way out: no preference
    assert reply.results and s.question is not None  # a question is offered beside the results
    before, asked = [r.paper.id for r in s.results], s.question.slot
    reply = await s.user_says("no preference")  # typed, as the option's click does: an answer, not a change
    assert "could not turn that into a change" not in reply.message
    assert s.question is None or s.question.slot != asked  # answered: the next question, if any
    assert [r.paper.id for r in s.results] == before


async def test_corpus_id_anchor_and_unknown_id(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"Who has built on {BLEU}?")
    assert s.anchor.id == BLEU and reply.error is None
    bad = Session(runtime)
    reply = await bad.user_says("Who has built on acl:X99-9999?")
    assert reply.error and "acl:X99-9999" in reply.error


async def test_turn_limit_then_results_and_bad_input_is_a_message(runtime):
    s = Session(runtime.with_source(runtime.source))
    s.runtime.settings.max_turns  # noqa: B018 — settings shared, not mutated here
    reply = await s.user_says(f'Papers related to "{BLEU_TITLE}"')  # no direction words -> asked first
    assert reply.question.slot == "direction"
    n = 0
    while reply.question is not None:
        reply = await s.choose(0)
        n += 1
    assert n <= runtime.settings.max_turns and reply.results
    assert (await s.choose(7)).error  # no open question
    assert (await s.user_says("   ")).error
    assert (await s.edit(ModifyNode(node_id="nope", params={}))).error
    assert s.results  # errors leave the results in place


async def test_thumbs_and_edit_create_versions(runtime):
    s = Session(runtime)
    await s.user_says(f"Who has built on {BLEU}?")
    reply = await s.search_now()
    top = reply.results[0].paper.id
    reply = await s.rate(top, up=False)
    assert top not in [r.paper.id for r in reply.results] and "exclude_ids" in " ".join(reply.diff)
    reply = await s.edit(ModifyNode(node_id="top", params={"k": 5}))
    assert len(reply.results) == 5 and s.versions[-1].reason.startswith("your edit")
    node = await s.run_node("filter")
    assert node.status in ("ok", "cached") and node.n_out > 0 and node.output_preview


async def test_entity_questions_go_to_the_kg_planner_and_paper_searches_do_not(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers by Kishore Papineni")
    assert reply.error is None and reply.answer is not None and reply.answer.answer
    assert s.phase == "answer" and s.intent.kind == "entity"
    # "Who has built on …" names a paper and a direction: a paper search, not a question about people
    reply = await s.user_says(f'Who has built on "{BLEU_TITLE}"?')
    assert reply.answer is None and s.anchor is not None and s.anchor.id == BLEU


async def test_who_wrote_a_paper_named_by_its_short_name_cites_the_paper_and_its_authors(runtime):
    s = Session(runtime)
    bleu = (await runtime.source.get_papers([BLEU]))[0]
    reply = await s.user_says("Who are the authors of BLEU?")
    assert reply.error is None and reply.answer is not None and s.intent.kind == "entity"
    cited = set(reply.answer.reference.values())
    assert bleu.canonical_url in cited and {a.url for a in bleu.authors} <= cited
    assert all(a.name in reply.answer.answer for a in bleu.authors)
    assert [r.paper.id for r in reply.results] == [BLEU]


async def test_new_request_after_results_starts_a_new_search(runtime):
    s = Session(runtime)
    await s.user_says(f"Who has built on {BLEU}?")
    await s.search_now()
    reply = await s.user_says("Only papers published at EACL.")  # feedback, although it reads like a venue question
    assert s.workflow.node("filter").params["venues"] == ["EACL"] and reply.answer is None
    reply = await s.user_says("papers similar to neural morphological segmentation")  # a subject, no paper's title
    # no paper is named: a new topic search, not a filter on the old one
    assert s.intent.topic == "neural morphological segmentation" and s.anchor is None and len(s.versions) <= 1


async def test_skip_words_search_at_once_and_a_new_paper_restarts(runtime):
    s = Session(runtime)
    reply = await s.user_says(f'Find papers similar to "{BLEU_TITLE}".')
    assert reply.question is not None
    reply = await s.user_says("just search")
    assert reply.question is None and reply.results and s.turns == 1
    reply = await s.user_says(f'What later papers cite or extend "{BLEU_TITLE}"?')
    assert s.intent.direction == "successor" and s.versions == [] and reply.question is not None


async def test_no_usable_source_gives_readable_errors_not_exceptions(tmp_path):
    from pilot.sources.factory import UnavailableSource

    rt = Runtime.for_source(
        UnavailableSource("no paper source is usable", "set PILOT_CORPUS"), Settings(cache_dir=tmp_path)
    )
    s = Session(rt)
    reply = await s.user_says(f'What later papers cite "{BLEU_TITLE}"?')
    # says what to set, never "I could not reach none"
    assert "cannot search" in reply.error and "PILOT_CORPUS" in reply.error and reply.results == []
    assert "reach none" not in reply.error
    assert s.phase == "start" and s.anchor is None  # nothing half-done: the same request can simply be sent again


# --- naming the anchor the way researchers do -------------------------------------------------------


@pytest.mark.parametrize(
    "request_text, direction",
    [("papers citing BLEU after 2015", "successor"), ("find papers like BLEU", "sibling"),
     ("papers that cite BLEU", "successor")],
)  # fmt: skip
def test_citing_and_like_phrasings_name_the_direction(request_text, direction):
    from pilot.message import Context, read

    parsed = read(request_text, Context()).request
    assert parsed is not None and parsed.intent.direction == direction and parsed.anchor_query == "BLEU"


async def test_a_paper_called_by_its_name_is_taken_and_said(local_source):
    """ "BLEU" is what people call "Bleu: A Method for Automatic Evaluation of Machine Translation", though later
    titles mention BLEU too ("BLEU+: …"): the paper that introduced the name is taken, and the reply says so."""
    from pilot.runtime import Runtime

    s = Session(Runtime.for_source(local_source))
    reply = await s.user_says("papers citing BLEU")
    assert s.anchor is not None and s.anchor.id == "acl:P02-1040"
    assert any("introduced BLEU" in n or "known as “BLEU”" in n for n in reply.notes), reply.notes


async def test_an_unquoted_title_inside_the_request_is_taken_without_asking(local_source):
    from pilot.runtime import Runtime

    s = Session(Runtime.for_source(local_source))
    await s.user_says("predecessors of Building a Large Annotated Corpus of English: The Penn Treebank")
    assert s.anchor is not None and s.anchor.title.lower().startswith("building a large annotated corpus")
    assert s.intent.direction == "predecessor"


async def test_an_unknown_doi_says_which_id_and_what_to_do(local_source):
    from pilot.runtime import Runtime

    s = Session(Runtime.for_source(local_source))
    reply = await s.user_says("papers similar to doi:10.9999/not-here")
    assert "DOI '10.9999/not-here'" in reply.error and "title" in reply.error


# --- a source that goes down mid-conversation ---------------------------------------------------------


class _Network:
    """The local source behind a switchable network: when down, every call fails the way the S2 and
    AMiner clients fail on a dead connection (``SourceUnavailable`` with a hint)."""

    def __init__(self, inner):
        self._inner, self.down = inner, False

    def __getattr__(self, attr: str):
        import asyncio

        from pilot.sources.base import SourceUnavailable

        target = getattr(self._inner, attr)
        if attr.startswith("_") or not asyncio.iscoroutinefunction(target):
            return target

        async def call(*args, **kwargs):
            if self.down:
                raise SourceUnavailable(self._inner.name, "connection refused", "check the network")
            return await target(*args, **kwargs)

        return call


async def test_a_dead_source_costs_nothing_and_the_session_recovers(local_source, tmp_path):
    net = _Network(local_source)
    s = Session(Runtime.for_source(net, Settings(cache_dir=tmp_path)))
    await s.user_says(f'Show me work that came after "{BLEU_TITLE}"')
    first = [r.paper.id for r in (await s.search_now()).results]
    assert first

    net.down = True
    # a new search cannot even look its paper up: said plainly, and the conversation is as it was
    reply = await s.user_says('papers similar to "Building A Large Annotated Corpus Of English: The Penn Treebank"')
    assert (
        "could not reach" in reply.error
        and "check the network" in reply.error.lower()
        and "Nothing was changed" in reply.error
    )
    assert s.anchor.id == BLEU and [r.paper.id for r in s.results] == first and s.phase == "results"
    assert s.history[-1]["role"] == "assistant"  # the failure is part of the conversation
    # a refinement whose new side step needs the source: that step fails, the rest still answers
    reply = await s.user_says("more like #2")
    assert reply.results and any("“a paper you liked” failed" in n and "connection refused" in n for n in reply.notes)
    # an edit everything depends on (a new anchor look-up, not cached) yields nothing: the list stays
    before = [r.paper.id for r in s.results]
    reply = await s.edit(ModifyNode(node_id="anchor", params={"query": "acl:J93-2004"}))
    assert reply.error and "previous results are still shown" in reply.error
    assert [r.paper.id for r in s.results] == before

    net.down = False  # the network is back: the same request now works in the same session
    reply = await s.user_says('papers similar to "Building A Large Annotated Corpus Of English: The Penn Treebank"')
    assert reply.error is None and s.anchor.title.startswith("Building A Large Annotated Corpus")


async def test_a_huge_request_is_answered_without_echoing_it_whole(runtime):
    s = Session(runtime)
    blob = "neural parsing " * 700  # ~10k characters pasted into the chat
    reply = await s.user_says(blob)
    assert reply.error is None and len(reply.message) < 400
    assert s.question is not None and len(s.question.text) < 200


# --- topic requests: no paper named ---

TOPIC_QUESTION_SLOTS = {"time", "topic", "recency"}  # period, sub-area, seminal vs recent


async def _answer_until_results(s: Session, reply):
    while reply.question is not None:
        assert reply.question.slot in TOPIC_QUESTION_SLOTS, reply.question.text
        reply = await s.choose(len(reply.question.options) - 1)  # the "no preference" option
    return reply


async def test_a_topic_request_searches_the_topic_instead_of_asking_which_paper(runtime):
    s = Session(runtime)
    reply = await s.user_says("What should I read on the induction of FrameNet lexical units?")
    assert reply.error is None and s.anchor is None
    assert reply.question is None or reply.question.slot in TOPIC_QUESTION_SLOTS  # not "Which paper do you mean?"
    assert s.intent.topic == "induction of FrameNet lexical units"
    reply = await _answer_until_results(s, reply)
    assert reply.error is None and len(reply.results) >= 10
    assert s.workflow.name == "topic" and "induction of FrameNet lexical units" in reply.message
    # the instruction words never become search terms
    searched = " ".join(f"{n.params.get('query', '')} {n.params.get('text', '')}" for n in s.workflow.nodes).lower()
    assert not {"what", "should", "read"} & set(searched.split())
    kw = next(t for t in reply.trace.nodes if t.node_id == "kw")
    assert kw.status in ("ok", "cached")


async def test_capitalised_topic_words_are_not_a_person_but_a_known_author_is(runtime):
    s = Session(runtime)
    reply = await s.user_says("What should I read on Lexical Units with FrameNet Frames?")
    assert reply.answer is None and s.intent.topic == "Lexical Units with FrameNet Frames"
    s = Session(runtime)
    reply = await s.user_says("papers about Kishore Papineni")
    assert reply.answer is not None and s.intent.kind == "entity"


async def test_a_survey_request_with_no_paper_named_returns_surveys(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("surveys covering paraphrase generation"))
    assert reply.error is None and reply.results
    assert reply.results[0].paper.id == "acl:J10-3003"  # "Generating Phrasal and Sentential Paraphrases: A Survey …"
    for r in reply.results:
        assert re.search(r"survey|review|overview|tutorial", r.paper.title, re.I), r.paper.title
    assert any(p.startswith("a survey: title says") for p in why(s.workflow, reply.results[0]))
    # "covering" and "surveys" select the kind of paper; they are not what the papers are about
    assert s.intent.topic == "paraphrase generation" and s.intent.paper_types == ["survey"]


async def test_the_reply_repeats_what_the_request_left_out_and_the_kind_of_paper_asked_for(runtime):
    # the reply said only "papers on “parsing”": the user could not see that "not dependency parsing" was understood
    s = Session(runtime)
    asked = await s.user_says("papers on parsing but not dependency parsing, no surveys")
    reply = await _answer_until_results(s, asked)
    assert reply.error is None and reply.results
    assert "on “parsing”, leaving out “dependency parsing” and surveys" in reply.message
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("surveys covering paraphrase generation"))
    assert "Found" in reply.message and "surveys on “paraphrase generation”" in reply.message
    assert "leaving out" not in reply.message  # asking for one kind of paper leaves nothing out in words


async def test_questions_and_orders_about_the_list_on_screen_keep_its_papers(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("papers on parsing not from the 90s"))
    assert reply.results and not any(1990 <= (r.paper.year or 0) <= 1999 for r in reply.results)
    assert "on “parsing”, leaving out papers from 1990–1999" in reply.message  # was: only the 1990s
    papers = {r.paper.id for r in reply.results}
    reply = await s.user_says("newest first")
    years = [r.paper.year or 0 for r in reply.results]
    assert {r.paper.id for r in reply.results} == papers and years == sorted(years, reverse=True)
    third, listed, earlier = reply.results[2].paper, [r.paper.id for r in reply.results], len(s.earlier)
    # a number the list does not have is said, and the list stays on screen (it was put among earlier searches)
    reply = await s.user_says(f"who wrote #{len(listed) + 40}?")
    assert f"There is no result #{len(listed) + 40}" in reply.message and reply.answer is None
    assert [r.paper.id for r in reply.results] == listed and len(s.earlier) == earlier and s.answer is None
    reply = await s.user_says("who wrote #3?")  # was "I could not tell which paper “#3” is"
    assert reply.answer is not None and third.title in reply.answer.answer
    assert all(a.name in reply.answer.answer for a in third.authors[:2])
    await s.user_says("back to the first search")
    reply = await s.user_says("which of these are surveys?")
    shown = [n for n, r in enumerate(reply.results, 1) if r.paper.title and "survey" in r.paper.title.lower()]
    assert reply.results and {r.paper.id for r in reply.results} == papers
    assert reply.message.startswith("None of") if not shown else f"#{shown[0]} " in reply.message
    # a change that leaves nothing says how to get the list back, and "undo" does
    reply = await s.user_says("only papers published in 1950")
    assert not reply.results and any("say “undo”" in n for n in reply.notes)
    reply = await s.user_says("undo")
    assert {r.paper.id for r in reply.results} == papers


async def test_how_many_of_the_list_is_counted_on_the_list_and_the_order_asked_for_is_said(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("the most cited papers on parsing"))
    counts = [max(r.paper.citation_count or 0, r.paper.in_corpus_citations or 0) for r in reply.results]
    assert counts[0] > counts[-1] and counts == sorted(counts, reverse=True)
    assert ", most cited first" in reply.message  # was sorted without a word
    shown = [r.paper for r in reply.results]
    later = [n for n, p in enumerate(shown, 1) if (p.year or 0) >= 2000]
    reply = await s.user_says("how many of them are from 2000 or later?")  # was a new search for "them"
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]
    said = f"{len(later)} of the {len(shown)} results" if later else "None of"
    assert reply.message.startswith(said)
    assert all(f"#{n}" in reply.message for n in later[:20])
    reply = await s.user_says("how many are there?")
    assert reply.message == f"There are {len(shown)} results on the list."
    who = next(a.name.split()[-1] for p in shown for a in p.authors if a.name.split()[-1][:1].isupper())
    mine = [n for n, p in enumerate(shown, 1) if any(who.lower() in a.name.lower().split() for a in p.authors)]
    reply = await s.user_says(f"which of these are by {who}?")  # was a search for papers by them
    assert reply.message.startswith(f"{len(mine)} of the {len(shown)} results") and f"#{mine[0]}" in reply.message
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]
    reply = await s.user_says(f"only the ones by {who}")  # was a new search for a paper called "{who}"
    assert len(reply.results) >= len(mine) and f"only papers by {who}" in reply.message
    assert all(any(who.lower() in a.name.lower().split() for a in r.paper.authors) for r in reply.results)
    narrowed = [r.paper.id for r in reply.results]
    # a name typed in lower case is the same person (was a topic search for it)
    reply = await s.user_says("undo")
    reply = await s.user_says(f"just the ones by {who.lower()}")
    assert f"only papers by {who}" in reply.message and [r.paper.id for r in reply.results] == narrowed
    n = len(narrowed)
    assert reply.message.startswith(f"Found {n} paper{'' if n == 1 else 's'} —")  # never "Found 1 papers"


async def test_how_many_mention_some_words_is_counted_on_the_list_and_surveys_can_be_left_out(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    said = [n for n, p in enumerate(shown, 1) if "alignment" in p.text.lower() or "aligning" in p.text.lower()]
    reply = await s.user_says("how many are about alignment?")  # was a topic search for "many are about alignment"
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]
    assert said and reply.message.startswith(f"{len(said)} of the {len(shown)} results mention “alignment”")
    assert f"#{said[0]}" in reply.message and "focus on alignment" in reply.message
    reply = await s.user_says("remove the surveys")  # was a new search for surveys
    assert s.intent.topic == "machine translation" and "leaving out surveys" in reply.message


async def test_questions_a_glance_at_the_list_answers_are_answered_from_it(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    cited = [max(p.citation_count or 0, p.in_corpus_citations or 0) for p in shown]
    top = cited.index(max(cited)) + 1
    reply = await s.user_says("which one is the most cited?")  # was a new search for seminal papers
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]
    assert reply.message.startswith(f"The most cited is #{top} “") and "sort by citations" in reply.message
    oldest = min(p.year for p in shown if p.year)
    reply = await s.user_says("what is the oldest one?")  # was a topic search for "oldest"
    assert f"({oldest})" in reply.message and reply.message.startswith("The oldest is #")
    reply = await s.user_says("who are the main authors here?")  # was a topic search for "authors here"
    counts = Counter(a.name for p in shown for a in {a.name: a for a in p.authors}.values())
    name, n = counts.most_common(1)[0]
    assert f"{name} ({n}: #" in reply.message and "only the ones by" in reply.message
    reply = await s.user_says("which venues are these from?")
    assert reply.message.startswith(f"The {len(shown)} results are from ") and "only at " in reply.message


async def test_citations_and_size_said_of_the_list_narrow_it(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    reply = await s.user_says("only the ones with more than 20 citations")  # was a search for a paper "20"
    assert reply.results and "at least 21 citations" in reply.message
    # cited more than 20 times by a count or by the citing papers the corpus holds; a paper no index counted stays,
    # and the reply says how many (unknown is not zero)
    assert all(count_of(r.paper).meets(21) is not False for r in reply.results)
    if any(count_of(r.paper).meets(21) is None for r in reply.results):
        assert any("no citation count" in n for n in reply.notes), reply.notes
    reply = await s.user_says("give me 10")
    assert len(reply.results) == 10 and "10 results instead of" in reply.message


async def test_where_a_paper_was_published_is_answered_from_its_record(runtime):
    reply = await Session(runtime).user_says("where was the BLEU paper published?")  # was a topic search
    assert reply.answer is not None and "Bleu: A Method For Automatic Evaluation" in reply.message
    assert "2002" in reply.message and "ACL" in reply.message and "Papineni" in reply.message


async def test_undo_brings_back_what_the_search_asked_for_then(runtime):
    # after "newest first" then "undo", the reply went on saying "newest first" over the best-match list
    s = Session(runtime)
    first = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    await s.user_says("put the newest on top")
    reply = await s.user_says("remove the surveys")
    assert "leaving out surveys, newest first" in reply.message
    reply = await s.user_says("undo")
    assert "newest first" in reply.message and "leaving out" not in reply.message
    reply = await s.user_says("let's go back to the previous version")
    assert s.intent.order == "score" and "newest first" not in reply.message
    assert [r.paper.id for r in reply.results] == [r.paper.id for r in first.results]


async def test_and_for_another_paper_is_the_same_search_for_that_paper(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("what came before BLEU?"))
    assert s.anchor is not None and s.anchor.id == BLEU and reply.results
    await s.user_says("and for the Penn Treebank paper?")  # was a topic search on "Penn Treebank"
    assert s.anchor is not None and s.anchor.id == "acl:J93-2004" and s.intent.direction == "predecessor"


async def test_a_topic_that_contains_a_title_is_a_topic_but_a_title_alone_names_the_paper(runtime):
    title = "Feature-Rich Part-Of-Speech Tagging With A Cyclic Dependency Network"  # acl:N03-1033, in the slice
    s = Session(runtime)
    reply = await s.user_says(f"What should I read on {title.lower()} for tagging Chinese?")
    assert s.anchor is None and s.intent.topic and (reply.question is None or reply.question.slot != "direction")
    s = Session(runtime)
    reply = await s.user_says(f"What should I read on {title}?")
    assert s.anchor is not None and s.anchor.id == "acl:N03-1033" and s.intent.topic is None
    # the same words in lower case, asked as a topic: the topic's literature, not the paper with that title
    s = Session(runtime)
    await s.user_says(f"I'm writing a paper on {title.lower()} - what should I cite?")
    assert s.anchor is None and s.intent.topic == title.lower()


async def test_another_kind_of_paper_on_the_same_topic_keeps_its_period(runtime):
    s = Session(runtime)
    await s.user_says("papers on machine translation evaluation since 2005")
    await s.search_now()
    assert s.intent.topic == "machine translation evaluation" and s.intent.year_min == 2005
    reply = await s.user_says("what about surveys?")
    assert s.intent.topic == "machine translation evaluation" and s.intent.paper_types == ["survey"]
    assert s.intent.year_min == 2005 and any("since 2005" in n for n in reply.notes)


async def test_papers_citing_two_papers_are_the_citers_they_share(runtime, by_id):
    # "papers that cite both X and Y" was a topic search for the words "both X and Y"
    s = Session(runtime)
    await s.user_says("Which papers cite both the Penn Treebank and acl:P03-1054?")
    reply = await s.search_now()
    assert s.anchor is not None and s.anchor.id == "acl:J93-2004" and s.intent.direction == "successor"
    both = {r["id"] for r in by_id.values() if {"acl:J93-2004", "acl:P03-1054"} <= set(r["references"])}
    assert len(both) >= 3 and {r.paper.id for r in reply.results} == both
    assert "that also cite “Accurate Unlexicalized Parsing”" in reply.message
    # a second paper that cannot be found changes nothing on screen
    shown = [r.paper.id for r in reply.results]
    reply = await s.user_says("papers that cite both BLEU and the zzqx frobnicator")
    assert "zzqx frobnicator" in reply.message and [r.paper.id for r in reply.results] == shown


async def test_two_names_compared_are_shown_side_by_side_and_nothing_is_searched(runtime):
    s = Session(runtime)
    reply = await s.user_says("Compare BLEU and ROUGE")  # was a topic search for "BLEU and ROUGE"
    assert s.anchor is None and s.workflow is None
    assert "“ROUGE”" in reply.message and reply.error is None  # the slice has no ROUGE paper: said, not swapped


async def test_going_back_to_an_earlier_search_brings_its_results_back_as_they_were(runtime):
    s = Session(runtime)
    reply = await s.user_says("back to the previous search")  # nothing to go back to yet: said plainly
    assert "no earlier search" in reply.message and reply.error is None
    await s.user_says(f"Who has built on {BLEU}?")
    first = await s.search_now()
    await s.user_says("Only papers published at EACL.")  # the first search gets a second workflow version
    first_ids, first_versions = [r.paper.id for r in s.results], len(s.versions)
    assert first_ids
    await s.user_says("papers similar to statistical phrase-based translation")
    second = await s.search_now()
    second_ids = [r.paper.id for r in second.results]
    assert second_ids and second_ids != first_ids and s.intent.topic

    reply = await s.user_says("go back to the first search")
    assert [r.paper.id for r in reply.results] == first_ids and reply.workflow is not None
    assert s.anchor is not None and s.anchor.id == BLEU and len(s.versions) == first_versions
    assert "search #1" in reply.message and first.error is None
    # the words of a search name it too; the search that was on screen is kept to come back to
    reply = await s.user_says("back to my phrase-based translation results")
    assert [r.paper.id for r in reply.results] == second_ids and s.anchor is None
    reply = await s.user_says("return to the search about cooking recipes")
    assert "Which earlier search?" in reply.message and [r.paper.id for r in reply.results] == second_ids
    # refining after going back changes that search only; the clear button forgets the earlier searches
    await s.user_says("go back to the first search")
    await s.user_says("only after 2005")
    assert s.anchor.id == BLEU and all((r.paper.year or 0) > 2005 for r in s.results)
    s.reset()
    reply = await s.user_says("back to the previous search")
    assert "no earlier search" in reply.message and not reply.results


async def test_a_paper_described_by_its_topic_and_authors_is_found_by_them(runtime):
    s = Session(runtime)
    reply = await s.user_says("What came after the paper on evaluation of translation by Papineni and Roukos?")
    picked = s.anchor.id if s.anchor is not None else None
    offered = [o.sets.get("anchor_id") for o in reply.question.options] if reply.question else []
    assert BLEU in (picked, *offered[:1]) and s.intent.direction == "successor"
    # by someone who never wrote on it: said, and the topic offered instead of a wrong paper
    s = Session(runtime)
    reply = await s.user_says("papers like the one on cooking recipes by Papineni")
    assert s.anchor is None and "No paper on “cooking recipes” by Papineni" in reply.message
    assert reply.question is not None and reply.question.slot == "fallback"
    reply = await s.user_says("what came before the parsing paper by Zyxwvut?")  # a name nobody in the source has
    assert s.anchor is None and "No paper on “parsing” by Zyxwvut" in reply.message and reply.error is None


async def test_search_now_on_the_offered_topic_search_runs_it_on_the_topic(runtime):
    # "Search now" on "search papers about X instead?" ran a search without the topic: "Found 50 papers —
    # related papers", a generic workflow over nothing in particular. It is the offer's yes, at once.
    s = Session(runtime)
    reply = await s.user_says("papers like the one on word alignment by Zyxwvut")
    assert reply.question is not None and reply.question.slot == "fallback", reply.message
    reply = await s.search_now()
    assert reply.error is None and reply.question is None and s.workflow.name == "topic"
    assert "word alignment" in reply.message and s.intent.topic == "word alignment"
    assert sum("alignment" in f"{r.paper.title} {r.paper.abstract or ''}".lower() for r in reply.results[:10]) >= 4


async def test_a_paper_cited_by_author_and_year_is_found_by_them(runtime):
    # "Papineni et al. 2002", "Collins (2002)" are how papers cite each other; they were read as topics
    # ("papers on Papineni et al. 2002") or as names no paper introduces
    s = Session(runtime)
    await s.user_says("What came after Papineni et al. 2002?")
    assert s.anchor is not None and s.anchor.id == BLEU and s.intent.direction == "successor"
    assert s.intent.year_min is None  # the reference's year is no period filter
    # two papers with Collins as first author in 2002: asked, and "the second one" picks the second offered
    s = Session(runtime)
    reply = await s.user_says("papers like Collins (2002)")
    assert reply.question is not None and reply.question.slot == "anchor"
    offered = [o.sets.get("anchor_id") for o in reply.question.options if o.sets.get("anchor_id")]
    assert len(offered) == 2 and "2 papers by Collins are from 2002" in reply.message
    await s.user_says("the second one")
    assert s.anchor is not None and s.anchor.id == offered[1] and s.intent.direction == "sibling"
    # in 2000 Collins only co-wrote: offered, not taken, and said so
    s = Session(runtime)
    reply = await s.user_says("predecessors of Collins et al. 2000")
    assert s.anchor is None and "with Collins as first author" in reply.message and reply.question is not None
    # no Collins paper from 2001: with topic words, the nearest in year on the topic are offered
    reply = await Session(runtime).user_says("follow-ups to Collins 2001 on parsing")
    assert "No paper by Collins from 2001" in reply.message and reply.question is not None
    # a surname nobody in the source has: said plainly, no "search papers about 'Zyxwvut 2003'" offered
    reply = await Session(runtime).user_says("what came before Zyxwvut et al. 2003?")
    assert "No paper by Zyxwvut" in reply.message and reply.question is None and reply.error is None


async def test_a_correction_keeps_the_direction_and_changes_the_paper(runtime):
    s = Session(runtime)
    await s.user_says("What came after Papineni et al. 2002?")
    assert s.anchor is not None and s.anchor.id == BLEU
    await s.user_says("no, I meant Collins (2003)")
    assert s.anchor is not None and s.anchor.id != BLEU and s.anchor.year == 2003
    assert s.intent.direction == "successor"  # the direction chosen for the search it corrects


async def test_a_result_named_with_a_direction_starts_a_search_from_it(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    second = reply.results[1].paper
    reply = await s.user_says("who cites #2?")  # was feedback that changed nothing
    assert s.anchor is not None and s.anchor.id == second.id and s.intent.direction == "successor"
    assert any(n.startswith(f"Searching from result #2: {second.title}") for n in reply.notes)
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    first = reply.results[0].paper
    await s.user_says("what does the first one cite?")  # "it" was cut out of "cites" and the direction lost
    assert s.anchor is not None and s.anchor.id == first.id and s.intent.direction == "predecessor"


async def test_how_the_list_was_made_is_told_step_by_step_and_the_list_stays(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown, versions = [r.paper.id for r in reply.results], len(s.versions)
    reply = await s.user_says("how did you rank these?")  # was a topic search for "rank"
    assert [r.paper.id for r in reply.results] == shown
    assert reply.message.startswith("How this list was made:") and "`score` ranks them by" in reply.message
    assert "closeness in meaning" in reply.message and f"keeps the best {len(shown)}" in reply.message
    reply = await s.user_says("these are all irrelevant")  # was a topic search for "irrelevant"
    assert [r.paper.id for r in reply.results] == shown and "Tell me what is wrong" in reply.message
    assert len(s.versions) == versions


async def test_the_weight_of_a_ranking_signal_is_said_and_changed(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    before = dict(s.workflow.node("score").params["features"])
    reply = await s.user_says("more weight on citations")  # was a topic search for "weight"
    after = s.workflow.node("score").params["features"]
    assert after["citations"] == pytest.approx(2 * before["citations"]) and "more weight on citations" in reply.message
    reply = await s.user_says("prefer older papers")  # changed nothing
    assert s.workflow.node("score").params["features"]["recency"] < 0 and "older work first" in reply.message
    years = [r.paper.year for r in reply.results[:10] if r.paper.year]
    reply = await s.user_says("ignore citations")
    assert s.workflow.node("score").params["features"]["citations"] == 0
    assert years  # the list is still there


async def test_what_else_the_authors_of_a_paper_wrote_is_listed_from_their_papers(runtime):
    s = Session(runtime)
    reply = await s.user_says("what else did the authors of the BLEU paper write?")  # a topic search before
    bleu = await runtime.source.get_paper(BLEU)
    surnames = {a.name.split()[-1] for a in bleu.authors}
    assert reply.answer is not None and reply.message.startswith("Papers by ")
    assert all(name in reply.message.split(":")[0] for name in surnames)  # every author is named
    assert reply.results and all(any(a.name.split()[-1] in surnames for a in r.paper.authors) for r in reply.results)


async def test_a_results_citation_is_given_in_the_chat_and_a_result_asked_about_is_shown(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown, second = [r.paper.id for r in reply.results], reply.results[1].paper
    reply = await s.user_says("give me the bibtex for #2")  # was a topic search for "bibtex for #2"
    assert (
        reply.message.startswith("#2 ")
        and "```bibtex\n@" in reply.message
        and [r.paper.id for r in reply.results] == shown
    )
    reply = await s.user_says("is there code for #2?")  # was a topic search for "code for #2"
    assert reply.message.startswith(f"#2 “{second.title}”") and [r.paper.id for r in reply.results] == shown


async def test_an_organisations_papers_on_a_topic_are_those_with_an_author_there(runtime, local_source):
    # an organisation and a word of a title of one of its papers, taken from the slice
    store = local_source.store
    paper = next(
        p for p in store.papers(range(len(store)))
        if any(a.affiliation and "University of " in a.affiliation for a in p.authors) and len(p.title.split()) > 3
    )  # fmt: skip
    aff = next(a.affiliation for a in paper.authors if a.affiliation and "University of " in a.affiliation)
    org = "University of " + aff.split("University of ")[1].split(",")[0].split()[0]
    topic = max((w for w in paper.title.split() if w.isalpha()), key=len).lower()
    reply = await Session(runtime).user_says(f"what did {org} publish on {topic}?")  # no such question before
    assert reply.answer is not None and reply.message.startswith(f"Papers from {org} on {topic}")
    assert reply.results and all(
        any(a.affiliation and org.lower() in a.affiliation.lower() for a in r.paper.authors) for r in reply.results
    )
    assert any("name their authors' institutions" in n for n in reply.notes) or all(
        r.paper.authors for r in reply.results
    )


async def test_journal_papers_asked_for_are_all_journal_papers_and_said_so(runtime):
    from pilot.publication import publication

    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("journal papers on parsing"))
    assert s.intent.topic == "parsing" and reply.results and "only journal papers" in reply.message
    assert all(publication(r.paper).kind == "journal" for r in reply.results)
    reply = await s.user_says("no workshop papers")  # excluded papers that mention the word "workshop"
    assert "leaving out workshop papers" in reply.message
    assert all(publication(r.paper).kind != "workshop" for r in reply.results)


async def test_a_typo_in_a_topic_is_searched_as_meant_and_said(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers on machine translaton")  # searched as typed: the lexical search found nothing
    assert s.intent.topic == "machine translation"
    # the reader puts the typo right and says so (or the source finds no paper with it and says that)
    assert any("“translaton” is in no paper of the source" in n or "I read “translaton” as" in n for n in reply.notes)
    reply = await _answer_until_results(s, reply)
    assert "“machine translation”" in reply.message and reply.results


async def test_the_citers_on_screen_narrowed_to_those_also_citing_another_paper(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"papers citing {BLEU}")
    while reply.question is not None:  # a paper's questions (period, venue): no preference
        reply = await s.choose(len(reply.question.options) - 1)
    assert s.anchor.id == BLEU and reply.results
    other = next(pid for r in reply.results for pid in (r.paper.references or []) if pid != BLEU)
    name = (await runtime.source.get_paper(other)).title
    reply = await s.user_says(f'only the ones that also cite "{name}"')  # was a new search for that paper
    assert s.anchor.id == BLEU and s.intent.also_cites == [other] and reply.question is None and reply.results
    assert all(BLEU in (r.paper.references or []) and other in (r.paper.references or []) for r in reply.results)


async def test_a_paper_given_by_its_acl_anthology_page_is_taken_without_asking(runtime):
    s = Session(runtime)
    await s.user_says("papers citing https://aclanthology.org/P02-1040/")  # a paper called by the URL
    assert s.anchor is not None and s.anchor.id == BLEU and s.intent.direction == "successor"


async def test_a_step_of_the_workflow_edited_in_words_makes_a_new_version(runtime):
    s = Session(runtime)
    await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    versions = len(s.versions)
    reply = await s.user_says("set k to 20")  # a topic search for "set k"
    assert len(reply.results) == 20 and len(s.versions) == versions + 1 and "showing 20 papers" in s.versions[-1].reason
    reply = await s.user_says("remove the magic step")  # nothing changes, the steps are listed
    assert len(s.versions) == versions + 1 and "The steps are:" in reply.message and len(reply.results) == 20
    reply = await s.user_says("rerun the workflow")
    assert len(s.versions) == versions + 1 and len(reply.results) == 20


async def test_two_papers_named_to_compare_are_shown_side_by_side(runtime):
    bleu = await runtime.source.get_paper(BLEU)
    reply = await Session(runtime).user_says(f"difference between {BLEU} and acl:N03-1033")  # a topic search before
    assert reply.message.startswith(f"#1 “{bleu.title}”") and "\n\n#2 “" in reply.message
    assert "et al.." not in reply.message


async def test_how_often_a_paper_is_cited_is_answered_with_its_count_and_its_citers_are_searched(runtime, by_id):
    # was a topic search for "times has the BLEU paper been cited" (or "many papers cite BLEU")
    s = Session(runtime)
    reply = await s.user_says("how many times has the BLEU paper been cited?")
    assert s.anchor is not None and s.anchor.id == BLEU and s.intent.direction == "successor"
    count = by_id[BLEU]["in_corpus_citations"]
    assert any(f"is cited by {count:,} papers in this source" in note for note in reply.notes), reply.notes


async def test_summarize_these_sums_the_list_up_with_its_themes(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    reply = await s.user_says("summarize these papers")  # was a topic search for "summarize"
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]
    years = sorted(p.year for p in shown if p.year)
    assert reply.message.startswith(f"{len(shown)} papers. Years: {years[0]}–{years[-1]}")
    themes = re.search(r"Themes: (.*?)\. Venues", reply.message)
    assert themes, reply.message
    # every theme says how many results it holds, and the themes share the list out
    counts = [int(n) for n in re.findall(r"\((\d+): #", themes.group(1))]
    assert len(counts) >= 2 and sum(counts) <= len(shown)
    assert "focus on" in reply.message


async def test_a_period_named_by_a_paper_starts_at_that_papers_year(runtime, by_id):
    # "after BLEU": the search starts the year after BLEU appeared (was a topic search for "… after BLEU")
    s = Session(runtime)
    reply = await s.user_says("papers on machine translation evaluation after BLEU")
    year = by_id[BLEU]["year"]
    assert s.intent.topic == "machine translation evaluation" and s.intent.year_min == year + 1
    assert any(f"“after BLEU”: from {year + 1}" in note for note in reply.notes), reply.notes
    reply = await Session(runtime).user_says("parsing since Glorp")
    assert any("could not date “Glorp”" in note for note in reply.notes)


async def test_version_and_clear_filters_typed_in_the_chat(runtime):
    s = Session(runtime)
    await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    first, was = [r.paper.id for r in s.results], s.versions[s.current_version].version
    await s.user_says("only after 2005")
    assert s.intent.year_min == 2006 and s.versions[s.current_version].version == was + 1
    reply = await s.user_says("clear all filters")  # was a topic search for "clear all filters"
    assert s.intent.year_min is None and s.versions[s.current_version].version == was + 2 and reply.error is None
    reply = await s.user_says(f"go back to version {was}")
    assert s.versions[s.current_version].version == was and [r.paper.id for r in reply.results] == first


async def test_bibtex_for_a_named_paper_is_given_in_the_chat_and_the_list_stays(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper.id for r in reply.results]
    reply = await s.user_says(f'bibtex for "{BLEU_TITLE}"')  # was a topic search for "bibtex for …"
    assert "```bibtex" in reply.message and "Bleu" in reply.message and "Papineni" in reply.message
    assert [r.paper.id for r in reply.results] == shown


async def test_where_to_start_names_the_best_match_and_the_most_cited(runtime):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    reply = await s.user_says("which one should I read first?")  # was a topic search for "first"
    assert reply.message.startswith(f"#1 “{shown[0].title[:40]}") and "matches the search best" in reply.message
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]


async def test_yes_to_searching_a_missing_papers_words_searches_them(runtime):
    s = Session(runtime)
    reply = await s.user_says("what came before Glorpnet?")
    assert reply.question is not None and reply.question.slot == "fallback"
    await s.user_says("yes")  # was a topic search for "yes"
    assert s.intent.topic == "Glorpnet"


async def test_is_a_paper_on_the_list_says_its_number_or_why_not(runtime, by_id):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    reply = await s.user_says(f'is "{shown[2].title}" on the list?')  # was a topic search
    assert reply.message.startswith("Yes: “") and reply.message.endswith("is #3.")
    other = by_id["acl:D08-1048"]["title"]  # a FrameNet paper: no machine translation search finds it
    reply = await s.user_says(f"why isn't “{other}” on the list?")
    assert reply.message.startswith("No: “")
    assert "no step of this search found it" in reply.message or "left it out" in reply.message
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]


async def test_which_of_these_cite_a_paper_numbers_them(runtime, by_id):
    s = Session(runtime)
    reply = await _answer_until_results(s, await s.user_says("What should I read on machine translation?"))
    shown = [r.paper for r in reply.results]
    citing = [n for n, p in enumerate(shown, 1) if BLEU in (by_id.get(p.id, {}).get("references") or [])]
    reply = await s.user_says(f'which of these cite "{BLEU_TITLE}"?')  # was a topic search
    assert citing  # the slice's machine translation list holds BLEU's citers
    assert reply.message.startswith(f"{len(citing)} of the {len(shown)} results cite “Bleu")
    assert f"#{citing[0]}" in reply.message
    assert [r.paper.id for r in reply.results] == [p.id for p in shown]


def test_a_citation_count_without_the_sources_own_links_is_said_not_crashed_on():
    # a Semantic Scholar record has a citation count but no count of in-source links (the format once raised)
    from pilot.models import Paper
    from pilot.session import _citation_count

    remote = Paper(id="s2:1", title="Bleu", year=2002, citation_count=12000)
    assert _citation_count(remote) == "“Bleu” (2002) is cited by 12,000 in all, by the source's count."
    assert _citation_count(Paper(id="s2:2", title="X")) == "The source gives no citation count for “X”."


async def test_words_written_like_a_title_that_no_paper_has_are_searched_as_a_topic_and_said(runtime):
    s = Session(runtime)
    reply = await s.user_says("Papers about A Lattice Grammar For Zyxwv Parsing Of Noisy Tweets")  # no such paper
    assert s.anchor is None and s.intent.topic and "Zyxwv" in s.intent.topic and reply.error is None
    assert any("searching its words as a topic" in n for n in reply.notes)  # said, not a question back
    s = Session(runtime)
    reply = await s.user_says('papers about "A Lattice Grammar For Zyxwv Parsing Of Noisy Tweets"')  # quoted: a title
    assert s.anchor is None and reply.question is not None and reply.question.slot == "fallback"


@pytest.mark.parametrize("text", ["find me some papers", "the newest work", "can you look up some research for me?"])
async def test_a_request_with_nothing_to_search_for_asks_what_and_searches_nothing(runtime, text):
    s = Session(runtime)
    reply = await s.user_says(text)
    assert not reply.results and reply.error is None
    assert "What should I search for?" in reply.message, reply.message
    named = await s.user_says("papers on dependency parsing")  # the conversation goes on as a first request would
    assert named.results or named.question is not None, named.message


@pytest.mark.parametrize("said", ["keep only #1 and #3", "keep the first three, bin the rest"])
async def test_keeping_some_shown_papers_leaves_just_those(runtime, said):
    s = Session(runtime)
    await s.user_says("papers on dependency parsing")
    first = [r.paper.id for r in (await s.search_now()).results]
    reply = await s.user_says(said)
    wanted = [first[0], first[2]] if "#3" in said else first[:3]
    assert [r.paper.id for r in reply.results] == wanted, reply.message  # not refilled with papers never shown
    kept = "#1, #3" if "#3" in said else "#1, #2, #3"
    assert f"kept the {len(wanted)} paper(s) you chose ({kept})" in reply.message, reply.message  # not "marked"


async def test_a_paper_someone_else_mentioned_is_asked_for_by_what_would_find_it(runtime):
    s = Session(runtime)
    reply = await s.user_says("can you look up the paper Sarah mentioned in group meeting")
    assert not reply.results and "Give its title" in reply.message, reply.message  # was a search for "Sarah …"
    assert (await s.user_says("papers on dependency parsing")).results or s.intent.topic


async def test_a_reference_to_an_earlier_conversation_is_asked_about_not_searched(runtime):
    s = Session(runtime)
    reply = await s.user_says("what about the thing we talked about last time?")
    assert not reply.results and "cannot see an earlier one" in reply.message, reply.message
    assert (await s.user_says("papers on dependency parsing")).results or s.intent.topic


async def test_both_directions_at_once_asks_which_first_and_offers_each(runtime):
    s = Session(runtime)
    await s.user_says("papers that cite BLEU")
    await s.search_now()
    reply = await s.user_says("predecessors and successors, both")
    assert "Which first?" in reply.message, reply.message
    labels = [o.label for o in reply.question.options] if reply.question else []
    assert any("predecessor" in lab for lab in labels) and any("successor" in lab for lab in labels), labels


async def test_constraints_that_cannot_all_hold_are_asked_about_and_the_list_stays(runtime):
    s = Session(runtime)
    await s.user_says("papers on dependency parsing")
    first = await s.search_now()
    reply = await s.user_says("ACL only, but no ACL papers")
    assert "cannot all hold" in reply.message and "acl" in reply.message.lower(), reply.message
    assert [r.paper.id for r in s.results] == [r.paper.id for r in first.results]  # nothing was changed


async def test_what_a_subjectless_request_asked_of_the_papers_is_kept_for_the_named_search(runtime):
    s = Session(runtime)
    asked = await s.user_says("the newest work please")
    assert "What should I search for?" in asked.message and "I will keep “the newest work please”" in asked.message
    named = await s.user_says("papers on dependency parsing")
    assert s.intent.topic and "dependency parsing" in s.intent.topic
    assert s.intent.recency == "recent", s.intent  # the newest, as asked before the subject was named
    if named.question is not None:
        named = await s.search_now()
    assert named.results and "from the newest 5 years the source holds on it" in named.message, named.message
    await s.user_says("start over")
    again = await s.user_says("papers on machine translation")  # held once, not for ever
    assert s.intent.topic == "machine translation" and s.intent.recency == "any", again.message


async def test_a_narrowing_said_before_any_search_narrows_the_search_named_next(runtime):
    s = Session(runtime)
    asked = await s.user_says("only after 2010")
    assert "I will keep “only after 2010”" in asked.message, asked.message
    await s.user_says("papers on dependency parsing")
    assert s.intent.year_min == 2011, s.intent  # as "papers on dependency parsing after 2010" would


async def test_a_result_named_with_nothing_to_do_with_it_asks_what_and_each_choice_acts(runtime):
    s = Session(runtime)
    await s.user_says("papers on dependency parsing")
    shown = await s.search_now()
    listed = [r.paper.id for r in shown.results]
    reply = await s.user_says("the second")
    assert "What should I do with it" in reply.message, reply.message
    labels = [o.label for o in reply.question.options] if reply.question else []
    assert any(lab.startswith("Why #2") for lab in labels) and any("library" in lab for lab in labels), labels
    assert [r.paper.id for r in reply.results] == listed  # nothing was changed while asking
    keep = next(n for n, lab in enumerate(labels) if "library" in lab)
    kept = await s.choose(keep)
    assert kept.keep == [listed[1]], kept.message


async def test_an_acronym_the_field_uses_for_several_things_is_asked_about_each_sense_offered(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers on SSL for speech")
    assert reply.error is None and not reply.results
    q = reply.question
    assert q is not None
    labels = " | ".join(o.label for o in q.options).lower()
    assert "self-supervised learning" in labels and "semi-supervised learning" in labels
    pick = next(i for i, o in enumerate(q.options) if "semi-supervised" in o.label.lower())
    await s.choose(pick)
    # the sense chosen replaces the acronym inside the subject's own words
    assert s.intent.topic is not None and "semi-supervised learning" in s.intent.topic.lower()
    assert "speech" in s.intent.topic.lower()
    # said with its sense, the same acronym is no question: "semi-supervised learning (SSL)" reads once
    t = Session(runtime)
    reply = await t.user_says("semi-supervised learning (SSL) for text classification")
    assert t.intent.topic is not None and "ssl" not in t.intent.topic.lower()
    assert "semi-supervised learning" in t.intent.topic.lower()
