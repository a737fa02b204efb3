"""Reading a message once, against the state of the conversation (``pilot.understand.read``).

No source is needed: the reading decides *what kind* of message it is and takes its request apart; which
paper a name means is decided later (``pilot.anchors``). Papers, people and topics here are others than the
issue's examples, on purpose.
"""

from __future__ import annotations

import pytest

from clarifier.policy import facet_question
from clarifier.question import Option, Question
from pilot.intent import parse_request, subject_of
from pilot.kg.classify import KGQuery
from pilot.understand import Context, read

FRESH = Context()
RESULTS = Context(phase="results", has_results=True, has_search=True, known_venues=["NAACL", "EMNLP"])
ASKING = Context(phase="clarify", question=facet_question(), has_search=True)
OFFERED = Context(phase="results", question=facet_question(), has_results=True, has_search=True)


@pytest.mark.parametrize(
    "text, kind, target, anchor, direction",
    [
        ("What came before Mamba?", "new_search", "paper", "Mamba", "predecessor"),
        ("papers like CCNet", "new_search", "paper", "CCNet", "sibling"),
        ("Which papers came after the Mask R-CNN paper?", "new_search", "paper", "Mask R-CNN", "successor"),
        (
            "Show me later work that builds on PointPillars and used its ideas",
            "new_search",
            "paper",
            "PointPillars",
            "successor",
        ),
        (
            "Papers that build on Convolutional Sequence to Sequence Learning after 2018",
            "new_search",
            "paper",
            "Convolutional Sequence to Sequence Learning",
            "successor",
        ),
        # "I" is the researcher, never a paper's name
        ("How do I evaluate text summarization?", "new_search", "topic", "text summarization", "benchmark"),
        ("Can I get papers like GloVe?", "new_search", "paper", "GloVe", "sibling"),
        ("Compare BLEU and METEOR", "new_search", "paper", "BLEU and METEOR", None),
    ],
)
def test_request_words_never_become_the_anchor_query(text, kind, target, anchor, direction):
    for ctx in (FRESH, RESULTS):  # the same reading whether or not results are on screen
        msg = read(text, ctx)
        assert (msg.kind, msg.target, msg.request.anchor_query, msg.request.intent.direction) == (
            kind,
            target,
            anchor,
            direction,
        ), msg.why


def test_constraints_of_a_new_request_are_its_own_filters():
    msg = read("Papers that build on Convolutional Sequence to Sequence Learning after 2018", RESULTS)
    assert msg.kind == "new_search" and msg.request.intent.year_min == 2019


@pytest.mark.parametrize(
    "text, topic, types, recency",
    [
        (
            "surveys on question answering over knowledge bases",
            "question answering over knowledge bases",
            ["survey"],
            "any",
        ),
        ("benchmarks for optical flow estimation", "optical flow estimation", ["resource"], "any"),
        ("recent work on image captioning", "image captioning", [], "recent"),
        (
            "Find the literature on semi-supervised word sense disambiguation",
            "semi-supervised word sense disambiguation",
            [],
            "any",
        ),
    ],
)
def test_topic_requests_have_no_anchor_and_no_instruction_words(text, topic, types, recency):
    msg = read(text, FRESH)
    assert msg.kind == "new_search" and msg.target == "topic"
    intent = msg.request.intent
    assert (msg.request.anchor_query, intent.topic, intent.paper_types, intent.recency) == (
        topic,
        topic,
        types,
        recency,
    )


@pytest.mark.parametrize(
    "text",
    ["only after 2012", "not #3", "fewer", "exclude speech", "too broad", "more like the second one", "only NAACL"],
)
def test_feedback_on_the_results_refines_them(text):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.actionable, msg.why


def test_an_entity_question_after_results_is_not_a_filter():
    msg = read("Which papers did Dan Jurafsky publish at NAACL?", RESULTS)
    assert msg.kind == "entity" and msg.entity.person == "Dan Jurafsky" and msg.entity.venue == "NAACL"


def test_a_new_direction_for_the_same_paper_is_a_new_search():
    msg = read("and what about surveys covering it?", RESULTS)
    assert (msg.kind, msg.target, msg.request.intent.direction) == ("new_search", "current", "survey")


def test_a_bare_topic_over_results_is_ambiguous_and_before_results_a_search():
    assert read("image captioning", RESULTS).kind == "ambiguous"
    assert read("image captioning", FRESH).kind == "new_search"


def test_answers_commands_and_nothing_to_act_on():
    assert read("2", ASKING).kind == "answer" and read("2", ASKING).option == 1
    assert read("its method", ASKING).option == 1
    assert read("just search", ASKING).command == "search_now"
    assert read("start over", RESULTS).command == "reset"
    assert read("only after 2010", FRESH).kind == "unclear"  # nothing to narrow yet
    # a question offered with the results, answered with something else: that is feedback on the results
    assert read("only after 2010", OFFERED).kind == "refine"
    # while a question is open, a new request is still a new request
    assert read("What came before PointPillars?", ASKING).kind == "new_search"


def test_subject_forms():
    forms = {t: parse_request(t).anchor_kind for t in ["papers like CCNet", "papers like Penn Discourse Treebank"]}
    assert forms == {"papers like CCNet": "name", "papers like Penn Discourse Treebank": "name"}
    assert parse_request("What came after Sequence to Sequence Learning with Neural Networks?").anchor_kind == "title"
    assert parse_request("papers on coreference with neural networks").anchor_kind == "topic"
    assert subject_of("Which papers at EMNLP in the last 5 years cite the Seq2Seq paper?", ["EMNLP"]) == "Seq2Seq"


@pytest.mark.parametrize(
    "text, anchor",
    [
        (
            '<img src=x onerror="window.__pwned = 2"> papers like "Accurate Unlexicalized Parsing"',
            "Accurate Unlexicalized Parsing",
        ),
        (
            '<a href="https://example.org/attention">What came before "Sequence to Sequence Learning"?</a>',
            "Sequence to Sequence Learning",
        ),
    ],
)
def test_a_quoted_attribute_in_pasted_markup_is_never_read_as_the_title(text, anchor):
    msg = read(text, FRESH)
    assert msg.request is not None and msg.request.anchor_query == anchor


def test_a_message_of_markup_only_is_unclear_not_a_search():
    msg = read('<img src=x onerror="alert(1)"><iframe src="javascript:alert(2)"></iframe>', FRESH)
    assert msg.kind == "unclear"


PERIOD = Question(
    slot="time",
    text="Which period matters most to you?",
    options=[
        Option(label="Up to 2015", sets={"year_max": 2015}),
        Option(label="2016 or later", sets={"year_min": 2016}),
    ],
)
ASKING_PERIOD = Context(phase="clarify", question=PERIOD, has_search=True, known_venues=["NAACL", "EMNLP"])


def test_a_constraint_typed_instead_of_an_answer_narrows_the_search_being_set_up():
    msg = read("only EMNLP", ASKING_PERIOD)
    assert (msg.kind, msg.updates) == ("refine", {"venues": ["EMNLP"]})
    # words that answer the open question are still its answer
    assert read("2016 or later", ASKING_PERIOD).kind == "answer"
    assert read("only papers after 2016", ASKING_PERIOD).kind == "answer"


def test_another_topic_with_a_period_is_a_new_search_not_the_answer_to_the_period_question():
    asking = ASKING_PERIOD.model_copy(update={"topic": "named entity recognition"})
    msg = read("find me work on sentiment analysis of tweets, not older than 2012", asking)
    assert (msg.kind, msg.target) == ("new_search", "topic")
    assert msg.request.anchor_query == "sentiment analysis of tweets" and msg.request.intent.year_min == 2012
    # the same topic with a period still answers the question
    assert read("papers on named entity recognition since 2016", asking).kind == "answer"


@pytest.mark.parametrize("text", ["hi", "Hello there!", "help", "thanks!", "what can you do?", "Thank you very much"])
def test_greetings_thanks_and_help_are_never_searched(text):
    for ctx in (FRESH, RESULTS, ASKING):
        msg = read(text, ctx)
        assert (msg.kind, msg.command) == ("command", "help"), (text, ctx.phase, msg)


@pytest.mark.parametrize(
    "text, direction",
    [
        ("what about later work?", "successor"),
        ("and what about earlier papers?", "predecessor"),
        ("what about surveys?", "survey"),
    ],  # fmt: skip
)
def test_another_direction_for_the_same_search_is_not_a_topic(text, direction):
    msg = read(text, RESULTS)
    assert (msg.kind, msg.target, msg.request.intent.direction) == ("new_search", "current", direction)


@pytest.mark.parametrize(
    "text, years",
    [
        ("drop anything before 2019", {"year_min": 2019}),
        ("remove papers before 2015", {"year_min": 2015}),
        ("nothing older than 2012", {"year_min": 2012}),
        ("hide everything after 2010", {"year_max": 2010}),
        ("no papers since 2020", {"year_max": 2019}),
        ("only the ones after 2019", {"year_min": 2020}),
    ],
)
def test_words_that_drop_a_period_keep_the_rest(text, years):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback.updates == years, msg


