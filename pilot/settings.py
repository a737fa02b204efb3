"""The one settings object. Every knob is an environment variable with the ``PILOT_`` prefix.

Secrets are ``SecretStr`` so that printing, logging or serialising the settings never shows them, and each
one is registered with ``pilot.redact`` so that an upstream service echoing it (in an error, a log line, a
traceback) does not show it either.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pilot import redact


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PILOT_", env_file=None, extra="ignore")

    # "auto" = Semantic Scholar, plus AMiner when a token is set, plus the corpus when a path is set.
    sources: str = Field("auto", description="auto | comma list of: s2, aminer, local")
    corpus: Path | None = Field(None, description="offline corpus file (shared corpus JSONL schema, .gz ok)")
    corpus_vectors: Path | None = Field(
        None, description="precomputed MiniLM vectors for the corpus (.npy, row i = line i); default: beside the corpus"
    )
    cache_dir: Path = Field(Path(".pilot-cache"), description="diskcache + built corpus stores live here")
    cache_size_mb: int = 2048
    api_ttl_s: int = 7 * 24 * 3600

    s2_api_key: SecretStr | None = None
    s2_base_url: str = "https://api.semanticscholar.org/graph/v1"
    s2_recommendations_url: str = "https://api.semanticscholar.org/recommendations/v1"
    aminer_token: SecretStr | None = None
    aminer_base_url: str = "https://datacenter.aminer.cn/gateway/open_platform"
    http_timeout_s: float = Field(
        20.0, gt=0, description="seconds one request to a remote source may take in all: connect and every read"
    )
    connect_timeout_s: float = 3.0
    request_budget: int | None = Field(
        20, description="remote requests one turn may send (cache hits are free); unset or 0 = no cap"
    )
    s2_rate: str | None = Field(
        None, description="N/SECONDS Semantic Scholar allows this key; default 1/1 with a key, 100/300 without"
    )
    aminer_rate: str | None = Field(None, description="N/SECONDS AMiner allows this token; default: no client-side cap")
    redis_url: SecretStr | None = Field(
        None, description="redis://… shared by replicas: one response cache and one rate budget per key"
    )

    llm_model: str | None = Field(None, description="any litellm model name; unset = deterministic mode")
    llm_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = 60.0
    llm_prompt: Literal["full", "compact"] = Field(
        "full",
        description="operator registry in the workflow prompt: full param schemas,"
        " or compact (defaults as values) for small local models",
    )

    max_turns: int = Field(4, description="clarification questions asked at most in one search")
    questions_before_results: int = Field(
        2, ge=0, description="questions on search settings asked before the first results; the rest come with them"
    )
    node_timeout_s: float = Field(30.0, gt=0, description="seconds before one workflow step counts as failed")
    turn_budget_s: float = Field(
        60.0,
        ge=0,
        description="seconds one turn may wait on remote sources (requests, rate-limit waits, retries): then it "
        "answers with what it has; 0 = no limit",
    )
    embed_at_most: int | None = Field(
        200,
        ge=0,
        description="papers without stored vectors (from a remote source) one scoring step embeds, the best by "
        "its other features first (stored vectors of the offline corpus are not counted)",
    )
    ui_concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="searches (workflow runs) computing at once across all visitors; more wait in a queue that "
        "tells each visitor their place. Other actions never wait for them; one visitor's actions run in order",
    )
    session_idle_s: float = Field(
        1800.0,
        gt=0,
        description="seconds after a visitor's last action when the app lets their session go (state, downloads, "
        "Gradio's copy); their library stays in their browser",
    )
    conversation_days: float = Field(
        30.0, gt=0, description="days a conversation (and a recent search) is kept after its last change"
    )
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    auth: SecretStr | None = Field(
        None,
        description="login for the web app: user:password (several separated by commas); unset = no login",
    )

    def model_post_init(self, context: object) -> None:
        keys = [s.get_secret_value() for s in (self.s2_api_key, self.aminer_token, self.llm_api_key) if s is not None]
        redact.register(*keys)
        passwords = [item.partition(":")[2] for item in self.auth.get_secret_value().split(",")] if self.auth else []
        if self.redis_url is not None:
            passwords.append(self.redis_url.get_secret_value())  # the password in it
        redact.register(*passwords, partial=False)

    def logins(self) -> list[tuple[str, str]]:
        """The app's (user, password) pairs from ``PILOT_AUTH``; ``ValueError`` when it is malformed."""
        if self.auth is None or not self.auth.get_secret_value().strip():
            return []
        pairs = []
        for item in self.auth.get_secret_value().split(","):
            user, sep, password = item.strip().partition(":")
            if not sep or not user.strip() or not password:
                # never echo the value: it holds passwords
                raise ValueError("PILOT_AUTH must be user:password (several separated by commas)")
            pairs.append((user.strip(), password))
        return pairs

    def turn_budget(self) -> int | None:
        """Requests per turn, None when uncapped."""
        return self.request_budget if self.request_budget and self.request_budget > 0 else None

    def redis(self) -> str | None:
        return self.redis_url.get_secret_value().strip() or None if self.redis_url is not None else None

    def source_names(self) -> list[str]:
        """Which sources to open, resolving ``auto`` from what is configured."""
        if self.sources.strip().lower() != "auto":
            return [s.strip().lower() for s in self.sources.split(",") if s.strip()]
        # S2 is always tried in auto mode; the source factory probes it once and drops it when unreachable.
        names = ["local"] if self.corpus is not None else []
        names.append("s2")
        if self.aminer_token is not None:
            names.append("aminer")
        return names


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
