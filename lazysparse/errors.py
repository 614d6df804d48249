"""Helpers for error messages."""
from __future__ import annotations

LIMIT = 60


def shown(x, limit: int = LIMIT) -> str:
    """``repr(x)`` for an error message, cut to about ``limit`` characters: messages name what
    the user passed, but a pathological input (a 10^6-character subscript string, a huge
    integer or list) must not come back whole in every traceback."""
    try:
        text = repr(x)
    except ValueError:  # an int past Python's digit limit for str()
        if isinstance(x, int):
            return f"<an integer of {x.bit_length()} bits>"
        return f"<a {type(x).__name__}>"
    except Exception:  # a user object whose repr fails: the message must still come out
        return f"<a {type(x).__name__}>"
    if len(text) <= limit:
        return text
    keep = max(8, limit - 24)
    return f"{text[:keep]}...{text[-8:]} ({len(text)} characters)"