@pytest.mark.parametrize(
    "text, topic, years",
    [
        ("anything on coreference resolution from the 90s?", "coreference resolution", (1990, 1999)),
        ("something about speech synthesis in the '80s", "speech synthesis", (1980, 1989)),
        ("papers on parsing in the 1990s", "parsing", (1990, 1999)),
    ],
)
def test_decades_are_periods_and_filler_words_are_not_the_topic(text, topic, years):
    msg = read(text, FRESH)
    assert msg.kind == "new_search" and msg.request.anchor_query == topic
    assert (msg.request.intent.year_min, msg.request.intent.year_max) == years


@pytest.mark.parametrize(
    "text, name",
    [
        ("Which benchmarks does SQuAD get compared against?", "SQuAD"),
        ("What does PointNet build on?", "PointNet"),
        ("Which corpora did WordNet get evaluated with?", "WordNet"),
    ],  # fmt: skip
)
def test_a_name_followed_by_its_verb_is_the_name(text, name):
    msg = read(text, FRESH)
    assert (msg.kind, msg.target, msg.request.anchor_query) == ("new_search", "paper", name)


@pytest.mark.parametrize("text, size", [("fewer results", "fewer"), ("more results please", "more")])
def test_the_word_results_is_the_list_not_the_results_facet(text, size):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback.size == size and "facet" not in msg.feedback.updates


@pytest.mark.parametrize(
    "text, command, refs",
    [
        ("why is #3 here?", "explain", [3]),
        ("tell me more about #1", "explain", [1]),
        ("what is 2 about?", "explain", [2]),
        ("keep #1 and #4", "keep", [1, 4]),
        ("save 2, 5 and 7 to my library", "keep", [2, 5, 7]),
        ("keep the first three", "keep", [1, 2, 3]),  # was a bare topic "keep the first three"
        ("save the top 5 papers", "keep", [1, 2, 3, 4, 5]),
        ("export as BibTeX", "export", []),
        ("can I get a bib file?", "export", []),
    ],
)
def test_questions_and_orders_about_the_list_on_screen_are_never_searched(text, command, refs):
    msg = read(text, RESULTS.model_copy(update={"listed": 10}))
    assert (msg.kind, msg.command, msg.refs) == ("command", command, refs)


def test_its_is_the_paper_being_searched_and_n_more_is_the_list_size():
    assert read("what about its predecessors?", RESULTS).target == "current"
    more = read("show me 5 more", RESULTS)
    assert more.kind == "refine" and more.feedback.extra == 5


@pytest.mark.parametrize(
    "text, anchor, direction, focus",
    [
        ("papers like GloVe but for sentences", "GloVe", "sibling", ["sentences"]),
        ("something like ELMo but multilingual", "ELMo", "sibling", ["multilingual"]),  # was a topic, no direction
        ("papers like BERT for biomedical text", "BERT", "sibling", ["biomedical", "text"]),
        ("I need papers that cite Moses and use it for low-resource translation", "Moses", "successor",
         ["low-resource", "translation"]),
        ("what came after TextRank, but only for keyword extraction?", "TextRank", "successor",
         ["keyword", "extraction"]),
        ("papers using FrameNet in the context of question answering", "FrameNet", None, ["question", "answering"]),
        # a title keeps its own words ("for", "applied to"): only what follows the title is a focus
        ("papers similar to Deep Residual Learning for Image Recognition",
         "Deep Residual Learning for Image Recognition", "sibling", []),
        ('papers similar to "Deep Residual Learning for Image Recognition" for medical images',
         "Deep Residual Learning for Image Recognition", "sibling", ["medical", "images"]),
        # "but for" ends a title, even one with a "for" of its own or typed in lower case (was the whole phrase)
        ("papers like Deep Residual Learning for Image Recognition but for text",
         "Deep Residual Learning for Image Recognition", "sibling", ["text"]),
        ("papers similar to attention is all you need, but about speech", "attention is all you need", "sibling",
         ["speech"]),
        # "extend / apply / adapt X to Y": Y is the focus (was the topic "BERT to multilingual settings")
        ("Find papers that extend BERT to multilingual settings", "BERT", "successor", ["multilingual", "settings"]),
        ("papers that apply BERT to biomedical text", "BERT", "successor", ["biomedical", "text"]),
        ("papers that extend Attention Is All You Need to speech", "Attention Is All You Need", "successor",
         ["speech"]),
    ],
)  # fmt: skip
def test_a_named_paper_with_a_focus_is_the_paper_and_the_focus_is_a_preference(text, anchor, direction, focus):
    msg = read(text, Context())
    assert msg.kind == "new_search" and msg.request is not None
    assert msg.request.anchor_query == anchor and msg.request.intent.direction == direction
    assert msg.request.intent.topic_terms == focus


@pytest.mark.parametrize(
    "text, kind, anchor, authors",
    [
        ("papers similar to the one on sentence compression by Knight and Marcu", "described", "sentence compression",
         ["Knight", "Marcu"]),
        ("what came before the parsing paper by Collins?", "described", "parsing", ["Collins"]),
        ("papers like Manning and Klein's parsing paper", "described", "parsing", ["Manning", "Klein"]),
        ("papers citing the work on translation by Brown, Della Pietra and Mercer", "described", "translation",
         ["Brown", "Pietra", "Mercer"]),
        # a title or a name followed by its authors is that title or name
        ("papers similar to Attention Is All You Need by Vaswani et al.", "title", "Attention Is All You Need", []),
    ],
)  # fmt: skip
def test_a_paper_described_by_its_topic_and_authors_is_a_paper_not_a_topic(text, kind, anchor, authors):
    msg = read(text, Context())
    assert msg.kind == "new_search" and msg.target == "paper" and msg.request is not None
    assert (msg.request.anchor_kind, msg.request.anchor_query, msg.request.authors) == (kind, anchor, authors)


def test_papers_on_a_topic_by_someone_without_a_direction_stay_a_question_about_the_person():
    msg = read("papers on sentence compression by Kevin Knight", Context())
    assert msg.kind == "entity" and msg.entity is not None and msg.entity.person == "Kevin Knight"


@pytest.mark.parametrize(
    "text, venues, left_out",
    [
        ("only ACL, not NAACL", ["ACL"], ["NAACL"]),  # ACL once went unseen beside NAACL: all of NAACL was kept
        ("not from EMNLP", None, ["EMNLP"]),
        ("drop anything from arXiv", None, ["arXiv"]),
    ],
)
def test_a_venue_to_leave_out_narrows_the_results_without_becoming_the_only_venue(text, venues, left_out):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback is not None
    assert msg.feedback.updates.get("venues") == venues and msg.feedback.updates["exclude_venues"] == left_out


@pytest.mark.parametrize("text", ["Mostly about unlexicalized, maxent, question, parsing.", "Mainly on tree kernels"])
def test_an_answer_that_starts_with_a_capitalised_word_is_no_paper_with_a_focus(text):
    # "Mostly" once became a paper's name (the focus "about …" after it) and the topic question went unanswered
    assert parse_request(text).anchor_kind == "topic"
    assert read(text, ASKING).kind != "new_search"


@pytest.mark.parametrize(
    "text, reference, authors, year, direction",
    [
        ("What builds on Lafferty et al. (2001)?", "Lafferty et al. (2001)", ["Lafferty"], 2001, "successor"),
        ("papers like Charniak 2000", "Charniak 2000", ["Charniak"], 2000, "sibling"),
        ("predecessors of Brown and Mercer, 1993", "Brown and Mercer, 1993", ["Brown", "Mercer"], 1993, "predecessor"),
        ("anything newer than Yarowsky 1995a?", "Yarowsky 1995a", ["Yarowsky"], 1995, "successor"),
        ("similar to Blei, Ng & Jordan (2003)", "Blei, Ng & Jordan (2003)", ["Blei", "Ng", "Jordan"], 2003, "sibling"),
        ("papers like van Noord et al. 2006", "van Noord et al. 2006", ["van Noord"], 2006, "sibling"),
    ],
)
def test_a_paper_cited_by_author_and_year_is_that_reference_not_a_topic_or_a_period(
    text, reference, authors, year, direction
):
    msg = read(text, FRESH)
    assert msg.kind == "new_search" and msg.target == "paper" and msg.request is not None
    req = msg.request
    assert (req.anchor_kind, req.anchor_query, req.authors, req.year) == ("cited", reference, authors, year)
    assert req.intent.direction == direction and req.intent.year_min is None and req.intent.year_max is None


@pytest.mark.parametrize(
    "text", ["Since 2019, what came after ELMo?", "NAACL 2016 papers on parsing", "June 2020 papers on summarization"]
)
def test_a_capitalised_word_before_a_year_is_no_author(text):
    assert parse_request(text).anchor_kind != "cited"


