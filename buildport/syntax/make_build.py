"""Tokens of the make grammar → the line nodes of :mod:`buildport.syntax.make_nodes`.

The parser hands over a flat run of ``(kind, start, end)`` tokens (and one
``(kind, children)`` record per ``define`` block); :func:`build_lines` cuts it
at the top-level ``NEWLINE`` tokens and turns each line into a node. The first
token of a line says what it is; the spans of its parts come from token
positions, blanks trimmed. :func:`lines_at` builds only the lines that begin at
given tokens (what ``parse_make`` checks, without building every line).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, TypeVar, cast

from buildport.syntax.make_nodes import (
    Assignment,
    Blank,
    Comment,
    Conditional,
    Define,
    Directive,
    Expansion,
    Include,
    Line,
    Other,
    RecipeLine,
    Rule,
)  # fmt: skip
from buildport.syntax.make_words import (
    Span,
    _new_span,
    iter_words,
    skip_blanks,
    strip_span,
)

#: A token, as both parsers hand it over: terminal name, start and end offset.
Tok = tuple[str, int, int]

#: A ``define`` block as the parser callbacks return it: ``(kind, children)``.
Record = tuple[str, list[Any]]
Builder = Callable[[str, Span, Span, list[Any]], Line]

_MODIFIER = re.compile(r"(?:export|unexport|override|private)(?=[ \t]|\\\r?\n)")
_LAST_WORD = re.compile(r"[^ \t\n]+\Z")
_WORD = re.compile(r"[^ \t\r\n\\]+")
_KEYWORD = re.compile(r"-?[a-z]+")
#: Blanks, then a directive's keyword (or the first modifier before ``undefine``).
_LEAD_KEYWORD = re.compile(r"(?:[ \t]|\\\r?\n)*(-?[a-z]+)")
_MODIFIER_WORDS = frozenset({"export", "unexport", "override", "private"})
_UNDEFINE = re.compile(r"(?:(?:override|export|unexport|private)(?:[ \t]|\\\r?\n)+)+undefine")
_OPERATOR = re.compile(r"(?::::=|::=|:=|[?+!]?=)")
_OPERATOR_AT_END = re.compile(r"(?::::=|::=|:=|[?+!]?=)\Z")
IF_KEYWORDS = frozenset({"ifeq", "ifneq", "ifdef", "ifndef"})


L = TypeVar("L", bound=Line)


def _fast_constructor(cls: type[L]) -> Callable[..., L]:
    """``cls(*fields)`` without the frozen dataclass's ``object.__setattr__`` per field.

    One generated function sets each slot through its descriptor: the object is
    the one ``cls(...)`` builds (equal, same type), at about half the cost,
    which counts with one node per line. A class with ``__post_init__`` keeps
    its own constructor.
    """
    if hasattr(cls, "__post_init__"):
        return cls
    names = [f.name for f in fields(cls)]
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    env.update({f"_set_{name}": getattr(cls, name).__set__ for name in names})
    body = "".join(f"    _set_{name}(node, {name})\n" for name in names)
    exec(f"def build({', '.join(names)}):\n    node = _new(_cls)\n{body}    return node\n", env)
    return cast("Callable[..., L]", env["build"])


_Blank = _fast_constructor(Blank)
_Comment = _fast_constructor(Comment)
_Other = _fast_constructor(Other)
_RecipeLine = _fast_constructor(RecipeLine)
_Assignment = _fast_constructor(Assignment)
_Rule = _fast_constructor(Rule)
_Conditional = _fast_constructor(Conditional)
_Include = _fast_constructor(Include)
_Directive = _fast_constructor(Directive)
_Expansion = _fast_constructor(Expansion)
_Define = _fast_constructor(Define)


def build_lines(text: str, children: Sequence[Any]) -> tuple[str, list[Line]]:
    """The byte-order mark (or "") and the line nodes, tiling ``text``."""
    lines: list[Line] = []
    bom = ""
    current: list[Any] = []
    for item in children:
        if item[0] != "NEWLINE":  # (a define record's kind is never a terminal name)
            if item[0] == "BOM" and not lines and not current:
                bom = text[item[1] : item[2]]
            else:
                current.append(item)
            continue
        start, end = item[1], item[2]
        first_end = start + 1 if text[start] == "\n" else start + 2
        eol = _new_span((start, first_end))
        lines.append(_node(text, current, eol) if current else _Blank(text, _new_span((start, start)), eol))
        current = []
        while first_end < end:  # the empty lines that follow, folded into the token
            start = first_end
            first_end = start + 1 if text[start] == "\n" else start + 2
            lines.append(_Blank(text, _new_span((start, start)), _new_span((start, first_end))))
    if current:
        lines.append(_node(text, current, _new_span((len(text), len(text)))))
    return bom, lines


def lines_at(text: str, children: Sequence[Any], firsts: Sequence[int]) -> list[Line]:
    """The nodes of the lines whose first token is ``children[i]`` for each ``i`` in ``firsts``.

    Each node equals the one :func:`build_lines` builds for that line.
    """
    return [line_at(text, children, first) for first in firsts]


def line_at(text: str, children: Sequence[Any], first: int) -> Line:
    """The node of the line whose first token is ``children[first]``."""
    count = len(children)
    after = first + 1
    while after < count and children[after][0] != "NEWLINE":
        after += 1
    if after < count:
        start = children[after][1]
        eol = _new_span((start, start + 1 if text[start] == "\n" else start + 2))
    else:
        eol = _new_span((len(text), len(text)))
    return _node(text, cast(list[Any], children[first:after]), eol)  # a slice of the tokens is a list


def _node(text: str, tokens: list[Any], eol: Span) -> Line:
    first = tokens[0]
    if len(first) == 2:
        children = first[1]
        return _define(text, Span(children[0][1], _last_end(children)), eol, children)
    span = _new_span((first[1], tokens[-1][2]))
    kind = first[0]
    if kind == "TARGETS" and len(tokens) > 2 and tokens[2][0] == "ASSIGN":
        kind = "ASSIGN"
    return _BUILDERS[kind](text, span, eol, tokens)


def _last_end(children: list[Any]) -> int:
    last: Any = children[-1]
    while len(last) == 2:
        last = last[1][-1]
    return int(last[2])


def _tok(token: Tok | None) -> Span | None:
    return None if token is None else _new_span((token[1], token[2]))


def _tail(tokens: list[Any], first: int) -> tuple[Tok | None, Tok | None]:
    """The ``ARGS`` and ``COMMENT`` tokens among ``tokens[first:]`` (up to a newline)."""
    args = comment = None
    for token in tokens[first:]:
        kind = token[0]
        if kind == "ARGS" and args is None:
            args = token
        elif kind == "COMMENT":
            comment = token
        elif kind == "NEWLINE":
            break
    return args, comment


def _stripped(text: str, token: Tok | None, at: int) -> Span:
    """The token's text without surrounding blanks; an empty span at ``at`` if absent."""
    if token is None:
        return _new_span((at, at))
    return strip_span(text, token[1], token[2])


