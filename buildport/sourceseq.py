"""A token list with the structure the source matchers need, found in linear time.

:class:`Seq` pairs brackets, splits call arguments, finds the operand on either
side of an operator, and knows which ``{...}`` bodies belong to ``__global__`` or
``__device__`` functions. Every walk is bounded, so a matcher that looks around a
token costs O(1) amortized and a whole scan stays linear.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from buildport.sourcelex import IDENT, NUMBER, PUNCT, Token

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}
_CONNECT = frozenset((".", "->", "::"))
_TIGHT = frozenset((".", "->", "::", "(", ")", "[", "]", "!", "~"))
LOOKAROUND = 256  # the most tokens a matcher walks from the token it starts at
NULL_STREAM = frozenset(("0", "0L", "0l", "0u", "0U", "NULL", "nullptr"))
_CAST_NOISE = frozenset(("(", ")", "cudaStream_t", "CUstream", "static_cast", "reinterpret_cast", "<", ">"))

Span = tuple[int, int]  # token indices [lo, hi)


class Seq:
    """Tokens of one code region (the file's code, or one directive's body)."""

    def __init__(self, tokens: list[Token], directive: str | None = None) -> None:
        self.tokens = tokens
        self.texts = [t.text for t in tokens]
        self.directive = directive
        self.partner = _pair(tokens)
        self._device: list[Span] = [] if directive is not None else _device_bodies(self)
        self._device_starts = [lo for lo, _ in self._device]

    def __len__(self) -> int:
        return len(self.tokens)

    def text(self, i: int) -> str:
        """The text of token ``i``, or ``""`` outside the list."""
        return self.texts[i] if 0 <= i < len(self.texts) else ""

    def in_device_code(self, i: int) -> bool:
        """True when token ``i`` lies in the body of a ``__global__``/``__device__`` function."""
        k = bisect.bisect_right(self._device_starts, i) - 1
        return k >= 0 and self._device[k][0] < i < self._device[k][1]

    def skip(self, i: int) -> int:
        """The index after the token at ``i``, jumping over a bracketed group."""
        j = self.partner[i] if self.texts[i] in _OPEN else -1
        return j + 1 if j > i else i + 1

    def call_args(self, i: int) -> list[Span] | None:
        """Argument spans of the call whose name is token ``i``; None when no ``(`` follows."""
        if self.text(i + 1) != "(" or self.partner[i + 1] < 0:
            return None
        return self.split(i + 2, self.partner[i + 1])

    def split(self, lo: int, hi: int, stop: str = "") -> list[Span]:
        """Split ``[lo, hi)`` at top-level commas (and end at a top-level ``stop`` token)."""
        spans: list[Span] = []
        start = k = lo
        while k < hi:
            text = self.texts[k]
            if text == ",":
                spans.append((start, k))
                start = k + 1
            elif text == stop:
                break
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
            if self.tokens[k].kind not in (IDENT, NUMBER):
                break
            lo, k = k, k - 1
            if self.text(k) not in _CONNECT:
                break
            lo, k = k, k - 1
        return lo, op

    def operand_after(self, op: int) -> Span:
        """The postfix expression that starts just after the operator at ``op``."""
        k = op + 1
        if k >= len(self) or self.tokens[k].kind not in (IDENT, NUMBER) and self.texts[k] != "(":
            return k, k
        k = self.skip(k)
        while k < len(self) and k - op < LOOKAROUND:
            text = self.texts[k]
            if text in ("(", "["):
                k = self.skip(k)
            elif text in _CONNECT and self.tokens[k + 1 : k + 2] and self.tokens[k + 1].kind == IDENT:
                k += 2
            else:
                break
        return op + 1, k

    def idents(self, span: Span) -> Iterator[str]:
        """Identifier texts in ``span`` (at most :data:`LOOKAROUND` tokens)."""
        lo, hi = span
        for k in range(lo, min(hi, lo + LOOKAROUND)):
            if self.tokens[k].kind == IDENT:
                yield self.texts[k]

    def render(self, span: Span, limit: int = 48) -> str:
        """Source-like text of ``span`` for a message, shortened to ``limit`` characters."""
        out = ""
        for k in range(span[0], min(span[1], span[0] + LOOKAROUND)):
            tok = self.tokens[k]
            if out and _spaced(self.tokens[k - 1], tok):
                out += " "
            out += tok.text
            if len(out) > limit:
                return out[: limit - 3] + "..."
        return out

    def is_null_stream(self, span: Span) -> bool:
        """True when ``span`` is a null stream: ``0``, ``NULL``, ``nullptr``, or a cast of one."""
        words = [t for t in self.texts[span[0] : span[1]] if t not in _CAST_NOISE]
        return len(words) == 1 and words[0] in NULL_STREAM

    def statement_end(self, i: int) -> int:
        """Index of the ``;`` ending the statement that starts at ``i`` (bounded)."""
        k = i
        while k < len(self) and k - i < LOOKAROUND * 4 and self.texts[k] not in (";", "}"):
            k = self.skip(k)
        return k


def _spaced(left: Token, right: Token) -> bool:
    words = (IDENT, NUMBER)
    if left.kind in words and right.kind in words:
        return True
    if right.text == ",":
        return False
    return (left.kind == PUNCT and left.text not in _TIGHT) or (right.kind == PUNCT and right.text not in _TIGHT)


def _pair(tokens: list[Token]) -> list[int]:
    """For each bracket token, the index of its partner (-1 when unmatched or not a bracket)."""
    partner = [-1] * len(tokens)
    stack: list[int] = []
    for k, tok in enumerate(tokens):
        if tok.kind != PUNCT:
            continue
        if tok.text in _OPEN:
            stack.append(k)
        elif tok.text in _CLOSE:
            # An unmatched closer (from #if branches, or broken text) is skipped.
            if stack and tokens[stack[-1]].text == _CLOSE[tok.text]:
                opener = stack.pop()
                partner[opener], partner[k] = k, opener
    return partner


def _device_bodies(seq: Seq) -> list[Span]:
    """``(open, close)`` brace indices of ``__global__``/``__device__`` function bodies."""
    bodies: list[Span] = []
    head = k = 0
    texts, size = seq.texts, len(seq.texts)
    while k < size:
        text = texts[k]
        if text in (";", "}"):
            head = k + 1
        elif text == "{":
            words = set(texts[head:k])
            close = seq.partner[k]
            if ("__global__" in words or "__device__" in words) and "__host__" not in words \
                    and "(" in words and close > k:
                bodies.append((k, close))
                k = head = close + 1
                continue
            head = k + 1
        k += 1
    return bodies
