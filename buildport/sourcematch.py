"""Matchers: from a token sequence to hits of the source rules.

One pass over the tokens dispatches on identifier text (tables from
:mod:`buildport.rules.source_rules`), on the few integer literals that can be a
warp width, and on ``<<<``. Each handler looks at a bounded neighbourhood through
:class:`~buildport.sourceseq.Seq`, so comments, strings and ``float buf[32]``
never reach it and the scan stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from buildport.rules.source_rules import (
    API_FAMILIES, API_NAMES, ASYNC_STREAM_ARG, FLAG_NAMES, MASK_32BIT_CONSUMERS, MASK_RESULT,
    SCOPED_ATOMIC, WARP_INTRINSICS, WARP_MASK_FIRST_ARG,
)
from buildport.sourcelex import IDENT, NUMBER, STRING, int_value, is_64bit_literal
from buildport.sourceseq import LOOKAROUND, Seq, Span


class Hit(NamedTuple):
    """A rule matched at a token: ``detail`` is the first, specific sentence of the message.

    A non-empty ``once`` key makes the scanner keep only the first hit with that key.
    """

    offset: int
    rule: str
    detail: str
    once: str = ""


_LANEISH = re.compile(r"(?i)lane|warp|tid|thread|^tx$|^blockDim$")
_WARP_SIZE_NAME = re.compile(r"(?i)warp_?size|warpsz|wave_?size|wavefront_?size|(threads|lanes)_?per_?warp")
_MASK_NAME = re.compile(r"(?i)mask|lanes")
_WARP_LITERALS = frozenset(("5", "16", "31", "32", "0x1f", "0x20"))
_FAMILY = re.compile("|".join(f"(?P<f{k}>{pattern.pattern})" for k, (pattern, _, _) in enumerate(API_FAMILIES)))
_COMPARE = frozenset(("<", "<=", ">", ">=", "==", "!="))
_LEFT_OPS: dict[str, frozenset[int]] = {
    **dict.fromkeys(("%", "%=", "/", "/=", "*", "*="), frozenset((32,))),
    **dict.fromkeys(("&", "&="), frozenset((31,))),
    **dict.fromkeys((">>", ">>=", "<<", "<<="), frozenset((5,))),
    **dict.fromkeys(_COMPARE, frozenset((31, 32))),
}
_RIGHT_OPS: dict[str, frozenset[int]] = {"*": frozenset((32,)), **dict.fromkeys(_COMPARE, frozenset((31, 32)))}
_SHFL_DELTA = {"__shfl_down": 1, "__shfl_xor": 1, "__shfl_up": 1, "__shfl_down_sync": 2,
               "__shfl_xor_sync": 2, "__shfl_up_sync": 2}
_SHFL_WIDTH = {"__shfl": 2, "__shfl_down": 2, "__shfl_xor": 2, "__shfl_up": 2, "__shfl_sync": 3,
               "__shfl_down_sync": 3, "__shfl_xor_sync": 3, "__shfl_up_sync": 3}
_TYPE_WORDS = frozenset(("unsigned", "signed", "int", "long", "short", "const", "uint32_t", "int32_t",
                         "uint64_t", "int64_t", "uint", "u32", "u64", "std", "::", "auto", "size_t"))
_INT32 = frozenset(("int", "unsigned", "signed", "uint32_t", "int32_t", "uint", "u32"))
_PTX = re.compile(r"(?<![\w.%$])[a-z][a-z0-9]*(?:\.[a-z0-9_]+)+|%%?(?:laneid|warpid|smid|nsmid|clock(?:64)?"
                  r"|globaltimer|lanemask_\w+)\b|\b(?:trap|exit|brkpt)\s*;")
_ATOMIC_TYPES = frozenset(("atomic", "atomic_ref", "atomic_flag", "atomic_thread_fence"))
_DEVICE_RUNTIME = re.compile(r"cuda[A-Z]\w*")
_ASM = frozenset(("asm", "__asm__", "__asm"))
_ASM_QUALIFIERS = frozenset(("volatile", "__volatile__", "goto", "inline"))


def is_32bit_type(words: list[str]) -> bool:
    """True when type words like ``unsigned int`` or ``uint32_t`` name a 32-bit integer."""
    return bool(_INT32.intersection(words)) and not {"long", "uint64_t", "int64_t", "u64", "size_t"} & set(words)


class Matcher:
    """Runs every rule over one :class:`Seq` and collects :class:`Hit` objects."""

    def __init__(self, seq: Seq) -> None:
        self.seq = seq
        self.hits: list[Hit] = []
        self.consumed: set[int] = set()  # flag tokens already reported with their call
        self.volatile_names: set[str] = set()
        self.grid_names: set[str] = set()
        self.handlers: dict[str, Callable[[int], None]] = {
            "texture": self.texture, "surface": self.texture, "__CUDA_ARCH__": self.cuda_arch,
            "cuda": self.cuda_atomic, "wmma": self.wmma, "while": self.spin_wait, "for": self.for_loop,
            "volatile": self.volatile, "grid_group": self.grid_group, "sync": self.grid_sync,
            **dict.fromkeys(_ASM, self.inline_asm),
            **dict.fromkeys(MASK_32BIT_CONSUMERS, self.mask_consumer),
        }

    def kind(self, i: int) -> str:
        """The kind of token ``i``, or ``""`` outside the sequence."""
        return self.seq.tokens[i].kind if 0 <= i < len(self.seq) else ""

    def add(self, i: int, rule: str, detail: str, once: str = "") -> None:
        """Record a hit at token ``i``."""
        self.hits.append(Hit(self.seq.tokens[i].start, rule, detail, once))

    def run(self) -> list[Hit]:
        """Scan the whole sequence once."""
        seq = self.seq
        for i, tok in enumerate(seq.tokens):
            if tok.kind == IDENT:
                self.identifier(i, tok.text)
            elif tok.kind == NUMBER and tok.text.rstrip("uUlL").lower() in _WARP_LITERALS:
                self.warp_literal(i)
            elif tok.kind == NUMBER and int_value(tok.text) == 0xFFFFFFFF:
                self.mask_literal(i)
            elif tok.text == "<<<":
                self.launch(i)
        return self.hits

    def identifier(self, i: int, name: str) -> None:
        """Dispatch one identifier to the handlers that care about it."""
        seq = self.seq
        if seq.text(i - 1) in (".", "->") and name != "sync":
            return
        if seq.in_device_code(i) and _DEVICE_RUNTIME.fullmatch(name) and seq.text(i + 1) == "(":
            self.add(i, "dynamic-parallelism", f"`{name}` is called from device code")
            return
        handler = self.handlers.get(name)
        if handler is not None:
            handler(i)
        if name in API_NAMES:
            self.api_call(i, name)
        elif name in FLAG_NAMES and i not in self.consumed:
            self.add(i, FLAG_NAMES[name], f"`{name}` is used")
        elif name in ASYNC_STREAM_ARG:
            self.async_call(i, name)
        elif name[0] == "a" and (scoped := SCOPED_ATOMIC.fullmatch(name)) is not None:
            scope = "the host and other GPUs" if scoped.group(1) == "system" else "one block"
            self.add(i, "atomic-scope", f"`{name}` is an atomic scoped to {scope}")
        elif name[0] in "cnNC" and (family := _FAMILY.fullmatch(name)) is not None:
            _, rule, what = API_FAMILIES[int((family.lastgroup or "f0")[1:])]
            self.add(i, rule, f"`{name}` is part of {what}", once=name)
        if name in WARP_INTRINSICS:
            self.warp_call(i, name)

    # --- API calls and flags -------------------------------------------------------------------

    def api_call(self, i: int, name: str) -> None:
        rule, what = API_NAMES[name]
        detail = f"`{name}` {what}"
        args = self.seq.call_args(i)
        flags = [k for lo, hi in args or () for k in range(lo, min(hi, lo + LOOKAROUND))
                 if self.seq.texts[k] in FLAG_NAMES]
        if flags:
            self.consumed.update(flags)
            detail += " with " + ", ".join(f"`{self.seq.texts[k]}`" for k in flags)
        if name in ("this_grid", "this_multi_grid"):
            self.remember_grid(i)
        self.add(i, rule, detail)

    def async_call(self, i: int, name: str) -> None:
        args = self.seq.call_args(i)
        if args is None or self.seq.in_device_code(i):
            return
        position = ASYNC_STREAM_ARG[name]
        if len(args) <= position:
            self.add(i, "default-stream", f"`{name}` without a stream argument runs on the null stream")
        elif self.seq.is_null_stream(args[position]):
            shown = self.seq.render(args[position])
            self.add(i, "default-stream", f"`{name}` on stream `{shown}` runs on the null stream")

    def launch(self, i: int) -> None:
        seq = self.seq
        args = seq.split(i + 1, min(len(seq), i + LOOKAROUND), stop=">>>")
        if seq.in_device_code(i):
            self.add(i, "dynamic-parallelism", "a kernel is launched (`<<<...>>>`) from device code")
        elif len(args) < 4:
            self.add(i, "default-stream-launch", "kernel launch without a stream runs on the null stream")
        elif seq.is_null_stream(args[3]):
            self.add(i, "default-stream-launch", f"kernel launch on stream `{seq.render(args[3])}` "
                                                 "runs on the null stream")

    # --- warps ---------------------------------------------------------------------------------

    def warp_literal(self, i: int) -> None:
        """``% 32``, ``& 31``, ``>> 5``, ``tid < 32``, ``32 * warp``, ``#define WARP_SIZE 32``."""
        seq = self.seq
        value = int_value(seq.texts[i])
        before, after = seq.text(i - 1), seq.text(i + 1)
        if value in _LEFT_OPS.get(before, ()) and self.laneish(span := seq.operand_before(i - 1)):
            self.add(i, "warp-size-literal", f"`{seq.render((span[0], i + 1))}` assumes a 32-lane warp")
        elif value in _RIGHT_OPS.get(after, ()) and self.laneish(span := seq.operand_after(i + 1)):
            self.add(i, "warp-size-literal", f"`{seq.render((i, span[1]))}` assumes a 32-lane warp")
        elif value == 32 and (name := self.declared_name(i)) and _WARP_SIZE_NAME.search(name):
            self.add(i, "warp-size-literal", f"`{name}` is set to 32")

    def laneish(self, span: Span) -> bool:
        return any(_LANEISH.search(name) or name in WARP_INTRINSICS for name in self.seq.idents(span))

    def declared_name(self, i: int) -> str:
        """The name a literal at ``i`` initializes (``#define N 32``, ``N = 32``, ``N{32}``), or ``""``."""
        seq = self.seq
        if seq.directive == "define" and i <= 3 and seq.tokens[0].kind == IDENT:
            return seq.texts[0]
        k = i - 1
        if seq.text(k) == "(" and seq.text(k - 1) in ("=", "{"):
            k -= 1  # N = (32)
        if seq.text(k) in ("=", "{", "(") and self.kind(k - 1) == IDENT:
            return seq.texts[k - 1]
        return ""

    def mask_literal(self, i: int) -> None:
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
            if len(words) == 1 and seq.tokens[hi - 1].kind == NUMBER and not is_64bit_literal(words[0]):
                self.add(lo, "warp-mask-32bit", f"`{seq.render(args[0])}` used as a lane mask for `{name}`")
        for table, values, what in ((_SHFL_DELTA, (16, 32), "offset"), (_SHFL_WIDTH, (32,), "width")):
            position = table.get(name, -1)
            if 0 <= position < len(args) and args[position][1] - args[position][0] == 1:
                k = args[position][0]
                if seq.tokens[k].kind == NUMBER and int_value(seq.texts[k]) in values:
                    self.add(k, "warp-size-literal", f"`{name}` {what} `{seq.texts[k]}` assumes a 32-lane warp")
        if name in MASK_RESULT:
            self.mask_storage(i, name)

    def mask_storage(self, i: int, name: str) -> None:
        """``unsigned m = __ballot_sync(...)`` or ``(unsigned)__ballot(...)``."""
        seq = self.seq
        k = i - 1
        if seq.text(k) == ")" and seq.partner[k] >= 0:
            words = seq.texts[seq.partner[k] + 1 : k]
            if words and set(words) <= _TYPE_WORDS and is_32bit_type(words):
                self.add(seq.partner[k] + 1, "warp-mask-32bit",
                         f"`({' '.join(words)})` truncates the 64-bit result of `{name}`")
            return
        if seq.text(k) != "=" or self.kind(k - 1) != IDENT:
            return
        lo = k - 1
        while lo > 0 and seq.texts[lo - 1] in _TYPE_WORDS and k - lo < 8:
            lo -= 1
        words = seq.texts[lo : k - 1]
        if is_32bit_type(words):
            self.add(lo, "warp-mask-32bit",
                     f"`{' '.join(words)} {seq.texts[k - 1]}` holds the 64-bit result of `{name}`")

    def mask_consumer(self, i: int) -> None:
        args = self.seq.call_args(i)
        if args and any(name in MASK_RESULT for name in self.seq.idents(args[0])):
            name = self.seq.texts[i]
            self.add(i, "warp-mask-32bit", f"`{name}` reads only 32 bits of a 64-bit lane mask")

    def for_loop(self, i: int) -> None:
        """Literal 16 or 32 in the header of a loop whose body shuffles or votes."""
        seq = self.seq
        if seq.text(i + 1) != "(" or seq.partner[i + 1] < 0:
            return
        close = seq.partner[i + 1]
        self.spin_wait(i, self.for_condition(i + 2, close))
        end = seq.skip(close + 1) if seq.text(close + 1) == "{" else seq.statement_end(close + 1)
        if not any(name in WARP_INTRINSICS for name in seq.idents((close + 1, end))):
            return
        for k in range(i + 2, close):
            if seq.tokens[k].kind == NUMBER and int_value(seq.texts[k]) in (16, 32):
                self.add(k, "warp-size-literal", f"loop bound `{seq.texts[k]}` around a warp shuffle "
                                                 "assumes a 32-lane warp")

    def for_condition(self, lo: int, hi: int) -> Span:
        parts = [k for k in range(lo, hi) if self.seq.texts[k] == ";"]
        return (parts[0] + 1, parts[1]) if len(parts) >= 2 else (hi, hi)

    # --- memory ordering -----------------------------------------------------------------------

    def volatile(self, i: int) -> None:
        seq, k, name = self.seq, i + 1, ""
        while k < len(seq) and k - i < 12 and (seq.tokens[k].kind == IDENT or seq.texts[k] in ("*", "&", "::")):
            if seq.tokens[k].kind == IDENT:
                name = seq.texts[k]
            k += 1
        if name and seq.text(k) in (";", "=", ",", ")", "["):
            self.volatile_names.add(name)

    def spin_wait(self, i: int, condition: Span | None = None) -> None:
        seq = self.seq
        if condition is None:
            if seq.text(i + 1) != "(" or seq.partner[i + 1] < 0:
                return
            condition = (i + 2, seq.partner[i + 1])
        if not seq.in_device_code(i):
            return
        for name in seq.idents(condition):
            if name == "volatile" or name in self.volatile_names:
                shown = "a `volatile` cast" if name == "volatile" else f"`volatile` `{name}`"
                self.add(i, "volatile-spin-wait", f"`{seq.texts[i]}` loop polls {shown}")
                return

    def cuda_atomic(self, i: int) -> None:
        seq = self.seq
        if seq.text(i + 1) != "::":
            return
        k = i + 4 if seq.text(i + 2) == "std" and seq.text(i + 3) == "::" else i + 2
        if seq.text(k) in _ATOMIC_TYPES:
            self.add(i, "cuda-atomic", f"`{seq.render((i, k + 1))}` is libcu++, which ROCm does not ship")

    def grid_group(self, i: int) -> None:
        if self.kind(i + 1) == IDENT:
            self.grid_names.add(self.seq.texts[i + 1])

    def remember_grid(self, i: int) -> None:
        seq, k = self.seq, i - 1
        while seq.text(k) == "::" and self.kind(k - 1) == IDENT:
            k -= 2
        if seq.text(k) == "=" and self.kind(k - 1) == IDENT:
            self.grid_names.add(seq.texts[k - 1])

    def grid_sync(self, i: int) -> None:
        """``grid.sync()`` or ``sync(grid)`` on a grid group."""
        seq = self.seq
        if seq.text(i + 1) != "(":
            return
        if seq.text(i - 1) in (".", "->") and seq.text(i - 2) in self.grid_names:
            self.add(i - 2, "grid-sync", f"`{seq.texts[i - 2]}.sync()` waits for every block of the grid")
        elif seq.text(i + 2) in self.grid_names and seq.text(i + 3) == ")":
            self.add(i, "grid-sync", f"`sync({seq.texts[i + 2]})` waits for every block of the grid")

    # --- other constructs ----------------------------------------------------------------------

    def texture(self, i: int) -> None:
        """``texture<T, dim, mode> name`` (not a variable called ``texture``)."""
        seq = self.seq
        if seq.text(i + 1) != "<" or seq.text(i - 1) in ("::", ".", "->") or self.kind(i + 2) != IDENT:
            return
        for k in range(i + 2, min(len(seq), i + 24)):
            text = seq.texts[k]
            if text in (">", ">>"):
                if seq.text(k + 1) in ("&", "*") or self.kind(k + 1) == IDENT:
                    self.add(i, "texture-reference", f"`{seq.texts[i]}<...>` declares a {seq.texts[i]} reference")
                return
            if text in (";", "&&", "||", "(", ")", "{", "}", "=", "?"):
                return

    def inline_asm(self, i: int) -> None:
        seq, k = self.seq, i + 1
        while seq.text(k) in _ASM_QUALIFIERS:
            k += 1
        if seq.text(k) != "(" or seq.partner[k] < 0:
            return
        template = " ".join(seq.texts[j] for j in range(k + 1, seq.partner[k])
                            if seq.tokens[j].kind == STRING and j - k < LOOKAROUND)
        found = _PTX.search(re.sub(r"\\.", " ", template))
        if found:
            self.add(i, "inline-ptx", f"`{seq.texts[i]}` statement contains PTX (`{found.group().strip()}`)")

    def cuda_arch(self, i: int) -> None:
        seq = self.seq
        before, after = seq.text(i - 1), seq.text(i + 1)
        if before in _COMPARE and self.kind(i - 2) == NUMBER:
            self.add(i, "cuda-arch-version", f"`{seq.render((i - 2, i + 1))}` is false on AMD")
        elif after in _COMPARE and self.kind(i + 2) == NUMBER:
            self.add(i, "cuda-arch-version", f"`{seq.render((i, i + 3))}` is false on AMD")
        elif seq.directive in ("ifdef", "ifndef") and i == 0:
            self.add(i, "cuda-arch-device", f"`#{seq.directive} __CUDA_ARCH__` cannot tell device from host code on AMD")
        elif before == "defined" or (before == "(" and seq.text(i - 2) == "defined"):
            self.add(i, "cuda-arch-device", "`defined(__CUDA_ARCH__)` is false in AMD device code")
        else:
            self.add(i, "cuda-arch-device", "`__CUDA_ARCH__` is undefined on AMD")

    def wmma(self, i: int) -> None:
        if self.seq.text(i + 1) == "::":
            self.add(i, "library-different-api", "`wmma::` is CUDA's warp-matrix API (`<mma.h>`)", once="wmma")


def match(seq: Seq) -> list[Hit]:
    """All hits of the source rules in ``seq``."""
    return Matcher(seq).run()
