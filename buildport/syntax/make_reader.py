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
from collections.abc import Iterator, Sequence
from typing import Any

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
        self._outline: list[Entry] | None = None
        self._variables: dict[int, tuple[int, str, Span]] | None = None
        self._assignments: dict[int, tuple[Any, ...]] | None = None
        self._starts: list[int] | None = None

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
        """The node of the line whose first token is ``children[index]``."""
        found = self._nodes.get(index)
        if found is None:
            found = self._nodes[index] = line_at(self.text, self.children, index)
        return found

    def variables(self) -> dict[int, tuple[int, str, Span]]:
        """Each assignment line's start → where it ends, the variable it sets, its value (no node is built)."""
        if self._variables is None:
            text, children = self.text, self.children
            self._variables = {
                start: (end, *variable_at(text, children, index))
                for cls, start, end, index in self.outline() if cls is Assignment
            }  # fmt: skip
        return self._variables

    def variable(self, start: int) -> tuple[int, str, Span]:
        """What :meth:`variables` holds for the assignment line that starts at ``start``, read from
        that line alone."""
        if self._variables is not None:
            return self._variables[start]
        if self._assignments is None:
            self._assignments = {start: (end, index) for cls, start, end, index in self.outline() if cls is Assignment}
        found = self._assignments[start]
        if len(found) == 2:  # not read yet
            end, index = found
            found = self._assignments[start] = (end, *variable_at(self.text, self.children, index))
        return found

    def starts(self) -> list[int]:
        """Where each line of :meth:`outline` starts."""
        if self._starts is None:
            self._starts = [entry[1] for entry in self.outline()]
        return self._starts

    def outline(self) -> list[Entry]:
        """Each line but blanks and comments: its class, span and first token, in order."""
        if self._outline is None:
            self._outline = list(_outline(self.children, len(self.text)))
        return self._outline

    def iter_outline(self) -> Iterator[Entry]:
        """:meth:`outline`, read off the tokens as it goes when it is not kept yet (and not kept then:
        the outline of a file of short lines takes several times the file)."""
        if self._outline is not None:
            return iter(self._outline)
        return _outline(self.children, len(self.text))


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
