"""Tokens of C, C++ and CUDA source text, for auditing rather than compiling.

The lexer knows what a text search does not: comments (``//`` with line
splices, ``/* */``), string and character literals with their prefixes and
escapes, raw strings (``R"x(...)x"``), preprocessor directives (a ``#`` that
starts a line, up to the next unspliced newline) and ``#include`` header names.

It is built for speed on large files: one ``findall`` splits the text into
pieces (whitespace included, so offsets follow by summing lengths), and tokens
are kept as parallel lists (:class:`TokenList`) rather than one object each.
Line and column are computed only for what ends up in a finding, by
:class:`LineMap`; :func:`tokenize` gives the convenient one-object-per-token view.

It never raises: unterminated comments and raw strings end at the end of the
text, quoted literals at the end of their line, and any other character is a
one-character punctuator.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, compress
from typing import NamedTuple

from buildport.textio import LineMap

IDENT = "ident"
NUMBER = "number"
STRING = "string"
CHAR = "char"
PUNCT = "punct"
HEADER = "header"
COMMENT = "comment"


class Token(NamedTuple):
    """One token with its 1-based position; ``directive`` names the directive it is part of."""

    kind: str
    text: str
    start: int
    line: int
    col: int
    directive: str = ""


@dataclass(slots=True)
class TokenList:
    """Tokens as three parallel lists: kinds, texts and offsets into the text."""

    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(slots=True)
class Directive:
    """A preprocessor line: ``#`` at ``start``, its name and the tokens after the name."""

    start: int
    name: str
    tokens: TokenList


#: The directives that test a condition (a macro named in one is tested, not defined).
CONDITIONALS = frozenset(("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"))


@dataclass(slots=True)
class Lexed:
    """A text split three ways: code tokens, directives, and comments."""

    code: TokenList
    directives: list[Directive]
    comments: TokenList

    def defined(self) -> frozenset[str]:
        """The macros the text ``#define``s itself."""
        return frozenset(d.tokens.texts[0] for d in self.directives if d.name == "define" and d.tokens.texts)


_NL = r"(?:\r\n|\r|\n)"
_PREFIX = r"(?:u8|[uUL])?"
# Every character belongs to exactly one piece. A raw-string opener is a piece of its own;
# _split extends it to the closing delimiter.
_PIECE = re.compile(
    rf"""[ \t\f\v\ufeff]+|{_NL}|\\{_NL}|//(?:\\{_NL}|[^\r\n])*|/\*(?s:.*?)(?:\*/|\Z)"""
    rf"""|{_PREFIX}R"[^ ()\\\t\v\f\r\n"]{{0,16}}\("""
    rf"""|{_PREFIX}"(?:[^"\\\r\n]|\\(?:{_NL}|[\s\S]))*"?|{_PREFIX}'(?:[^'\\\r\n]|\\(?:{_NL}|[\s\S]))*'?"""
    r"""|(?:[^\W\d]|\$)(?:\w|\$)*|\.?[0-9](?:[eEpP][+-]|'(?=\w)|[\w.])*"""
    r"""|<<<|>>>|<<=|>>=|\.\.\.|->\*|<=>|\#\#|::|->|\+\+|--|<<|>>|&&|\|\||[-+*/%&|^!=<>]=|[\s\S]"""
)
_RAW_OPEN = re.compile(rf"""{_PREFIX}R"([^ ()\\\t\v\f\r\n"]{{0,16}})\(""")
_LINE_ENDS = frozenset(("\n", "\r", "\r\n"))
_BLANKS = " \t\f\v\r\n\ufeff"  # a byte-order mark is kept in the text but is not a token
_FIRST = {**dict.fromkeys("0123456789", NUMBER), **dict.fromkeys("$_", IDENT),
          **dict.fromkeys("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", IDENT),
          '"': STRING, "'": CHAR}
_TOKEN_KINDS = frozenset((IDENT, NUMBER, STRING, CHAR, PUNCT))
_NONE = [False]
#: The directives that name a file to include.
INCLUDE_NAMES = frozenset(("include", "include_next", "import"))
_HEADER_NAME = re.compile(r"<[^>\r\n]*>")


def kind_of(piece: str) -> str:
    """The kind of a non-blank piece of text as the lexer cut it."""
    first = piece[0]
    kind = _FIRST.get(first)
    if kind is IDENT:
        if '"' in piece[:4]:  # u8"..", L"..", R"(..)"
            return STRING
        return CHAR if "'" in piece[:3] else IDENT
    if kind is not None:
        return kind
    if first == "/" and piece[1:2] in ("/", "*"):
        return COMMENT
    if first == ".":
        return NUMBER if piece[1:2].isdigit() else PUNCT
    return IDENT if first.isalpha() else PUNCT