@pytest.mark.parametrize(
    "text, direction",
    [
        ("anything newer than ELMo?", "successor"),
        ("what has appeared since ELMo?", "successor"),
        ("anything older than ELMo?", "predecessor"),
        ("nothing older than 2015 please", None),  # a period, not a direction
        ("papers after ELMo about question answering", "successor"),
        ("work before ELMo", "predecessor"),
        ("papers after 2019 on parsing", None),
    ],
)
def test_newer_older_and_since_a_paper_name_a_direction(text, direction):
    assert parse_request(text).intent.direction == direction


@pytest.mark.parametrize(
    "text, option",
    [("the first one", 0), ("I mean the second paper", 1), ("option 3", 2), ("the last one", 2),
     ("the Moses one", 0), ("the one from 2003", 2), ("the fifth one", None)],
)  # fmt: skip
def test_an_offered_paper_is_picked_by_its_place_or_a_word_of_it(text, option):
    # "the first one" to "Is it one of these?" once became a topic search for "first"
    q = Question(
        slot="anchor",
        text="Is it one of these?",
        options=[
            Option(label="Moses: Open Source Toolkit for Statistical Machine Translation (2007, ACL)", sets={}),
            Option(label="Factored Translation Models (2007, EMNLP)", sets={}),
            Option(label="Head-Driven Statistical Models For Natural Language Parsing (2003, CL)", sets={}),
            Option(label="None of these — search by my words", sets={}),
        ],
    )
    msg = read(text, Context(phase="clarify", question=q))
    assert msg.option == option and (option is None or msg.kind == "answer")


@pytest.mark.parametrize(
    "text, topic, left_out",
    [
        ("papers on parsing but not dependency parsing", "parsing", ["dependency parsing"]),
        ("work on summarization excluding extractive methods", "summarization", ["extractive methods"]),
        ("surveys on sentiment analysis except for aspect-based ones", "sentiment analysis", ["aspect-based"]),
        ("papers on speech recognition, no neural", "speech recognition", ["neural"]),
    ],
)
def test_what_a_first_request_leaves_out_is_no_part_of_its_topic(text, topic, left_out):
    # the excluded words once stayed in the topic: "parsing but not dependency parsing" searched for them
    req = parse_request(text)
    assert (req.anchor_query, req.intent.exclude_terms) == (topic, left_out)


def test_a_method_named_with_without_stays_one_topic():
    assert parse_request("papers on learning without forgetting").anchor_query == "learning without forgetting"


@pytest.mark.parametrize(
    "text, types",
    [
        ("give me papers on entity linking from before 2012, no surveys", ["resource", "method", "position"]),
        ("papers on parsing, not surveys or tutorials please", ["resource", "method", "position"]),
        ("surveys on entity linking", ["survey"]),
        ("papers on entity linking without data augmentation", []),
    ],
)
def test_a_kind_of_paper_to_leave_out_is_not_the_kind_asked_for(text, types):
    req = parse_request(text)
    assert req.intent.paper_types == types and (req.intent.direction == "survey") == (types == ["survey"])


@pytest.mark.parametrize(
    "text, target, anchor",
    [
        ("actually I meant ELMo", "paper", "ELMo"),
        ("no, I meant Charniak 2000", "paper", "Charniak 2000"),
        ("sorry, I meant semantic role labeling", "topic", "semantic role labeling"),
        ("not that one, I meant GloVe", "paper", "GloVe"),
    ],
)
def test_a_correction_names_what_the_search_should_have_been_about(text, target, anchor):
    # "actually I meant X" while a search is set up was kept as a note and changed nothing
    msg = read(text, ASKING)
    assert (msg.kind, msg.target, msg.correction) == ("new_search", target, True)
    assert msg.request is not None and msg.request.anchor_query == anchor


@pytest.mark.parametrize(
    "text, year", [("I mean the 2014 one", 2014), ("sorry, the 2007 paper", 2007), ("no, the one from 1994", 1994)]
)
def test_another_year_names_the_paper_of_the_same_name_from_that_year(text, year):
    # "I mean the 2014 one" was a topic search for "2014 one"
    for ctx in (ASKING, RESULTS):
        msg = read(text, ctx)
        assert (msg.kind, msg.target, msg.correction) == ("new_search", "paper", True)
        assert msg.request is not None and msg.request.year == year
    # a topic search has no paper of another year: said, not searched
    msg = read(text, RESULTS.model_copy(update={"topic": "parsing"}))
    assert msg.kind == "unclear" and "about a topic" in msg.hint and f"published in {year}" in msg.hint


@pytest.mark.parametrize(
    "text, order",
    [("sort by year", "newest"), ("newest first", "newest"), ("oldest first please", "oldest"),
     ("sort them by citations", "most_cited"), ("back to relevance", "score"),
     # an explicit direction after the key wins: these were read as newest first, or left "descending" as a topic
     ("sort by year, oldest first", "oldest"), ("order them by date, earliest first", "oldest"),
     ("sort by year, oldest to newest", "oldest"), ("sort by year descending", "newest"),
     ("order by citations descending", "most_cited"), ("sort by date (ascending)", "oldest")],
)  # fmt: skip
def test_an_order_for_the_list_on_screen_is_feedback_not_a_search(text, order):
    # "newest first" was a new search for the topic "first"; "sort by year" asked "refine or new search?"
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.order == order


@pytest.mark.parametrize(
    "text, kind",
    [("which of these are surveys?", "survey"), ("are any of them datasets?", "resource"),
     ("which ones are method papers", "method")],
)  # fmt: skip
def test_which_results_are_of_a_kind_is_a_question_about_the_list(text, kind):
    # "which of these are surveys?" started a survey search of the paper's area
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command, msg.about) == ("command", "kinds", kind)


@pytest.mark.parametrize(
    "text", ["only papers published in 2005", "published after 2010", "papers published in 2005 only"]
)
def test_a_publication_period_typed_with_results_on_screen_narrows_them(text):
    # "only papers published in 2005" was a new search for the topic "published"
    msg = read(text, RESULTS.model_copy(update={"topic": "parsing"}))
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.updates.get("year_min") in (2005, 2011)


def test_a_first_request_with_an_order_or_a_left_out_period_keeps_them_out_of_its_subject():
    req = parse_request("What came after GloVe? newest first")  # was the topic "GloVe? first"
    assert (req.anchor_query, req.anchor_kind, req.intent.order) == ("GloVe", "name", "newest")
    req = parse_request("papers on parsing not from the 90s")  # searched "parsing not" from the 90s only
    assert req.anchor_query == "parsing" and req.intent.exclude_years == [(1990, 1999)]
    assert req.intent.year_min is None and req.intent.year_max is None
    # order words inside a topic or a title are the topic's ("new first-order", "chronological ordering")
    req = parse_request("papers on chronological ordering of news events")
    assert req.anchor_query == "chronological ordering of news events" and req.intent.order == "score"
    assert parse_request("What came after GloVe? Newest first").intent.order == "newest"


@pytest.mark.parametrize(
    "text, first, second",
    [("papers that cite both GloVe and word2vec", "GloVe", "word2vec"),
     ("Which papers cite both BLEU and ROUGE?", "BLEU", "ROUGE"),
     ("work citing the Penn Treebank and WordNet together", "Penn Treebank", "WordNet")],
)  # fmt: skip
def test_papers_citing_two_papers_name_both(text, first, second):
    msg = read(text, Context())
    assert msg.kind == "new_search" and msg.request is not None and msg.request.anchor_query == first
    assert msg.request.intent.direction == "successor" and [p.anchor_query for p in msg.also] == [second]


def test_the_same_but_for_x_narrows_the_results_on_screen():
    msg = read("the same but for Chinese", RESULTS)  # was "nothing to search for"
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.updates["topic_terms"] == ["chinese"]
    msg = read("now the same but only EMNLP", RESULTS)  # was a topic search for "same"
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.updates["venues"] == ["EMNLP"]


def test_a_title_after_tell_me_about_is_the_paper_not_its_first_word():
    # the topic reader took "Is All You Need" for instruction words and searched the topic "Attention"
    msg = read("tell me about Attention Is All You Need", FRESH)
    assert msg.request is not None and (msg.request.anchor_kind, msg.request.anchor_query) == (
        "title",
        "Attention Is All You Need",
    )


@pytest.mark.parametrize(
    "text, direction, anchor",
    [
        # "paper cite" read as "papers that cite": what a paper cites are its references
        ("what does the BLEU paper cite?", "predecessor", "BLEU"),
        ("which papers did GloVe cite", "predecessor", "GloVe"),
        ("papers cited by BERT", "predecessor", "BERT"),  # was: papers citing BERT
        ("work cited by the Penn Treebank paper", "predecessor", "Penn Treebank"),
        ("references of the BLEU paper", "predecessor", "BLEU"),  # was: the topic "references of the BLEU"
        ("what is BERT cited by?", "successor", "BERT"),
        ("papers citing BLEU", "successor", "BLEU"),
    ],
)
def test_what_a_paper_cites_and_what_cites_it_are_told_apart(text, direction, anchor):
    parsed = parse_request(text)
    assert (parsed.intent.direction, parsed.anchor_query) == (direction, anchor)


