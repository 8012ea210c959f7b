"""Where a port changed a build file, as runs of whole statements: what a dual build chooses between.

A port's regions (:data:`~buildport.result.Region`) say which bytes changed. A dual build keeps both texts
of every changed statement, one per GPU runtime, so each region is widened to the whole lines of the
statements it touches, and regions whose lines meet become one :class:`Group`. A statement is a unit of
the language: a CMake command (which may span lines), a logical make line (with its continuations).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Callable, Sequence

from buildport.result import Region

#: A statement of the original text: (start, end) of its lines, end after the last line break.
Unit = tuple[int, int]


@dataclass(slots=True)
class Group:
    """Whole lines ``[start, end)`` of the original and ``[new_start, new_end)`` of the port that replace
    them; ``units``: the statements of the original among those lines that the port changed;
    ``regions``: the port's regions inside it."""

    start: int
    end: int
    new_start: int = 0
    new_end: int = 0
    units: list[Unit] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)

    def old(self, text: str) -> str:
        return text[self.start : self.end]

    def new(self, text: str) -> str:
        return text[self.new_start : self.new_end]


class _Units:
    """The statements of a text (in order, none overlapping), looked up by offset with a binary search."""

    __slots__ = ("units", "starts", "ends")

    def __init__(self, units: Sequence[Unit]) -> None:
        self.units = units
        self.starts = [u[0] for u in units]
        self.ends = [u[1] for u in units]

    def inside(self, at: int) -> bool:
        """Whether ``at`` falls strictly inside a statement (not at its edges)."""
        i = bisect_left(self.starts, at) - 1  # the last statement that starts before ``at``
        return i >= 0 and self.ends[i] > at

    def touching(self, low: int, high: int, point: int | None = None) -> list[Unit]:
        """The statements that overlap ``[low, high)``, and the one holding ``point`` (if any), in order."""
        first = bisect_right(self.ends, low)  # the first statement that ends after ``low``
        stop = high
        if point is not None:
            j = bisect_right(self.starts, point) - 1  # a statement holding the point starts at or before it
            if j >= 0 and self.ends[j] > point:
                first = min(first, j)
            stop = max(stop, point + 1)
        return [u for u in self.units[first : bisect_left(self.starts, stop)]
                if u[0] < high and u[1] > low or point is not None and u[0] <= point < u[1]]


def line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def line_end(text: str, at: int) -> int:
    """The offset after the line break of the line that holds ``at`` (the text's end on its last line)."""
    found = text.find("\n", at)
    return len(text) if found < 0 else found + 1


def groups(old: str, new: str, regions: Sequence[Region], units: Sequence[Unit], touching: bool = True
           ) -> list[Group]:
    """The port's ``regions`` of ``old`` (ported to ``new``) as groups of whole lines, in order, none
    overlapping another (``touching``: nor touching). ``units``: the statements of ``old``, in order (see
    the module's note)."""
    found: list[Group] = []
    statements = _Units(units)
    for region in regions:
        start, end, new_start, new_end = region
        if start == end and _at_line_start(old, start) and new[new_start:new_end].endswith("\n") \
                and not statements.inside(start):
            found.append(Group(start, start, regions=[region]))  # whole lines inserted between statements
            continue
        low = line_start(old, start)
        high = end if end > start and _at_line_start(old, end) else line_end(old, max(start, end - 1) if end > start
                                                                                   else start)
        touched = statements.touching(low, high, start if start == end else None)
        for unit_start, unit_end in touched:
            low, high = min(low, line_start(old, unit_start)), max(high, unit_end)
        found.append(Group(low, high, units=touched, regions=[region]))
    found.sort(key=lambda g: (g.start, g.end))
    merged: list[Group] = []
    for group in found:
        if merged and (group.start < merged[-1].end or touching and group.start == merged[-1].end):
            last = merged[-1]
            last.end = max(last.end, group.end)
            last.units += [u for u in group.units if u not in last.units]
            last.regions += group.regions
            continue
        merged.append(group)
    for group in merged:  # the text between a group's edge and its first or last region is the same in both
        group.regions.sort()
        head, tail = group.regions[0], group.regions[-1]
        group.new_start = head[2] - (head[0] - group.start)
        group.new_end = tail[3] + (group.end - tail[1])
    return merged


def trimmed(group: Group, old: str, new: str, units: Sequence[Unit] = ()) -> Group:
    """``group`` without the whole lines its two texts share at either end (a port that adds a line
    after one it kept), never cutting a statement of ``units`` (a continued line); units and regions are
    kept as they were."""
    start, end, new_start, new_end = group.start, group.end, group.new_start, group.new_end
    inside = _Units(units).inside

    while start < end and new_start < new_end:
        a, b = line_end(old, start), line_end(new, new_start)
        if a > end or b > new_end or old[start:a] != new[new_start:b] or not old[start:a].endswith("\n") \
                or inside(a):
            break
        start, new_start = a, b
    while start < end and new_start < new_end:
        a, b = line_start(old, end - 1), line_start(new, new_end - 1)
        if a < start or b < new_start or old[a:end] != new[b:new_end] or not old[a:end].endswith("\n") \
                or inside(a):
            break
        end, new_end = a, b
    return Group(start, end, new_start, new_end, group.units, group.regions)


