"""The params form is generated from the operator's params model: true defaults, typed inputs, and
submitted values read back into exactly the params the user set."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from pilot.ui.paramform import FormError, default_text, fields_of, form_html, help_markdown, read_form
from workflows.model import Node
from workflows.registry import get_operator

FILTER = get_operator("filter")


class _Inputs(HTMLParser):
    def __init__(self, markup: str):
        super().__init__()
        self.inputs: dict[str, dict] = {}
        self.tags: set[str] = set()
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "data-kind" in a:
            self.inputs[a["name"]] = {"tag": tag, **a}


def test_optional_lists_default_to_none_not_required():
    fields = {f.name: f for f in fields_of(FILTER.Params)}
    assert default_text(fields["venues"]) == "none" and not fields["venues"].required
    assert default_text(fields["exclude_anchor"]) == "on" and fields["exclude_anchor"].kind == "bool"
    assert fields["year_min"].kind == "int" and fields["year_min"].minimum == 1000
    assert fields["relative_to_anchor"].kind == "choice" and fields["relative_to_anchor"].choices == ("before", "after")
    assert fields["has_abstract"].kind == "tristate" and fields["venues"].kind == "words"
    text = help_markdown(FILTER)
    assert "required" not in text and "`venues` (list of words; default none)" in text


def test_the_form_shows_each_param_with_the_input_its_type_calls_for():
    node = Node(id='f"><script>x</script>', op="filter", params={"year_min": 2009, "venues": ["ACL", "EMNLP"]})
    seen = _Inputs(form_html(node, FILTER))
    assert "script" not in seen.tags
    assert seen.inputs["year_min"]["type"] == "number" and seen.inputs["year_min"]["value"] == "2009"
    assert seen.inputs["venues"]["value"] == "ACL, EMNLP"
    assert seen.inputs["relative_to_anchor"]["tag"] == "select"
    assert seen.inputs["exclude_anchor"]["type"] == "checkbox" and "checked" in seen.inputs["exclude_anchor"]


def test_submitted_values_become_exactly_the_params_the_user_set():
    current = {"relative_to_anchor": "after", "exclude_anchor": True}
    values = {
        "year_min": "2010", "year_max": "", "relative_to_anchor": "after", "keep_unknown_year": False,
        "venues": "ACL,  EMNLP ,", "min_citations": "", "has_abstract": "", "include_terms": "",
        "exclude_terms": "speech", "terms_in": "text", "exclude_ids": "", "exclude_anchor": True,
    }  # fmt: skip
    assert read_form(FILTER, current, values) == {
        "relative_to_anchor": "after", "exclude_anchor": True, "year_min": 2010,
        "venues": ["ACL", "EMNLP"], "exclude_terms": ["speech"],
    }  # fmt: skip
    # clearing a field that was set removes it (back to its default)
    assert "year_min" not in read_form(FILTER, {"year_min": 2010}, {"year_min": ""})


@pytest.mark.parametrize(
    ("values", "says"),
    [({"year_min": "soon"}, "year_min: 'soon' is not a whole number"),
     ({"year_min": "2010", "year_max": "2001"}, "after year_max"),
     ({"year_min": "99"}, "year_min"),
     ("nope", "no values")],
)  # fmt: skip
def test_bad_values_are_named_and_change_nothing(values, says):
    with pytest.raises(FormError) as err:
        read_form(FILTER, {}, values)
    assert says in str(err.value)
