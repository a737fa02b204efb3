"""Recipes fuzzed (issue 11): whatever JSON a visitor uploads or sends, loading it ends in a workflow or a
short, clear error — never an unhandled exception, never an unbounded run.

Two generators: recipe-shaped JSON (known and unknown operators, params of every JSON type and size,
edges between existing, missing and odd ids, odd versions and outputs), and byte-level damage to a valid
recipe file. Each example goes the whole way a visitor's upload goes: ``export.load_recipe`` on the
bytes, then ``Session.load_workflow`` on the offline corpus slice, which validates and runs it.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pilot import export, limits
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from tests.abuse_inputs import filter_recipe, union_of_searches
from workflows.registry import all_operators

RUN_BOUND_S = 30.0  # one example, load and run (the corpus slice; a template run takes 1-3 s here)
MESSAGE_CHARS = 2_000  # an error is a sentence or a few, never an echo of the input

OPS = sorted(all_operators())
PARAM_NAMES = sorted({name for cls in all_operators().values() for name in cls.Params.model_fields})
IDS = ["a", "b", "c", "search", "top", "", " a ", "x" * 70, "é", "\x00", "n1"]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["parsing", "acl:P02-1040", "2008", "title", "text", "before", "<b>x</b>", "![i](http://x/)"]),
    st.builds(lambda n: "w " * n, st.sampled_from([1, 300, 1_100, 2_100])),  # around the string limit
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
        # around the list limit; of leaves only, so that nesting cannot multiply sizes
        st.builds(lambda v, n: [v] * n, json_leaf, st.sampled_from([50, 499, 501, 2_000])),
    ),
    max_leaves=20,
)
params = st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=10), json_value, max_size=5)
node = st.fixed_dictionaries(
    {"id": st.sampled_from(IDS) | st.text(max_size=8), "op": st.sampled_from(OPS) | st.text(max_size=12)},
    optional={"params": params | json_value, "label": st.text(max_size=20) | json_value},
)
edge = st.fixed_dictionaries(
    {"source": st.sampled_from(IDS), "target": st.sampled_from(IDS)},
    optional={"port": st.sampled_from(["in", "anchor", "a", "b", "papers", ""]) | json_value},
)
recipe = st.fixed_dictionaries(
    {"nodes": st.lists(node, max_size=8) | json_value, "edges": st.lists(edge, max_size=10) | json_value},
    optional={
        "schema_version": st.integers(min_value=-5, max_value=5) | json_value,
        "output": st.sampled_from(IDS) | json_value,
        "name": st.text(max_size=40) | json_value,
        "description": json_value,
        "workflow": json_value,
    },
)


def _like(default: object) -> st.SearchStrategy:
    """Values of the type a param's default has, at every size (mostly valid, often extreme)."""
    words = st.sampled_from(["parsing", "translation", "the", "ACL", "EMNLP", "survey", "dataset", "x" * 300])
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        return st.integers(-10, 10) | st.integers(-(10**9), 10**9)
    if isinstance(default, float):
        return st.floats(-1e6, 1e6) | st.floats(allow_nan=True)
    if isinstance(default, list):
        return st.lists(words, max_size=10) | st.builds(lambda w, n: [w] * n, words, st.sampled_from([100, 499]))
    if isinstance(default, str):
        return words | st.text(max_size=40)
    return json_leaf


@pytest.fixture(scope="module")
def runtime(local_source, tmp_path_factory) -> Runtime:
    return Runtime.for_source(local_source, Settings(cache_dir=tmp_path_factory.mktemp("cache"), max_turns=0))


def _load_and_run(runtime: Runtime, blob: bytes) -> None:
    """The upload's whole way; fails the test on an unhandled exception, an unbounded run or an echo."""
    started = time.perf_counter()
    try:
        workflow = export.load_recipe(blob)
    except export.RecipeError as exc:
        assert len(str(exc)) < MESSAGE_CHARS, str(exc)[:300]
        event("refused at loading")
        return
    reply = asyncio.run(asyncio.wait_for(Session(runtime).load_workflow(workflow), RUN_BOUND_S))
    seconds = time.perf_counter() - started
    assert seconds < RUN_BOUND_S
    if reply.error:
        assert len(reply.error) < MESSAGE_CHARS, reply.error[:300]
    event("refused by validation" if reply.error and not reply.results else "ran")
    assert len(reply.message or "") < 50_000


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@FUZZ
@given(data=recipe)
def test_any_recipe_shaped_json_loads_or_is_refused_in_a_sentence(runtime, data):
    _load_and_run(runtime, json.dumps(data).encode("utf-8"))


@FUZZ
@given(
    edits=st.lists(
        st.tuples(
            st.floats(0, 1), st.sampled_from(["flip", "cut", "insert", "dup"]), st.binary(min_size=1, max_size=8)
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_damaged_recipe_file_loads_or_is_refused_in_a_sentence(runtime, edits):
    blob = bytearray(json.dumps(filter_recipe(year_min=2000, include_terms=["parsing"])).encode("utf-8"))
    for where, how, data in edits:
        i = int(where * (len(blob) - 1))
        if how == "flip":
            blob[i : i + len(data)] = data
        elif how == "cut":
            del blob[i:]
        elif how == "insert":
            blob[i:i] = data
        else:  # a duplicated stretch: deeper nesting, repeated keys
            blob[i:i] = blob[i : i + 200] * 50
        if not blob:
            blob = bytearray(b"{")
    assert len(blob) < limits.MAX_RECIPE_BYTES * 4
    _load_and_run(runtime, bytes(blob))


@FUZZ
@given(base=st.sampled_from(["filter", "union"]), data=st.data())
def test_a_valid_recipe_with_fuzzed_params_runs_or_is_refused_in_a_sentence(runtime, base, data):
    """Params of the nodes' own operators, with values of any JSON type and size: many of these pass
    validation and run, and the run stays bounded whatever the params say."""
    recipe_data = filter_recipe(year_min=2000) if base == "filter" else union_of_searches(3)
    for _ in range(data.draw(st.integers(1, 3))):
        node = data.draw(st.sampled_from(recipe_data["nodes"]))
        fields = sorted(all_operators()[node["op"]].Params.model_fields)
        name = data.draw(st.sampled_from(fields))
        field = all_operators()[node["op"]].Params.model_fields[name]
        node["params"][name] = data.draw(_like(field.get_default(call_default_factory=True)) | json_value)
    _load_and_run(runtime, json.dumps(recipe_data).encode("utf-8"))


def test_a_recipe_with_a_hundred_bad_list_items_is_refused_in_a_short_sentence(runtime):
    # found by the fuzzer: 100 malformed periods in exclude_years gave a 37,055-character message, one line per item
    recipe_data = filter_recipe(year_min=2000)
    recipe_data["nodes"][1]["params"]["exclude_years"] = [1] * 100
    reply = asyncio.run(Session(runtime).load_workflow(export.load_recipe(json.dumps(recipe_data).encode("utf-8"))))
    assert reply.error is not None and len(reply.error) < MESSAGE_CHARS
    assert "100 problems" in reply.error and "exclude_years" in reply.error and "97 more" in reply.error
