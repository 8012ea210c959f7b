"""A Makefile that builds for CUDA and for HIP: every line the port changed, in both spellings.

Each group of changed lines (:mod:`buildport.dual.groups`) becomes ``ifeq ($(GPU_RUNTIME),HIP)``, the
port's lines, ``else``, the project's lines, ``endif`` — between a rule and its recipe lines too, where GNU
make reads conditionals as it reads the file. A changed conditional directive cannot be half of a branch:
it keeps the project's text, reported.
"""

from __future__ import annotations

import re

from buildport.dual.groups import Group, branches, extended, groups, trimmed
from buildport.findings import Finding, Severity
from buildport.result import Region
from buildport.rules.dual import MAKE_COMPAT, MAKE_IF_CUDA, MAKE_IF_HIP, MAKE_OPENERS, MAKE_SWITCH, RUNTIME_VARIABLE
from buildport.syntax.errors import ParseError
from buildport.textio import spliced

_DUAL = re.compile(rf"^[ \t]*if(?:n?eq)[ \t]*\(\$\({RUNTIME_VARIABLE}\),[ \t]*HIP\)", re.M)


def is_dual(text: str) -> bool:
    """Whether a Makefile picks its branches by the runtime switch already."""
    return _DUAL.search(text) is not None


def dual_make(old: str, new: str, regions: list[Region] | None, path: str, *,
              compat: str | None = None) -> tuple[str, list[Finding]]:
    """``old`` with each change of its port ``new`` made a branch of the runtime switch (declared at the top
    of the file, after its header comment), and what could not be. ``compat``: the compatibility folder,
    relative to the file's directory (ending in ``/``), on the HIP build's include path."""
    from buildport.syntax.make import parse_make
    from buildport.syntax.make_nodes import Blank, Comment, Conditional

    if regions is None:
        from buildport.engine import line_regions

        regions = line_regions(old, new)
    tree = parse_make(old, path)
    lines = list(tree)
    units = [(line.start, line.end) for line in lines if not isinstance(line, (Blank, Comment))]
    conditionals = {line.start for line in lines if isinstance(line, Conditional)}
    newline = "\r\n" if "\r\n" in old else "\n"
    findings: list[Finding] = []
    pieces: list[tuple[int, int, str]] = []
    found = groups(old, new, regions, units)
    at = 0
    while at < len(found):
        group = found[at]
        at += 1
        rendered = _render(group, old, new, units, newline, path)
        if rendered is None:
            # a conditional the port changed in part: the whole conditional, in both spellings
            floor = max((p[1] for p in pieces), default=0)
            wider, taken = extended(group, found[at:], old, new, units, lambda text: _needs(text, path), floor)
            if wider is not None:
                at += taken
                rendered = [(wider.start, wider.end, _branches(wider.old(old), wider.new(new), newline))]
            else:
                rendered = _partial(group, old, new, units, conditionals, newline, path, findings)
        pieces += rendered
    if pieces:
        top = next((line.start for line in lines if not isinstance(line, (Blank, Comment))), len(old))
        top = min(top, pieces[0][0])
        head = list(MAKE_SWITCH) + ([line.format(folder=compat) for line in MAKE_COMPAT] if compat is not None else [])
        block = "".join(line + newline for line in head)
        if top == len(old) and old and not old.endswith("\n"):
            block = newline + block
        pieces.insert(0, (top, top, block))
    return spliced(old, sorted(pieces, key=lambda p: (p[0], p[1]))), findings


def _render(group: Group, old: str, new: str, units: list[tuple[int, int]], newline: str, path: str
            ) -> list[tuple[int, int, str]] | None:
    """The lines of ``group`` in two branches; None where a branch would hold part of a conditional."""
    for chosen in (trimmed(group, old, new, units), group):
        if _whole_blocks(chosen.old(old), path) and _whole_blocks(chosen.new(new), path):
            return [(chosen.start, chosen.end, _branches(chosen.old(old), chosen.new(new), newline))]
    return None


def _partial(group: Group, old: str, new: str, units: list[tuple[int, int]], conditionals: set[int], newline: str,
             path: str, findings: list[Finding]) -> list[tuple[int, int, str]]:
    """Each region of ``group`` alone: those of plain lines in two branches, those of a conditional directive
    left for CUDA and reported."""
    out: list[tuple[int, int, str]] = []
    for single in groups(old, new, group.regions, units, touching=False):
        if not any(start in conditionals for start, _ in single.units) and _whole_blocks(single.new(new), path):
            out.append((single.start, single.end, _branches(single.old(old), single.new(new), newline)))
            continue
        line = old.count("\n", 0, single.start) + 1
        findings.append(Finding(path, line, 1, "dual-branch-unported", Severity.WARNING,
                                "the HIP build needs this conditional changed, and a branch of the runtime switch "
                                "cannot hold part of a conditional: it is left as the project wrote it, for CUDA",
                                f"write the HIP spelling by hand: {single.new(new).strip()[:160]}"))
    return out


def _branches(old_lines: str, new_lines: str, newline: str) -> str:
    return branches(old_lines, new_lines, newline, (MAKE_IF_HIP, MAKE_IF_CUDA, "else", "endif"))


def _needs(text: str, path: str) -> tuple[bool | None, bool]:
    """Whether whole lines of a Makefile need lines before them (an ``else``/``endif`` of a conditional they
    did not open) and after them (a conditional they leave open); (None, False): not make."""
    depth, back, forth = 0, False, False
    for line in text.splitlines():
        word = line.strip().split(" ", 1)[0].split("\t", 1)[0]
        if line.startswith("\t"):
            continue  # a recipe line
        if word in MAKE_OPENERS:
            depth += 1
        elif word == "endif":
            back = back or depth == 0
            depth = max(0, depth - 1)
        elif word == "else" and depth == 0:
            back = forth = True
    return back, forth or depth > 0


def _whole_blocks(text: str, path: str) -> bool:
    """Whether ``text`` (whole lines of a Makefile) closes every conditional it opens, and no other."""
    if not text.strip():
        return True
    from buildport.syntax.make import parse_make
    from buildport.syntax.make_nodes import Conditional

    try:
        tree = parse_make(text, path)
    except ParseError:
        return False
    depth = 0
    for line in tree:
        if isinstance(line, Conditional):
            if line.directive in MAKE_OPENERS:
                depth += 1
            elif line.directive == "endif":
                depth -= 1
            elif depth == 0:  # else
                return False
            if depth < 0:
                return False
    return depth == 0
