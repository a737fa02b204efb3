"""The clarification question model shared by the policy, the LLM path, the UI and the simulated user."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

# "scope": refine the results or start a new search?  "fallback": search a missing paper's words as a topic?
# "lift": a filter left few papers — lift it? (clarifier.lift)
Slot = Literal[
    "direction", "facet", "time", "venue", "topic", "recency", "k", "anchor", "resource", "scope", "fallback", "lift"
]


class Option(BaseModel):
    label: str = Field(description="what the button shows")
    # the intent fields this option sets, e.g. {"year_min": 2008} or {"direction": "successor"}
    sets: dict[str, Any] = Field(default_factory=dict)


class Question(BaseModel):
    slot: Slot
    text: str
    options: list[Option] = Field(min_length=2, max_length=5)
    allow_free_text: bool = True

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[Option]) -> list[Option]:
        labels = [o.label.strip().lower() for o in options]
        if len(set(labels)) != len(labels) or any(not lab for lab in labels):
            raise ValueError("options must be distinct and non-empty")
        return options
