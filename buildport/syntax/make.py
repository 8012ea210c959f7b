"""GNU make text ⇄ concrete syntax tree, byte for byte.

``parse_make(text)`` returns a :class:`MakeFile` whose ``str()`` is ``text``
again. The Lark grammar ``grammars/make.lark`` (LALR, contextual lexer, nothing
ignored) classifies each logical line and cuts it into a few tokens. Lark's
parser is the reference (:func:`parse_make_lark`); :func:`parse_make` reads with
the same lexer regexes and parse table through :mod:`buildport.syntax.make_scan`
and falls back to Lark where that rejects the input, so trees and errors are
the same;
:mod:`buildport.syntax.make_build` turns each line into a node of
:mod:`buildport.syntax.make_nodes` with the spans of its parts. Lines are
built when first asked for (``MakeFile.lines``); parsing itself builds only
the conditional lines it checks, and printing an untouched tree is the source
text. Words and ``$(...)`` references inside values are found lazily by
:mod:`buildport.syntax.make_words`.

Rejected with :class:`ParseError`, as GNU make rejects them while reading: an
unterminated ``define``, ``else``/``endif`` without ``if``, a second ``else``,
a missing ``endif``, a stray ``endef``, ``ifeq``/``ifneq`` without arguments,
``ifdef`` with two plain words. Accepted, as make accepts them while reading:
an unterminated ``$(`` (make fails only if it expands it; a
:class:`Reference` says ``closed=False``) and lines make reports as "missing
separator" once expanded (:class:`Other`).
"""

from __future__ import annotations

import gc
import re
from functools import lru_cache
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from buildport.syntax.grammars import grammar_text
from buildport.syntax.errors import ParseError
from buildport.syntax.make_build import IF_KEYWORDS, conditional_parts
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
    MakeFile,
    Other,
    RecipeLine,
    Rule,
)  # fmt: skip
from buildport.syntax.make_reader import Reader
from buildport.syntax.make_scan import Tables, cached_tables, scan
from buildport.syntax.make_words import (
    Reference,
    Span,
    iter_references,
    iter_words,
    skip_blanks,
)

if TYPE_CHECKING:  # Lark is imported only to word an error, or to build the tables once
    from lark import Lark

__all__ = [
    "Assignment", "Blank", "Comment", "Conditional", "Define", "Directive", "Expansion",
    "Include", "Line", "MakeFile", "Other", "RecipeLine", "Reference", "Rule", "Span",
    "iter_references", "iter_words", "parse_make", "parse_make_lark",
]  # fmt: skip

TAB = "\t"
_RECIPEPREFIX = re.compile(
    r"^[ \t]*(?:(?:override|export|private)[ \t]+)*\.RECIPEPREFIX[ \t]*(?::{1,3}|[?+!])?=[ \t]*(\S?)",
    re.MULTILINE,
)
_STRAY_ENDEF = re.compile(r"(?:[ \t]|\\\r?\n)*endef(?:[ \t]|\\\r?\n|\Z)")


def _grammar(prefix: str) -> str:
    """The grammar for one set of recipe-prefix characters (normally just a tab)."""
    grammar = grammar_text("make")
    if prefix != TAB:
        chars = "|".join(re.escape(c).replace("/", "\\/") if c != TAB else r"\x09" for c in prefix)
        grammar = grammar.replace(r"\x09", f"(?:{chars})")
    return grammar


@lru_cache(maxsize=8)
def _parser(prefix: str) -> Lark:
    """Lark's parser for one set of recipe-prefix characters (:mod:`buildport.syntax.make_lark`)."""
    from buildport.syntax.make_lark import lark_parser

    return lark_parser(_grammar(prefix))


@lru_cache(maxsize=8)
def _tables(prefix: str) -> Tables:
    """The fast path's tables, kept in the parser cache as data (:func:`buildport.syntax.make_scan.cached_tables`):
    a run whose Makefiles all parse never imports Lark."""
    return cached_tables(_grammar(prefix), lambda: _parser(prefix))


def load_tables() -> None:
    """Build (or load) the parser tables now, without compiling the lexers (:func:`warm_up` does
    both): worker processes forked after it have them without building them each."""
    _tables(TAB)


def warm_up() -> None:
    """Build (or load) the parser tables and compile every state's lexer now (a worker process does
    it as it starts, while the main process is still walking the tree)."""
    tables = _tables(TAB)
    for state, lexer in enumerate(tables.lexers):
        if lexer is not None:
            tables.lexer(state)


def parse_make(text: str, path: str = "<input>") -> MakeFile:
    """Parse GNU make text; :class:`ParseError` if make would reject its structure.

    Reads with :mod:`buildport.syntax.make_scan` (the grammar's own lexer and
    parse table, without Lark's run-time machinery) and falls back to the Lark
    parser for input the fast path rejects, so errors are Lark's.
    """
    return _parse_with(text, path, fast=True)


