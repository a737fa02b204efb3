"""The one thin module that talks to a language model, through litellm.

Everything that can use an LLM also works without one; this module's job is to make the LLM path
safe: JSON out, parsed into a pydantic model, validated, repaired once, and a typed ``LLMError`` on any
failure so the caller falls back to its deterministic path (and tells the user why).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pilot.redact import redact
from pilot.settings import get_settings

# litellm fetches a model cost map from the network on import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)


class LLMError(Exception):
    """The model could not give a usable answer (unreachable, rate-limited, garbage, invalid). Its text may
    quote the provider's error, which may echo the key: it is redacted (``pilot.redact``)."""

    def __init__(self, message: str = ""):
        super().__init__(redact(message))


class LLMRateLimited(LLMError):
    """Still rate-limited after the retries."""


def _is_rate_limit(exc: BaseException) -> bool:
    # litellm maps every provider's 429 to RateLimitError; match by name so a litellm reshuffle of its
    # exception modules cannot turn a retryable error into a fatal one
    return any(c.__name__ == "RateLimitError" for c in type(exc).__mro__)


def _extract_json(text: str) -> Any:
    """The JSON object in a reply: the whole text, else a fenced block, else the outermost braces.

    The whole text is tried first because a grammar-constrained reply is one object whose strings may
    hold anything, a fenced code block included. ``strict=False``: llama-cpp-python's schema grammar lets
    raw newlines into strings, invalid to a strict parser although the object is complete.
    """
    loads = json.JSONDecoder(strict=False).decode
    text = (text or "").strip()
    candidates = [text]
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return loads(candidate)
        except json.JSONDecodeError:
            continue
    raise LLMError("the model's reply is not JSON")


class LLM:
    """A configured model. ``mock_response`` is litellm's own test hook (a string, or an exception name)."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        num_retries: int = 2,
        mock_response: Any = None,
        backoff_s: float = 1.0,
        max_tokens: int | None = 1024,
    ):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.num_retries = num_retries  # retries on rate limits only; other failures fall back at once
        self.backoff_s = backoff_s
        self.mock_response = mock_response
        # a bound on every reply: without it a self-hosted server (llama.cpp) generates until its context is
        # full when a small model loops inside a JSON grammar, and keeps doing so after the client's timeout,
        # so every request queued behind it times out too
        self.max_tokens = max_tokens
        self.calls = 0  # requests sent (incl. retries), for run records

    def __repr__(self) -> str:  # never show the key
        return f"LLM(model={self.model!r}, api_base={self.api_base!r})"

    async def complete(self, messages: list[dict[str, str]], schema: dict | None = None, **extra: Any) -> str:
        import litellm

        kwargs: dict[str, Any] = dict(model=self.model, messages=messages, timeout=self.timeout_s, temperature=0)
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if self.mock_response is not None:
            mr = self.mock_response
            kwargs["mock_response"] = mr.pop(0) if isinstance(mr, list) else mr
        if schema is not None:
            # llama.cpp's server rejects OpenAI's json_schema format but accepts json_object + schema (and
            # turns the schema into a grammar); hosted APIs get plain JSON mode, the schema is in the prompt.
            kwargs["response_format"] = (
                {"type": "json_object", "schema": schema} if self.api_base else {"type": "json_object"}
            )
        kwargs.update(extra)
        # one mock per request even across retries (a list mock scripts the sequence of replies)
        mocks = kwargs.pop("mock_response", None)
        attempt = 0
        while True:
            self.calls += 1
            if mocks is not None:
                kwargs["mock_response"] = mocks
            try:
                resp = await litellm.acompletion(num_retries=0, **kwargs)
                break
            except Exception as exc:  # litellm maps provider errors to its own classes; all mean "no answer"
                if _is_rate_limit(exc) and attempt < self.num_retries:
                    await asyncio.sleep(self.backoff_s * (2**attempt))
                    attempt += 1
                    if isinstance(self.mock_response, list) and self.mock_response:
                        mocks = self.mock_response.pop(0)
                    continue
                cls = LLMRateLimited if _is_rate_limit(exc) else LLMError
                raise cls(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError) as exc:
            raise LLMError("the model returned no message") from exc
        if getattr(choice, "finish_reason", None) == "length":
            # a cut-off JSON object is not worth a repair round: it would run into the same limit again
            raise LLMError(f"the reply was cut off at max_tokens={self.max_tokens}")
        return text

    async def json(
        self,
        system: str,
        user: str,
        model: type[T],
        repair: int = 1,
        check: Callable[[T], list[str]] | None = None,
        schema: dict | None = None,
    ) -> T:
        """Ask for a JSON object matching ``model``; on invalid output, show the error and ask again.

        ``repair`` = how many corrective rounds follow the first answer. ``check`` adds semantic validation
        beyond the schema (e.g. "the workflow has a cycle"): it returns problems, which are fed back the
        same way as parse errors.
        """
        schema = schema or model.model_json_schema()
        if not self.api_base:  # no grammar-constrained decoding: the model reads the schema instead
            system = f"{system}\nThe reply must be one JSON object matching this JSON schema:\n{json.dumps(schema)}"
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        last_error = ""
        for attempt in range(repair + 1):
            text = await self.complete(messages, schema=schema)
            try:
                value = model.model_validate(_extract_json(text))
                problems = check(value) if check is not None else []
                if not problems:
                    return value
                raise LLMError("; ".join(problems))
            except (LLMError, ValidationError) as exc:
                last_error = str(exc)[:500]
                log.info("LLM reply rejected (attempt %d): %s", attempt + 1, last_error)
                messages = messages + [
                    {"role": "assistant", "content": text[:2000]},
                    {
                        "role": "user",
                        "content": f"That reply was invalid: {last_error}"
                        "\nReply with only a JSON object that fits the schema.",
                    },
                ]
        raise LLMError(f"invalid reply after {repair + 1} attempts: {last_error}")


def get_llm(settings=None, model: str | None = None) -> LLM | None:
    """The configured model, or None in deterministic mode."""
    s = settings or get_settings()
    name = model or s.llm_model
    if not name:
        return None
    key = s.llm_api_key.get_secret_value() if s.llm_api_key else None
    return LLM(name, api_base=s.llm_api_base, api_key=key, timeout_s=s.llm_timeout_s)