def _keyword(text: str, token: Tok) -> Span:
    """The last word of a keyword token (after its leading blanks and modifiers)."""
    m = _LAST_WORD.search(text, token[1], token[2])
    assert m is not None
    return _new_span(m.span())


def _modifiers(text: str, start: int, end: int) -> tuple[tuple[Span, ...], int]:
    """Leading ``export``/``override``/... words that are followed by more text."""
    if start < end and text[start] not in " \t\\eoup":
        return (), start  # the usual case: no blank and no modifier can start here
    mods: list[Span] = []
    pos = skip_blanks(text, start, end)
    while True:
        m = _MODIFIER.match(text, pos, end)
        if m is None:
            return tuple(mods), pos
        after = skip_blanks(text, m.end(), end)
        if after >= end:
            return tuple(mods), pos
        mods.append(_new_span(m.span()))
        pos = after


def _blank(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    return _Blank(text, span, eol)


def _comment_line(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    return _Comment(text, span, eol, _new_span((text.index("#", span.start), span.end)))


def _other(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    return _Other(text, span, eol)


def _recipe(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    orphan = tokens[0][0] == "TAB_LINE"
    prefix, command = _new_span((span.start, span.start + 1)), _new_span((span.start + 1, span.end))
    return _RecipeLine(text, span, eol, prefix, command, orphan)


def _assignment(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    targets = colon = None
    head = 0
    if tokens[0][0] == "TARGETS":
        targets = _stripped(text, tokens[0], span.start)
        colon = _tok(tokens[1])
        head = 2
    mods, name, op = _name_and_operator(text, tokens[head])
    args, comment = _tail(tokens, head + 1)
    value = _stripped(text, args, op.end)
    return _Assignment(text, span, eol, targets, colon, mods, name, op, value, _tok(comment))


def _name_and_operator(text: str, head: Tok) -> tuple[tuple[Span, ...], Span, Span]:
    """Modifiers, variable name and operator of an ``ASSIGN`` token."""
    op = _new_span((_operator_start(text, head[1], head[2]), head[2]))
    name_end = strip_span(text, head[1], op.start).end
    mods, name_start = _modifiers(text, head[1], name_end)
    return mods, _new_span((name_start, name_end)), op


def variable_at(text: str, children: Sequence[Any], first: int) -> tuple[str, Span]:
    """The variable an assignment line sets and its value, its first token being ``children[first]``.

    The ``variable`` and ``value`` of the node :func:`line_at` would build, without building it.
    """
    head = first + 2 if children[first][0] == "TARGETS" else first
    token = children[head]
    name = text[token[1] : _operator_start(text, token[1], token[2])].strip(" \t")
    if " " in name or "\t" in name or "\\" in name:  # modifiers or a continuation: read it as the node does
        name = _name_and_operator(text, token)[1].of(text)
    args = None  # the line's first ARGS token: what _tail finds, without copying the line's tokens
    # by index: an iterator from head + 1 (itertools.islice) would step over every token before it
    for index in range(head + 1, len(children)):
        token = children[index]
        kind = token[0]
        if kind == "ARGS":
            args = token
            break
        if kind == "NEWLINE":
            break
    return name, _stripped(text, args, children[head][2])


def _operator_start(text: str, start: int, end: int) -> int:
    """Where the operator that ends an ``ASSIGN`` token (``text[start:end]``) begins.

    The longest of ``:::= ::= := ?= += != =`` that ends the token (what
    ``_OPERATOR_AT_END`` finds), told from the last characters alone.
    """
    if end - 4 >= start and text.startswith(":::=", end - 4):
        return end - 4
    if end - 3 >= start and text.startswith("::=", end - 3):
        return end - 3
    if end - 2 >= start and text[end - 2] in ":?+!":
        return end - 2
    return end - 1


def _rule(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    first = tokens[0]
    if first[0] == "NO_TARGETS":
        width = 2 if text.startswith("::", first[2] - 2) else 1
        colon = _new_span((first[2] - width, first[2]))
        targets, rest = _new_span((colon.start, colon.start)), tokens[1:]
    else:
        colon = _new_span((tokens[1][1], tokens[1][2]))
        targets, rest = _stripped(text, first, span.start), tokens[2:]
    parts = [colon.end]  # where the first (and a static pattern's second) part starts
    pipe = semi = comment = None
    deps_end = colon.end
    for token in rest:
        kind = token[0]
        if kind == "SEMI":
            semi = token
        elif kind == "COMMENT":
            comment = token
        elif kind != "INLINE":
            deps_end = token[2]
            if kind == "PIPE" and pipe is None:
                pipe = token
            elif kind == "COLON" and pipe is None and len(parts) == 1:
                parts.append(token[2])
    target_pattern = strip_span(text, parts[0], parts[1] - 1) if len(parts) == 2 else None
    prerequisites = strip_span(text, parts[-1], deps_end if pipe is None else pipe[1])
    order_only = None if pipe is None else strip_span(text, pipe[2], deps_end)
    recipe = None
    if semi is not None:
        recipe_start = skip_blanks(text, semi[2], span.end)
        recipe = _new_span((recipe_start, span.end))
    return _Rule(
        text, span, eol, targets, colon, target_pattern, prerequisites, order_only, _tok(semi), recipe,
        _tok(comment),
    )  # fmt: skip


def _directive_parts(text: str, token: Tok) -> tuple[tuple[Span, ...], Span, Span]:
    """Modifiers, keyword and arguments (blanks stripped) of a directive token."""
    end = token[2]
    m = _LEAD_KEYWORD.match(text, token[1], end)
    assert m is not None
    mods: tuple[Span, ...] = ()
    if m.group(1) in _MODIFIER_WORDS and _UNDEFINE.match(text, m.start(1), end):
        mods, pos = _modifiers(text, m.start(1), end)
        m = _KEYWORD.match(text, pos, end)
        assert m is not None
    keyword = _new_span(m.span(m.lastindex or 0))
    return mods, keyword, strip_span(text, keyword.end, end)


def _comment_of(tokens: list[Any]) -> Span | None:
    last = tokens[-1]
    return _new_span((last[1], last[2])) if last[0] == "COMMENT" else None


def _conditional(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    keyword, inner, args = conditional_parts(text, tokens[0])
    return _Conditional(text, span, eol, keyword, inner, args, _comment_of(tokens))


def conditional_parts(text: str, token: Tok) -> tuple[Span, Span | None, Span]:
    """Keyword, condition keyword (``ifeq`` in ``else ifeq``) and arguments of a ``CONDITIONAL`` token."""
    _, keyword, args = _directive_parts(text, token)
    inner = None
    if args.start < args.end and text.startswith("else", keyword.start) and keyword.end - keyword.start == 4:
        m = _WORD.match(text, args.start, args.end)
        if m is not None and m.group() in IF_KEYWORDS:
            inner = Span(m.start(), m.end())
            args = Span(skip_blanks(text, m.end(), args.end), args.end)
    return keyword, inner, args


def _include(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    _, keyword, args = _directive_parts(text, tokens[0])
    return _Include(text, span, eol, keyword, args, _comment_of(tokens))


def _directive(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    mods, keyword, args = _directive_parts(text, tokens[0])
    return _Directive(text, span, eol, mods, keyword, args, _comment_of(tokens))


def _expansion(text: str, span: Span, eol: Span, tokens: list[Any]) -> Line:
    comment = tokens[1] if len(tokens) > 1 else None
    return _Expansion(text, span, eol, _stripped(text, tokens[0], span.start), _tok(comment))


def _define(text: str, span: Span, eol: Span, children: list[Any]) -> Line:
    head = children[0]
    keyword = _keyword(text, head)
    mods, _ = _modifiers(text, span.start, keyword.end)
    args_token, comment = _tail(children, 1)
    name, op = _define_name(text, _stripped(text, args_token, keyword.end))
    newline: Tok = next(t for t in children if t[0] == "NEWLINE")
    endef: Tok = next(t for t in reversed(children) if t[0] == "ENDEF")
    body = _new_span((newline[2], endef[1]))
    return _Define(text, span, eol, mods, keyword, name, op, _tok(comment), body, _keyword(text, endef))


def _define_name(text: str, args: Span) -> tuple[Span, Span | None]:
    """``NAME [op]``: make takes an operator right after the first word."""
    words = list(iter_words(text, args.start, args.end))
    if not words:
        return args, None
    first = words[0]
    m = _OPERATOR_AT_END.search(text, first.start, first.end)
    if m is not None and m.start() > first.start:
        return Span(first.start, m.start()), Span(m.start(), m.end())
    if len(words) > 1 and _OPERATOR.fullmatch(text, words[1].start, words[1].end):
        return first, words[1]
    return _new_span((first.start, words[-1].end)), None


_BUILDERS: dict[str, Builder] = {
    "BLANK_LINE": _blank,
    "COMMENT_LINE": _comment_line,
    "CONDITIONAL": _conditional,
    "ASSIGN": _assignment,
    "TARGETS": _rule,
    "NO_TARGETS": _rule,
    "RECIPE": _recipe,
    "TAB_LINE": _recipe,
    "INCLUDE": _include,
    "DIRECTIVE": _directive,
    "EXPANSION": _expansion,
    "OTHER": _other,
}
