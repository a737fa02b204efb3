"""Domain profiles: what a research field calls its venues and its data resources, as data.

The knowledge that fits pilot to one field — venue acronyms and their spelled-out names, paper ids that
name their venue (the ACL Anthology's ``P02-1040`` is an ACL paper), the title words of datasets,
corpora and shared tasks — lives in ``pilot/data/domains.json`` (package data), not in code. Everything
else reads it through ``profile()``; another field is another profile in that file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from pilot.models import Paper
from pilot.text import contains_run, data_json, normalize_title, words

_LETTERS = re.compile(r"[a-z]+")


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VenueName(_Data):
    """One venue: the key it is matched by, the label a user reads, other acronyms and spelled-out names."""

    key: str = Field(description="lower-case acronym, the venue's identity in filters")
    label: str = Field(description="how a user writes it (a button label)")
    aliases: tuple[str, ...] = Field((), description="other acronyms of the same venue (nips ~ neurips)")
    names: tuple[str, ...] = Field((), description="spelled-out names, lower case, as venue fields write them")
    whole_field: bool = Field(
        False, description="a name that counts only as the whole venue field (CL is inside every ACL venue's name)"
    )

    @property
    def forms(self) -> tuple[str, ...]:
        """Every way of writing the venue, the key first."""
        return (self.key, *self.aliases, *self.names)


class Anthology(_Data):
    """A collection whose paper ids name the venue: ``<id_prefix><letter>…``."""

    id_prefix: str
    venue_by_letter: dict[str, str]
    venue_in_field: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="letter -> venue keys recognised when the venue field names them"
    )


class Profile(_Data):
    description: str = ""
    venues: tuple[VenueName, ...] = ()
    anthologies: tuple[Anthology, ...] = ()
    communities: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="research community -> its venues (lower-case acronyms); a name publishing in two disjoint "
        "communities is two people (pilot.people)",
    )
    request_venues: tuple[str, ...] = Field((), description="venue names the request parser recognises")
    request_venue_canonical: dict[str, str] = Field(
        default_factory=dict, description="lower-case name a user types -> the venue string the corpus uses"
    )
    resource_terms: tuple[str, ...] = Field((), description="title words of data resources and evaluation campaigns")
    resource_query: str = Field("", description="the query that finds resource papers by their titles")
    resource_types: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="resource type (a clarifier option) -> the words that name it"
    )
    resource_type_terms: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="resource type -> extra title terms a benchmark search looks for"
    )
    campaign_names: tuple[str, ...] = Field(
        (), description="the field's evaluation campaigns, whose overview papers are data resources (paper types)"
    )
    resource_names: tuple[str, ...] = Field(
        (), description="named lexical resources a title may name without a resource word (paper types)"
    )

    # --- venues -----------------------------------------------------------------------------------

    def venue(self, key: str) -> VenueName | None:
        return next((v for v in self.venues if v.key == key), None)

    def venue_forms(self, name: str) -> tuple[str, ...]:
        """The other ways of writing the venue ``name`` names ("neurips" -> ("nips", "neural information …"))."""
        wanted = " ".join(words(name))
        for v in self.venues:
            if wanted in v.forms:
                return tuple(f for f in v.forms if f != wanted)
        return ()

    def anthology_of(self, paper_id: str) -> Anthology | None:
        return next((a for a in self.anthologies if paper_id.startswith(a.id_prefix)), None)

    def venue_keys(self, paper: Paper) -> set[str]:
        """Lower-case names a user could use for the paper's venue: the field's words and acronyms."""
        venue = (paper.venue or "").lower()
        anthology = self.anthology_of(paper.id)
        if anthology is not None:
            # the id is authoritative for the anthology: "COLING-ACL" papers with a P id are ACL
            letter = paper.id[len(anthology.id_prefix) : len(anthology.id_prefix) + 1]
            keys = {anthology.venue_by_letter[letter]} if letter in anthology.venue_by_letter else set()
            keys.update(k for k in anthology.venue_in_field.get(letter, ()) if k in venue)
            return keys
        keys = set()
        if venue:
            keys.add(normalize_title(venue))
            keys.update(_LETTERS.findall(venue))
            for v in self.venues:
                if any(name == venue if v.whole_field else name in venue for name in v.names):
                    keys.add(v.key)
        return keys

    def venue_matches(self, paper: Paper, wanted: list[str]) -> bool:
        """The paper appeared at one of the ``wanted`` venues (acronyms or names, as a user types them)."""
        return self.venue_matcher(wanted)(paper)

    def venue_matcher(self, wanted: list[str]) -> Callable[[Paper], bool]:
        """``venue_matches`` for one list of wanted venues and many papers: the wanted names are normalised
        once, and each paper costs one set look-up per venue key plus the long names' substring checks."""
        norms = {w_norm for w in wanted if (w_norm := normalize_title(w))}
        long_names = [w for w in norms if len(w) > 6]

        def matches(paper: Paper) -> bool:
            if not norms.isdisjoint(self.venue_keys(paper)):
                return True
            if self.anthology_of(paper.id) is not None or not long_names:
                return False
            venue = normalize_title(paper.venue)
            return any(w in venue for w in long_names)

        return matches

    def venue_name_matches(self, query: str | None, venue: str | None) -> bool:
        """Whole-word match of a user's venue ("ACL", "NeurIPS") against a venue string, with the venue's
        other forms: whole words keep "ACL" from matching "NAACL"; the forms let "NeurIPS" find "NIPS"."""
        if not query:
            return True
        if not venue:
            return False
        hay = words(venue)
        return any(contains_run(hay, words(form)) for form in (query, *self.venue_forms(query)))

    def venue_label(self, paper: Paper) -> str | None:
        """The name a user would use for the paper's venue: the acronym for anthology ids (whose venue
        fields spell out dozens of variants of the same conference), else the venue field."""
        if self.anthology_of(paper.id) is None:
            return (paper.venue or "").strip() or None
        labels = [v.label for key in sorted(self.venue_keys(paper)) if (v := self.venue(key)) is not None]
        return labels[0] if labels else None


@cache
def profiles() -> dict[str, Profile]:
    data = data_json("domains.json")
    return {name: Profile.model_validate(p) for name, p in data["profiles"].items()} | {
        "": Profile.model_validate(data["profiles"][data["default"]])
    }


def profile(name: str = "") -> Profile:
    """The named domain profile; the file's default without a name."""
    try:
        return profiles()[name]
    except KeyError:
        known = ", ".join(n for n in profiles() if n)
        raise ValueError(f"unknown domain profile {name!r}; known: {known}") from None
