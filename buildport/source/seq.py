"""A token list with the structure the source matchers need, found in linear time.

:class:`Seq` pairs brackets, splits call arguments, finds the operand on either
side of an operator, and knows which ``{...}`` bodies belong to ``__global__`` or
``__device__`` functions. Every walk is bounded by :data:`LOOKAROUND`, so a
matcher that looks around a token costs O(1) and a whole scan stays linear.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from itertools import compress

from buildport.source.lex import IDENT, NUMBER, PUNCT, TokenList

LOOKAROUND = 256  # the most tokens a matcher walks from the token it starts at
NULL_STREAM = frozenset(("0", "0L", "0l", "0u", "0U", "NULL", "nullptr"))
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}
_BRACKETS = frozenset("()[]{}")
_CONNECT = frozenset((".", "->", "::"))
_TIGHT = frozenset((".", "->", "::", "(", ")", "[", "]", "!", "~"))
_WORDS = (IDENT, NUMBER)
_CAST_NOISE = frozenset(("(", ")", "cudaStream_t", "CUstream", "static_cast", "reinterpret_cast", "<", ">"))
_DEVICE = frozenset(("__global__", "__device__"))
_HEAD_END = frozenset((";", "{", "}"))

Span = tuple[int, int]  # token indices [lo, hi)


class Seq:
    """Tokens of one code region: the file's code, or the body of one directive."""

    def __init__(self, tokens: TokenList, directive: str | None = None) -> None:
        self.kinds = tokens.kinds
        self.texts = tokens.texts
        self.starts = tokens.starts
        self.directive = directive
        self.partner = _pair(self.texts)
        self._device: list[Span] = [] if directive is not None else _device_bodies(self)
        self._device_starts = [lo for lo, _ in self._device]

    def __len__(self) -> int:
        return len(self.texts)

    def text(self, i: int) -> str:
        """The text of token ``i``, or ``""`` outside the list."""
        return self.texts[i] if 0 <= i < len(self.texts) else ""

    def kind(self, i: int) -> str:
        """The kind of token ``i``, or ``""`` outside the list."""
        return self.kinds[i] if 0 <= i < len(self.kinds) else ""

    def in_device_code(self, i: int) -> bool:
        """True when token ``i`` lies in the body of a ``__global__``/``__device__`` function."""
        k = bisect.bisect_right(self._device_starts, i) - 1
        return k >= 0 and self._device[k][0] < i < self._device[k][1]

    def skip(self, i: int) -> int:
        """The index after the token at ``i``, jumping over a bracketed group."""
        j = self.partner[i] if self.texts[i] in _OPEN else -1
        return j + 1 if j > i else i + 1

    def group(self, i: int) -> Span | None:
        """The inside of the bracket group opened at ``i``, or None."""
        if self.text(i) in _OPEN and self.partner[i] > i:
            return i + 1, self.partner[i]
        return None

    def call_args(self, i: int) -> list[Span] | None:
        """Argument spans of the call whose name is token ``i``; None when no ``(`` follows."""
        inside = self.group(i + 1) if self.text(i + 1) == "(" else None
        return None if inside is None else self.split(*inside)

    def split(self, lo: int, hi: int) -> list[Span]:
        """Split ``[lo, hi)`` at top-level commas."""
        spans: list[Span] = []
        start = k = lo
        while k < hi:
            if self.texts[k] == ",":
                spans.append((start, k))
                start = k + 1
            k = self.skip(k)
        if k > start or spans:
            spans.append((start, min(k, hi)))
        return spans

    def operand_before(self, op: int) -> Span:
        """The postfix expression that ends just before the operator at ``op``."""
        lo, k = op, op - 1
        while k >= 0 and op - k < LOOKAROUND:
            if self.texts[k] in (")", "]") and self.partner[k] >= 0:
                lo = self.partner[k]
                k = lo - 1
                continue  # a callee, an array name or a cast may precede a group
            if self.kinds[k] not in _WORDS:
                break
            lo, k = k, k - 1
            if self.text(k) not in _CONNECT:
                break
            lo, k = k, k - 1
        return lo, op

    def operand_after(self, op: int) -> Span:
        """The postfix expression that starts just after the operator at ``op``."""
        k = op + 1
        if self.kind(k) not in _WORDS and self.text(k) != "(":
            return k, k
        k = self.skip(k)
        while k < len(self) and k - op < LOOKAROUND:
            if self.texts[k] in ("(", "["):
                k = self.skip(k)
            elif self.texts[k] in _CONNECT and self.kind(k + 1) == IDENT:
                k += 2
            else:
                break
        return op + 1, k

    def idents(self, span: Span) -> Iterator[str]:
        """Identifier texts in ``span`` (at most :data:`LOOKAROUND` tokens)."""
        lo, hi = span
        for k in range(lo, min(hi, lo + LOOKAROUND)):
            if self.kinds[k] == IDENT:
                yield self.texts[k]

    def render(self, span: Span, limit: int = 48) -> str:
        """Source-like text of ``span`` for a message, shortened to ``limit`` characters."""
        out = ""
        for k in range(span[0], min(span[1], span[0] + LOOKAROUND)):
            if out and self._spaced(k - 1, k):
                out += " "
            out += self.texts[k]
            if len(out) > limit:
                return out[: limit - 3] + "..."
        return out

    def _spaced(self, left: int, right: int) -> bool:
        if self.kinds[left] in _WORDS and self.kinds[right] in _WORDS:
            return True
        if self.texts[right] == ",":
            return False
        return any(self.kinds[k] == PUNCT and self.texts[k] not in _TIGHT for k in (left, right))

    def is_null_stream(self, span: Span) -> bool:
        """True when ``span`` is a null stream: ``0``, ``NULL``, ``nullptr``, or a cast of one."""
        if span[1] - span[0] > 8:
            return False
        words = [t for t in self.texts[span[0] : span[1]] if t not in _CAST_NOISE]
        return len(words) == 1 and words[0] in NULL_STREAM

    def find(self, i: int, goal: str, stops: frozenset[str]) -> int:
        """Index of the first top-level ``goal`` after ``i`` before any of ``stops``; -1 if none."""
        k = i + 1
        while k < len(self) and k - i < LOOKAROUND:
            text = self.texts[k]
            if text == goal:
                return k
            if text in stops:
                return -1
            k = self.skip(k)
        return -1

    def for_condition(self, i: int) -> Span | None:
        """The condition clause of the ``for`` at token ``i``; None when no header follows."""
        header = self.group(i + 1) if self.text(i + 1) == "(" else None
        if header is None:
            return None
        lo, hi = header
        semicolons = [k for k in range(lo, min(hi, lo + LOOKAROUND)) if self.texts[k] == ";"]
        return (semicolons[0] + 1, semicolons[1]) if len(semicolons) >= 2 else (hi, hi)

    def body_end(self, i: int) -> int:
        """End of the statement or ``{...}`` block that starts at ``i`` (bounded)."""
        if self.text(i) == "{":
            return self.skip(i)
        k = i
        while k < len(self) and k - i < LOOKAROUND and self.texts[k] not in (";", "}"):
            k = self.skip(k)
        return k