def _at_line_start(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] == "\n"


#: A statement with what the refinement matches it by (a CMake command's name; a make line's kind).
Keyed = tuple[int, int, str]


def refined(group: Group, old: str, new: str, old_units: Sequence[Keyed], new_units: Sequence[Keyed]
            ) -> list[Region]:
    """The regions of ``group`` statement by statement: the statements of its two texts (``old_units`` in
    the original, ``new_units`` in the port, each with its preceding blank and comment lines) matched by
    their keys, so that a statement the port kept and changed is a region of its own, and the statements it
    added or removed are regions between them. Used where a group's lines would split a block."""
    import difflib

    old_parts = _segments(group.start, group.end, old_units)
    new_parts = _segments(group.new_start, group.new_end, new_units)
    if not old_parts or not new_parts:
        return [(group.start, group.end, group.new_start, group.new_end)]
    matcher = difflib.SequenceMatcher(None, [k for _, _, k in old_parts], [k for _, _, k in new_parts],
                                      autojunk=False)
    out: list[Region] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += [(o[0], o[1], n[0], n[1]) for o, n in zip(old_parts[i1:i2], new_parts[j1:j2])
                    if old[o[0] : o[1]] != new[n[0] : n[1]]]
            continue
        o_start = old_parts[i1][0] if i1 < len(old_parts) else group.end
        o_end = old_parts[i2 - 1][1] if i2 > i1 else o_start
        n_start = new_parts[j1][0] if j1 < len(new_parts) else group.new_end
        n_end = new_parts[j2 - 1][1] if j2 > j1 else n_start
        out.append((o_start, o_end, n_start, n_end))
    return out


def _segments(start: int, end: int, units: Sequence[Keyed]) -> list[Keyed]:
    """Each statement of ``units`` inside ``[start, end)`` with the lines before it (the last one with the
    lines after it), as (start, end, key)."""
    inside = [u for u in units if start <= u[0] and u[1] <= end]
    parts: list[Keyed] = []
    at = start
    for i, (_, unit_end, key) in enumerate(inside):
        parts.append((at, end if i == len(inside) - 1 else unit_end, key))
        at = unit_end
    return parts


def extended(group: Group, later: list[Group], old: str, new: str, spans: list[Unit],
             needs: Callable[[str], tuple[bool | None, bool]], floor: int = 0) -> tuple[Group | None, int]:
    """``group`` grown over the unchanged statements around it until both its texts hold whole blocks, with
    the later groups it reaches (how many: the second value); None where no block closes them both above
    ``floor`` (where the text already taken ends). ``spans``: the statements of ``old``, in order;
    ``needs(text)``: whether whole lines need lines before them and after them to hold whole blocks
    (None: not of the language)."""
    start, end, new_start, new_end = group.start, group.end, group.new_start, group.new_end
    taken = 0
    for _ in range(len(spans) + len(later) + 1):
        back, forth = needs(old[start:end])
        back2, forth2 = needs(new[new_start:new_end])
        if back is None or back2 is None:
            return None, 0
        if not (back or back2 or forth or forth2):
            return Group(start, end, new_start, new_end, group.units, group.regions), taken
        if back or back2:
            before = [s for s in spans if s[1] <= start]
            if not before or before[-1][0] < floor:
                return None, 0
            step = start - before[-1][0]
            start, new_start = start - step, new_start - step
        if forth or forth2:
            following = [s for s in spans if s[0] >= end]
            reach = following[0][1] if following else len(old)
            if taken < len(later) and later[taken].start < reach:
                end, new_end = later[taken].end, later[taken].new_end  # the next group joins this one
                taken += 1
                continue
            if not following:
                return None, 0
            step = following[0][1] - end
            end, new_end = end + step, new_end + step
    return None, 0


def branches(old_lines: str, new_lines: str, newline: str, words: tuple[str, str, str, str], indent: str = "") -> str:
    """Two spellings of some whole lines, chosen by the runtime switch. ``words``: the language's lines that open
    the HIP branch, open a CUDA-only one, start the other branch and close it; ``indent``: before each."""
    if_hip, if_cuda, other, close = (indent + word + newline for word in words)
    if old_lines and not old_lines.endswith("\n"):
        old_lines += newline  # the file's last line: the branch needs its own line break
    if new_lines and not new_lines.endswith("\n"):
        new_lines += newline
    if not old_lines:
        return f"{if_hip}{new_lines}{close}"
    if not new_lines.strip():
        return f"{if_cuda}{old_lines}{close}"
    return f"{if_hip}{new_lines}{other}{old_lines}{close}"
