"""What a real self-hosted server (llama.cpp) does, replayed by an HTTP server on 127.0.0.1: every request
carries ``max_tokens`` (a small model looping inside a JSON grammar otherwise generates until its context
is full and blocks the server for every later request); a reply cut off at that limit is a clear
``LLMError`` without a wasted repair round; grammar output with raw newlines or code fences inside its
strings still parses."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from pilot.llm import LLM, LLMError


class _Name(BaseModel):
    name: str


@pytest.fixture
def chat_server():
    """An OpenAI-style chat endpoint; ``state["finish"]`` sets the finish_reason of its replies."""
    state: dict = {"requests": [], "finish": "stop", "content": '{"name": "x"}'}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 — http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            state["requests"].append(body)
            payload = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": state["content"]},
                        "finish_reason": state["finish"],
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()
    httpd.server_close()


async def test_every_request_is_bounded_by_max_tokens(chat_server):
    llm = LLM("openai/m", api_base=chat_server["url"], api_key="sk-test", timeout_s=10, num_retries=0, max_tokens=321)
    assert (await llm.json("name something", "hi", _Name)).name == "x"
    assert chat_server["requests"][-1]["max_tokens"] == 321


async def test_reply_cut_at_the_limit_is_a_clear_error_without_repair(chat_server):
    chat_server["finish"] = "length"
    chat_server["content"] = '{"name": "aaaaaaaa'
    llm = LLM("openai/m", api_base=chat_server["url"], api_key="sk-test", timeout_s=10, num_retries=0, max_tokens=50)
    with pytest.raises(LLMError, match="cut off at max_tokens=50"):
        await llm.json("name something", "hi", _Name, repair=1)
    assert len(chat_server["requests"]) == 1  # no corrective round for a reply that hit the length limit


async def test_raw_newline_inside_a_grammar_string_still_parses(chat_server):
    # what llama-cpp-python's schema grammar really lets through (its string rule admits control chars)
    chat_server["content"] = '{"name": "first line\nsecond line"}'
    llm = LLM("openai/m", api_base=chat_server["url"], api_key="sk-test", timeout_s=10, num_retries=0)
    assert (await llm.json("name something", "hi", _Name, repair=0)).name == "first line\nsecond line"


async def test_code_fence_inside_a_json_string_does_not_hide_the_object(chat_server):
    chat_server["content"] = '{"name": "use ```python\\nprint(1)``` here"}'
    llm = LLM("openai/m", api_base=chat_server["url"], api_key="sk-test", timeout_s=10, num_retries=0)
    assert (await llm.json("name something", "hi", _Name, repair=0)).name.startswith("use ```python")
