"""Which characters a regular expression can begin with: a conservative answer from its parse.

:mod:`buildport.syntax.make_scan` reads a line break together with the token
before it only where that cannot change what Lark's lexer would read. That
holds when no terminal but the line break can begin with ``\\n``, which this
module decides from the patterns themselves (Python's own regex parser). The
answer errs on the side of "can": a construct it does not know, a lookaround
(which consumes nothing), or a pattern that can match the empty string all
count as able to begin with any character.
"""

from __future__ import annotations

import re
from re import _constants as C
from re import _parser as P
from typing import Any


def can_begin_with(pattern: str, char: str, flags: int = 0) -> bool:
    """Whether ``pattern`` might match a non-empty or empty string at a ``char``.

    False only when every match of ``pattern`` consumes a first character and
    that character cannot be ``char``.
    """
    if len(char) != 1:
        return True
    return parsed_can_begin_with(P.parse(pattern, flags), char)


def parsed_can_begin_with(parsed: Any, char: str) -> bool:
    """:func:`can_begin_with` for a pattern already parsed by ``re._parser.parse``."""
    if len(char) != 1:
        return True
    if parsed.state.flags & re.IGNORECASE:
        return True
    possible, nullable = _sequence(parsed, ord(char))
    return possible or nullable


def _sequence(items: Any, code: int) -> tuple[bool, bool]:
    """(can begin with ``code``, can match empty) for a sequence of parsed items."""
    for op, arg in items:
        possible, nullable = _item(op, arg, code)
        if possible:
            return True, False
        if not nullable:
            return False, False
    return False, True


def _item(op: Any, arg: Any, code: int) -> tuple[bool, bool]:
    if op is C.LITERAL:
        return arg == code, False
    if op is C.NOT_LITERAL:
        return arg != code, False
    if op is C.ANY:
        return True, False
    if op is C.IN:
        return _in(arg, code), False
    if op is C.SUBPATTERN:
        if arg[1] & re.IGNORECASE:  # (?i:...)
            return True, True
        return _sequence(arg[-1], code)
    if op is C.BRANCH:
        results = [_sequence(alternative, code) for alternative in arg[1]]
        return any(r[0] for r in results), any(r[1] for r in results)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) or op is getattr(C, "POSSESSIVE_REPEAT", None):
        low, _, body = arg
        possible, nullable = _sequence(body, code)
        return possible, nullable or low == 0
    if op is getattr(C, "ATOMIC_GROUP", None):
        return _sequence(arg, code)
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return False, True  # consumes nothing: the next item decides
    return True, True  # unknown: assume the worst


def _in(items: Any, code: int) -> bool:
    """Whether a character class accepts ``code`` (categories other than blanks: assume yes)."""
    negate = False
    inside = False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            inside = inside or arg == code
        elif op is C.RANGE:
            inside = inside or arg[0] <= code <= arg[1]
        elif op is C.CATEGORY and arg is C.CATEGORY_SPACE:
            inside = inside or chr(code).isspace()
        else:
            return True
    return inside != negate
