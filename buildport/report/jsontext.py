"""``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte, faster; and a form with the
deeper containers on one line each.

With an indent, the standard library encodes in Python, one generator step per
value; an audit report of a large tree has millions of them. Here each string
goes through the C string encoder and each container is one join; with
``one_line_at``, containers that deep are written by the C encoder whole (one
finding per line: as readable, and several times faster again).
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]  # C where available
from typing import Any, NoReturn

_INFINITY = float("inf")


class RawJSON(str):
    """Text already encoded as JSON, written as it is (a caller that encodes many values of one
    shape can do it faster than the general encoder). Only where :func:`dumps_indented` indents:
    inside a container it writes on one line, it is a string like any other."""


def dumps_indented(value: Any, indent: int = 2, one_line_at: int | None = None, end: str = "") -> str:
    """The text ``json.dumps(value, indent=indent, ensure_ascii=False)`` gives (JSON data only: dict
    keys are strings, values str, int, float, bool, None, list, tuple or dict), then ``end``.

    With ``one_line_at``, a container nested that deep (the value itself is at
    depth 0) is written on one line, as ``json.dumps(container, ensure_ascii=False)``.
    The pieces are joined once at the end: a report of tens of megabytes is not
    copied once per level of nesting.
    """
    parts: list[str] = []
    _write(value, parts, "\n", " " * indent, one_line_at if one_line_at is not None else -1)
    parts.append(end)
    return "".join(parts)


def _write(value: Any, parts: list[str], newline: str, step: str, flat: int) -> None:
    if isinstance(value, str):
        parts.append(value if type(value) is RawJSON else encode_basestring(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float(value))
    elif flat == 0 and isinstance(value, (dict, list, tuple)):
        parts.append(_one_line(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + step
        separator = "{"
        for k, v in value.items():
            parts.append(f"{separator}{inner}{_key(k)}: ")
            _write(v, parts, inner, step, flat - 1)
            separator = ","
        parts.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            parts.append("[]")
            return
        inner = newline + step
        parts.append("[" + inner)
        if all(type(v) is RawJSON for v in value):
            parts.append(("," + inner).join(value))
        else:
            for n, v in enumerate(value):
                if n:
                    parts.append("," + inner)
                _write(v, parts, inner, step, flat - 1)
        parts.append(newline + "]")
    else:
        _default(value)


def _default(value: Any) -> NoReturn:
    """What the encoders do with a value that is not JSON data."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: The C encoder ``json.dumps(value, ensure_ascii=False)`` builds on each call, built once.
_C_ENCODER = c_make_encoder(None, _default, encode_basestring, None, ": ", ", ", False, False, True) if c_make_encoder else None


def _one_line(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``."""
    if _C_ENCODER is None:
        return json.dumps(value, ensure_ascii=False)
    return "".join(_C_ENCODER(value, 0))


def _key(key: Any) -> str:
    if isinstance(key, str):
        return encode_basestring(key)
    raise TypeError(f"keys must be str, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)