@pytest.mark.parametrize(
    "text, direction, anchor, typo",
    [
        ("predecesors of the transformer paper", "predecessor", "transformer", "predecesors"),
        ("sucessors of word2vec", "successor", "word2vec", "sucessors"),
        ("benchmakrs used by BERT", "benchmark", "BERT", "benchmakrs"),
        ("papers similiar to GloVe", "sibling", "GloVe", "similiar"),
        ("surveys coverign BERT", "survey", "BERT", "coverign"),
    ],
)
def test_a_misspelt_direction_word_is_read_as_meant_and_said(text, direction, anchor, typo):
    # "predecesors of the transformer paper" was a topic search for "predecesors of the transformer"
    parsed = parse_request(text)
    assert (parsed.intent.direction, parsed.anchor_query) == (direction, anchor) and typo in parsed.respelt


@pytest.mark.parametrize(
    "text", ["papers on reference resolution", "papers on relayed messages", "surveys on hovering drones",
             'the "Predecesors" paper', "papers on successive approximation"],
)  # fmt: skip
def test_real_words_and_quoted_titles_are_never_respelt(text):
    assert parse_request(text).respelt == {}


def test_the_most_cited_papers_on_a_topic_are_listed_most_cited_first():
    parsed = parse_request("I need the most cited papers on dependency parsing")
    assert (parsed.intent.order, parsed.intent.topic) == ("most_cited", "dependency parsing")


@pytest.mark.parametrize(
    "text", ["how many are from NAACL?", "how many of them are after 2018?", "how many surveys?", "how many are there?",
             "How many of these were published before 2010", "how many are by Manning?",
             "Which of these are by Michael Collins?", "how many were written by Christopher D. Manning"],
)  # fmt: skip
def test_how_many_of_the_list_is_a_count_not_a_search(text):
    # "how many are from ACL?" started a topic search for "ACL"
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command) == ("command", "count")


def test_how_many_papers_someone_wrote_is_still_a_question_about_them():
    msg = read("how many papers did Christopher Manning write?", RESULTS.model_copy(update={"listed": 50}))
    assert msg.command != "count"


@pytest.mark.parametrize(
    "text, anchor",
    [("what about word2vec?", "word2vec"), ("and for BERT?", "BERT"), ("same but for GloVe", "GloVe"),
     ("now do the same for the Penn Treebank paper", "Penn Treebank"), ("Now for Collins (1999)", "Collins (1999)")],
)  # fmt: skip
def test_the_same_search_for_another_paper_keeps_the_search_and_changes_the_paper(text, anchor):
    # "what about word2vec?" after papers similar to GloVe was a topic search on "word2vec"; "same for GloVe"
    # asked whether to refine the results
    msg = read(text, RESULTS)
    assert (msg.kind, msg.target, msg.correction) == ("new_search", "paper", True)
    assert msg.request is not None and msg.request.anchor_query == anchor


@pytest.mark.parametrize("text", ["what about surveys?", "what about later work?", "how about tagging?"])
def test_what_about_a_kind_direction_or_topic_is_not_another_paper(text):
    assert read(text, RESULTS).correction is False


@pytest.mark.parametrize(
    "text, who",
    [("only the ones by Mikolov", "Mikolov"), ("Only those written by Collins", "Collins"),
     # a name typed in lower case was a topic search for "bengio"; two words were a question about the person
     ("only the ones by bengio", "Bengio"), ("just papers by Yoshua Bengio", "Yoshua Bengio"),
     ("only those by Michael Collins", "Michael Collins")],
)  # fmt: skip
def test_only_the_ones_by_someone_narrows_the_list(text, who):
    # was a new search for a paper called "Mikolov"
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.updates["authors"] == [who]


def test_only_the_ones_by_someone_keeps_the_rest_of_the_sentence_and_asks_about_them_with_no_list():
    msg = read("only the ones by bengio from 2015", RESULTS.model_copy(update={"listed": 50}))
    assert msg.feedback is not None and msg.feedback.updates == {"authors": ["Bengio"], "year_min": 2015}
    assert read("just papers by Yoshua Bengio", FRESH).kind == "entity"  # nothing on screen: their papers


@pytest.mark.parametrize(
    "text, left",
    [("remove the surveys", ["survey"]), ("drop the surveys", ["survey"]), ("without the surveys", ["survey"]),
     ("hide the datasets", ["resource"]), ("remove surveys and datasets from the list", ["survey", "resource"]),
     ("exclude surveys", ["survey"]), ("get rid of the surveys", ["survey"])],
)  # fmt: skip
def test_leaving_out_a_kind_of_paper_narrows_the_list(text, left):
    # "remove the surveys" was a new survey search for the same paper; "without the surveys" a topic search
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert msg.kind == "refine" and msg.feedback is not None
    assert msg.feedback.updates["paper_types"] == [
        t for t in ("survey", "resource", "method", "position") if t not in left
    ]


@pytest.mark.parametrize(
    "text",
    ["how many are about attention?", "how many mention attention?", "how many of them are on low-resource "
     "languages?", "how many use BERT?", "How many of these discuss word alignment"],
)  # fmt: skip
def test_how_many_mention_some_words_is_a_count_on_the_list(text):
    # each was a topic search for "many are about attention"
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command) == ("command", "count")


def test_an_answer_to_the_sub_area_question_is_an_answer_though_its_first_word_is_capitalised():
    # "Mostly about chunking, conll, …" was a search for a paper called "Mostly"
    q = Question(
        slot="topic",
        text="Which sub-area are you most interested in?",
        options=[Option(label="chunking", sets={"topic_terms": ["chunking"]}), Option(label="No particular sub-topic")],
    )
    ctx = Context(phase="clarify", question=q, has_search=True, known_venues=["CoNLL"], topic="Chinese chunking")
    msg = read("Mostly about chunking, conll, introduction, chinese.", ctx)
    assert msg.kind == "answer" and msg.request is None


@pytest.mark.parametrize(
    "text, anchor, direction",
    [("who cites GloVe the most?", "GloVe", "successor"),  # was a topic search for "GloVe the most"
     ("I want to know what came out of the BLEU paper", "BLEU", "successor"),  # topic "out of the BLEU"
     ("what influenced the Penn Treebank paper", "Penn Treebank", "predecessor"),  # papers by "Penn Treebank"
     ("what led to BERT?", "BERT", "predecessor"),  # topic "led to BERT"
     ("who has cited the transformer paper?", "transformer", "successor"),  # no direction
     ("what inspired the transformer?", "transformer", "predecessor"),  # topic "inspired the transformer"
     # no direction before: the session asked for one
     ("papers that improved on BLEU", "BLEU", "successor"), ("work that improves upon GloVe", "GloVe", "successor"),
     ("papers that use the Penn Treebank", "Penn Treebank", "successor"),
     ("which papers used the Penn Treebank for evaluation?", "Penn Treebank", "successor"),
     ("alternatives to BLEU", "BLEU", "sibling"),  # a topic "alternatives to BLEU" on a fresh start
     ("what datasets did the GloVe paper use?", "GloVe", "benchmark")],  # what it used: still its benchmarks
)  # fmt: skip
def test_what_led_to_or_came_out_of_a_paper_is_a_search_from_that_paper(text, anchor, direction):
    msg = read(text, FRESH)
    assert msg.kind == "new_search" and msg.request is not None
    assert (msg.request.anchor_query, msg.request.intent.direction) == (anchor, direction)


@pytest.mark.parametrize(
    "text, fact",
    [("which one is the most cited?", "most_cited"), ("what is the oldest one?", "oldest"),
     ("what's the newest paper here?", "newest"), ("who are the main authors here?", "authors"),
     ("who wrote most of these?", "authors"), ("which venues are these from?", "venues"),
     ("where were these published?", "venues"),
     # were topic searches for "summarize", "common themes"
     ("summarize these papers", "overview"), ("what are the common themes?", "overview"),
     ("give me an overview of the results", "overview"),
     # were "nothing to search for" and a topic search for "first"
     ("which of these is the best?", "best"), ("which one should I read first?", "best"),
     ("where do I start?", "best")],
)  # fmt: skip
def test_a_question_a_glance_at_the_list_answers_is_about_the_list(text, fact):
    # "which one is the most cited?" asked for seminal papers again; the others were topic searches for
    # "oldest", "authors here", "venues"
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command, msg.about) == ("command", "list_fact", fact)
    assert read(text, FRESH).command != "list_fact"  # nothing on screen: not about a list


@pytest.mark.parametrize("text", ["what are the latest papers on parsing?", "which are the most cited papers on QA"])
def test_asking_for_the_newest_or_most_cited_papers_on_a_topic_is_still_a_search(text):
    assert read(text, RESULTS.model_copy(update={"listed": 50})).kind == "new_search"


