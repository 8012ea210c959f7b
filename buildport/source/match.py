"""Matchers: from a token sequence to hits of the source rules.

One pass over the tokens dispatches on identifier text (tables from
:mod:`buildport.rules.source_rules`), on the few integer literals that can be a
warp width, and on ``<<<``. Each handler looks at a bounded neighbourhood through
:class:`~buildport.source.seq.Seq`, so comments, strings and ``float buf[32]``
never reach it and the scan stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from itertools import compress
from typing import NamedTuple

from buildport.rules.source_rules import (
    API_FAMILIES, API_NAMES, ASYNC_STREAM_ARG, CUDA_HEADER_MACROS, CUDA_PASTE_HEAD, FLAG_NAMES, MASK_32BIT_CONSUMERS, SCOPED_ATOMIC,
    WARP_INTRINSICS,
)
from buildport.source.lex import CONDITIONALS, IDENT, NUMBER, STRING, int_value
from buildport.source.seq import LOOKAROUND, Seq, Span
from buildport.source.warp import COMPARE_OPS, WARP_LITERALS, WarpRules


class Hit(NamedTuple):
    """A rule matched at a token: ``detail`` is the first, specific sentence of the message.

    A non-empty ``once`` key makes the scanner keep only the first hit with that key.
    """

    offset: int
    rule: str
    detail: str
    once: str = ""


_FAMILY = re.compile("|".join(f"(?P<f{k}>{family[0].pattern})" for k, family in enumerate(API_FAMILIES)))
_PTX = re.compile(r"(?<![\w.%$])[a-z][a-z0-9]*(?:\.[a-z0-9_]+)+|%%?(?:laneid|warpid|smid|nsmid|clock(?:64)?"
                  r"|globaltimer|lanemask_\w+)\b|\b(?:trap|exit|brkpt)\s*;")
_ATOMIC_TYPES = frozenset(("atomic", "atomic_ref", "atomic_flag", "atomic_thread_fence"))
_DEVICE_RUNTIME = re.compile(r"cuda[A-Z]\w*")
_ASM = frozenset(("asm", "__asm__", "__asm"))
_ASM_QUALIFIERS = frozenset(("volatile", "__volatile__", "goto", "inline"))
_LAUNCH_STOPS = frozenset((";", "{", "}", "<<<"))
_MACRO_DIRECTIVES = frozenset(("define", "undef", "ifdef", "ifndef"))


class Matcher(WarpRules):
    """Runs every rule over one :class:`Seq` and collects :class:`Hit` objects."""

    def __init__(self, seq: Seq, defined: frozenset[str] = frozenset()) -> None:
        self.seq = seq
        self.defined = defined  # macros the file #defines itself
        self.hits: list[Hit] = []
        self.consumed: set[int] = set()  # flag tokens already reported with their call
        self.volatile_names: set[str] = set()
        self.grid_names: set[str] = set()

    def add(self, i: int, rule: str, detail: str, once: str = "") -> None:
        """Record a hit at token ``i``."""
        self.hits.append(Hit(self.seq.starts[i], rule, detail, once))

    def run(self) -> list[Hit]:
        """Visit the tokens some rule may care about, in order.

        Which texts matter is decided once per distinct text, so the per-token
        cost of the scan is a set lookup.
        """
        seq = self.seq
        wanted = {text for text in set(seq.texts) if interesting(text)}
        for i in compress(range(len(seq)), map(wanted.__contains__, seq.texts)):
            kind, text = seq.kinds[i], seq.texts[i]
            if kind == IDENT:
                self.identifier(i, text)
            elif kind == NUMBER and text.rstrip("uUlL").lower() in WARP_LITERALS:
                self.warp_literal(i)
            elif kind == NUMBER:
                self.mask_literal(i)
            elif text == "<<<":
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
        handler = HANDLERS.get(name)
        if handler is not None:
            handler(self, i)
        if seq.directive == "define" and seq.text(i + 1) == "##" and CUDA_PASTE_HEAD.fullmatch(name):
            self.token_paste(i)
        if name in API_NAMES:
            self.api_call(i, name)
        elif name in FLAG_NAMES and i not in self.consumed:
            rule, what = FLAG_NAMES[name]
            self.add(i, rule, f"`{name}` {what}")
        elif name in ASYNC_STREAM_ARG:
            self.async_call(i, name)
        elif name[0] == "a" and (scoped := SCOPED_ATOMIC.fullmatch(name)) is not None:
            scope = "the host and other GPUs" if scoped.group(1) == "system" else "one block"
            self.add(i, "atomic-scope", f"`{name}` is an atomic scoped to {scope}")
        elif name[0] in "cnNC" and not self.macro_name(i) and (family := _FAMILY.fullmatch(name)) is not None:
            _, rule, what, per = API_FAMILIES[int((family.lastgroup or "f0")[1:])]
            if per == "name":
                self.add(i, rule, f"`{name}` is part of {what}", once=name)
            else:
                self.add(i, rule, f"`{name}` is the first use of {what} in this file", once=what)
        if name in WARP_INTRINSICS:
            self.warp_call(i, name)

    def macro_name(self, i: int) -> bool:
        """True for the name a ``#define``/``#undef``/``#ifdef``/``#ifndef`` defines or tests."""
        return i == 0 and self.seq.directive in _MACRO_DIRECTIVES

    # --- API calls and flags -------------------------------------------------------------------

    def api_call(self, i: int, name: str) -> None:
        """A name from the API table; flags among its arguments are named in the same finding."""
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
        """An ``*Async`` call whose stream argument is missing or null."""
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
        """A ``<<<...>>>`` launch: in device code, or on the null stream."""
        seq = self.seq
        close = seq.find(i, ">>>", _LAUNCH_STOPS)
        if close < 0:
            return
        args = seq.split(i + 1, close)
        if seq.in_device_code(i):
            self.add(i, "dynamic-parallelism", "a kernel is launched (`<<<...>>>`) from device code")
        elif len(args) < 4:
            self.add(i, "default-stream-launch", "kernel launch without a stream runs on the null stream")
        elif seq.is_null_stream(args[3]):
            self.add(i, "default-stream-launch", f"kernel launch on stream `{seq.render(args[3])}` "
                                                 "runs on the null stream")

    def for_loop(self, i: int) -> None:
        """A ``for`` header: its condition may spin on a ``volatile``, its bounds may be a warp width."""
        condition = self.seq.for_condition(i)
        if condition is not None:
            self.spin_wait(i, condition)
            self.warp_loop(i)

    # --- memory ordering -----------------------------------------------------------------------

    def volatile(self, i: int) -> None:
        """Remember the name a ``volatile`` declaration declares (``volatile int* flag``)."""
        seq, k, name = self.seq, i + 1, ""
        while k < len(seq) and k - i < 12 and (seq.kinds[k] == IDENT or seq.texts[k] in ("*", "&", "::")):
            if seq.kinds[k] == IDENT:
                name = seq.texts[k]
            k += 1
        if name and seq.text(k) in (";", "=", ",", ")", "["):
            self.volatile_names.add(name)

    def spin_wait(self, i: int, condition: Span | None = None) -> None:
        """A device-code loop whose condition reads a ``volatile`` name or casts to ``volatile``."""
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
        """``cuda::atomic``, ``cuda::atomic_ref``, ``cuda::std::atomic`` and friends."""
        seq = self.seq
        if seq.text(i + 1) != "::":
            return
        k = i + 4 if seq.text(i + 2) == "std" and seq.text(i + 3) == "::" else i + 2
        if seq.text(k) in _ATOMIC_TYPES:
            self.add(i, "cuda-atomic", f"`{seq.render((i, k + 1))}` is libcu++, which ROCm does not ship")

    def grid_group(self, i: int) -> None:
        """Remember a variable declared as a ``grid_group``."""
        if self.seq.kind(i + 1) == IDENT:
            self.grid_names.add(self.seq.texts[i + 1])

    def remember_grid(self, i: int) -> None:
        """Remember ``g`` in ``auto g = cg::this_grid()``."""
        seq, k = self.seq, i - 1
        while seq.text(k) == "::" and seq.kind(k - 1) == IDENT:
            k -= 2
        if seq.text(k) == "=" and seq.kind(k - 1) == IDENT:
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
        if seq.text(i + 1) != "<" or seq.text(i - 1) in ("::", ".", "->") or seq.kind(i + 2) != IDENT:
            return
        for k in range(i + 2, min(len(seq), i + 24)):
            text = seq.texts[k]
            if text in (">", ">>"):
                if seq.text(k + 1) in ("&", "*") or seq.kind(k + 1) == IDENT:
                    self.add(i, "texture-reference", f"`{seq.texts[i]}<...>` declares a {seq.texts[i]} reference")
                return
            if text in (";", "&&", "||", "(", ")", "{", "}", "=", "?"):
                return

    def inline_asm(self, i: int) -> None:
        """An ``asm`` statement whose template strings look like PTX (``mov.u32``, ``%%laneid``)."""
        seq, k = self.seq, i + 1
        while seq.text(k) in _ASM_QUALIFIERS:
            k += 1
        if seq.text(k) != "(" or seq.partner[k] < 0:
            return
        template = " ".join(seq.texts[j] for j in range(k + 1, min(seq.partner[k], k + LOOKAROUND))
                            if seq.kinds[j] == STRING)
        found = _PTX.search(re.sub(r"\\.", " ", template))
        if found:
            self.add(i, "inline-ptx", f"`{seq.texts[i]}` statement contains PTX (`{found.group().strip()}`)")

    def cuda_arch(self, i: int) -> None:
        """``__CUDA_ARCH__`` compared with a number, or used to tell device from host code."""
        seq = self.seq
        before, after = seq.text(i - 1), seq.text(i + 1)
        if before in COMPARE_OPS and seq.kind(i - 2) == NUMBER:
            self.arch_version(i, (i - 2, i + 1), int_value(seq.texts[i - 2]), before, 0)
        elif after in COMPARE_OPS and seq.kind(i + 2) == NUMBER:
            self.arch_version(i, (i, i + 3), 0, after, int_value(seq.texts[i + 2]))
        elif seq.directive in ("ifdef", "ifndef") and i == 0:
            self.add(i, "cuda-arch-device",
                     f"`#{seq.directive} __CUDA_ARCH__` cannot tell device from host code on AMD")
        elif before == "defined" or (before == "(" and seq.text(i - 2) == "defined"):
            self.add(i, "cuda-arch-device", "`defined(__CUDA_ARCH__)` is false in AMD device code")
        else:
            self.add(i, "cuda-arch-device", "`__CUDA_ARCH__` is undefined on AMD")

    def arch_version(self, i: int, span: Span, left: int | None, op: str, right: int | None) -> None:
        """Report ``__CUDA_ARCH__ >= 700`` with what it evaluates to where the macro is undefined."""
        shown = self.seq.render(span)
        if self.seq.directive is None:
            detail = f"`{shown}` does not compile on AMD, where `__CUDA_ARCH__` is undefined"
        elif left is None or right is None:
            detail = f"`{shown}` is evaluated with `__CUDA_ARCH__` as 0 on AMD"
        else:
            truth = "true" if COMPARE_OPS[op](left, right) else "false"
            detail = f"`{shown}` is {truth} on AMD (`#if` reads the undefined `__CUDA_ARCH__` as 0)"
        self.add(i, "cuda-arch-version", detail)

    def cuda_header_macro(self, i: int) -> None:
        """A conditional directive that tests a macro only CUDA's headers define."""
        name, directive = self.seq.texts[i], self.seq.directive
        if directive not in CONDITIONALS or name in self.defined:
            return  # a file that defines it (a stand-in for cuda.h) tests its own macro
        shown = f"`#{directive} {name}`" if directive in ("ifdef", "ifndef") else f"`#{directive}` on `{name}`"
        instead = CUDA_HEADER_MACROS[name]
        what = f"; ROCm's header defines `{instead}`" if instead else ""
        self.add(i, "cuda-header-macro", f"{shown} tests a macro no HIP header defines{what}")

    def token_paste(self, i: int) -> None:
        """``cuda ## fn`` in a ``#define``: the names the macro makes are CUDA's, and no text hipify reads."""
        seq = self.seq
        if seq.text(i - 1) == "##" or i == 0 or seq.texts[i] in _macro_parameters(seq):
            return  # the end of a pasted name, or a parameter that happens to be called cu
        pasted = seq.text(i + 2)
        self.add(i, "cuda-token-paste", f"`{seq.texts[i]}##{pasted}` in a macro makes CUDA API names",
                 once=f"paste {seq.texts[i]}")

    def wmma(self, i: int) -> None:
        """``wmma::`` names (``nvcuda::wmma``), once per file."""
        if self.seq.text(i + 1) == "::":
            self.add(i, "library-different-api", "`wmma::` is CUDA's warp-matrix API (`<mma.h>`)", once="wmma")


