"""CMake text ⇄ concrete syntax tree, byte for byte.

``parse_cmake(text)`` returns a :class:`CMakeFile` whose ``str()`` is ``text``
again, for every input the grammar (``grammars/cmake.lark``) accepts. Leaves are
:class:`Leaf` objects (``type``, ``value``, ``start``); the only inner nodes are
:class:`Command` and :class:`ParenGroup`. Nothing is normalised: trivia (spaces,
newlines, comments) are leaves like any other.

The grammar is the definition of the language. Two parsers implement it: Lark's
LALR parser over the grammar (:func:`parse_cmake_lark`, the reference), and a
scanner built from the *same terminal regexes* taken out of the compiled grammar
(:func:`parse_cmake`, several times faster). Whenever the scanner meets input it
does not accept, Lark parses it and produces the error, so both agree on errors
by construction; the test suite checks that they build identical trees.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Union

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from buildport.grammars import grammar_text
from buildport.syntax.errors import ParseError, position_of

#: Token types that carry no meaning: what LibCST/parso call trivia.
TRIVIA = frozenset({"SPACE", "NEWLINE", "LINE_COMMENT", "BRACKET_COMMENT", "BOM"})
#: Token types that are command arguments.
ARGUMENTS = frozenset({"QUOTED_ARG", "UNQUOTED_ARG", "BRACKET_ARG"})


class Leaf:
    """One token: its grammar terminal name, its exact text and its offset."""

    __slots__ = ("type", "value", "start")

    def __init__(self, type: str, value: str, start: int) -> None:
        self.type = type
        self.value = value
        self.start = start

    @property
    def end(self) -> int:
        return self.start + len(self.value)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Leaf({self.type}, {self.value!r}, {self.start})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Leaf)
            and self.type == other.type
            and self.value == other.value
            and self.start == other.start
        )

    def __hash__(self) -> int:
        return hash((self.type, self.start))


@dataclass(slots=True, eq=True)
class ParenGroup:
    """``( ... )`` nested inside a command's arguments, as in ``if((a) OR b)``."""

    lpar: Leaf
    items: list[Union[Leaf, "ParenGroup"]]
    rpar: Leaf

    def iter_leaves(self) -> Iterator[Leaf]:
        yield self.lpar
        for item in self.items:
            if isinstance(item, Leaf):
                yield item
            else:
                yield from item.iter_leaves()
        yield self.rpar


Item = Union[Leaf, ParenGroup]


@dataclass(slots=True, eq=True)
class Command:
    """One command invocation: ``name`` [space] ``(`` items ``)``."""

    name: Leaf
    space: Leaf | None
    lpar: Leaf
    items: list[Item]
    rpar: Leaf

    @property
    def identifier(self) -> str:
        """The command name, lower-cased (CMake command names ignore case)."""
        return self.name.value.lower()

    @property
    def start(self) -> int:
        return self.name.start

    @property
    def end(self) -> int:
        return self.rpar.end

    def iter_leaves(self) -> Iterator[Leaf]:
        yield self.name
        if self.space is not None:
            yield self.space
        yield self.lpar
        for item in self.items:
            if isinstance(item, Leaf):
                yield item
            else:
                yield from item.iter_leaves()
        yield self.rpar

    def arguments(self) -> list[Leaf]:
        """The argument leaves in order, nested parentheses flattened away."""
        return [t for t in self.iter_leaves() if t.type in ARGUMENTS]


@dataclass(slots=True)
class CMakeFile:
    """A parsed CMake file: top-level leaves and commands, in order."""

    items: list[Union[Leaf, Command]]
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False, compare=False)

    def __str__(self) -> str:
        return "".join(leaf.value for leaf in self.iter_leaves())

    def iter_leaves(self) -> Iterator[Leaf]:
        for item in self.items:
            if isinstance(item, Leaf):
                yield item
            else:
                yield from item.iter_leaves()

    def commands(self) -> list[Command]:
        return [item for item in self.items if isinstance(item, Command)]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset; ``\\r\\n``, ``\\n`` and ``\\r`` end lines."""
        if not self._line_starts:
            self._line_starts = line_starts(self.text)
        index = bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of ``text`` starts."""
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


_NEWLINE = re.compile(r"\r\n|\n|\r")


# --- the reference parser: Lark over the grammar ------------------------------------


def _leaf(token: Token) -> Leaf:
    return Leaf(token.type, token.value, token.start_pos or 0)


def _leaves(children: list[object]) -> list[object]:
    return [_leaf(c) if isinstance(c, Token) else c for c in children]


class _Build(Transformer[Token, object]):
    """Builds the CST inline, while the LALR parser reduces."""

    def start(self, children: list[object]) -> list[object]:
        return _leaves(children)

    def command(self, children: list[object]) -> Command:
        name, *rest = _leaves(children)
        space = None
        if isinstance(rest[0], Leaf) and rest[0].type == "SPACE":
            space, *rest = rest
        lpar, *items, rpar = rest
        return Command(name, space, lpar, items, rpar)  # type: ignore[arg-type]

    def paren_group(self, children: list[object]) -> ParenGroup:
        lpar, *items, rpar = _leaves(children)
        return ParenGroup(lpar, items, rpar)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(
        grammar_text("cmake"),
        parser="lalr",
        lexer="contextual",
        transformer=_Build(),
        maybe_placeholders=False,
    )


def parse_cmake_lark(text: str, path: str = "<input>") -> CMakeFile:
    """Parse with Lark's LALR parser over the grammar (the reference parser)."""
    enabled = gc.isenabled()
    gc.disable()  # large trees: the collector makes parsing quadratic
    try:
        items = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _error(text, exc, path) from None
    finally:
        if enabled:
            gc.enable()
    assert isinstance(items, list)
    return CMakeFile(items, text)


