"""pilot: interactive, multi-turn literature search with editable search workflows."""

__version__ = "0.1.0"