HANDLERS: dict[str, Callable[[Matcher, int], None]] = {
    "texture": Matcher.texture, "surface": Matcher.texture, "__CUDA_ARCH__": Matcher.cuda_arch,
    "cuda": Matcher.cuda_atomic, "wmma": Matcher.wmma, "while": Matcher.spin_wait, "for": Matcher.for_loop,
    "volatile": Matcher.volatile, "grid_group": Matcher.grid_group, "sync": Matcher.grid_sync,
    **dict.fromkeys(_ASM, Matcher.inline_asm),
    **dict.fromkeys(MASK_32BIT_CONSUMERS, Matcher.mask_consumer),
    **dict.fromkeys(CUDA_HEADER_MACROS, Matcher.cuda_header_macro),
}
_HANDLED = frozenset(HANDLERS)


@lru_cache(maxsize=1 << 16)
def interesting(text: str) -> bool:
    """Could a token with this text start a match? (Decided once per distinct text.)"""
    first = text[:1]
    if first.isdigit():
        return text.rstrip("uUlL").lower() in WARP_LITERALS or int_value(text) == 0xFFFFFFFF
    if text == "<<<":
        return True
    if not (first.isalpha() or first == "_"):
        return False
    return (text in _HANDLED or CUDA_PASTE_HEAD.fullmatch(text) is not None or text in API_NAMES or text in FLAG_NAMES or text in ASYNC_STREAM_ARG
            or text in WARP_INTRINSICS or _DEVICE_RUNTIME.fullmatch(text) is not None
            or SCOPED_ATOMIC.fullmatch(text) is not None or _FAMILY.fullmatch(text) is not None)


def _macro_parameters(seq: Seq) -> frozenset[str]:
    """The parameters of the function-like ``#define`` ``seq`` is (its tokens after the name)."""
    texts = seq.texts
    if texts[1:2] != ["("] or ")" not in texts:
        return frozenset()
    return frozenset(t for t in texts[2 : texts.index(")")] if t != ",")


def match(seq: Seq, defined: frozenset[str] = frozenset()) -> list[Hit]:
    """All hits of the source rules in ``seq``."""
    return Matcher(seq, defined).run()