# --- the fast parser: the grammar's own terminals, scanned with `re` ------------------

_TOP_LEVEL = ("BOM", "IDENT", "SPACE", "NEWLINE", "BRACKET_COMMENT", "LINE_COMMENT")
_IN_ARGUMENTS = (
    "BRACKET_COMMENT", "BRACKET_ARG", "LINE_COMMENT", "QUOTED_ARG", "UNQUOTED_ARG",
    "SPACE", "NEWLINE", "LPAR", "RPAR",
)


@lru_cache(maxsize=1)
def _scanners() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Two alternations of the grammar's terminals, one per lexer context."""
    patterns = {t.name: t.pattern.to_regexp() for t in _lark().terminals}

    def alternation(names: tuple[str, ...]) -> re.Pattern[str]:
        return re.compile("|".join(f"(?P<{name}>{patterns[name]})" for name in names))

    return alternation(_TOP_LEVEL), alternation(_IN_ARGUMENTS)


class _Rejected(Exception):
    """The scanner met input outside the language; Lark will say why."""


def parse_cmake(text: str, path: str = "<input>") -> CMakeFile:
    """Parse CMake source; :class:`ParseError` with a position when it is not CMake."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return CMakeFile(_scan(text), text)
    except _Rejected:
        pass
    finally:
        if enabled:
            gc.enable()
    return parse_cmake_lark(text, path)  # raises the positioned error


def _scan(text: str) -> list[Union[Leaf, Command]]:
    top, inner = _scanners()
    items: list[Union[Leaf, Command]] = []
    append = items.append
    pos, n = 0, len(text)
    while pos < n:
        m = top.match(text, pos)
        if m is None:
            raise _Rejected
        kind = m.lastgroup
        assert kind is not None
        if kind != "IDENT":
            if kind == "BOM" and pos:
                raise _Rejected  # a BOM only opens a file
            append(Leaf(kind, m.group(), pos))
            pos = m.end()
            continue
        name = Leaf(kind, m.group(), pos)
        pos = m.end()
        space = None
        m = top.match(text, pos)
        if m is not None and m.lastgroup == "SPACE":
            space = Leaf("SPACE", m.group(), pos)
            pos = m.end()
        if not text.startswith("(", pos):
            raise _Rejected
        command, pos = _scan_arguments(text, pos, inner, name, space)
        append(command)
    return items


def _scan_arguments(
    text: str, pos: int, inner: re.Pattern[str], name: Leaf, space: Leaf | None
) -> tuple[Command, int]:
    """From the '(' after a command name to its matching ')'."""
    stack: list[tuple[Leaf, list[Item]]] = [(Leaf("LPAR", "(", pos), [])]
    pos += 1
    n = len(text)
    while pos < n:
        m = inner.match(text, pos)
        if m is None:
            raise _Rejected
        kind = m.lastgroup
        assert kind is not None
        leaf = Leaf(kind, m.group(), pos)
        pos = m.end()
        if kind == "LPAR":
            stack.append((leaf, []))
        elif kind == "RPAR":
            lpar, items = stack.pop()
            if not stack:
                return Command(name, space, lpar, items, leaf), pos
            stack[-1][1].append(ParenGroup(lpar, items, leaf))
        else:
            stack[-1][1].append(leaf)
    raise _Rejected


# --- errors ------------------------------------------------------------------------------


def _error(text: str, exc: UnexpectedInput, path: str) -> ParseError:
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        return _unclosed(text, path)
    offset: int
    if isinstance(exc, UnexpectedCharacters):
        offset = exc.pos_in_stream or 0
        message = _describe_char(text, offset)
    elif isinstance(exc, UnexpectedToken):
        offset = exc.token.start_pos or 0
        message = _describe_token(exc.token)
    else:  # pragma: no cover - lark has no other kinds today
        offset = 0
        message = "cannot parse"
    line, col, source = position_of(text, offset)
    return ParseError(message, line, col, source, path)


def _describe_char(text: str, offset: int) -> str:
    ch = text[offset]
    if ch == '"':
        return "unterminated quoted argument"
    if ch == "[" or text.startswith("#[", offset):
        what = "comment" if ch == "#" else "argument"
        return f"unterminated bracket {what}"
    if ch == "\\":
        return "invalid escape sequence"
    if ch in "()":
        return f"unexpected '{ch}' outside a command's arguments"
    if ch == "\x00":
        return "NUL byte in input (binary file?)"
    return f"unexpected character {ch!r}; expected a command name, a comment or a newline"


def _describe_token(token: Token) -> str:
    if token.value.startswith("\ufeff"):
        return "unexpected byte-order mark (U+FEFF) after the start of the file"
    if token.type == "RPAR":
        return "unbalanced parentheses: ')' closes nothing"
    if token.type == "NEWLINE":
        return "expected '(' after the command name, found the end of the line"
    return f"expected '(' after the command name, found {token.value[:20]!r}"


def _unclosed(text: str, path: str) -> ParseError:
    """The file ended inside a command: point at the command that is not closed."""
    depth = 0
    opened = 0
    last_word = 0
    try:
        for token in _lark().lex(text):
            kind = token.type
            if kind == "LPAR":
                if depth == 0:
                    opened = last_word
                depth += 1
            elif kind == "RPAR":
                depth = max(0, depth - 1)
            elif depth == 0 and kind in ("IDENT", "UNQUOTED_ARG"):
                last_word = token.start_pos or 0
    except UnexpectedInput:
        pass
    line, col, source = position_of(text, opened)
    message = "unbalanced parentheses: this command is not closed before the end of the file"
    return ParseError(message, line, col, source, path)