@pytest.mark.parametrize(
    "text, updates",
    [("only the ones with more than 100 citations", {"min_citations": 101}),  # was a search for a paper "100"
     ("at least 100 citations", {"min_citations": 100}), ("with over 50 citations", {"min_citations": 51}),
     ("these are too old", {"recency": "recent"}), ("I want newer ones", {"recency": "recent"}),  # topic "old"
     ("give me 10", {"k": 10}), ("just 10 please", {"k": 10}),  # a paper called "10"
     ("too many results, give me 10", {"k": 10})],
)  # fmt: skip
def test_how_many_how_cited_and_how_new_said_of_the_list_narrow_it(text, updates):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback is not None and msg.feedback.updates == updates
    assert msg.feedback.size in (None, "narrower")  # "more than 100 citations" asks for no more results


@pytest.mark.parametrize(
    "text, topic, kinds",
    [("forget it, show me surveys on summarization", "summarization", ["survey"]),
     ("never mind, papers on speech recognition", "speech recognition", [])],
)  # fmt: skip
def test_a_fresh_start_before_a_request_is_not_part_of_it(text, topic, kinds):
    # was a topic search for "forget it, surveys on summarization"; "never mind, …" asked refine-or-new
    msg = read(text, RESULTS)
    assert msg.kind == "new_search" and msg.request is not None
    assert (msg.request.anchor_query, msg.request.intent.paper_types) == (topic, kinds)
    assert read("never mind", RESULTS).kind == "unclear"


@pytest.mark.parametrize("text", ["ok thanks", "great, that's it", "perfect, thank you!", "Thanks a lot, very helpful"])
def test_an_acknowledgement_is_no_topic(text):
    # "ok thanks" with results on screen asked "refine these results or start a new search on “ok thanks”?"
    assert (read(text, RESULTS).kind, read(text, RESULTS).command) == ("command", "help")
    assert read("that's it", ASKING).command == "search_now"  # during the questions: no more of them


@pytest.mark.parametrize(
    "text, n", [("what is the first one?", 1), ("tell me about the third paper", 3), ("why is the second one here?", 2)]
)
def test_a_result_named_by_its_place_is_explained(text, n):
    # "what is the first one?" was feedback that changed nothing ("I could not turn that into a change")
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command, msg.refs) == ("command", "explain", [n])


@pytest.mark.parametrize(
    "text, kind, command",
    [("show me the abstract of #2", "command", "explain"),  # a topic search for "abstract of #2"
     ("compare #1 and #2", "command", "explain"),  # feedback that changed nothing
     ("which of these are from 2020?", "command", "count"),  # narrowed the list to 2020 on
     ("which ones were published at ACL?", "command", "count"),
     ("let's go back to the previous version", "command", "undo"),  # "refine or new search?"
     ("put the newest on top", "refine", None)],  # a topic search for "put the on top"
)  # fmt: skip
def test_more_ways_of_talking_about_the_list_on_screen(text, kind, command):
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command) == (kind, command)
    if kind == "refine":
        assert msg.feedback is not None and msg.feedback.order == "newest"


@pytest.mark.parametrize(
    ("text", "direction", "n"),
    [("who cites #2?", "successor", 2), ("what does #4 cite?", "predecessor", 4),  # feedback that changed nothing
     ("who cited the second one?", "successor", 2), ("what does the first paper cite?", "predecessor", 1),
     ("surveys covering #3", "survey", 3), ("papers that build on #5", "successor", 5),
     ("what came after number 4", "successor", 4), ("any datasets used by #2?", "benchmark", 2)],
)  # fmt: skip
def test_a_result_with_a_direction_is_a_search_from_that_result(text, direction, n):
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.target, msg.request.intent.direction) == ("new_search", "result", direction)
    assert msg.feedback is not None and msg.feedback.refs == [n]


@pytest.mark.parametrize(
    ("text", "refs", "updates"),
    [("more like #3", [3], {}), ("the third one is great, find more like it", [3], {}),  # a topic search before
     ("#2 is perfect, show me more like it", [2], {}),
     ("more like #3 but about Chinese", [3], {"topic_terms": ["chinese"]}),  # a topic "#3 but about Chinese"
     ("more like the second one but after 2005", [2], {"year_min": 2006})],
)  # fmt: skip
def test_more_like_a_result_stays_feedback_on_the_list(text, refs, updates):
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert msg.kind == "refine" and msg.feedback.refs == refs and msg.feedback.positive
    assert {k: v for k, v in msg.feedback.updates.items() if k != "k"} == updates


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [("not interested in speech", "exclude_terms", ["speech"]),  # asked "refine or new search?"
     ("exclude anything about images", "exclude_terms", ["images"]),  # also *focused* on images
     ("I don't want papers on images", "exclude_terms", ["images"]),
     ("too many surveys", "paper_types", ["resource", "method", "position"]),  # halved the list
     ("keep only the top 5", "k", 5)],  # a topic search for "keep"
)  # fmt: skip
def test_what_to_leave_out_and_how_many_said_of_the_list(text, field, value):
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert msg.kind == "refine" and msg.feedback.updates == {field: value} and msg.feedback.size is None


def test_the_next_page_and_a_ranking_signal_are_feedback():
    ctx = RESULTS.model_copy(update={"listed": 50})
    assert read("next page", ctx).feedback.size == "more"  # asked "refine or new search?"
    assert read("next 20", ctx).feedback.extra == 20
    for text, weights in [
        ("less weight on recency", {"recency": "less"}),
        ("more weight on citations", {"citations": "more"}),
        ("I care more about citations", {"citations": "more"}),
        ("prefer older papers", {"recency": "older"}),
        ("ignore citations", {"citations": "off"}),
    ]:
        msg = read(text, ctx)
        assert msg.kind == "refine" and msg.feedback.weights == weights and not msg.feedback.updates, text
    assert read("rank by similarity", ctx).feedback.order == "score"


@pytest.mark.parametrize(
    "text",
    [
        "how did you rank these?",
        "show me the workflow",
        "how does the ranking work?",
        "what's the workflow",
        "how were these papers found?",
        "explain the ranking",
    ],
)
def test_how_the_list_was_made_is_a_question_about_it(text):
    assert read(text, RESULTS).command == "how"  # topic searches for "rank", "workflow", "found"


def test_a_list_dismissed_without_a_reason_is_kept_and_the_user_asked_why():
    for text in [
        "these are all irrelevant",
        "none of these are what I want",
        "this is not what I want",
        "these papers are not relevant",
        "wrong papers",
        "nothing useful here",
    ]:  # topic searches
        msg = read(text, RESULTS)
        assert msg.kind == "unclear" and "Tell me what is wrong" in msg.hint, text
    assert read("these are great", RESULTS).command == "help"  # an acknowledgement, not a topic "great"
    assert read("why is #3 ranked above #2?", RESULTS).refs == [3, 2]


@pytest.mark.parametrize(
    ("text", "topic", "constraints"),
    [("I'm writing a paper on sentiment analysis, what should I cite?", "sentiment analysis", {"recency": "seminal"}),
     ("recent advances in text summarization", "text summarization", {"recency": "recent"}),  # "advances in …"
     ("most influential papers on word embeddings", "word embeddings", {"recency": "seminal"}),  # "most papers on …"
     ("I need a survey on dialogue systems for my thesis", "dialogue systems", {}),  # "… for my thesis"
     ("what are the main approaches to relation extraction?", "relation extraction", {}),
     ("I'm new to NLP, where should I start?", "NLP", {}),  # was a wish for recent work
     ("low resource machine translation 2019-2021", "low resource machine translation",
      {"year_min": 2019, "year_max": 2021})],  # the years were searched as words
)  # fmt: skip
def test_a_first_message_is_searched_for_its_topic_alone(text, topic, constraints):
    msg = read(text, FRESH)
    assert (msg.kind, msg.target, msg.request.anchor_query) == ("new_search", "topic", topic)
    assert msg.request.constraints == constraints


def test_the_original_paper_and_the_top_venues_of_a_field():
    msg = read("the original LSTM paper", FRESH)  # a topic search for "original LSTM"
    assert (msg.target, msg.request.anchor_query) == ("paper", "LSTM")
    msg = read("top venues for NLP", FRESH)  # a topic search for "venues for NLP"
    assert msg.kind == "entity" and (msg.entity.shape, msg.entity.topic) == ("topic_venues", "NLP")
    msg = read("best conferences for dialogue research", FRESH)
    assert msg.kind == "entity" and msg.entity.shape == "topic_venues"


_PERIOD = PERIOD.model_copy(update={"options": [*PERIOD.options, Option(label="Any time", sets={})]})


@pytest.mark.parametrize(
    "text", ["I don't know", "not important", "I dont care", "no idea", "not sure", "up to you", "whatever"]
)
def test_no_preference_typed_to_a_question_picks_its_way_out(text):
    # "I don't know" was a topic search for "don't", "not important" one for "not"
    msg = read(text, Context(phase="clarify", question=_PERIOD, has_search=True, topic="dependency parsing"))
    assert (msg.kind, msg.option) == ("answer", 2)


