"""Edits to a parsed CMake file, collected first and applied back to front.

Passes never mutate the tree. They say what a leaf's text becomes
(:meth:`Edits.replace`), which commands go (:meth:`Edits.remove_command`) and
which new lines come before or after a command. :meth:`Edits.render` turns that
into text: every byte no edit touches stays where it was, and removing an
argument also removes the whitespace that separated it, or its whole line.
"""

from __future__ import annotations

import re

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Union

from buildport.result import Region
from buildport.passes.text_edits import TextEdits
from buildport.syntax.cmake import ARGUMENTS, CMakeFile, Command, Leaf, parse_cmake, trivia_leaves

Text = Union[str, Callable[[], str]]


@dataclass(slots=True)
class Edits:
    """Everything the passes want to change in one file."""

    tree: CMakeFile
    replaced: dict[int, str] = field(default_factory=dict)  # leaf.start → new text
    removed_commands: set[int] = field(default_factory=set)  # command.start
    before: dict[int, list[Text]] = field(default_factory=dict)  # command.start → lines
    after: dict[int, list[Text]] = field(default_factory=dict)
    rewritten: dict[int, Text] = field(default_factory=dict)  # command.start → whole new text

    # --- what passes call ---------------------------------------------------------------

    def text_of(self, leaf: Leaf) -> str:
        """The leaf's text as the passes so far left it."""
        return self.replaced.get(leaf.start, leaf.value)

    def replace(self, leaf: Leaf, text: str) -> None:
        if text == leaf.value:
            self.replaced.pop(leaf.start, None)
        else:
            self.replaced[leaf.start] = text

    def remove(self, leaf: Leaf) -> None:
        """Remove an argument (and the whitespace that separated it)."""
        self.replaced[leaf.start] = ""

    def is_removed(self, leaf: Leaf) -> bool:
        return self.replaced.get(leaf.start) == ""

    def remove_command(self, command: Command) -> None:
        self.removed_commands.add(command.start)

    def rewrite_command(self, command: Command, text: Text) -> None:
        """Replace a whole command invocation (its indentation and comments stay)."""
        self.rewritten[command.start] = text

    def insert_before(self, command: Command, line: Text) -> None:
        """A new command on its own line before ``command``, at its indentation."""
        self.before.setdefault(command.start, []).append(line)

    def insert_after(self, command: Command, line: Text) -> None:
        """A new command on its own line after ``command`` (after its trailing comment)."""
        self.after.setdefault(command.start, []).append(line)

    def is_gone(self, command: Command) -> bool:
        """Removed or rewritten whole: later passes leave it alone."""
        return command.start in self.removed_commands or command.start in self.rewritten

    @property
    def empty(self) -> bool:
        return not (self.replaced or self.removed_commands or self.before or self.after or self.rewritten)

    # --- rendering ----------------------------------------------------------------------

    def render(self) -> str:
        return self.rendered()[0]

    def rendered(self) -> tuple[str, list[Region]]:
        """The new text, and the regions where it differs from the original."""
        tree = self.tree
        touched = self._touched()
        leaves = _pieces(tree, touched)
        out: list[str] = [leaf.value for leaf in leaves]
        index = {leaf.start: i for i, leaf in enumerate(leaves)}
        newline = _newline_style(tree.text)
        for start, text in self.replaced.items():
            out[index[start]] = text
        removed = sorted(start for start, text in self.replaced.items() if not text)
        for command in tree.commands():
            if command.start not in touched:
                continue
            first = index[command.start]
            last = index[command.rpar.start]
            indent = _indent(leaves, first)
            if command.start in self.removed_commands:
                moved = self.before.get(command.start, []) + self.after.get(command.start, [])
                if not moved:
                    _remove_line(leaves, out, first, last)
                    continue
                # lines attached to a removed command take its place
                self.rewritten[command.start] = "\n".join(_resolve(t, "\n", "") for t in moved)
                self.before.pop(command.start, None)
                self.after.pop(command.start, None)
            if command.start in self.rewritten:
                out[first] = _resolve(self.rewritten[command.start], newline, indent)
                for i in range(first + 1, last + 1):
                    out[i] = ""
            elif _removes_in(removed, command):
                _tidy_removed_arguments(leaves, out, first, last, self.replaced)
                _drop_emptied_lines(leaves, out, first, last, self.replaced)
            if command.start in self.before:
                lines = [_resolve(t, newline, indent) for t in self.before[command.start]]
                out[first] = "".join(f"{line}{newline}{indent}" for line in lines if line) + out[first]
            if command.start in self.after:
                lines = [_resolve(t, newline, indent) for t in self.after[command.start]]
                end = _line_end(leaves, last)
                out[end] = out[end] + "".join(f"{newline}{indent}{line}" for line in lines if line)
        edits = TextEdits()  # what became of each leaf, where it changed
        for leaf, piece in zip(leaves, out):
            if piece != leaf.value:
                edits.replace(leaf.start, leaf.start + len(leaf.value), piece)
        return edits.applied(tree.text)


    def _touched(self) -> set[int]:
        """Starts of the commands that an edit reaches."""
        touched = set(self.removed_commands) | set(self.rewritten) | set(self.before) | set(self.after)
        if self.replaced:
            commands = self.tree.commands()
            starts = [c.start for c in commands]
            for at in self.replaced:
                i = bisect_right(starts, at) - 1
                if i >= 0 and at < commands[i].end:
                    touched.add(commands[i].start)
        return touched


