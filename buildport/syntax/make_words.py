"""Words and ``$(...)`` references inside the text of a Makefile line.

The make grammar leaves values, prerequisite lists and recipe text as coarse
tokens. These helpers look inside such a region of the source, lazily, with
GNU make's own rules:

* a reference opened with ``(`` counts only parentheses, one opened with ``{``
  only braces; backslashes do not escape them; a reference still open at the
  end of the region runs to the end of the region;
* ``$$`` is an escaped dollar, not a reference;
* a function call is a known function name followed by a blank; its arguments
  are split at commas outside nested parentheses of the same kind, and the last
  argument a function accepts keeps any further commas (``$(error a, b)`` has
  one argument);
* ``$(VAR:from=to)`` is a substitution reference.

Every position is an offset into the text that was passed in, so a rewriter can
replace exactly one span and leave every other byte alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple


class Span(NamedTuple):
    """A half-open range ``[start, end)`` of offsets into the source text."""

    start: int
    end: int

    def of(self, text: str) -> str:
        """The text this span covers in ``text``."""
        return text[self.start : self.end]


#: GNU make's built-in functions and how many arguments each takes at most
#: (0: no limit). From the function table of GNU make 4.4 (function.c).
FUNCTIONS: dict[str, int] = {
    "abspath": 1, "addprefix": 2, "addsuffix": 2, "and": 0, "basename": 1,
    "call": 0, "dir": 1, "error": 1, "eval": 1, "file": 2, "filter": 2,
    "filter-out": 2, "findstring": 2, "firstword": 1, "flavor": 1,
    "foreach": 3, "guile": 1, "if": 3, "info": 1, "intcmp": 5, "join": 2,
    "lastword": 1, "let": 3, "notdir": 1, "or": 0, "origin": 1,
    "patsubst": 3, "realpath": 1, "shell": 1, "sort": 1, "strip": 1,
    "subst": 3, "suffix": 1, "value": 1, "warning": 1, "wildcard": 1,
    "word": 2, "wordlist": 3, "words": 1,
}  # fmt: skip

_CLOSE = {"(": ")", "{": "}"}
_PARENS = {"(": re.compile(r"[()]"), "{": re.compile(r"[{}]")}
_BLANKS = re.compile(r"(?:[ \t]|\\\r?\n)*")
_WORD_STOP = re.compile(r"[ \t\r\n\\$]")
_FUNCTION_NAME = re.compile(r"[a-z-]+(?=[ \t\n]|\\\r?\n|\r\n)")
_ARG_STOP = {"(": re.compile(r"[(),]"), "{": re.compile(r"[{},]")}
_SUBST_STOP = re.compile(r"[:=$]")


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``$(...)``, ``${...}`` or ``$x`` reference, as written.

    ``kind`` is ``"function"``, ``"variable"`` or ``"substitution"``. ``name``
    is the function name or the variable name (which may itself contain
    references). ``args`` are a function's arguments, or the ``from`` and ``to``
    parts of a substitution reference. ``depth`` is 0 for a reference that is
    not inside another one.
    """

    source: str = field(repr=False, compare=False)
    span: Span
    kind: str
    name: Span
    args: tuple[Span, ...]
    depth: int
    closed: bool
    open: str

    @property
    def text(self) -> str:
        """The whole reference, ``$`` through the closing parenthesis."""
        return self.span.of(self.source)

    @property
    def name_text(self) -> str:
        """The function or variable name."""
        return self.name.of(self.source)

    @property
    def arg_texts(self) -> list[str]:
        """The arguments' text."""
        return [arg.of(self.source) for arg in self.args]

    @property
    def inner(self) -> Span:
        """Everything between the parentheses (the name of ``$x``)."""
        if not self.open:
            return self.name
        return Span(self.span.start + 2, self.span.end - (1 if self.closed else 0))


#: ``Span(start, end)`` without the Python-level ``__new__`` of a named tuple (hot in the parser).
_new_span: Callable[[tuple[int, int]], Span] = partial(tuple.__new__, Span)


def skip_blanks(text: str, start: int, end: int) -> int:
    """The first offset at or after ``start`` that is not a blank or a line continuation."""
    if start < end <= len(text) and text[start] not in " \t\\":
        return start  # the usual case: nothing to skip
    return _BLANKS.match(text, start, end).end()  # type: ignore[union-attr]


def strip_span(text: str, start: int, end: int) -> Span:
    """``[start, end)`` without leading and trailing blanks and line continuations."""
    if start < end:
        ch = text[start]
        if ch == " " and start + 1 < end and text[start + 1] not in " \t\\":
            start += 1  # the usual case after a keyword or operator: one blank
        elif ch in " \t\\":
            start = skip_blanks(text, start, end)
        if text[end - 1] not in " \t\n":
            return _new_span((start, end))  # the usual case: nothing to strip at the end
    while end > start:
        ch = text[end - 1]
        if ch in " \t":
            end -= 1
            continue
        if ch == "\n":
            cut = end - 2 if end - 2 >= start and text[end - 2] == "\r" else end - 1
            run = 0
            while cut - run - 1 >= start and text[cut - run - 1] == "\\":
                run += 1
            if run % 2 == 1:
                end = cut - 1
                continue
        break
    return _new_span((start, end))