def test_an_adverb_or_a_hyphenated_year_answers_the_period_question():
    ctx = Context(phase="clarify", question=_PERIOD, has_search=True, topic="dependency parsing")
    msg = read("mostly recent stuff", ctx)  # a new topic search for "mostly"
    assert msg.kind in ("answer", "refine") and msg.request is None
    msg = read("pre-2000", ctx)  # set no year
    assert msg.kind == "answer" and msg.updates == {"year_max": 1999}


def test_options_dismissed_with_nothing_else_on_screen_take_the_questions_way_out():
    which = Question(
        slot="anchor",
        text="Which paper do you mean?",
        options=[Option(label="A paper (2001)", sets={"anchor_id": "x"}), Option(label="None of these", sets={})],
    )
    for text in ["none of these are what I want", "these are all irrelevant"]:  # a topic search for "irrelevant"
        msg = read(text, Context(phase="anchor", question=which))
        assert (msg.kind, msg.option) == ("answer", 1), text
    msg = read("these are all irrelevant", Context(phase="clarify", question=_PERIOD, has_search=True))
    assert (msg.kind, msg.option) == ("answer", 2)


@pytest.mark.parametrize(
    ("text", "command", "refs"),
    [("cite #3", "cite", [3]), ("give me the bibtex for #2", "cite", [2]),  # feedback / a topic search before
     ("copy the citation of the first one", "cite", [1]), ("link to #1", "explain", [1]),
     ("download #2", "explain", [2]), ("is #3 peer reviewed?", "explain", [3]),  # a topic search for "#3 peer …"
     ("is there code for #2?", "explain", [2])],
)  # fmt: skip
def test_a_result_asked_about_in_any_words_is_about_that_result(text, command, refs):
    msg = read(text, RESULTS.model_copy(update={"listed": 50}))
    assert (msg.kind, msg.command, msg.refs) == ("command", command, refs)


@pytest.mark.parametrize(
    "text", ["start a new search", "let's try something else", "search for something different"]
)  # "refine or new search?" and a topic search for "start a new"
def test_a_new_search_asked_for_without_a_subject_starts_afresh(text):
    assert read(text, RESULTS).command == "reset"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [("only journal papers", ["journal"]), ("just conference papers please", ["conference"]),  # topic searches
     ("no workshop papers", ["journal", "conference", "preprint", "unknown"]),  # excluded the *word* "workshop"
     ("peer-reviewed only", ["journal", "conference", "workshop"])],
)  # fmt: skip
def test_the_kind_of_publication_said_of_the_list_narrows_it(text, kinds):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback.updates == {"publication_kinds": kinds}


def test_a_kind_of_publication_in_a_first_message_is_a_filter_not_topic_words():
    msg = read("journal papers on dependency parsing", FRESH)
    assert msg.request.anchor_query == "dependency parsing"  # "journal papers on dependency parsing" was the topic
    assert msg.request.constraints == {"publication_kinds": ["journal"]}
    assert read("only journal papers about parsing", FRESH).request.anchor_query == "parsing"


def test_the_ones_before_it_and_instead_of_x_use_y_keep_to_the_search_on_screen():
    msg = read("and the ones before it?", RESULTS)  # "nothing to search for"
    assert (msg.kind, msg.target, msg.request.intent.direction) == ("new_search", "current", "predecessor")
    msg = read("instead of BLEU, use ROUGE", RESULTS)  # a title "BLEU, use ROUGE"
    assert msg.correction and msg.request.anchor_query == "ROUGE"


def test_a_topic_word_no_paper_holds_is_put_right_only_when_a_word_one_edit_away_is_common():
    from pilot.spelling import respelt_topic

    counts = {"sentiment": 800, "analysis": 5000, "agents": 300, "agent": 300, "grammer": 3}
    frequency = counts.get  # a word missing from the dict is in no paper (0 would be the same)
    assert respelt_topic("sentimnet analysis", lambda w: frequency(w, 0)) == (
        "sentiment analysis",
        {"sentimnet": "sentiment"},
    )
    # a word some paper holds ("grammer") is the source's, not a typo; short words and capitals are never touched
    assert respelt_topic("grammer", lambda w: frequency(w, 0)) == ("grammer", {})
    assert respelt_topic("BERTology agnts", lambda w: frequency(w, 0))[0] == "BERTology agents"
    # a source without a vocabulary (a remote service) changes nothing
    assert respelt_topic("sentimnet analysis", lambda w: None) == ("sentimnet analysis", {})


@pytest.mark.parametrize(
    ("text", "target", "subject", "constraints"),
    [("I'm working on dialogue state tracking. Can you find recent papers? Preferably from ACL or EMNLP.",
      "topic", "dialogue state tracking", {"venues": ["EMNLP", "ACL"], "recency": "recent"}),  # ACL's papers
     ("Hi! I need papers about neural coreference resolution, ideally after 2016, no surveys please.",
      "topic", "neural coreference resolution", {"year_min": 2017}),  # "… resolution, ideally"
     ("Looking for work that builds on the Transformer for machine translation, published at ACL.",
      "paper", "Transformer", {"venues": ["ACL"], "topic_terms": ["machine", "translation"]}),  # a topic
     ("I'd like an overview of graph-based dependency parsing, thanks!", "topic", "graph-based dependency parsing",
      {}),  # "…, thanks"
     ("hello, can you find me the most cited papers on named entity recognition from the 2000s", "topic",
      "named entity recognition", {"year_min": 2000, "year_max": 2009, "order": "most_cited"})],  # "hello, can you …"
)  # fmt: skip
def test_a_long_first_message_is_read_for_its_subject_and_constraints(text, target, subject, constraints):
    msg = read(text, FRESH)
    assert (msg.kind, msg.target, msg.request.anchor_query) == ("new_search", target, subject)
    assert msg.request.constraints == constraints


@pytest.mark.parametrize(
    ("text", "size", "updates", "weights"),
    [("longer list please", "more", {}, {}), ("show all of them", "more", {}, {}),  # a topic / "nothing to search"
     ("shorter list", "fewer", {}, {}), ("the list is too long", "fewer", {}, {}),  # topic searches
     ("these are too recent", None, {}, {"recency": "older"}),  # asked for *recent* work
     ("only 2010", None, {"year_min": 2010, "year_max": 2010}, {}),  # a paper called "2010"
     ("just the ones from 2012", None, {"year_min": 2012, "year_max": 2012}, {})],  # 2012 on
)  # fmt: skip
def test_how_long_how_old_and_which_year_said_of_the_list(text, size, updates, weights):
    msg = read(text, RESULTS)
    assert msg.kind == "refine"
    assert (msg.feedback.size, msg.feedback.updates, msg.feedback.weights) == (size, updates, weights)


def test_only_the_ones_that_also_cite_another_paper_narrows_the_citers_on_screen():
    msg = read("only the ones that also cite ROUGE", RESULTS)  # a new search for ROUGE
    assert (msg.kind, msg.target, [a.anchor_query for a in msg.also]) == ("new_search", "current", ["ROUGE"])


def test_during_the_questions_why_asked_stop_asking_and_two_options_are_understood():
    ctx = Context(phase="clarify", question=_PERIOD, has_search=True, topic="dependency parsing")
    for text in ["why are you asking?", "what do you mean?"]:  # topic searches for "asking", "mean"
        msg = read(text, ctx)
        assert msg.kind == "unclear" and "each option changes the search" in msg.hint
    for text in ["stop asking questions", "just show me the papers"]:  # words for the question
        assert read(text, ctx).command == "search_now"
    msg = read("both 1 and 2", ctx)  # up to 2015 and 2016 on: any year (the spans are test_clarifier's)
    assert (msg.kind, msg.updates) == ("answer", {})


@pytest.mark.parametrize(
    ("text", "query", "kind"),
    [("papers citing https://aclanthology.org/P02-1040/", "acl:P02-1040", "corpus_id"),  # a paper named by a URL
     ("what came after https://aclanthology.org/P02-1040.pdf", "acl:P02-1040", "corpus_id"),
     ("P02-1040", "acl:P02-1040", "corpus_id"),
     ("https://www.semanticscholar.org/paper/Attention-is-All-you-Need-Vaswani-Shazeer/"
      "204e3073870fae3d05bcbc2f6a8e263d9b72e776", "204e3073870fae3d05bcbc2f6a8e263d9b72e776", "s2"),  # venue "WWW"
     ("papers like 1810.04805", "1810.04805", "arxiv")],  # a paper called "1810.04805"
)  # fmt: skip
def test_a_paper_given_by_its_page_or_id_anywhere_in_the_message_is_that_paper(text, query, kind):
    msg = read(text, FRESH)
    assert (msg.kind, msg.request.anchor_query, msg.request.anchor_kind) == ("new_search", query, kind)


