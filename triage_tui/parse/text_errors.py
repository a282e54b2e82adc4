"""The one error the pasted-text parsers raise: input that is not what the parser reads."""

from __future__ import annotations


class ParseError(ValueError):
    """Text that does not have the shape a parser reads; the message says what was expected."""
