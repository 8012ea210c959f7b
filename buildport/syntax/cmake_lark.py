"""The reference CMake parser: Lark's LALR parser over ``grammars/cmake.lark``.

:func:`buildport.syntax.cmake.parse_cmake` reads with a scanner built from the
grammar's terminals and hands input it does not accept to this parser, which
produces the error. Kept apart so that a run whose files all parse never
imports Lark (the terminals' regexes are kept in the parser cache, see
:func:`buildport.syntax.cmake._terminals`).
"""

from __future__ import annotations

import gc
from functools import lru_cache

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from buildport.syntax.grammars import cached_lark, grammar_text
from buildport.syntax.cmake import CMakeFile, Command, Leaf, ParenGroup, check_layout
from buildport.syntax.errors import ParseError


def terminals() -> dict[str, str]:
    """Each terminal of the grammar as the regex Lark's lexer uses."""
    return {t.name: t.pattern.to_regexp() for t in _lark().terminals}


# --- the parser ------------------------------------------------------------------------


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
    options = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False}
    parser: Lark = cached_lark("cmake", grammar_text("cmake"), _Build(), options)
    return parser


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
    tree = CMakeFile(items, text)
    check_layout(tree, path)
    return tree


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
    return ParseError.at(text, offset, message, path)


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
    message = "unbalanced parentheses: this command is not closed before the end of the file"
    return ParseError.at(text, opened, message, path)
