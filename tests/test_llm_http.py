"""The configured-model path end to end: litellm talks real HTTP to an OpenAI-compatible server on
127.0.0.1 that this test starts (scripted replies), through the session's question and workflow steps."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pilot.llm import LLM
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings

BLEU_TITLE = "Bleu: A Method For Automatic Evaluation Of Machine Translation"


class Scripted:
    """Replies like a chat model: a question for the clarifier prompt, a workflow for the inducer prompt
    (invalid the first time, to exercise the repair), '{}' otherwise. ``rate_limit`` 429s come first."""

    def __init__(self):
        self.requests: list[dict] = []
        self.rate_limit = 0
        self.workflow_requests = 0
        self.choice: object = 1  # the reading it picks when a message can be read several ways

    def reply(self, body: dict) -> tuple[int, dict]:
        self.requests.append(body)
        if self.rate_limit > 0:
            self.rate_limit -= 1
            return 429, {
                "error": {"message": "slow down", "type": "rate_limit_exceeded", "code": "rate_limit_exceeded"}
            }
        system = body["messages"][0]["content"]
        first_user = (
            json.loads(body["messages"][1]["content"]) if body["messages"][1]["content"].startswith("{") else {}
        )
        if "multiple-choice question" in system:
            q = dict(first_user["example_question"])
            q["text"] = "[scripted] " + q["text"]
            content = json.dumps(q)
        elif "can be read in several ways" in system:
            content = json.dumps({"choice": self.choice})
        elif "literature-search workflows" in system:
            self.workflow_requests += 1
            wf = dict(first_user["example_workflow_for_this_direction"])
            wf["name"] = "scripted workflow"
            if self.workflow_requests == 1:  # an operator that does not exist: must be repaired
                wf["nodes"] = [*wf["nodes"], {"id": "oracle", "op": "read_minds", "params": {}}]
            content = json.dumps(wf)
        else:
            content = "{}"
        return 200, {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture
def server():
    script = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 — http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            status, payload = script.reply(body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # keep the test output clean
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield script
    httpd.shutdown()
    httpd.server_close()


def _llm(url: str) -> LLM:
    return LLM(
        "openai/scripted", api_base=url, api_key="sk-test-not-a-secret", timeout_s=20, num_retries=2, backoff_s=0.01
    )


async def test_rate_limit_over_http_is_retried(server):
    server.rate_limit = 1
    llm = _llm(server.url)
    from pydantic import BaseModel

    class Anything(BaseModel):
        pass

    await llm.json("say something", "hi", Anything)
    assert len(server.requests) >= 2  # the 429, then the answer
    assert server.requests[-1]["response_format"]["type"] == "json_object"


async def test_questions_and_workflow_come_from_the_model_over_http(server, local_source, tmp_path):
    rt = Runtime.for_source(local_source, Settings(cache_dir=tmp_path, max_turns=2), llm=_llm(server.url))
    s = Session(rt)
    reply = await s.user_says(f'Show me work that came after "{BLEU_TITLE}" and used its ideas.')
    assert reply.error is None and reply.question is not None
    assert reply.question.text.startswith("[scripted]") and reply.notes == []
    while reply.question is not None:
        reply = await s.choose(len(reply.question.options) - 1)
    assert reply.error is None and reply.results
    wf = s.workflow
    assert wf.name == "scripted workflow" and not wf.has_node("oracle")  # the repaired version ran
    assert server.workflow_requests == 2
    repair = [r for r in server.requests if "literature-search workflows" in r["messages"][0]["content"]][1]
    assert "read_minds" in repair["messages"][-1]["content"]  # the validation problem was sent back


async def test_in_the_unsure_band_the_model_picks_a_reading_and_a_bad_pick_keeps_the_question(
    server, local_source, tmp_path
):
    rt = Runtime.for_source(local_source, Settings(cache_dir=tmp_path, max_turns=1), llm=_llm(server.url))
    s = Session(rt)
    reply = await s.user_says("papers on machine translation")
    while reply.question is not None:
        reply = await s.choose(len(reply.question.options) - 1)
    assert reply.results
    # a subject alone while a list is on screen: narrow the list, or search it anew? The model picks the second
    server.choice = 1
    reply = await s.user_says("word alignment")
    asked = [r for r in server.requests if "can be read in several ways" in r["messages"][0]["content"]]
    assert len(asked) == 1 and "word alignment" in asked[0]["messages"][-1]["content"]
    assert reply.question is None or "narrow" not in reply.question.text.lower()
    assert "word alignment" in (s.intent.topic or "").lower()  # searched anew, as the model chose
    while reply.question is not None:
        reply = await s.choose(len(reply.question.options) - 1)
    assert reply.results
    # a pick that is not among the readings (or not a number) is dropped: the question is asked instead
    for bad in (7, "the second"):
        server.choice = bad
        reply = await s.user_says("phrase tables")
        assert reply.question is not None and len(reply.question.options) >= 2


async def test_dead_model_never_breaks_a_turn(local_source, tmp_path):
    # nothing listens on this port: every call fails fast, every step falls back and says why
    dead = LLM("openai/scripted", api_base="http://127.0.0.1:9/v1", api_key="sk-x", timeout_s=5, num_retries=0)
    s = Session(Runtime.for_source(local_source, Settings(cache_dir=tmp_path, max_turns=1), llm=dead))
    reply = await s.user_says(f'Show me work that came after "{BLEU_TITLE}" and used its ideas.')
    assert reply.question is not None and any("data-driven question" in n for n in reply.notes)
    reply = await s.choose(0)
    assert reply.error is None and reply.results
    assert any("used the template workflow" in n for n in reply.notes)