@pytest.mark.parametrize(
    "text", ["what is the difference between GloVe and word2vec?", "difference between BLEU and ROUGE"]
)  # topic searches for "difference between GloVe and word2vec"
def test_two_named_papers_asked_apart_are_two_papers(text):
    msg = read(text, FRESH)
    assert msg.command == "compare" and len(msg.also) == 2
    assert read("difference between parsing and tagging", FRESH).kind == "new_search"  # topics: no papers


@pytest.mark.parametrize(
    "text, topic",
    [
        ("which datasets are commonly used to evaluate sentiment classifiers", "sentiment classifiers"),
        ("what benchmarks are typically used for question answering", "question answering"),
        ("widely used corpora for named entity recognition", "named entity recognition"),
        # "to" after a topic's verb is the topic's own ("applying X to Y" names no paper)
        ("papers applying reinforcement learning to dialogue", "reinforcement learning to dialogue"),
    ],
)
def test_how_often_a_resource_is_used_is_no_part_of_the_topic(text, topic):
    msg = read(text, Context())
    assert msg.request is not None and msg.request.anchor_kind == "topic"
    assert msg.request.intent.topic == topic


@pytest.mark.parametrize(
    "text, direction",
    [("ok now what came after it", "successor"), ("okay, and what came after it?", "successor"),
     ("thanks! now what came before it?", "predecessor"), ("great, now show me what came after it", "successor"),
     ("alright, now papers similar to it", "sibling")],
)  # fmt: skip
def test_a_lead_in_acknowledging_the_reply_is_no_part_of_the_request(text, direction):
    # was a topic search for "ok now what it", "thanks! now what it"
    msg = read(text, RESULTS)
    assert msg.kind == "new_search" and msg.request is not None
    assert (msg.request.anchor_kind, msg.request.intent.direction) == ("current", direction)


def test_instead_is_no_part_of_a_new_topic():
    msg = read("ok what about knowledge graphs instead", RESULTS)
    assert msg.request is not None and msg.request.intent.topic == "knowledge graphs"


@pytest.mark.parametrize(
    "text, name",
    [("I'm looking for the original paper on conditional random fields", "conditional random fields"),
     ("the paper that introduced conditional random fields", "conditional random fields"),
     ("which paper introduced the transformer?", "transformer"),
     ("what's the first paper on word embeddings?", "word embeddings")],
)  # fmt: skip
def test_the_paper_that_introduced_something_is_looked_up_by_that_name(text, name):
    # was a topic search for "original paper on conditional random fields" (or for the field)
    msg = read(text, Context())
    assert msg.request is not None and (msg.request.anchor_kind, msg.request.anchor_query) == ("name", name)
    assert read("seminal papers on word embeddings", Context()).request.anchor_kind == "topic"  # several: the field


@pytest.mark.parametrize(
    "text, shape, topic",
    [("what about his papers on parsing?", "author_papers", "parsing"), ("where does he work?", "author_profile", None),
     ("who does she work with?", "coauthors", None), ("his most cited papers", "most_cited", None),
     ("and her work on dialogue", "author_papers", "dialogue")],
)  # fmt: skip
def test_he_and_his_after_an_answer_about_a_person_are_that_person(text, shape, topic):
    # was a topic search for "his papers on parsing"
    asked = KGQuery(shape="author_papers", person="Christopher Manning", topic="sentiment")
    msg = read(text, Context(phase="answer", has_results=True, listed=4, asked=asked))
    assert msg.kind == "entity" and msg.entity is not None
    assert (msg.entity.person, msg.entity.shape, msg.entity.topic) == ("Christopher Manning", shape, topic)


@pytest.mark.parametrize("text", ["what else did they write?", "their other papers", "show me their papers"])
def test_they_after_an_answer_about_a_papers_authors_are_those_authors(text):
    asked = KGQuery(shape="paper_authors", paper="the BLEU")
    msg = read(text, Context(phase="answer", has_results=True, listed=1, asked=asked))
    assert msg.kind == "entity" and msg.entity is not None
    assert (msg.entity.shape, msg.entity.paper) == ("paper_authors_papers", "the BLEU")


@pytest.mark.parametrize("text, direction", [("who cites it?", "successor"), ("what came before it?", "predecessor")])
def test_it_under_the_one_paper_an_answer_named_is_that_paper(text, direction):
    # was "nothing to search for"
    asked = KGQuery(shape="paper_authors", paper="the BLEU")
    msg = read(text, Context(phase="answer", has_results=True, listed=1, asked=asked))
    assert msg.kind == "new_search" and msg.target == "result" and msg.feedback is not None
    assert msg.feedback.refs == [1] and msg.request.intent.direction == direction


@pytest.mark.parametrize(
    "text, name",
    [("how many papers cite BLEU?", "BLEU"), ("how often is BLEU cited?", "BLEU"),
     ("how many citations does BLEU have?", "BLEU"), ("how many times has the BERT paper been cited", "BERT")],
)  # fmt: skip
def test_how_often_a_paper_is_cited_asks_for_its_citers(text, name):
    # were topic searches for "many papers cite BLEU", "times has the BERT"
    msg = read(text, Context())
    assert msg.request is not None and msg.request.anchor_query == name
    assert msg.request.intent.direction == "successor"


@pytest.mark.parametrize("text", ["tell me about the BLEU paper", "details of the BLEU paper"])
def test_the_x_paper_is_that_paper_not_papers_about_x(text):
    msg = read(text, Context())
    assert msg.request is not None and (msg.request.anchor_kind, msg.request.anchor_query) == ("name", "BLEU")


@pytest.mark.parametrize(
    "text, anchor, kind, direction",
    [("papers that criticize BLEU", "BLEU", "name", "successor"), ("limitations of BLEU", "BLEU", "name", "successor"),
     # a topic keeps its words; a title's own "Critique" is no cue
     ("limitations of neural machine translation", "limitations of neural machine translation", "topic", None),
     ("most influential NLP papers of 2018", "NLP", "topic", None), ("NLP papers in 2018", "NLP", "topic", None),
     ("good starting points for learning about topic models", "topic models", "topic", None),
     ("machine learning about code", "machine learning about code", "topic", None)],
)  # fmt: skip
def test_critiques_field_acronyms_and_starting_points(text, anchor, kind, direction):
    # were the topic "criticize BLEU", the title "NLP papers of 2018", the paper "NLP", the topic "starting points …"
    msg = read(text, Context())
    assert msg.request is not None
    req = msg.request
    assert (req.anchor_query, req.anchor_kind, req.intent.direction) == (anchor, kind, direction)
    if direction == "successor":
        assert "criticism" in msg.request.intent.topic_terms
    if "2018" in text:
        assert (msg.request.intent.year_min, msg.request.intent.year_max) == (2018, 2018)


@pytest.mark.parametrize("text, refs", [("I already know #1, #2 and #5", [1, 2, 5]), ("I've read #4", [4])])
def test_results_the_researcher_knows_are_feedback_not_a_card(text, refs):
    msg = read(text, RESULTS.model_copy(update={"listed": 10}))  # was the cards of those results
    assert msg.kind == "refine" and msg.feedback.refs == refs and msg.feedback.negative


@pytest.mark.parametrize(
    "text, updates",
    [("filter to ACL and EMNLP only", {"venues": ["EMNLP", "ACL"]}), ("restrict to ACL", {"venues": ["ACL"]}),
     ("narrow it down to papers after 2015", {"year_min": 2016}),
     ("which of these are most relevant to low-resource languages?", {"topic_terms": ["low-resource", "languages"]}),
     ("which ones are about Chinese?", {"topic_terms": ["chinese"]})],
)  # fmt: skip
def test_filter_to_and_which_of_these_are_about_narrow_the_list(text, updates):
    # were topic searches for "filter", "restrict", "are most relevant to low-resource languages"
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback.updates == updates and msg.feedback.text == text


@pytest.mark.parametrize(
    "text, said",
    [("can you show only papers with code?", "code"), ("only open access papers", "open access"),
     ("email me these", "cannot send"), ("show me the abstracts", "tell me about #3")],
)  # fmt: skip
def test_what_the_sources_do_not_record_is_said_plainly(text, said):
    msg = read(text, RESULTS)  # were topic searches for "code", "open access", "email", "abstracts"
    assert msg.kind == "unclear" and said in msg.hint


@pytest.mark.parametrize(
    "text, topic, period",
    [("papers on question answering after BERT", "question answering", ("after", "BERT")),
     ("work on parsing before the transformer era", "parsing", ("before", "transformer")),
     ("post-BERT work on summarization", "summarization", ("after", "BERT")),
     ("neural machine translation since the Transformer", "neural machine translation", ("since", "Transformer"))],
)  # fmt: skip
def test_a_period_named_by_a_paper_dates_the_topic(text, topic, period):
    # were topics "question answering after BERT", "parsing before the transformer era" (and a successor search)
    msg = read(text, Context())
    assert msg.request is not None and msg.request.intent.topic == topic
    assert msg.request.period_of == period and msg.request.intent.direction is None
    # a paper's own later work stays that
    assert read("what came after BERT?", Context()).request.period_of is None


