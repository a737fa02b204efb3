"""Paper and entity sources behind one protocol (see ``pilot.sources.base``)."""

from pilot.sources.base import (
    BadRequest,
    NotFound,
    NotSupported,
    RateLimited,
    Source,
    SourceError,
    SourceUnavailable,
)

__all__ = ["BadRequest", "NotFound", "NotSupported", "RateLimited", "Source", "SourceError", "SourceUnavailable"]
