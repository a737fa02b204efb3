"""The operator library. Each module registers its operators on import (see ``workflows.operator``)."""

from workflows.ops import (
    answer,
    entities,
    facets,
    filtering,
    keywords,
    neighbourhood,
    output,
    reading,
    scoring,
    sets,
    sourcing,
)

__all__ = [
    "answer",
    "entities",
    "facets",
    "filtering",
    "keywords",
    "neighbourhood",
    "output",
    "reading",
    "scoring",
    "sets",
    "sourcing",
]