def skip_reference(text: str, start: int, end: int | None = None) -> int:
    """The offset just after the reference whose ``$`` is at ``start``."""
    return _match(text, start, len(text) if end is None else end)[0]


def _match(text: str, start: int, end: int) -> tuple[int, bool]:
    """End of the reference at ``start`` and whether its parenthesis was closed."""
    if start + 1 >= end:
        return end, False
    opener = text[start + 1]
    if opener not in _CLOSE:
        return start + 2, True
    depth = 1
    pattern = _PARENS[opener]
    pos = start + 2
    while True:
        m = pattern.search(text, pos, end)
        if m is None:
            return end, False
        depth += 1 if m.group() == opener else -1
        pos = m.end()
        if depth == 0:
            return pos, True


def iter_words(text: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The blank-separated words of ``text[start:end]``, references kept whole.

    ``$(addprefix -Xcompiler ,$(CCFLAGS))`` is one word; a backslash-newline
    separates words like a blank; ``\\ `` (escaped blank) does not.
    """
    end = len(text) if end is None else end
    pos = skip_blanks(text, start, end)
    while pos < end:
        word_end = _word_end(text, pos, end)
        if word_end == pos:  # a bare line break inside the region
            pos += 1
        else:
            yield Span(pos, word_end)
            pos = word_end
        pos = skip_blanks(text, pos, end)


def _word_end(text: str, pos: int, end: int) -> int:
    while True:
        m = _WORD_STOP.search(text, pos, end)
        if m is None:
            return end
        at = m.start()
        ch = text[at]
        if ch == "$":
            pos = skip_reference(text, at, end)
        elif ch == "\\":
            if text.startswith("\n", at + 1) or text.startswith("\r\n", at + 1):
                return at
            pos = min(at + 2, end)
        elif ch == "\r" and not text.startswith("\n", at + 1):
            pos = at + 1
        else:
            return at


def iter_references(
    text: str, start: int = 0, end: int | None = None, *, nested: bool = True
) -> Iterator[Reference]:
    """The references in ``text[start:end]`` in document order, outer before inner.

    With ``nested=False`` only references that are not inside another one.
    """
    end = len(text) if end is None else end
    yield from _references(text, start, end, nested, 0)


def _references(text: str, start: int, end: int, nested: bool, depth: int) -> Iterator[Reference]:
    pos = text.find("$", start, end)
    while pos != -1:
        if pos + 1 >= end or text[pos + 1] in "\r\n":
            return
        if text[pos + 1] == "$":
            pos = text.find("$", pos + 2, end)
            continue
        ref = read_reference(text, pos, end, depth)
        yield ref
        if nested and ref.open:
            inner = ref.inner
            yield from _references(text, inner.start, inner.end, nested, depth + 1)
        pos = text.find("$", ref.span.end, end)


def read_reference(text: str, start: int, end: int | None = None, depth: int = 0) -> Reference:
    """The reference whose ``$`` is at ``start`` (which must not be ``$$``)."""
    end = len(text) if end is None else end
    stop, closed = _match(text, start, end)
    opener = text[start + 1] if start + 1 < end else ""
    if opener not in _CLOSE:
        name = Span(start + 1, stop)
        return Reference(text, Span(start, stop), "variable", name, (), depth, closed, "")
    inner_end = stop - 1 if closed else stop
    head = start + 2
    m = _FUNCTION_NAME.match(text, head, inner_end)
    if m is not None and m.group() in FUNCTIONS:
        args = _split_arguments(text, skip_blanks(text, m.end(), inner_end), inner_end, opener, FUNCTIONS[m.group()])
        return Reference(text, Span(start, stop), "function", Span(head, m.end()), args, depth, closed, opener)
    subst = _substitution(text, head, inner_end)
    if subst is not None:
        colon, equals = subst
        args = (Span(colon + 1, equals), Span(equals + 1, inner_end))
        return Reference(text, Span(start, stop), "substitution", Span(head, colon), args, depth, closed, opener)
    return Reference(text, Span(start, stop), "variable", Span(head, inner_end), (), depth, closed, opener)


def _split_arguments(text: str, start: int, end: int, opener: str, limit: int) -> tuple[Span, ...]:
    args: list[Span] = []
    pos = arg_start = start
    depth = 0
    pattern = _ARG_STOP[opener]
    while limit == 0 or len(args) < limit - 1:
        m = pattern.search(text, pos, end)
        if m is None:
            break
        ch = m.group()
        pos = m.end()
        if ch == opener:
            depth += 1
        elif ch == ",":
            if depth == 0:
                args.append(Span(arg_start, m.start()))
                arg_start = pos
        else:
            depth -= 1
    args.append(Span(arg_start, end))
    return tuple(args)


def _substitution(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Offsets of the ``:`` and ``=`` of ``$(VAR:from=to)``, outside nested references."""
    colon = -1
    pos = start
    while True:
        m = _SUBST_STOP.search(text, pos, end)
        if m is None:
            return None
        ch = m.group()
        if ch == "$":
            pos = skip_reference(text, m.start(), end)
        elif ch == ":" and colon < 0:
            colon = m.start()
            pos = m.end()
        elif ch == "=" and colon >= 0:
            return colon, m.start()
        else:
            pos = m.end()
