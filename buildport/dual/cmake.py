"""A CMake file that builds for CUDA and for HIP: every statement the port changed, in both spellings.

Each group of changed lines (:mod:`buildport.dual.groups`) becomes ``if(GPU_RUNTIME STREQUAL "HIP")``, the
port's lines, ``else()``, the project's lines, ``endif()``. A branch must hold whole blocks, so a changed
block command is handled alone: a condition (``if``, ``elseif``, ``while``) becomes the two conditions
joined by the runtime; an ``else()``/``endif()`` whose arguments changed keeps the project's (CMake ignores
them); any other (``foreach``, ``function``) keeps the project's, reported.
"""

from __future__ import annotations

import re

from buildport.dual.groups import Group, branches, extended, groups, line_end, line_start, refined, trimmed
from buildport.findings import Finding, Severity
from buildport.result import Region
from buildport.rules.dual import (
    CMAKE_CLOSERS, CMAKE_COMPAT, CMAKE_CONDITIONS, CMAKE_IF_CUDA, CMAKE_IF_HIP, CMAKE_IGNORED_ARGUMENTS,
    CMAKE_IS_HIP, CMAKE_MIDDLES, CMAKE_OPENERS, CMAKE_SWITCH, RUNTIME_VARIABLE,
)
from buildport.syntax.cmake import Command, parse_cmake
from buildport.syntax.errors import ParseError
from buildport.textio import spliced

#: A file buildport made dual already (a second ``--keep-cuda`` run leaves it as it is).
_DUAL = re.compile(rf"^[ \t]*if[ \t]*\([ \t]*(?:NOT[ \t]+)?{RUNTIME_VARIABLE}[ \t]+STREQUAL[ \t]+\"HIP\"", re.M)


def is_dual(text: str) -> bool:
    """Whether a CMake file picks its branches by the runtime switch already."""
    return _DUAL.search(text) is not None


def dual_cmake(old: str, new: str, regions: list[Region] | None, path: str, *,
               switch: bool = False, compat: str | None = None) -> tuple[str, list[Finding]]:
    """``old`` with each change of its port ``new`` made a branch of the runtime switch, and what could not
    be. ``switch``: the file declares the switch (before its first ``project()``); ``compat``: the
    compatibility folder, relative to the file's directory, put on the HIP build's include path after it."""
    if regions is None:
        from buildport.engine import line_regions

        regions = line_regions(old, new)
    tree = parse_cmake(old, path)
    commands = tree.commands()
    units = {(line_start(old, c.start), line_end(old, c.end - 1)): c for c in commands}
    newline = "\r\n" if "\r\n" in old else "\n"
    findings: list[Finding] = []
    pieces: list[tuple[int, int, str]] = []  # (start, end, text) of the original replaced, in order
    found = groups(old, new, regions, list(units))
    spans = sorted(units)
    at = 0
    while at < len(found):
        group = found[at]
        at += 1
        rendered = _render(group, old, new, units, newline, path, [])
        if rendered is None:
            # a block the port changed in part: the whole block, in both spellings (the groups it reaches join it)
            floor = max((p[1] for p in pieces), default=0)
            wider, taken = extended(group, found[at:], old, new, spans, _needs, floor)
            if wider is not None:
                at += taken
                pieces.append((wider.start, wider.end, _branches(wider.old(old), wider.new(new), newline)))
                continue
            rendered = _render(group, old, new, units, newline, path, findings, partial=True)
        pieces += rendered or []
    project = next((c for c in commands if c.identifier == "project"), None)
    if switch and project is not None:
        # the switch before the first line that reads it, or project(), outside every block; the
        # compatibility folder after project() (and the branches that hold it)
        first = min([line_start(old, project.start)] + [p[0] for p in pieces])
        at = _outside_blocks(commands, first, old)
        pieces.append((at, at, "".join(line + newline for line in CMAKE_SWITCH)))
        if compat is not None:
            after = line_end(old, project.end - 1)
            after = max([after] + [p[1] for p in pieces if p[0] <= project.start < p[1]])
            block = "".join(line.format(folder=compat) + newline for line in CMAKE_COMPAT)
            pieces.append((after, after, block if after == 0 or old[after - 1] == "\n" else newline + block))
    return spliced(old, sorted(pieces, key=lambda p: (p[0], p[1]))), findings


def _outside_blocks(commands: list[Command], at: int, old: str) -> int:
    """The start of the line of the outermost block that holds the offset ``at`` (``at`` itself, outside any)."""
    opened: list[int] = []
    for command in commands:
        if command.start >= at:
            break
        if command.identifier in CMAKE_OPENERS:
            opened.append(command.start)
        elif command.identifier in CMAKE_CLOSERS and opened:
            opened.pop()
    return line_start(old, opened[0]) if opened else at


