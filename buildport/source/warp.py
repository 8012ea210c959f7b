"""Matchers for warp-width assumptions: literal 32s, 32-bit lane masks, shuffle widths.

A mix-in of :class:`~buildport.source.match.Matcher`: each method looks at one
token and its bounded neighbourhood in a :class:`~buildport.source.seq.Seq` and
reports through :meth:`WarpRules.add`. A literal counts only where it is the
operand of lane arithmetic (``threadIdx.x % 32``, ``lane & 31``, ``tid < 32``),
a shuffle's width or offset, the bound of a loop around a shuffle, or the value of
something named like a warp size; ``float buf[32]`` is none of these.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from buildport.rules.source_rules import MASK_RESULT, WARP_INTRINSICS, WARP_MASK_FIRST_ARG
from buildport.source.lex import IDENT, NUMBER, int_value, is_64bit_literal
from buildport.source.seq import LOOKAROUND, Seq, Span

COMPARE_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
WARP_LITERALS = frozenset(("5", "16", "31", "32", "0x1f", "0x20"))  # lower case, suffix stripped
_LANEISH = re.compile(r"(?i)lane|warp|tid|thread|^tx$|^blockDim$")
_WARP_SIZE_NAME = re.compile(r"(?i)warp_?size|warpsz|wave_?size|wavefront_?size|(threads|lanes)_?per_?warp")
_MASK_NAME = re.compile(r"(?i)mask|lanes")
_LEFT_OPS: dict[str, frozenset[int]] = {
    **dict.fromkeys(("%", "%=", "/", "/=", "*", "*="), frozenset((32,))),
    **dict.fromkeys(("&", "&="), frozenset((31,))),
    **dict.fromkeys((">>", ">>=", "<<", "<<="), frozenset((5,))),
    **dict.fromkeys(COMPARE_OPS, frozenset((31, 32))),
}
_RIGHT_OPS: dict[str, frozenset[int]] = {"*": frozenset((32,)), **dict.fromkeys(COMPARE_OPS, frozenset((31, 32)))}
_SHFL_DELTA = {"__shfl_down": 1, "__shfl_xor": 1, "__shfl_up": 1, "__shfl_down_sync": 2,
               "__shfl_xor_sync": 2, "__shfl_up_sync": 2}
_SHFL_WIDTH = {"__shfl": 2, "__shfl_down": 2, "__shfl_xor": 2, "__shfl_up": 2, "__shfl_sync": 3,
               "__shfl_down_sync": 3, "__shfl_xor_sync": 3, "__shfl_up_sync": 3}
_TYPE_WORDS = frozenset(("unsigned", "signed", "int", "long", "short", "const", "uint32_t", "int32_t",
                         "uint64_t", "int64_t", "uint", "u32", "u64", "std", "::", "auto", "size_t"))
_INT32 = frozenset(("int", "unsigned", "signed", "uint32_t", "int32_t", "uint", "u32"))


def is_32bit_type(words: list[str]) -> bool:
    """True when type words like ``unsigned int`` or ``uint32_t`` name a 32-bit integer."""
    return bool(_INT32.intersection(words)) and not {"long", "uint64_t", "int64_t", "u64", "size_t"} & set(words)


class WarpRules:
    """Warp-width rules; the concrete matcher provides ``seq`` and ``add``."""

    seq: Seq

    def add(self, i: int, rule: str, detail: str, once: str = "") -> None:
        """Record a hit at token ``i`` (implemented by the matcher)."""
        raise NotImplementedError

    def warp_literal(self, i: int) -> None:
        """``% 32``, ``& 31``, ``>> 5``, ``tid < 32``, ``32 * warp``, ``#define WARP_SIZE 32``."""
        seq = self.seq
        value = int_value(seq.texts[i])
        before, after = seq.text(i - 1), seq.text(i + 1)
        if before == "<" and after in (">", ">>", ","):
            return  # a template argument: thread_block_tile<32>, tiled_partition<32>(block)
        if value in _LEFT_OPS.get(before, ()) and self.laneish(span := seq.operand_before(i - 1)):
            self.add(i, "warp-size-literal", f"`{seq.render((span[0], i + 1))}` assumes a 32-lane warp")
        elif value in _RIGHT_OPS.get(after, ()) and self.laneish(span := seq.operand_after(i + 1)):
            self.add(i, "warp-size-literal", f"`{seq.render((i, span[1]))}` assumes a 32-lane warp")
        elif value == 32 and (name := self.declared_name(i)) and _WARP_SIZE_NAME.search(name):
            self.add(i, "warp-size-literal", f"`{name}` is set to 32")

    def laneish(self, span: Span) -> bool:
        """Does the operand in ``span`` name a lane, warp or thread index (or a warp intrinsic)?"""
        return any(_LANEISH.search(name) or name in WARP_INTRINSICS for name in self.seq.idents(span))

    def declared_name(self, i: int) -> str:
        """The name a literal at ``i`` initializes (``#define N 32``, ``N = 32``, ``N{32}``), or ``""``."""
        seq = self.seq
        if seq.directive == "define" and i <= 3 and seq.kinds[0] == IDENT:
            return seq.texts[0]
        k = i - 1
        if seq.text(k) == "(" and seq.text(k - 1) in ("=", "{"):
            k -= 1  # N = (32)
        if seq.text(k) in ("=", "{", "(") and seq.kind(k - 1) == IDENT:
            return seq.texts[k - 1]
        return ""

    def mask_literal(self, i: int) -> None:
        """``0xffffffff`` given to something named like a mask (``#define FULL_MASK 0xffffffff``)."""
        name = self.declared_name(i)
        if name and _MASK_NAME.search(name) and not is_64bit_literal(self.seq.texts[i]):
            self.add(i, "warp-mask-32bit", f"`{name}` is a 32-bit lane mask (`{self.seq.texts[i]}`)")

    def warp_call(self, i: int, name: str) -> None:
        """Mask argument, shuffle width and offset, and where a ballot result is stored."""
        seq = self.seq
        args = seq.call_args(i)
        if args is None:
            return
        if name in WARP_MASK_FIRST_ARG and args:
            lo, hi = args[0]
            words = [t for t in seq.texts[lo:hi] if t not in ("-", "~", "(", ")")]
            if len(words) == 1 and seq.kinds[hi - 1] == NUMBER and not is_64bit_literal(words[0]):
                self.add(lo, "warp-mask-32bit", f"`{seq.render(args[0])}` used as a lane mask for `{name}`")
        for table, values, what in ((_SHFL_DELTA, (16, 32), "offset"), (_SHFL_WIDTH, (32,), "width")):
            position = table.get(name, -1)
            if 0 <= position < len(args) and args[position][1] - args[position][0] == 1:
                k = args[position][0]
                if seq.kinds[k] == NUMBER and int_value(seq.texts[k]) in values:
                    self.add(k, "warp-size-literal", f"`{name}` {what} `{seq.texts[k]}` assumes a 32-lane warp")
        if name in MASK_RESULT:
            self.mask_storage(i, name)

    def mask_storage(self, i: int, name: str) -> None:
        """``unsigned m = __ballot_sync(...)`` or ``(unsigned)__ballot(...)``."""
        seq = self.seq
        k = i - 1
        if seq.text(k) == ")" and 0 <= seq.partner[k] and k - seq.partner[k] <= 8:
            words = seq.texts[seq.partner[k] + 1 : k]
            if words and set(words) <= _TYPE_WORDS and is_32bit_type(words):
                self.add(seq.partner[k] + 1, "warp-mask-32bit",
                         f"`({' '.join(words)})` truncates the 64-bit result of `{name}`")
            return
        if seq.text(k) != "=" or seq.kind(k - 1) != IDENT:
            return
        lo = k - 1
        while lo > 0 and seq.texts[lo - 1] in _TYPE_WORDS and k - lo < 8:
            lo -= 1
        words = seq.texts[lo : k - 1]
        if is_32bit_type(words):
            self.add(lo, "warp-mask-32bit",
                     f"`{' '.join(words)} {seq.texts[k - 1]}` holds the 64-bit result of `{name}`")

    def mask_consumer(self, i: int) -> None:
        """``__popc``/``__ffs``/``__clz``/``__brev`` applied to a ballot or active mask."""
        args = self.seq.call_args(i)
        if args and any(name in MASK_RESULT for name in self.seq.idents(args[0])):
            name = self.seq.texts[i]
            self.add(i, "warp-mask-32bit", f"`{name}` reads only 32 bits of a 64-bit lane mask")

    def warp_loop(self, i: int) -> None:
        """Literal 16 or 32 in the header of a ``for`` loop whose body shuffles or votes."""
        seq = self.seq
        close = seq.partner[i + 1]
        end = seq.body_end(close + 1)
        if not any(name in WARP_INTRINSICS for name in seq.idents((close + 1, end))):
            return
        for k in range(i + 2, min(close, i + LOOKAROUND)):
            if seq.kinds[k] == NUMBER and int_value(seq.texts[k]) in (16, 32):
                self.add(k, "warp-size-literal", f"loop bound `{seq.texts[k]}` around a warp shuffle "
                                                 "assumes a 32-lane warp")
