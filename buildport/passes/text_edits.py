"""The edits a port makes to one file's text, for both languages: each replaces ``[start, end)`` of the original
with new text (an insertion where ``start == end``), applied in one pass, which also says where the new text
differs (the :data:`~buildport.result.Region` of each run of edits that touch)."""

from __future__ import annotations

from typing import Iterator

from buildport.result import Region
from buildport.textio import spliced


class TextEdits:
    """Span edits of one text, in the order they were made (a later edit of the same span replaces it)."""

    __slots__ = ("_spans",)

    def __init__(self) -> None:
        self._spans: dict[tuple[int, int], str] = {}

    def replace(self, start: int, end: int, text: str) -> None:
        self._spans[(start, end)] = text

    def remove(self, start: int, end: int) -> None:
        self._spans[(start, end)] = ""

    def drop(self, span: tuple[int, int]) -> None:
        """Take back the edit of ``span``."""
        del self._spans[span]

    def latest(self) -> Iterator[tuple[int, int]]:
        """The spans edited, the last edit made first (read lazily: a rule looks at its own line's last few)."""
        return reversed(self._spans)

    def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        """The spans edited so far that overlap ``[start, end)``."""
        return [span for span in self._spans if span[0] < end and span[1] > start]

    def texts(self) -> Iterator[str]:
        """What the edits write."""
        return iter(self._spans.values())

    def __bool__(self) -> bool:
        return bool(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def merged(self) -> list[tuple[int, int, str]]:
        """The edits in order, as ``(start, end, new)``; two removals that overlap (two words that shared the
        blank between them) are made one, any other overlap is a bug of the pass that made them."""
        merged: list[tuple[int, int, str]] = []
        for (start, end), new in sorted(self._spans.items()):
            if merged and start < merged[-1][1]:
                prev_start, prev_end, prev_new = merged[-1]
                if new or prev_new:
                    raise AssertionError(f"overlapping edits at {start}..{end}")
                merged[-1] = (prev_start, max(prev_end, end), "")
                continue
            merged.append((start, end, new))
        return merged

    def applied(self, text: str) -> tuple[str, list[Region]]:
        """``text`` with every edit made, and the regions where it differs (edits that touch make one)."""
        merged = self.merged()
        return spliced(text, merged), regions(merged)


def regions(merged: list[tuple[int, int, str]]) -> list[Region]:
    """The regions of edits in order, none overlapping (:meth:`TextEdits.merged`): each run of edits that touch
    one another is one region."""
    out: list[Region] = []
    shift = 0  # how far the new text has moved from the original at this point
    for start, end, new in merged:
        at = start + shift
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end, out[-1][2], at + len(new))
        else:
            out.append((start, end, at, at + len(new)))
        shift += len(new) - (end - start)
    return out