def _render(group: Group, old: str, new: str, units: dict[tuple[int, int], Command], newline: str, path: str,
            findings: list[Finding], partial: bool = False) -> list[tuple[int, int, str]] | None:
    """The original lines of ``group`` and what replaces them: its lines in two branches, or where a block
    command changed, command by command, each block command by its kind. None where a change would be left
    for CUDA only, unless ``partial`` (then it is, and reported in ``findings``)."""
    for chosen in (trimmed(group, old, new, list(units)), group):
        if _whole_blocks(chosen.old(old)) and _whole_blocks(chosen.new(new)):
            return [(chosen.start, chosen.end, _branches(chosen.old(old), chosen.new(new), newline))]
    # a block command changed: command by command, each block command by its kind
    try:
        ported = parse_cmake(group.new(new)).commands()
    except ParseError:
        ported = []
    old_keyed = [(line_start(old, c.start), line_end(old, c.end - 1), c.identifier) for c in units.values()]
    at = group.new_start
    new_keyed = [(at + line_start(group.new(new), c.start), at + line_end(group.new(new), c.end - 1), c.identifier)
                 for c in ported]
    out: list[tuple[int, int, str]] = []
    for single in groups(old, new, refined(group, old, new, old_keyed, new_keyed), list(units), touching=False):
        commands = [units[u] for u in single.units]
        blocks = [c for c in commands if c.identifier in CMAKE_OPENERS | CMAKE_MIDDLES | CMAKE_CLOSERS]
        if not blocks and _whole_blocks(single.new(new)):
            cut = trimmed(single, old, new, list(units))
            single = cut if _whole_blocks(cut.new(new)) else single
            out.append((single.start, single.end, _branches(single.old(old), single.new(new), newline)))
            continue
        if len(commands) == 1 and blocks:
            command = commands[0]
            if command.identifier in CMAKE_IGNORED_ARGUMENTS:
                continue  # the project's arguments stay: CMake reads none of them
            joined = _joined_condition(command, single, old, new) if command.identifier in CMAKE_CONDITIONS else None
            if joined is not None:
                out.append((single.start, single.end, joined))
                continue
        if not partial:
            return None
        line, col = _position(old, single.start)
        findings.append(Finding(path, line, col, "dual-branch-unported", Severity.WARNING,
                                "the HIP build needs this block command changed, and a branch of the runtime switch "
                                "cannot hold part of a block: it is left as the project wrote it, for CUDA",
                                f"write the HIP spelling by hand: {single.new(new).strip()[:160]}"))
    return out


def _branches(old_lines: str, new_lines: str, newline: str) -> str:
    """The two spellings of some whole lines, chosen by the runtime switch, at the lines' indentation."""
    return branches(old_lines, new_lines, newline, (CMAKE_IF_HIP, CMAKE_IF_CUDA, "else()", "endif()"),
                    _indent(old_lines or new_lines))


def _joined_condition(command: Command, group: Group, old: str, new: str) -> str | None:
    """The lines of a changed ``if``/``elseif``/``while`` whose condition is the port's for HIP and the
    project's for CUDA; None where the port's lines are not one command of the same name."""
    try:
        ported = parse_cmake(group.new(new)).commands()
    except ParseError:
        return None
    if len(ported) != 1 or ported[0].identifier != command.identifier:
        return None
    text = group.new(new)
    if text[ported[0].rpar.start :] != old[command.rpar.start : group.end]:
        return None  # a comment after it changed too
    before, after = old[group.start : command.lpar.start + 1], old[command.rpar.start : group.end]
    project = old[command.lpar.start + 1 : command.rpar.start].strip()
    hip = text[ported[0].lpar.start + 1 : ported[0].rpar.start].strip()
    return f"{before}({CMAKE_IS_HIP} AND ({hip})) OR (NOT {CMAKE_IS_HIP} AND ({project})){after}"


def _needs(text: str) -> tuple[bool | None, bool]:
    """Whether whole lines of CMake need lines before them (a block closed or continued that they did not
    open) and after them (a block opened or continued that they do not close); (None, False): not CMake."""
    try:
        commands = parse_cmake(text).commands() if text.strip() else []
    except ParseError:
        return None, False
    depth, back, forth = 0, False, False
    for command in commands:
        if command.identifier in CMAKE_OPENERS:
            depth += 1
        elif command.identifier in CMAKE_CLOSERS:
            if depth == 0:
                back = True
            depth = max(0, depth - 1)
        elif command.identifier in CMAKE_MIDDLES and depth == 0:
            back = forth = True
    return back, forth or depth > 0


def _whole_blocks(text: str) -> bool:
    """Whether ``text`` (whole lines of CMake) opens no block it does not close, and closes none it did not open."""
    if not text.strip():
        return True
    try:
        commands = parse_cmake(text).commands()
    except ParseError:
        return False
    depth = 0
    for command in commands:
        if command.identifier in CMAKE_OPENERS:
            depth += 1
        elif command.identifier in CMAKE_CLOSERS:
            depth -= 1
        elif command.identifier in CMAKE_MIDDLES and depth == 0:
            return False
        if depth < 0:
            return False
    return depth == 0


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - line_start(text, offset) + 1
