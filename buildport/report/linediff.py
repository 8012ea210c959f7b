"""Line diffs of a rewrite, read from the regions it changed.

A port knows where it changed a file (:data:`~buildport.result.Region`). Widened
to whole lines, those regions become blocks outside which both texts have the
same lines in the same order, so only the lines of each block need comparing.
A diff of the whole files (``difflib``) costs up to the square of their lines
where lines repeat: 34 s for a 1 MB CMake file of 13,000 targets; read block by
block it costs what the changed lines cost.

Lines end at ``\\n`` only, as line numbers count them (and as ``patch`` reads
them).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Literal

from buildport.result import Region

#: ``(tag, i1, i2, j1, j2)`` as :meth:`difflib.SequenceMatcher.get_opcodes` gives them, over lines.
Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def lines(text: str) -> list[str]:
    """Lines with their endings, split at ``\\n`` only (as line numbers count them)."""
    return _LINE.findall(text)


def whole(original: str, text: str) -> list[Region]:
    """The one region of two texts whose changes are not known: all of both."""
    return [(0, len(original), 0, len(text))]


def line_blocks(original: str, text: str, regions: list[Region]) -> Iterator[Region]:
    """The regions widened to whole lines of both texts, those that then share a line merged.

    Lines outside the blocks are the same in both texts, in the same order, so
    the lines of each block can be compared on their own.
    """
    first = new_first = stop = delta = -1  # the open block: its start in both texts, its end, the shift there
    # ``stop`` is a line's end (or the text's): a region starts on a line of the open block if it starts
    # before it; the lines of a region inside the block are not looked for again (many regions on one
    # long line would each read the whole line)
    for start, end, new_start, new_end in regions:
        if stop >= 0:
            if start >= stop:  # no region left before the open block's end: ``delta`` holds there
                stop = _settled(original, text, stop, delta, start)
            if start < stop or stop == len(original):  # on a line of the open block: one block
                delta = new_end - end
                reach = end - 1 if end > start else start
                if reach >= stop:
                    stop = _line_end(original, reach)
                continue
            yield first, stop, new_first, stop + delta
        line_start = original.rfind("\n", 0, start) + 1
        first, new_first = line_start, new_start - (start - line_start)
        delta = new_end - end
        stop = _line_end(original, end - 1 if end > start else start)
    if stop >= 0:
        stop = _settled(original, text, stop, delta)
        yield first, stop, new_first, stop + delta


def _settled(original: str, text: str, stop: int, delta: int, limit: int | None = None) -> int:
    """``stop``, a line end of the original, moved on until ``stop + delta`` ends a line of the new text too.

    ``limit`` is where the next region starts: the shift ``delta`` holds only before it, so the
    search ends once past it (and the block then takes that region in).
    """
    limit = len(original) if limit is None else limit
    while stop < len(original) and stop <= limit and text[stop + delta - 1] != "\n":
        stop = _line_end(original, stop)  # the new text joined the next line
    return stop


def _line_end(text: str, at: int) -> int:
    """The end of the line ``at`` is in, past its ``\\n`` (the text's length on its last line)."""
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1


def opcodes(original: str, text: str, regions: list[Region], autojunk: bool = False) -> list[Opcode]:
    """How the lines of ``original`` become those of ``text``, equal runs included (merged), as
    :meth:`difflib.SequenceMatcher.get_opcodes` says it; each block is compared alone (``autojunk``:
    as difflib's own diffs compare, lines common in a block of 200 or more are not matched first)."""
    codes: list[Opcode] = []
    line = new_line = at = 0  # lines of each text before offset ``at`` of the original (the same count)

    def equal(count: int) -> None:
        if count <= 0:
            return
        if codes and codes[-1][0] == "equal":
            _, i1, _, j1, _ = codes[-1]
            codes[-1] = ("equal", i1, line + count, j1, new_line + count)
        else:
            codes.append(("equal", line, line + count, new_line, new_line + count))

    for start, end, new_start, new_end in _joined(line_blocks(original, text, regions)):
        before = original.count("\n", at, start)
        equal(before)
        line += before
        new_line += before
        old, new = lines(original[start:end]), lines(text[new_start:new_end])
        for tag, i1, i2, j1, j2 in _block_opcodes(old, new, autojunk):
            if tag == "equal":
                equal(i2 - i1)
                line += i2 - i1
                new_line += j2 - j1
                continue
            codes.append((tag, line, line + i2 - i1, new_line, new_line + j2 - j1))
            line += i2 - i1
            new_line += j2 - j1
        at = end
    rest = len(lines(original[at:])) if at < len(original) else 0
    equal(rest)
    return codes


#: Adjacent blocks are compared together up to this many characters of the original: one comparison
#: of a few dozen lines costs less than one per line, and a bounded one never the square of the file.
_JOINED = 4096


def _joined(blocks: Iterator[Region]) -> Iterator[Region]:
    """``blocks`` with those that touch (no equal line between them) taken together, up to :data:`_JOINED`."""
    held: Region | None = None
    for block in blocks:
        if held is not None and held[1] == block[0] and held[3] == block[2] and block[1] - held[0] <= _JOINED:
            held = (held[0], block[1], held[2], block[3])
            continue
        if held is not None:
            yield held
        held = block
    if held is not None:
        yield held


def _block_opcodes(old: list[str], new: list[str], autojunk: bool) -> list[Opcode]:
    """What difflib says of two lists of lines; a line or none on each side (most blocks of a port)
    is told without it."""
    if len(old) > 1 or len(new) > 1:
        return difflib.SequenceMatcher(None, old, new, autojunk=autojunk).get_opcodes()
    if old == new:
        return [("equal", 0, len(old), 0, len(new))] if old else []
    return [("replace" if old and new else "delete" if old else "insert", 0, len(old), 0, len(new))]


class _Compared(difflib.SequenceMatcher[str]):
    """A matcher whose opcodes are already known (compared block by block): difflib groups them into
    the hunks of a unified diff (:meth:`~difflib.SequenceMatcher.get_grouped_opcodes`)."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._codes = codes

    def get_opcodes(self) -> list[Opcode]:
        return list(self._codes)  # a copy: the grouping edits the first and last in place


def _range(start: int, stop: int) -> str:
    """A hunk header's range, as ``diff -u`` writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified(original: str, text: str, regions: list[Region] | None, before: str, after: str,
            context: int = 3) -> Iterator[str]:
    """The lines of a unified diff from ``original`` to ``text`` (the format of
    :func:`difflib.unified_diff`); ``regions`` None: where they differ is not known, and the
    files are compared whole, as that function compares them."""
    if original == text:
        return
    if regions is None:
        codes = opcodes(original, text, whole(original, text), autojunk=True)
    else:
        codes = opcodes(original, text, regions)
    old = new = None
    for group in _Compared(codes).get_grouped_opcodes(context):
        if old is None:
            old, new = lines(original), lines(text)
            yield f"--- {before}\n"
            yield f"+++ {after}\n"
        assert new is not None
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in old[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in new[j1:j2])