def _pair(texts: list[str]) -> list[int]:
    """For each bracket, the index of its partner; -1 when unmatched or not a bracket."""
    partner = [-1] * len(texts)
    stack: list[int] = []
    for k in compress(range(len(texts)), map(_BRACKETS.__contains__, texts)):
        text = texts[k]
        if text in _OPEN:
            stack.append(k)
        elif stack and texts[stack[-1]] == _CLOSE[text]:
            # An unmatched closer (from #if branches, or broken text) is skipped.
            opener = stack.pop()
            partner[opener], partner[k] = k, opener
    return partner


def _device_bodies(seq: Seq) -> list[Span]:
    """``(open, close)`` brace indices of ``__global__``/``__device__`` function bodies.

    Starts from each ``__global__``/``__device__`` token, walks forward over its
    declaration to the ``{``, ``;`` or ``}`` that ends it, and back to the previous
    one to see the whole head (``__host__ __device__`` functions are host code too).
    """
    bodies: list[Span] = []
    texts = seq.texts
    scanned = 0  # marks before this index were part of a head already walked
    for mark in compress(range(len(texts)), map(_DEVICE.__contains__, texts)):
        if mark < scanned:
            continue
        k, has_call = mark + 1, False
        while k < len(texts) and k - mark < LOOKAROUND and texts[k] not in _HEAD_END:
            has_call = has_call or texts[k] == "("
            k = seq.skip(k)
        scanned = k
        if seq.text(k) != "{" or not has_call or seq.partner[k] < k:
            continue
        head = mark
        while head > 0 and mark - head < LOOKAROUND and texts[head - 1] not in _HEAD_END:
            head -= 1
        if "__host__" not in texts[head:k]:
            bodies.append((k, seq.partner[k]))
            scanned = seq.partner[k]
    return bodies
