"""What the make parser read of one text, and the line nodes built from it on demand.

A :class:`~buildport.syntax.make_nodes.MakeFile` keeps a :class:`Reader`
instead of its lines until they are asked for. Most of a Makefile is lines no
rewrite rule touches, so a pass can look at the *outline* first — each line's
node class and span, read off the tokens — and have only the lines it wants
built (:meth:`MakeFile.select`). A node built here equals the one
:func:`build_lines` builds for the same line.
"""

from __future__ import annotations

import gc
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from buildport.syntax.make_build import build_lines, line_at, variable_at
from buildport.syntax.make_nodes import (
    Assignment,
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
from buildport.syntax.make_tokens import PackedTokens
from buildport.syntax.make_words import Span

#: An outline entry: the line's node class, where its text starts and ends, its first token's index.
Entry = tuple[type[Line], int, int, int]

#: The node class of a line, by its first token (or define record); blank and comment lines are left out.
_CLASSES: dict[str, type[Line]] = {
    "ASSIGN": Assignment, "TARGETS": Rule, "NO_TARGETS": Rule, "RECIPE": RecipeLine, "TAB_LINE": RecipeLine,
    "CONDITIONAL": Conditional, "INCLUDE": Include, "DIRECTIVE": Directive, "EXPANSION": Expansion,
    "OTHER": Other, "define": Define,
}  # fmt: skip


class Reader:
    """The tokens of one text and the nodes built from them so far (by first-token index)."""

    __slots__ = ("_assignments", "_nodes", "_outline", "_starts", "_variables", "children", "text")

    def __init__(self, text: str, children: Sequence[Any], nodes: dict[int, Line] | None = None) -> None:
        self.text = text
        self.children = children
        self._nodes: dict[int, Line] = nodes if nodes is not None else {}
        self._outline: Sequence[Entry] | None = None
        self._variables: dict[int, tuple[int, str, Span]] | None = None
        self._assignments: dict[int, tuple[int, str, Span]] = {}  # those :meth:`variable` read
        self._starts: Sequence[int] | None = None

    def build(self) -> list[Line]:
        """Every line's node, in order."""
        enabled = gc.isenabled()
        gc.disable()  # one node per line: the collector would make this quadratic
        try:
            return build_lines(self.text, self.children)[1]
        finally:
            if enabled:
                gc.enable()

    def node(self, index: int) -> Line:
        """The node of the line whose first token is ``children[index]``.

        A node is kept for the next time it is asked for; a large file's (its tokens packed) are
        let go a few thousand at a time, and built again if asked for again: a pass over every line
        would keep them all otherwise (a node and its spans take about 500 bytes).
        """
        nodes = self._nodes
        found = nodes.get(index)
        if found is None:
            if len(nodes) >= _KEPT_NODES and isinstance(self.children, PackedTokens):
                nodes.clear()
            found = nodes[index] = line_at(self.text, self.children, index)
        return found

    def variables(self) -> dict[int, tuple[int, str, Span]]:
        """Each assignment line's start → where it ends, the variable it sets, its value (no node is built)."""
        if self._variables is None:
            text, children = self.text, self.children
            read = self._assignments  # what :meth:`variable` read already, kept once (not twice)
            self._assignments = {}
            found: tuple[int, str, Span] | None
            self._variables = {
                start: found if (found := read.get(start)) is not None else (end, *variable_at(text, children, index))
                for cls, start, end, index in self.outline() if cls is Assignment
            }  # fmt: skip
        return self._variables

    def variable(self, start: int) -> tuple[int, str, Span]:
        """What :meth:`variables` holds for the assignment line that starts at ``start``, read from
        that line alone (found in the outline by its start: a map of every assignment line would
        take more than the outline itself); ``KeyError`` if no assignment line starts there."""
        if self._variables is not None:
            return self._variables[start]
        found = self._assignments.get(start)
        if found is None:
            i = bisect_left(self.starts(), start)
            outline = self.outline()
            if i == len(outline):
                raise KeyError(start)
            cls, at, end, index = outline[i]
            if at != start or cls is not Assignment:
                raise KeyError(start)
            found = self._assignments[start] = (end, *variable_at(self.text, self.children, index))
        return found

    def starts(self) -> Sequence[int]:
        """Where each line of :meth:`outline` starts."""
        if self._starts is None:
            outline = self.outline()
            self._starts = outline.starts if isinstance(outline, PackedOutline) else [e[1] for e in outline]
        return self._starts

    def outline(self) -> Sequence[Entry]:
        """Each line but blanks and comments: its class, span and first token, in order."""
        if self._outline is None:
            entries = _outline(self.children, len(self.text))
            self._outline = PackedOutline(entries) if isinstance(self.children, PackedTokens) else list(entries)
        return self._outline

    def iter_outline(self) -> Iterator[Entry]:
        """:meth:`outline`, read off the tokens as it goes when it is not kept yet (and not kept then:
        the outline of a file of short lines takes several times the file)."""
        if self._outline is not None:
            return iter(self._outline)
        return _outline(self.children, len(self.text))


#: How many nodes of a large file :meth:`Reader.node` keeps at most.
_KEPT_NODES = 4096


class PackedOutline(Sequence[Entry]):
    """The outline of a large file (its tokens packed: see :mod:`~buildport.syntax.make_tokens`) in
    flat arrays, 25 bytes a line where a tuple and its numbers take about 170; reads as the list."""

    __slots__ = ("_classes", "_codes", "_ends", "_firsts", "starts")

    def __init__(self, entries: Iterable[Entry]) -> None:
        classes: list[type[Line]] = []
        code_of: dict[type[Line], int] = {}
        self._codes = bytearray()
        self.starts, self._ends, self._firsts = array("q"), array("q"), array("q")
        for cls, start, end, first in entries:
            code = code_of.get(cls)
            if code is None:
                code = code_of[cls] = len(classes)
                classes.append(cls)
            self._codes.append(code)
            self.starts.append(start)
            self._ends.append(end)
            self._firsts.append(first)
        self._classes = tuple(classes)

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._codes)))]
        return self._classes[self._codes[index]], self.starts[index], self._ends[index], self._firsts[index]

    def __iter__(self) -> Iterator[Entry]:
        return zip(map(self._classes.__getitem__, self._codes), self.starts, self._ends, self._firsts)


def _outline(children: Sequence[Any], size: int) -> Iterator[Entry]:
    classes = _CLASSES
    pending: tuple[type[Line], int, int] | None = None
    line_start = True
    count = len(children)
    for index, item in enumerate(children):
        kind = item[0]
        if kind == "NEWLINE":
            if pending is not None:
                yield pending[0], pending[1], item[1], pending[2]
                pending = None
            line_start = True
        elif line_start:
            line_start = kind == "BOM"
            cls = classes.get(kind)
            if cls is None:
                continue
            if kind == "TARGETS" and index + 2 < count and children[index + 2][0] == "ASSIGN":
                cls = Assignment  # a target-specific variable
            start = item[1] if len(item) == 3 else item[1][0][1]
            pending = (cls, start, index)
    if pending is not None:
        yield pending[0], pending[1], size, pending[2]