def _removes_in(removed: list[int], command: Command) -> bool:
    """Is an argument of ``command`` removed? (``removed``: the sorted starts of removed leaves.)"""
    i = bisect_left(removed, command.start)
    return i < len(removed) and removed[i] < command.end


def _pieces(tree: CMakeFile, touched: set[int]) -> list[Leaf]:
    """The file as leaves where an edit may reach, and as whole pieces of text elsewhere.

    A touched command is split into its leaves, and so is the trivia on either
    side of it (its indentation, a trailing comment, the line it may take with
    it); what lies between, untouched commands and trivia, is one ``UNTOUCHED``
    piece per stretch.
    """
    cuts = tree.cut_points()
    if cuts is None:  # a tree built leaf by leaf
        leaves: list[Leaf] = []
        for item in tree.items:
            if isinstance(item, Leaf):
                leaves.append(item)
            elif item.start in touched:
                leaves.extend(item.iter_leaves())
            else:
                leaves.append(Leaf("UNTOUCHED", str(item), item.start))
        return leaves
    text = tree.text
    commands = tree.commands()
    hot = [c.start in touched for c in commands]
    leaves = [Leaf("BOM", "\ufeff", 0)] if cuts[1] else []
    last = len(cuts) - 2
    cold = cuts[1]  # where the untouched stretch that is not yet a piece begins
    for i in range(1, last + 1):
        start, end = cuts[i], cuts[i + 1]
        if i % 2 == 0:  # command (i - 2) // 2
            if not hot[(i - 2) // 2]:
                continue
            pieces = commands[(i - 2) // 2].iter_leaves()
        elif start < end and ((i >= 3 and hot[(i - 3) // 2]) or (i + 1 <= last and hot[(i - 1) // 2])):
            pieces = iter(trivia_leaves(text, start, end))  # trivia next to a touched command
        else:
            continue
        if cold < start:  # untouched commands and trivia: one piece of text
            leaves.append(Leaf("UNTOUCHED", text[cold:start], cold))
        leaves.extend(pieces)
        cold = end
    if cold < len(text):
        leaves.append(Leaf("UNTOUCHED", text[cold:], cold))
    return leaves


def _resolve(text: Text, newline: str, indent: str) -> str:
    """New text: parsed (a template that is not CMake is a bug), in the file's newline style."""
    line = text() if callable(text) else text
    if line:
        _check_template(line)
    return line.replace("\n", newline + indent)


@lru_cache(maxsize=4096)
def _check_template(line: str) -> None:
    """Raise :class:`ParseError` if ``line`` is not CMake (the same lines recur from file to file)."""
    parse_cmake(line)


def _newline_style(text: str) -> str:
    for i, ch in enumerate(text):
        if ch == "\n":
            return "\r\n" if i and text[i - 1] == "\r" else "\n"
        if ch == "\r":
            return "\r" if not text.startswith("\n", i + 1) else "\r\n"
    return "\n"


def _indent(leaves: list[Leaf], first: int) -> str:
    """The whitespace before a command when it starts its line."""
    if first > 0 and leaves[first - 1].type == "SPACE":
        if first == 1 or leaves[first - 2].type in ("NEWLINE", "BOM"):
            return leaves[first - 1].value
    return ""


def _line_end(leaves: list[Leaf], last: int) -> int:
    """Index of the last leaf on the command's final line (keeps a trailing comment)."""
    i = last
    while i + 1 < len(leaves) and leaves[i + 1].type in ("SPACE", "LINE_COMMENT", "BRACKET_COMMENT"):
        i += 1
    return i


def _remove_line(leaves: list[Leaf], out: list[str], first: int, last: int) -> None:
    """Remove a command; with its line when nothing else stands on it."""
    for i in range(first, last + 1):
        out[i] = ""
    before = first - 1
    if before >= 0 and leaves[before].type == "SPACE":
        before -= 1
    after = last + 1
    if after < len(leaves) and leaves[after].type == "SPACE":
        after += 1
    starts_line = before < 0 or leaves[before].type in ("NEWLINE", "BOM")
    ends_line = after >= len(leaves) or leaves[after].type == "NEWLINE"
    if starts_line and after < len(leaves) and leaves[after].type == "LINE_COMMENT" and after == last + 2:
        out[last + 1] = ""  # the comment after it stays, where the command began
    if starts_line and ends_line:
        for i in range(before + 1, min(after + 1, len(leaves))):
            out[i] = ""
        # a line that stood between two blank lines: one blank line stays, not two
        nxt = after + 1
        if nxt < len(leaves) and leaves[nxt].type == "SPACE" and out[nxt] == leaves[nxt].value:
            nxt += 1
        if (nxt < len(leaves) and leaves[nxt].type == "NEWLINE" and out[nxt] == leaves[nxt].value
                and _BLANK_LINE_BEFORE.search("".join(out[max(0, before - 8) : before + 1]))):
            for i in range(after + 1, nxt + 1):
                out[i] = ""


_BLANK_LINE_BEFORE = re.compile(r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)\Z")


def _tidy_removed_arguments(
    leaves: list[Leaf], out: list[str], first: int, last: int, replaced: dict[int, str]
) -> None:
    """Drop the separators of removed arguments so no double spaces or blank lines remain."""
    for i in range(first, last + 1):
        leaf = leaves[i]
        if leaf.type not in ARGUMENTS or replaced.get(leaf.start) != "":
            continue
        prev, nxt = i - 1, i + 1
        if leaves[prev].type == "SPACE" and out[prev]:
            if leaves[prev - 1].type == "NEWLINE" and leaves[nxt].type == "NEWLINE":
                out[prev] = ""  # the argument had a line of its own
                out[nxt] = ""
            else:
                out[prev] = ""
        elif leaves[nxt].type == "SPACE" and out[nxt]:
            out[nxt] = ""
        elif leaves[prev].type == "NEWLINE" and leaves[nxt].type == "NEWLINE" and out[nxt]:
            out[nxt] = ""


def _drop_emptied_lines(
    leaves: list[Leaf], out: list[str], first: int, last: int, replaced: dict[int, str]
) -> None:
    """A line inside a command whose arguments were all removed goes, newline and all."""
    line_start = first
    removed_here = False
    for i in range(first, last + 1):
        leaf = leaves[i]
        if leaf.type in ARGUMENTS and replaced.get(leaf.start) == "":
            removed_here = True
        if leaf.type != "NEWLINE":
            continue
        rest = [j for j in range(line_start, i) if out[j].strip()]
        if removed_here and i > line_start and all(leaves[j].type == "LINE_COMMENT" for j in rest):
            # what is left is blank, or the comment that described what was removed
            if line_start > first:  # never swallow the line the command name stands on
                for j in range(line_start, i + 1):
                    out[j] = ""
        line_start = i + 1
        removed_here = False
