"""Which Makefiles make reads together: the files each one includes, and the sets that share variables.

make reads a Makefile together with everything it includes, and what those
include: one namespace of variables. :func:`include_targets` reads the names on
a Makefile's include lines, :func:`include_graph` finds which files of a run
they are, and :func:`scopes` gives, for each file, the files whose variables its
port must know (see :mod:`buildport.passes.make_facts`). Nothing here parses a
Makefile: a run whose results the cache holds imports no parser for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence


def include_graph(paths: list[str], words: list[list[str]], identity: Callable[[int], object]) -> list[list[int]]:
    """For each of the Makefiles ``paths``, with the ``words`` of their include lines
    (:func:`include_targets`), the indices among ``paths`` of the files it includes.

    A literal name is looked for as make looks for it when run in the file's folder,
    and matched to a file of ``paths`` by device and inode (``identity(i)``: those of
    ``paths[i]``, asked only if a word is to be matched). A name made with variables
    (``include $(TOP)/common/make.config``) cannot be resolved without running make:
    it stands for each file whose path ends in its literal tail
    (``/common/make.config``), if it has one.
    """
    out: list[list[int]] = [[] for _ in paths]
    if not any(words):
        return out  # most runs: no file has an include line, and no file need be looked at
    by_identity = {identity(i): i for i in range(len(paths))}
    for i, (path, names) in enumerate(zip(paths, words)):
        folder = os.path.dirname(path)
        for word in names:
            if "$" not in word:
                try:
                    info = os.stat(os.path.join(folder, word))
                except OSError:
                    continue
                j = by_identity.get((info.st_dev, info.st_ino))
                if j is not None and j != i:
                    out[i].append(j)
                continue
            tail = word[max(word.rfind(")"), word.rfind("}")) + 1 :]
            if tail.startswith("/") and len(tail) > 1 and not _PATTERN_CHARS.intersection(tail):
                out[i].extend(j for j, other in enumerate(paths) if j != i and other.endswith(tail))
    return out


_ANY_INCLUDE = re.compile(r"^[ \t]*(?:-include|sinclude|include)[ \t]+([^#\n]*)", re.M)
_PATTERN_CHARS = frozenset("$(){}*?%[]")
_ASSIGNED = re.compile(r"(?::::=|::=|:=|[?+!]?=)")


def include_targets(text: str) -> list[str]:
    """The words of a Makefile's include lines, a variable reference with spaces in it kept in one word."""
    words: list[str] = []
    if "include" not in text:
        return words
    for m in _ANY_INCLUDE.finditer(text):
        line = m.group(1)
        if _ASSIGNED.match(line):
            continue  # ``include := ...`` sets a variable of that name
        if "(" not in line and "{" not in line:  # most lines: no reference that could hold a space
            words += line.replace("\\", " ").split()
            continue
        depth = 0
        current = ""
        for char in line:
            if char in "({":
                depth += 1
            elif char in ")}":
                depth = max(0, depth - 1)
            if char in " \t\r\\" and depth == 0:
                if current:
                    words.append(current)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


def scopes(includes: Sequence[Sequence[int]]) -> list[frozenset[int]]:
    """For each file of a run, the files whose facts its port reads (itself among them).

    ``includes[i]`` lists the files (by index) that file ``i`` includes. make
    reads a Makefile together with everything it includes, and what those
    include: one namespace of variables. A file is read in the namespace of each
    file that includes it (directly or not), so its scope is every file included
    from itself or from any of those: a ``common.mk`` that two Makefiles include
    is read with both, and each Makefile with ``common.mk`` but not with the
    other.
    """
    count = len(includes)
    included_by: list[list[int]] = [[] for _ in range(count)]
    for i, targets in enumerate(includes):
        for j in targets:
            if j != i:
                included_by[j].append(i)
    below: dict[int, frozenset[int]] = {}

    def reach(start: int, edges: Sequence[Sequence[int]]) -> set[int]:
        seen = {start}
        pending = [start]
        while pending:
            for j in edges[pending.pop()]:
                if j not in seen:
                    seen.add(j)
                    pending.append(j)
        return seen

    out: list[frozenset[int]] = []
    for i in range(count):
        if not includes[i] and not included_by[i]:
            out.append(frozenset((i,)))  # most files of a tree: read alone
            continue
        scope: set[int] = set()
        for top in reach(i, included_by):
            found = below.get(top)
            if found is None:
                found = below[top] = frozenset(reach(top, includes))
            scope |= found
        out.append(frozenset(scope))
    return out


_ASSIGNMENT = re.compile(r"^[ \t]*(?:override[ \t]+|export[ \t]+)?([A-Za-z_][\w.]*)[ \t]*(?::{1,3})?=[ \t]*([^#\n]*)",
                         re.M)
_REFERENCE = re.compile(r"\$[({]([A-Za-z_][\w.]*)[)}]")


def simple_variables(text: str) -> dict[str, str]:
    """Variables the file sets once, to one word (``SCRIPTSDIR = scripts``): what a word built of them expands
    to needs no make. A variable set more than once, or to several words, is not among them."""
    seen: dict[str, str | None] = {}
    for m in _ASSIGNMENT.finditer(text):
        name, value = m.group(1), m.group(2).strip()
        seen[name] = value if name not in seen and len(value.split()) == 1 else None
    return {name: value for name, value in seen.items() if value is not None}


def expanded(word: str, simple: dict[str, str]) -> str:
    """``word`` with the references to :func:`simple_variables` replaced (nested up to a few levels)."""
    for _ in range(4):
        new = _REFERENCE.sub(lambda m: simple.get(m.group(1), m.group(0)), word)
        if new == word:
            break
        word = new
    return word
