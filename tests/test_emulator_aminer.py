"""The AMiner emulator against the AMiner shapes we have, and pilot's AMiner adapter against the emulator.

NO RECORDED AMINER RESPONSES EXIST on this machine: ``tests/fixtures/aminer/`` was written from the
platform's documented shapes, so these tests check the emulator against the documentation as we read
it, not against the live service.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from emulators.aminer import PREFIX, AMinerEmulator, aid
from emulators.server import Limits, RateSpec, Running
from pilot.settings import Settings
from pilot.sources.aminer import AMinerSource
from pilot.sources.base import RateLimited
from tests.test_emulator_shapes import assert_same_shape

FIXTURES = Path(__file__).parent / "fixtures" / "aminer"
ANCHOR = "acl:D08-1048"


@pytest.fixture(scope="module")
def emulator(local_source):
    emu = AMinerEmulator(local_source)
    with Running(emu) as running:
        yield emu, running.url


def _ids(emu: AMinerEmulator) -> dict[str, str]:
    paper = emu.store.papers([emu.store.row_of[ANCHOR]])[0]
    author = paper.authors[0]
    org = next(o for o in emu.store.search_entities("org", "university", 5))
    venue = emu.store.search_entities("venue", "computational linguistics", 1)[0]
    return {"paper": aid(ANCHOR), "author": aid(author.id), "surname": author.name.split(",")[0].split()[-1],
            "org": aid(org.id), "org_name": org.name, "venue": aid(venue.id)}  # fmt: skip


def test_answers_have_the_documented_shapes(emulator):
    emu, url = emulator
    ids = _ids(emu)
    api = f"{url}{PREFIX}/api"
    cases = [
        ("paper_search_turing.json", "GET", "/paper/list/by/search/venue", {"keyword": "frame semantics"}, None),
        ("paper_detail_machinery.json", "GET", "/paper/detail", {"id": ids["paper"]}, None),
        ("paper_detail_missing.json", "GET", "/paper/detail", {"id": "000000000000000000000000"}, None),
        ("paper_relation_machinery.json", "GET", "/paper/relation", {"id": ids["paper"]}, None),
        ("person_search_turing.json", "POST", "/person/search", None, {"name": ids["surname"], "size": 10}),
        ("person_detail_turing.json", "GET", "/person/detail", {"id": ids["author"]}, None),
        ("person_papers_turing.json", "GET", "/person/paper/relation", {"id": ids["author"]}, None),
        ("org_search_manchester.json", "POST", "/organization/search", None, {"orgs": [ids["org_name"]]}),
        ("org_detail_manchester.json", "POST", "/organization/detail", None, {"ids": [ids["org"]]}),
        ("org_persons_manchester.json", "GET", "/organization/person/relation", {"org_id": ids["org"]}, None),
        ("venue_search_mind.json", "POST", "/venue/search", None, {"name": "computational linguistics"}),
        ("venue_detail_mind.json", "POST", "/venue/detail", None, {"id": ids["venue"]}),
    ]  # fmt: skip
    with httpx.Client(timeout=120, headers={"Authorization": "t"}) as c:
        for name, method, path, params, body in cases:
            documented = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
            r = c.request(method, api + path, params=params, json=body)
            assert r.status_code == 200, f"{name}: HTTP {r.status_code}"
            ours = r.json()
            assert ours["success"] is True, f"{name}: {ours}"
            if documented.get("data"):
                assert ours["data"], f"{name}: no data for an id the corpus has"
            assert_same_shape(ours, documented, name)
        missing_token = httpx.get(f"{api}/paper/detail", params={"id": ids["paper"]}).json()
    assert_same_shape(missing_token, json.loads((FIXTURES / "token_invalid.json").read_text()), "token_invalid.json")
    assert missing_token["success"] is False


async def test_pilots_aminer_adapter_works_against_the_emulator(emulator, tmp_path):
    _, url = emulator
    settings = Settings(
        _env_file=None, aminer_base_url=url + PREFIX, aminer_token=SecretStr("t"), cache_dir=tmp_path, http_timeout_s=60
    )
    src = AMinerSource(settings)
    try:
        hits = await src.search_papers("frame semantic parsing lexical units", limit=10)
        assert hits and all(h.paper.id.startswith("aminer:") for h in hits)
        anchor = await src.get_paper(f"aminer:{aid(ANCHOR)}")
        assert anchor.title == "Automatic induction of FrameNet lexical units" and anchor.year == 2008
        refs = await src.references(anchor.id)
        assert "The Berkeley FrameNet Project" in {p.title for p in refs}
        author = anchor.authors[0]
        people = await src.search_authors(author.name.split(",")[0])
        assert people and all(p.id.startswith("aminer:") for p in people)
    finally:
        await src.aclose()


async def test_adapter_honours_the_emulated_rate_limit(local_source, tmp_path):
    emu = AMinerEmulator(local_source, limits=Limits(keyed=RateSpec(1, 30.0)))
    with Running(emu) as running:
        settings = Settings(
            _env_file=None, aminer_base_url=running.url + PREFIX, aminer_token=SecretStr("t"), cache_dir=tmp_path,
            http_timeout_s=10,
        )  # fmt: skip
        src = AMinerSource(settings, max_wait_s=5)
        try:
            await src.get_paper(f"aminer:{aid(ANCHOR)}")
            with pytest.raises(RateLimited):  # Retry-After 30 s is more than the adapter waits: a typed error
                await src.references(f"aminer:{aid(ANCHOR)}")
        finally:
            await src.aclose()
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"{running.url}/_stats")).json()["rate_limited"] == 1
