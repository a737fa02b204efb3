"""The Gradio front end: ``build_app`` makes the Blocks, ``launch`` serves them (see ``pilot.ui.app``).

Imported lazily so that ``pilot.ui.render`` (plain HTML) does not pull in Gradio.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_app", "launch"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pilot.ui import app

        return getattr(app, name)
    raise AttributeError(name)
