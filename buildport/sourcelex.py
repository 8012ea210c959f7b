"""Tokens of C, C++ and CUDA source text, for auditing rather than compiling.

The lexer knows what a text search does not: comments (``//`` with line
splices, ``/* */``), string and character literals with their prefixes and
escapes, raw strings (``R"x(...)x"``), preprocessor directives (a ``#`` that
starts a line, up to the next unspliced newline) and ``#include`` header names.
Every token keeps its offset into the text; line and column are computed only
for the few tokens that end up in a finding.

It never raises: unterminated comments and literals end at the end of the text
(block comments, raw strings) or of the line (quoted literals), and any other
character is a one-character punctuator.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import NamedTuple

IDENT = "ident"
NUMBER = "number"
STRING = "string"
CHAR = "char"
PUNCT = "punct"
HEADER = "header"
COMMENT = "comment"


class Token(NamedTuple):
    """One token: its kind (one of the module constants), text and offset."""

    kind: str
    text: str
    start: int


@dataclass(slots=True)
class Directive:
    """A preprocessor line: ``#`` at ``start``, its name and the tokens after it."""

    start: int
    name: str = ""
    tokens: list[Token] = field(default_factory=list)


@dataclass(slots=True)
class Lexed:
    """A text split three ways: code tokens, directives, and comments."""

    code: list[Token]
    directives: list[Directive]
    comments: list[Token]


_NL = r"(?:\r\n|\r|\n)"
_PREFIX = r"(?:u8|[uUL])?"
_TOKEN = re.compile(
    rf"""
      (?P<nl>{_NL})
    | (?P<ws>(?:[ \t\f\v]|\\{_NL})+)
    | (?P<lcom>//(?:\\{_NL}|[^\r\n])*)
    | (?P<bcom>/\*(?s:.*?)(?:\*/|\Z))
    | (?P<raw>{_PREFIX}R"(?P<delim>[^ ()\\\t\v\f\r\n"]{{0,16}})\()
    | (?P<str>{_PREFIX}"(?:[^"\\\r\n]|\\(?:{_NL}|[\s\S]))*"?)
    | (?P<chr>{_PREFIX}'(?:[^'\\\r\n]|\\(?:{_NL}|[\s\S]))*'?)
    | (?P<num>\.?[0-9](?:[eEpP][+-]|'(?=[0-9A-Za-z_])|[0-9A-Za-z_.])*)
    | (?P<id>(?:[^\W\d]|\$)(?:\w|\$)*)
    | (?P<punct><<<|>>>|<<=|>>=|\.\.\.|->\*|<=>|\#\#|::|->|\+\+|--|<<|>>|&&|\|\||[-+*/%&|^!=<>]=|[\s\S])
    """,
    re.VERBOSE,
)
_KIND = {"str": STRING, "chr": CHAR, "num": NUMBER, "id": IDENT, "punct": PUNCT}
_HEADER_NAME = re.compile(r"[ \t]*(<[^>\r\n]*>|\"[^\"\r\n]*\")")
_INCLUDES = frozenset(("include", "include_next", "import"))


def lex(text: str) -> Lexed:
    """Split ``text`` into code tokens, directives and comments, in one linear pass."""
    code: list[Token] = []
    comments: list[Token] = []
    directives: list[Directive] = []
    current: Directive | None = None
    expect_name = False
    line_start = True
    pos, size = 0, len(text)
    match = _TOKEN.match
    while pos < size:
        m = match(text, pos)
        assert m is not None  # the last alternative matches any character
        group, end = m.lastgroup, m.end()
        if group == "nl":
            if current is not None:
                directives.append(current)
                current = None
            line_start = True
        elif group == "ws":
            pass
        elif group == "lcom" or group == "bcom":
            comments.append(Token(COMMENT, m.group(), pos))
        else:
            if group == "raw":
                close = text.find(")" + m.group("delim") + '"', end)
                end = size if close < 0 else close + len(m.group("delim")) + 2
                token = Token(STRING, text[pos:end], pos)
            else:
                token = Token(_KIND[group or "punct"], m.group(), pos)
            if current is None and line_start and token.text == "#":
                current = Directive(pos)
                expect_name = True
            elif current is not None:
                if expect_name and token.kind == IDENT:
                    current.name = token.text
                    if token.text in _INCLUDES:
                        header = _HEADER_NAME.match(text, end)
                        if header is not None:
                            start = header.start(1)
                            current.tokens.append(Token(HEADER, header.group(1), start))
                            end = header.end()
                else:
                    current.tokens.append(token)
                expect_name = False
            else:
                code.append(token)
            line_start = False
        pos = end
    if current is not None:
        directives.append(current)
    return Lexed(code, directives, comments)


class LineMap:
    """Offsets to 1-based (line, column); ``\\r\\n``, ``\\n`` and a lone ``\\r`` end lines."""

    def __init__(self, text: str) -> None:
        self._starts = [0]
        self._starts.extend(m.end() for m in re.finditer(_NL, text))

    def position(self, offset: int) -> tuple[int, int]:
        """The line and column of ``offset``; columns count characters, tabs as one."""
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset``."""
        return bisect.bisect_right(self._starts, offset)


def int_value(text: str) -> int | None:
    """The value of an integer literal (``0x1F``, ``31u``, ``1'000``, ``0b101``); None otherwise."""
    body = text.replace("'", "").rstrip("uUlLzZ")
    try:
        if body[:2] in ("0x", "0X"):
            return int(body[2:], 16)
        if body[:2] in ("0b", "0B"):
            return int(body[2:], 2)
        if len(body) > 1 and body[0] == "0":
            return int(body[1:], 8)
        return int(body, 10)
    except ValueError:
        return None


def is_64bit_literal(text: str) -> bool:
    """True when an integer literal's suffix makes it ``long long`` (``ull``, ``LL``)."""
    return text.rstrip("uU").lower().endswith("ll")