def parse_make_lark(text: str, path: str = "<input>") -> MakeFile:
    """The reference: :func:`parse_make` with Lark's LALR parser doing the reading."""
    return _parse_with(text, path, fast=False)


def _parse_with(text: str, path: str, fast: bool) -> MakeFile:
    prefixes: set[str] = set()
    if ".RECIPEPREFIX" in text:
        prefixes = {m.group(1) for m in _RECIPEPREFIX.finditer(text)} - {"", "$", "#", "\\"}
    if not prefixes:
        return _parse(text, path, TAB, fast)
    makefile = _parse(text, path, TAB + "".join(sorted(prefixes)), fast)
    # Usual case: one .RECIPEPREFIX near the top, before any rule. Then it is
    # the only prefix in force; otherwise keep the union as an approximation.
    settings = [n for n in makefile.nodes(Assignment) if n.variable == ".RECIPEPREFIX"]
    if len(settings) == 1 and not settings[0].is_target_specific and settings[0].value_text[:1] in prefixes:
        setting = settings[0]
        earlier = (n for n in makefile.lines if n.start < setting.start)
        if not any(isinstance(n, (Rule, RecipeLine)) for n in earlier):
            return _parse(text, path, setting.value_text[:1], fast)
    return makefile


def _parse(text: str, path: str, prefix: str, fast: bool) -> MakeFile:
    enabled = gc.isenabled()
    gc.disable()  # big trees of small objects: the collector makes parsing quadratic
    try:
        scanned = scan(text, _tables(prefix), _CHECKED) if fast else None
        children: Sequence[Any]
        if scanned is None:
            from buildport.syntax.make_lark import read

            children = read(_parser(prefix), text, path)
            checked = [i for i, item in enumerate(children) if item[0] in _CHECKED]
        else:
            children, checked = scanned
        bom = text[: children[0][2]] if children and children[0][0] == "BOM" else ""
        _check(text, path, children, checked)
        return MakeFile(text, path, bom, reader=Reader(text, children))
    finally:
        if enabled:
            gc.enable()


def _valid_condition(line: Conditional) -> bool:
    """What make can tell before expanding: ``ifeq`` needs arguments, ``ifdef`` one name."""
    return _valid(line.source, line.condition, line.arguments)


def _valid(text: str, condition: str, arguments: Span) -> bool:
    if condition in ("ifeq", "ifneq"):
        return arguments.start < arguments.end
    if condition in ("ifdef", "ifndef"):
        literal = [w for w in iter_words(text, arguments.start, arguments.end) if "$" not in w.of(text)]
        return len(literal) < 2
    return True


#: The line kinds :func:`_check` looks at (the first token of each such line).
_CHECKED = frozenset({"CONDITIONAL", "OTHER"})


#: What :func:`_check` needs of a conditional line: its directive, whether its condition is
#: valid, whether it is a plain ``else``, and where its keyword is (from the token's start).
_Facts = tuple[str, bool, bool, int]


def conditional_facts(text: str, token: tuple[str, int, int]) -> _Facts:
    """What the :class:`Conditional` node of a ``CONDITIONAL`` token would say (see its properties)."""
    keyword, inner, arguments = conditional_parts(text, token)
    directive = keyword.of(text)
    condition = inner.of(text) if inner is not None else "" if directive in ("else", "endif") else directive
    return directive, _valid(text, condition, arguments), inner is None, keyword.start - token[1]


def _check(text: str, path: str, children: Sequence[Any], checked: list[int]) -> None:
    """Reject what GNU make rejects while reading: unbalanced conditionals, stray endef.

    ``checked`` are where the conditional and "other" lines outside define
    blocks start among ``children``, in order: the only lines it looks at. A
    conditional's facts depend on its token's text alone, so each distinct
    text is read once per file (``endif`` and ``else`` repeat), without a node.
    """
    known: dict[str, _Facts] = {}
    open_ifs: list[tuple[int, bool]] = []  # (where the if's keyword is, whether a plain else was seen)
    for index in checked:
        kind, start, end = children[index]
        if kind == "OTHER":  # the whole line is the token
            if _STRAY_ENDEF.match(text, start, end):
                raise ParseError.at(text, skip_blanks(text, start, end), "extraneous 'endef'", path)
            continue
        written = text[start:end]
        facts = known.get(written)
        if facts is None:
            facts = known[written] = conditional_facts(text, children[index])
        word, valid, plain, keyword = facts
        keyword += start
        if not valid:
            raise ParseError.at(text, keyword, "invalid syntax in conditional", path)
        if word in IF_KEYWORDS:
            open_ifs.append((keyword, False))
        elif not open_ifs:
            raise ParseError.at(text, keyword, f"extraneous '{word}'", path)
        elif word == "endif":
            open_ifs.pop()
        elif open_ifs[-1][1]:
            raise ParseError.at(text, keyword, "only one 'else' per conditional", path)
        elif plain:
            open_ifs[-1] = (open_ifs[-1][0], True)
    if open_ifs:
        raise ParseError.at(text, open_ifs[-1][0], "missing 'endif'", path)