@pytest.mark.parametrize(
    "text, year_min", [("summarization in the last decade", 10), ("parsing from the last two decades", 20)]
)
def test_the_last_decades_are_a_period(text, year_min):
    import datetime

    msg = read(text, Context())
    assert msg.request.intent.year_min == datetime.date.today().year - year_min


@pytest.mark.parametrize(
    "text, command, refs",
    [("go back to version 2", "version", [2]), ("restore v3", "version", [3]),
     ("reset the filters", "clear_filters", []), ("clear all filters", "clear_filters", [])],
)  # fmt: skip
def test_versions_and_filters_named_in_the_chat_are_commands(text, command, refs):
    msg = read(text, RESULTS)  # were topic searches for "version 2", "reset the filters"
    assert (msg.kind, msg.command, msg.refs) == ("command", command, refs)


@pytest.mark.parametrize(
    "text, lifted",
    [("remove the year filter", "any_year"), ("any year is fine", "any_year"), ("no date limit", "any_year"),
     ("drop the venue restriction", "any_venue")],
)  # fmt: skip
def test_a_lifted_year_or_venue_limit_is_feedback(text, lifted):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and getattr(msg.feedback, lifted) and not msg.feedback.updates


@pytest.mark.parametrize(
    "text, anchor, direction",
    [("papers that BERT cites", "BERT", "predecessor"),  # was its citers
     ("papers that cite BERT", "BERT", "successor"),
     ("competitors of BERT", "BERT", "sibling"), ("concurrent work to BERT", "BERT", "sibling"),
     ("papers published at the same time as GloVe", "GloVe", "sibling"),
     ("the ancestors of the Transformer", "Transformer", "predecessor"), ("the origins of BLEU", "BLEU", "predecessor"),
     ("what are the foundational papers behind ELMo", "ELMo", "predecessor")],
)  # fmt: skip
def test_who_cites_whom_rivals_and_origins(text, anchor, direction):
    # were topic searches for "competitors of BERT", "origins of BLEU", "behind ELMo"; no direction for ancestors
    msg = read(text, Context())
    assert msg.request is not None
    assert (msg.request.anchor_query, msg.request.intent.direction) == (anchor, direction)


@pytest.mark.parametrize(
    "text, topic, constraints",
    [("papers on attention mechanisms in NLP not vision", "attention mechanisms in NLP", {"exclude_terms": ["vision"]}),
     ("parsing not dependency parsing", "parsing", {"exclude_terms": ["dependency parsing"]}),
     ("sentiment analysis, not twitter", "sentiment analysis", {"exclude_terms": ["twitter"]}),
     ("sarcasm detection in tweets, from 2015 to 2020, at ACL or EMNLP", "sarcasm detection in tweets",
      {"year_min": 2015, "year_max": 2020, "venues": ["EMNLP", "ACL"]}),
     ("BERT-based NER models", "BERT-based NER models", {})],
)  # fmt: skip
def test_a_field_acronym_is_no_venue_and_a_trailing_not_leaves_out(text, topic, constraints):
    # were a question about the venue "NLP", a question about ACL alone, a title "BERT-based NER models", and
    # topics that kept "not …"
    msg = read(text, Context())
    assert msg.kind == "new_search" and msg.request.anchor_kind == "topic"
    assert msg.request.intent.topic == topic and msg.request.constraints == constraints


@pytest.mark.parametrize(
    "text, name",
    [("bibtex for BERT", "BERT"), ("how do I cite the transformer paper?", "transformer"),
     ("what's the canonical reference for word2vec?", "word2vec"), ("which paper should I cite for the Penn Treebank?",
      "Penn Treebank")],
)  # fmt: skip
def test_a_named_papers_citation_is_asked_for(text, name):
    # were topic searches for "bibtex for BERT", "canonical reference for word2vec", or the predecessors of the PTB
    msg = read(text, RESULTS)
    assert (msg.kind, msg.command, msg.request.anchor_query) == ("command", "cite_named", name)
    assert read("references for neural coreference resolution", Context()).kind == "new_search"  # a field's


def test_is_a_result_a_survey_asks_about_that_result():
    msg = read("is #1 a survey?", RESULTS.model_copy(update={"listed": 10}))  # was a search for surveys covering #1
    assert (msg.kind, msg.command, msg.refs) == ("command", "explain", [1])


@pytest.mark.parametrize(
    "text, option", [("yes", 0), ("sure, go ahead", 0), ("yeah", 0), ("nope", 1), ("neither", 1), ("no thanks", 1)]
)
def test_yes_or_no_answers_a_yes_no_question(text, option):
    # "yes" to "Search for papers about X instead?" was a topic search for "yes"
    q = Question(
        slot="fallback",
        text="Search for papers about “ELMo” instead?",
        options=[
            Option(label="Yes, search papers about “ELMo”"),
            Option(label="No, I will name the paper differently"),
        ],
    )
    msg = read(text, Context(phase="clarify", question=q))
    assert (msg.kind, msg.option) == ("answer", option)


def test_neither_to_which_paper_is_none_of_these():
    q = Question(
        slot="anchor",
        text="Which paper do you mean?",
        options=[
            Option(label="Glove (2014)", sets={"anchor_id": "a"}),
            Option(label="GloVe-based (2016)", sets={"anchor_id": "b"}),
            Option(label="None of these", sets={}),
        ],
    )
    assert read("neither", Context(phase="clarify", question=q)).option == 2  # was a search for a paper "neither"


def test_this_topic_is_the_topic_being_searched():
    on_screen = RESULTS.model_copy(update={"topic": "word embeddings", "listed": 10})
    # were a topic search for "topic" and a question about researchers of the word "topic"
    msg = read("any surveys on this topic?", on_screen)
    assert (msg.kind, msg.target, msg.request.intent.direction) == ("new_search", "current", "survey")
    assert read("datasets in this area", on_screen).request.intent.direction == "benchmark"
    assert read("who works on this topic?", on_screen).entity.topic == "word embeddings"
    assert read("any datasets here?", on_screen).command == "kinds"  # was a topic search for "here"


@pytest.mark.parametrize(
    "text, name", [("is BLEU on the list?", "BLEU"), ("why isn't GloVe on the list?", "GloVe"),
                   ("is the Penn Treebank paper here?", "Penn Treebank")]
)  # fmt: skip
def test_is_a_named_paper_on_the_list(text, name):
    msg = read(text, RESULTS)  # were a paper search for BLEU, a topic search for "isn't GloVe", a question on authors
    assert (msg.kind, msg.command, msg.request.anchor_query) == ("command", "on_list", name)
    assert read("are surveys included?", RESULTS).command == "kinds"
    assert read("is #3 here?", RESULTS.model_copy(update={"listed": 10})).command == "explain"


@pytest.mark.parametrize(
    "text, shape",
    [("who else works on this?", "topic_researchers"), ("which other groups work on this?", "topic_orgs"),
     ("what conferences should I target?", "topic_venues"),
     ("where should I submit a paper on this topic?", "topic_venues")],
)  # fmt: skip
def test_people_groups_and_venues_of_the_topic_on_screen(text, shape):
    # were topic searches for "else", "groups", "conferences should I target", "submit a paper on this topic"
    msg = read(text, RESULTS.model_copy(update={"topic": "word embeddings"}))
    assert msg.kind == "entity" and (msg.entity.shape, msg.entity.topic) == (shape, "word embeddings")


@pytest.mark.parametrize("text", ["papers by the authors of #1", "show me papers from the same authors as #2"])
def test_papers_by_a_results_authors(text):
    msg = read(text, RESULTS.model_copy(update={"listed": 10}))  # were that result's card
    assert msg.kind == "entity" and msg.entity.shape == "paper_authors_papers"


@pytest.mark.parametrize(
    "text, anchor, constraints",
    [("2019 papers that build on ELMo", "ELMo", {"year_min": 2019, "year_max": 2019}),
     ("10 most cited papers that cite BLEU", "BLEU", {"k": 10, "order": "most_cited"}),
     ("recent follow-ups to GloVe in ACL", "GloVe", {"venues": ["ACL"], "recency": "recent"})],
)  # fmt: skip
def test_a_leading_year_or_count_and_a_venue_are_constraints_not_the_subject(text, anchor, constraints):
    # were the topic "2019 papers", a paper called "10", and a focus on the word "acl"
    msg = read(text, Context())
    assert (msg.request.anchor_query, msg.request.constraints) == (anchor, constraints)


@pytest.mark.parametrize(
    "text, name", [("which of these cite ROUGE?", "ROUGE"), ("how many of them cite BLEU?", "BLEU")]
)
def test_which_results_cite_a_paper_is_counted_on_the_list(text, name):
    msg = read(text, RESULTS)  # were topic searches for "cite ROUGE"
    assert (msg.kind, msg.command, msg.request.anchor_query) == ("command", "which_cite", name)
