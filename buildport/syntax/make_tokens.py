"""The tokens of a large Makefile, kept in flat arrays.

The make scanner gives a list of ``(kind, start, end)`` tuples (and one
``(kind, children)`` record per ``define`` block). A tuple and its end offset
take about 100 bytes; a file of the shortest lines (``all:`` and a one-word
recipe, repeated) holds a token every 4.4 bytes, so its tokens took 23 times the
file. Past :data:`PACK_AFTER` tokens, the scanner hands each run of tokens to a
:class:`PackedTokens` instead: one byte for the kind and eight for the end (a
token starts where the one before it ends), 9 bytes a token. It reads as the list
would (index, slice, iterate, ``len``), giving the same tuples, so the readers
need not know; a file of fewer tokens, which every real Makefile is, keeps the
list and its speed.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

#: Tokens the scanner keeps as tuples before it packs them; and the size of each run it packs.
PACK_AFTER = 1 << 16

#: The kind code of a ``define`` record, kept whole in :attr:`PackedTokens._records`.
_RECORD = 255

_KIND = itemgetter(0)
_END = itemgetter(2)


def _record_end(record: tuple[str, list[Any]]) -> int:
    """Where a ``define`` record's last token ends (records nest)."""
    last: Any = record
    while len(last) == 2:
        last = last[1][-1]
    return int(last[2])


class PackedTokens(Sequence[Any]):
    """The scanner's tokens, a kind code and an end offset each; reads as the list of tuples."""

    __slots__ = ("_codes", "_ends", "_names", "_records")

    def __init__(self) -> None:
        self._codes = bytearray()
        self._ends = array("q")
        self._names: list[str] = []  # kind name by code
        self._records: dict[int, Any] = {}  # index → its define record

    def pack(self, tokens: list[Any], records: bool) -> None:
        """Append ``tokens`` (tuples, and records if ``records``) to the arrays."""
        if records:
            at = len(self._codes)
            for i, token in enumerate(tokens):
                if len(token) == 2:
                    self._records[at + i] = token
                    tokens[i] = ("", 0, _record_end(token))  # the record's end; its code is set below
        codes = {name: code for code, name in enumerate(self._names)}
        kinds = list(map(_KIND, tokens))
        for name in set(kinds).difference(codes):
            if name:
                codes[name] = len(self._names)
                self._names.append(name)
        if len(self._names) >= _RECORD:
            raise ValueError("more kinds of token than a byte holds")
        codes[""] = _RECORD
        self._codes.extend(map(codes.__getitem__, kinds))
        self._ends.extend(map(_END, tokens))

    def __len__(self) -> int:
        return len(self._codes)

    def _token(self, index: int) -> Any:
        code = self._codes[index]
        if code == _RECORD:
            return self._records[index]
        return (self._names[code], self._ends[index - 1] if index else 0, self._ends[index])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._token(i) for i in range(*index.indices(len(self._codes)))]
        if index < 0:
            index += len(self._codes)
        if not 0 <= index < len(self._codes):
            raise IndexError("token index out of range")
        return self._token(index)

    def __iter__(self) -> Iterator[Any]:
        names, records, ends = self._names, self._records, self._ends
        start = 0
        for index, (code, end) in enumerate(zip(self._codes, ends)):
            yield records[index] if code == _RECORD else (names[code], start, end)
            start = end

    def __repr__(self) -> str:
        return f"PackedTokens({len(self)} tokens)"
