"""The operator library. Each module registers its operators on import (see ``workflows.operator``)."""

from workflows.ops import filtering, keywords, output, reading, scoring, sets, sourcing  # noqa: F401

try:  # the entity operators land in their own change; the paper operators do not depend on them
    from workflows.ops import entities  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name != "workflows.ops.entities":
        raise
