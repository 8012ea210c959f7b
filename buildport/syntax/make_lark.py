"""The reference make parser: Lark's LALR parser over ``grammars/make.lark``.

:func:`buildport.syntax.make.parse_make` reads with the fast path of
:mod:`buildport.syntax.make_scan`, whose tables are kept in the parser cache as
data, and hands input it rejects to this parser, which gives the tokens (or the
error) for it. Kept apart so that a run whose Makefiles all parse never imports
Lark.
"""

from __future__ import annotations

from typing import Any, cast

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput, UnexpectedToken

from buildport.syntax.grammars import cached_lark
from buildport.syntax.errors import ParseError
from buildport.syntax.make_build import Record
from buildport.syntax.make_words import skip_blanks


def lark_parser(grammar: str) -> Lark:
    """Lark's parser for ``grammar`` (the make grammar, with its recipe prefix), its tables kept."""
    options: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False}
    parser: Lark = cached_lark("make", grammar, _Lines(), options)
    return parser


def read(parser: Lark, text: str, path: str) -> list[Any]:
    """The tokens and define records of ``text``, as :func:`buildport.syntax.make_scan.scan` gives
    them; :class:`ParseError` where Lark rejects the text."""
    try:
        return cast("list[Any]", parser.parse(text))  # `_Lines.start` gives a list
    except UnexpectedInput as exc:
        raise _lark_error(text, exc, path) from None


def _tokens(children: list[Any]) -> list[Any]:
    """Lark's tokens as the builder's ``(kind, start, end)`` tuples; define records stay."""
    return [(c.type, c.start_pos, c.end_pos) if isinstance(c, Token) else c for c in children]


class _Lines(Transformer[Token, Any]):
    """Parser callbacks: lines stay a flat run of tokens (the builder cuts it at
    newlines); a define block becomes one record."""

    def start(self, children: list[Any]) -> list[Any]:
        return _tokens(children)

    def define(self, children: list[Any]) -> Record:
        return ("define", _tokens(children))

    def nested_define(self, children: list[Any]) -> Record:
        return ("nested_define", _tokens(children))


def _lark_error(text: str, exc: UnexpectedInput, path: str) -> ParseError:
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        define = _open_define(exc)
        if define is not None:
            return ParseError.at(text, define, "missing 'endef', unterminated 'define'", path)
    offset = getattr(exc, "pos_in_stream", None)
    if isinstance(exc, UnexpectedToken) and exc.token.start_pos is not None:
        offset = exc.token.start_pos
    # The grammar accepts every line; this is a gap in it, not in the input.
    return ParseError.at(text, offset if isinstance(offset, int) else len(text), "cannot read this line", path)


def _open_define(exc: UnexpectedToken) -> int | None:
    """Where the outermost unterminated define starts, from the parser's stack."""
    parser = exc.interactive_parser
    stack = parser.parser_state.value_stack if parser is not None else []
    for value in stack:
        if isinstance(value, Token) and value.type == "DEFINE_KW":
            return skip_blanks(str(value), 0, len(value)) + (value.start_pos or 0)
    return None