def lex(text: str) -> Lexed:
    """Split ``text`` into code tokens, directives and comments, in linear time."""
    pieces, starts = _split(text)
    kinds = _kinds(pieces)
    is_comment = list(map(COMMENT.__eq__, kinds))
    comments = TokenList(list(compress(kinds, is_comment)), list(compress(pieces, is_comment)),
                         list(compress(starts, is_comment)))
    is_code = list(map(_TOKEN_KINDS.__contains__, kinds))  # not blank, not a comment
    directives: list[Directive] = []
    line_ends = list(compress(range(len(pieces)), map(_LINE_ENDS.__contains__, pieces)))
    line_ends.append(len(pieces))
    done = 0
    for first in _directive_starts(pieces, starts, text):
        if first < done:  # a '#' on a line continued from a directive
            continue
        last = line_ends[bisect.bisect_right(line_ends, first)]
        keep = is_code[first + 1 : last]
        body = TokenList(list(compress(kinds[first + 1 : last], keep)),
                         list(compress(pieces[first + 1 : last], keep)),
                         list(compress(starts[first + 1 : last], keep)))
        directives.append(_directive(text, body, starts[first]))
        is_code[first:last] = _NONE * (last - first)
        done = last
    code = TokenList(list(compress(kinds, is_code)), list(compress(pieces, is_code)), list(compress(starts, is_code)))
    return Lexed(code, directives, comments)


def tokenize(text: str) -> list[Token]:
    """Every token of ``text`` in order, with its line and column.

    Code, comments and directives alike; a directive's ``#``, name and body carry
    the directive's name in ``directive``.
    """
    lexed, lines = lex(text), LineMap(text)
    out: list[Token] = []

    def add(tokens: TokenList, directive: str = "") -> None:
        for kind, value, start in zip(tokens.kinds, tokens.texts, tokens.starts):
            out.append(Token(kind, value, start, *lines.position(start), directive))

    add(lexed.code)
    add(lexed.comments)
    for d in lexed.directives:
        name_at = text.find(d.name, d.start + 1) if d.name else -1
        head = TokenList([PUNCT, IDENT], ["#", d.name], [d.start, name_at]) if d.name \
            else TokenList([PUNCT], ["#"], [d.start])
        add(head, d.name or "#")
        add(d.tokens, d.name or "#")
    out.sort(key=lambda t: t.start)
    return out


def _split(text: str) -> tuple[list[str], list[int]]:
    """All pieces of ``text`` and their offsets, raw strings made whole.

    A ``R"delim(`` candidate counts only when the piece before it, re-read without
    the cut, does not run over it (so one inside a comment, a string or an
    identifier is no raw string). Each character is still read about once.
    """
    if 'R"' not in text:
        pieces = _PIECE.findall(text)
        return pieces, list(accumulate(map(len, pieces), initial=0))
    pieces = []
    pos = 0
    for opener in _RAW_OPEN.finditer(text):
        if opener.start() < pos:
            continue
        pieces.extend(_PIECE.findall(text, pos, opener.start()))
        pos = opener.start()
        if pieces:
            whole = _PIECE.match(text, pos - len(pieces[-1]))
            if whole is not None and whole.end() > pos:
                pieces[-1] = whole.group()
                pos = whole.end()
                continue
        close = text.find(")" + opener.group(1) + '"', opener.end())
        end = len(text) if close < 0 else close + len(opener.group(1)) + 2
        pieces.append(text[pos:end])
        pos = end
    pieces.extend(_PIECE.findall(text, pos))
    return pieces, list(accumulate(map(len, pieces), initial=0))


def _kinds(pieces: list[str]) -> list[str]:
    """Kinds of all pieces; blanks and line splices are ``""``. Classified once per distinct text."""
    table = {piece: ("" if not piece.strip(_BLANKS) or piece[:2] in ("\\\n", "\\\r") else kind_of(piece))
             for piece in set(pieces)}
    return list(map(table.__getitem__, pieces))


_LINE_START_HASH = re.compile(r"(?:^|(?<=\r))[ \t\f\v\ufeff]*#", re.MULTILINE)


def _directive_starts(pieces: list[str], starts: list[int], text: str) -> list[int]:
    """Piece indices of each ``#`` that is the first token on its line (not in a comment or literal)."""
    found: list[int] = []
    if "\r" in text:
        hashes: Iterable[int] = (m.end() - 1 for m in _LINE_START_HASH.finditer(text))
    else:
        hashes = _line_start_hashes(text)
    for at in hashes:
        index = bisect.bisect_left(starts, at)
        if index < len(pieces) and starts[index] == at and pieces[index] == "#":
            found.append(index)
    return found


def _line_start_hashes(text: str) -> Iterator[int]:
    """Where ``_LINE_START_HASH`` ends (at its ``#``) in a text without carriage returns: from each
    ``#`` back to its line's start, rather than a pattern tried at every position of the text."""
    at = text.find("#")
    while at >= 0:
        if not text[text.rfind("\n", 0, at) + 1 : at].strip(_LINE_BLANKS):
            yield at
        at = text.find("#", at + 1)


#: What may stand before a directive's ``#`` on its line (as in ``_LINE_START_HASH``).
_LINE_BLANKS = " \t\f\v\ufeff"


def _directive(text: str, body: TokenList, start: int) -> Directive:
    """Name the directive after its first identifier; an include's header becomes one token."""
    name = ""
    if body.kinds and body.kinds[0] is IDENT:
        name = body.texts[0]
        del body.kinds[0], body.texts[0], body.starts[0]
    if name in INCLUDE_NAMES and body.texts:
        header = _HEADER_NAME.match(text, body.starts[0]) if body.texts[0] == "<" else None
        if header is not None:
            keep = [s >= header.end() for s in body.starts]
            body.kinds[:] = [HEADER, *compress(body.kinds, keep)]
            body.texts[:] = [header.group(), *compress(body.texts, keep)]
            body.starts[:] = [header.start(), *compress(body.starts, keep)]
        elif body.kinds[0] is STRING:
            body.kinds[0] = HEADER
    return Directive(start, name, body)


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
