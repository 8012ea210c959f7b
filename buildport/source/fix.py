"""What migrate changes in a source after hipify: what hipify leaves that stops the port compiling.

Each fix is small, mechanical and listed in :data:`FIXES` (what MIGRATION.md
calls it); :func:`port_source` applies them all and counts each. Only code and
preprocessor lines change, never comments or strings.

* ``header_tests``: hipify renames ``#include <cuda_runtime.h>`` but leaves
  ``#ifdef __CUDA_RUNTIME_H__``, which no HIP header defines, so the code it
  guards (cuda-samples' ``findCudaDevice``) is compiled out. Where ROCm's header
  has a macro of its own (:data:`~buildport.rules.source_rules.CUDA_HEADER_MACROS`),
  the test becomes a test of that one; version macros (``CUDART_VERSION``) have
  no counterpart and are left to the ``cuda-header-macro`` finding. Only names in
  ``#if``/``#ifdef``/``#ifndef``/``#elif`` lines change, and not in a file that
  defines the macro itself.
* ``headers``: a header included by a name ROCm does not install
  (:data:`~buildport.rules.source_rules.HEADER_RENAMES`): a CUDA header hipify
  has no mapping for and whose declarations HIP's runtime header holds
  (``<builtin_types.h>``, which cuda-samples' driver-API programs include), and
  ``<hiprtc.h>``, which hipify writes for ``<nvrtc.h>`` and ROCm installs as
  ``<hip/hiprtc.h>``.
* ``runtime_include``: nvcc includes the CUDA runtime's header in every ``.cu``
  file by itself, and hipify adds ``#include "hip/hip_runtime.h"`` only to the
  files it changes; a kernel file that calls no API (``__global__``,
  ``threadIdx`` and nothing else) then fails under clang with ``unknown type
  name '__global__'`` unless clang's own wrapper brings the header in (Debian's
  ROCm 5.2 does not). A ``.cu`` file that includes no ``hip_runtime.h`` gets the
  line hipify writes, at its top.
* ``callback_macro``: ``CUDART_CB`` / ``CUDA_CB`` mark a stream callback's
  calling convention (empty except on Windows); hipify leaves them and HIP has
  none, so ``void CUDART_CB done(...)`` does not compile. They are dropped,
  except in a file that defines them itself.
* ``c_defaults``: in a C file, a HIP call that relies on an argument only C++
  has a default for. hipify maps ``cudaMallocHost(&p, n)`` to
  ``hipHostMalloc(&p, n)``, which C++ resolves through a template whose flags
  default to ``hipHostMallocDefault``; C has the three-parameter function only
  (GPUJPEG's C sources stopped there). The default is written in
  (:data:`~buildport.rules.source_rules.C_DEFAULT_ARGUMENTS`).
* ``warp_sync``: the warp ``*_sync`` shuffles and votes arrived in ROCm 6.2;
  where the installed ROCm is older, a shuffle becomes the form without a mask
  (``__shfl_down_sync(m, v, 1)`` → ``__shfl_down(v, 1)``: its mask only says
  which lanes take part), and so does a vote whose mask names the whole warp
  (``0xffffffff``, ``~0``, ``__activemask()``, a macro defined as one, or a
  variable declared as one and never assigned again). A vote's partial mask is
  left to the ``warp-sync-intrinsic`` finding; the 64-lane meaning of
  ``__ballot`` stays reported (``warp-mask-32bit``).
* ``launch_spacing``: nvcc reads a kernel launch written ``k << <grid, block >> >(...)``;
  clang reads ``<<<`` and ``>>>`` only as written together. The spaces inside
  each go.
* ``struct_typedef``: CUDA declares ``struct cudaGraphicsResource``; hipify writes
  ``struct hipGraphicsResource``, but HIP's name is a typedef of a struct of another
  tag (:data:`~buildport.rules.source_rules.TYPEDEF_NOT_TAG`), which C++ refuses after
  ``struct``: that tag is written instead (a header that includes no HIP header keeps
  its opaque pointer, in C too).
* ``fallbacks``: a function hipify maps to, or CUDA defines and hipify leaves, that the installed HIP may
  lack (:data:`~buildport.rules.source_rules.FALLBACKS`: ``__dp4a``, which HIP has never had, and
  ``hipsparseGetErrorString``, which hipSPARSE has from 3.0 on) gets a definition of the same meaning,
  after the last unconditional ``#include`` before the file's first use, under the condition that HIP
  lacks it and a guard of its own (so a file and its header may both carry it). A file that defines or
  guards the name itself is left.
* ``intrinsic_casts``: CUDA declares ``__ffs(int)`` and ``__ffsll(long long int)`` only; HIP adds an
  unsigned overload of each (:data:`~buildport.rules.source_rules.SINGLE_TYPE_INTRINSICS`), so a call
  with another integer type (``__ffsll(uint64_t)``) is ambiguous there. The argument is cast to CUDA's
  type, which is what the call converted it to with nvcc (a literal, or a cast already written, is left).
* ``device_pass_macros``: a macro a header defines as ``__device__`` under a test of ``__CUDA_ARCH__``
  and as nothing otherwise (InfiniTAM's ``_CPU_AND_GPU_CODE_``) marks functions for nvcc's device pass
  only, which works because nvcc's host pass never reads a kernel's body. clang reads kernels in its
  host pass too, and a host function called there does not match; HIP defines no ``__CUDA_ARCH__``
  either, so the functions were host-only in both passes. For HIP the macro becomes ``__host__
  __device__`` in both passes (``#if defined(__HIPCC__) || (...)``); a host compiler still gets nothing.
* ``cub_namespace``: hipify turns ``using namespace cub`` into ``using namespace hipcub`` without
  looking at where the name ends, so a namespace of the project's own whose name begins with ``cub``
  (GPUSPH's ``using namespace cubounds``) becomes one that does not exist (``hipcubounds``). hipCUB has no
  namespace but ``hipcub``: a ``using namespace hipcub…`` of a longer name gets its own name back.
* ``void_pointer``: CUDA's runtime header adds a template overload of ``cudaHostAlloc``,
  ``cudaHostGetDevicePointer`` and ``cudaMallocPitch`` for any ``T**``; HIP declares the three with a
  ``void**`` only (:data:`~buildport.rules.source_rules.VOID_POINTER_ARGUMENTS`), which C++ does not
  convert an ``int**`` to. In a C++ file, that argument is cast to ``void**`` (unless a cast is written).
* ``register``: C++17 removed the ``register`` storage class; nvcc's host
  compiler (g++) only warns, clang (hipcc, CMake's HIP compiler) refuses it. The
  specifier has had no effect since C++11 and is optional in C, so it is dropped.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from buildport.rules.source_rules import (
    C_DEFAULT_ARGUMENTS,
    CUB_MACRO_FALLBACKS,
    CUDA_HEADER_MACROS,
    FALLBACKS,
    FULL_LANE_MASK,
    HEADER_RENAMES,
    hipcub_header,
    HIP_DEFINED_DEVICE_FUNCTIONS,
    HIP_VECTOR_MEMBER_OPERATORS,
    HIP_VECTOR_TYPES,
    KERNEL_POINTER_ARGUMENTS,
    VOID_POINTER_ARGUMENTS,
    MASK_FREE_SHUFFLES,
    NVTX_DEFINITIONS,
    NVTX_HEADER,
    NVTX_KEPT,
    PROP_MEMBERS,
    SINGLE_TYPE_INTRINSICS,
    SYSTEM_HEADER_RENAMES,
    TYPEDEF_NOT_TAG,
    SYNCWARP,
    UNSYNCED_WARP_FUNCTIONS,
    WARP_BARRIER,
    WARP_SYNC_SINCE,
)
from buildport.source.lex import CONDITIONALS, HEADER, IDENT, NUMBER, PUNCT, Directive, Lexed, lex
from buildport.textio import spliced

#: Fix id → what it did, as MIGRATION.md says it (after the count).
FIXES: dict[str, str] = {
    "header_tests": "tests of CUDA header macros made tests of ROCm's (`#ifdef __CUDA_RUNTIME_H__`)",
    "headers": "includes of headers ROCm does not install made includes of those it does (`<builtin_types.h>`)",
    "runtime_include": "`#include \"hip/hip_runtime.h\"` added (nvcc includes the runtime in a .cu file itself)",
    "callback_macro": "`CUDART_CB` dropped (a callback's calling convention; HIP has none)",
    "cub_namespace": "`using namespace` of the project's own namespaces named `cub…` put back (hipify made "
                     "`using namespace cubounds` `using namespace hipcubounds`)",
    "void_pointer": "pointers given to `hipHostAlloc`, `hipHostGetDevicePointer` and `hipMallocPitch` cast to "
                    "`void**` (CUDA has a template overload for any pointer; HIP has not)",
    "register": "`register` specifiers dropped (C++17 removed them; clang refuses them)",
    "c_defaults": "arguments C++ defaults and C does not written in (`hipHostMalloc(&p, n, hipHostMallocDefault)`)",
    "warp_sync": "warp `*_sync` shuffles, and votes over the whole warp, made the forms this ROCm has "
                 "(`__shfl_down(v, 1)`; `__syncwarp()` a wavefront barrier between fences)",
    "struct_typedef": "the struct tag of HIP names that are typedefs (`struct _hipGraphicsResource`)",
    "launch_spacing": "kernel launches written `k << <g, b >> >(...)` closed up to `<<<` and `>>>` (clang needs them)",
    "hip_defines": "device functions of the project that HIP defines too (`atomicMin(float*, float)`) kept for CUDA "
                   "only",
    "vector_operators": "the project's own `operator+=` and friends of a HIP vector type (`float3 &a, const float3 &b`) "
                        "kept for CUDA only (HIP's vector types define them; both are ambiguous)",
    "cub_macros": "CUB's macros hipCUB lacks written with hipCUB's (`CubDebugExit(e)`)",
    "own_headers": "includes of the project's own headers named like CUDA's put back (hipify renamed `\"cuda.h\"`)",
    "kernel_pointer": "kernels given to `hipFuncSetCacheConfig` and friends cast to `const void*` (HIP has no "
                      "template overload)",
    "device_pass_macros": "macros that mark functions `__device__` in nvcc's device pass only made `__host__ "
                          "__device__` for HIP (clang checks kernels in its host pass too)",
    "intrinsic_casts": "arguments of `__ffs`/`__ffsll` cast to the one type CUDA declares them for (HIP overloads "
                       "them for signed and unsigned; another type is ambiguous)",
    "fallbacks": "functions the installed HIP may lack defined before their first use, under a test of that "
                 "(`__dp4a`; `hipsparseGetErrorString` before hipSPARSE 3.0)",
    "nvtx": "includes of NVTX's headers, which ROCm does not have, made definitions of the ranges, marks and names "
            "the file may use: calls that do nothing, or roctx's where `BUILDPORT_NVTX_ROCTX` is defined",
    "prop_members": "members of CUDA's device properties that `hipDeviceProp_t` lacks read from what the installed "
                    "HIP has (`prop.deviceOverlap`: `asyncEngineCount` from HIP 6.0, before it 1, as every AMD GPU "
                    "overlaps copies with kernels)",
}

#: Fixes made of more than one edit each (a launch: its opening and its closing).
_EDITS_PER_FIX = {"launch_spacing": 2, "kernel_pointer": 2, "void_pointer": 2, "hip_defines": 2, "vector_operators": 2,
                  "intrinsic_casts": 2, "device_pass_macros": 3}

_NAMED = tuple(name for name, instead in CUDA_HEADER_MACROS.items() if instead)

T = TypeVar("T")

#: An edit: where it starts in the text, where it ends, and what replaces that.
Edit = tuple[int, int, str]


def port_source(text: str, path: str = "", hip_version: tuple[int, int] | None = None,
                full_masks: frozenset[str] = frozenset()) -> tuple[str, dict[str, int]]:
    """``text`` (of the file ``path``, whose suffix some fixes look at) with every fix of :data:`FIXES`
    made, and how many of each (only those made). ``hip_version``: the installed HIP's (major, minor), for
    the fixes that depend on it; unknown, they are not made. ``full_masks``: macros other files of the
    project define as the whole warp's mask (:func:`full_mask_macros`)."""
    wanted = [(name, finder) for name, (finder, hint) in _FINDERS.items() if hint(text)]
    if hip_version is not None and hip_version < WARP_SYNC_SINCE and "_sync" in text:
        wanted.append(("warp_sync", lambda text, lexed: _warp_sync(text, lexed, full_masks)))
    if path.endswith(".cu"):
        wanted.append(("runtime_include", _runtime_include))
    if path.endswith(".c") and any(name in text for name in C_DEFAULT_ARGUMENTS):
        wanted.append(("c_defaults", _c_defaults))
    if not path.endswith(".c") and any(name in text for name in KERNEL_POINTER_ARGUMENTS):
        wanted.append(("kernel_pointer", _kernel_pointers))
    if not path.endswith(".c") and any(name in text for name in VOID_POINTER_ARGUMENTS):
        wanted.append(("void_pointer", _void_pointers))
    if hip_version is not None and "DeviceProp" in text and any(name in text for name in PROP_MEMBERS):
        version = hip_version
        wanted.append(("prop_members", lambda text, lexed: _prop_members(text, lexed, version)))
    if not wanted:
        return text, {}
    lexed = lex(text)
    edits: list[Edit] = []
    counts: dict[str, int] = {}
    for name, finder in wanted:
        found = finder(text, lexed)
        if found:
            counts[name] = len(found) // _EDITS_PER_FIX.get(name, 1)
            edits += found
    return spliced(text, sorted(edits)), counts


def _header_hint(text: str) -> bool:
    return any(name in text for name in _NAMED)


def _header_tests(text: str, lexed: Lexed) -> list[Edit]:
    defined = lexed.defined()
    edits: list[Edit] = []
    for directive in lexed.directives:
        if directive.name not in CONDITIONALS:
            continue
        tokens = directive.tokens
        for kind, word, start in zip(tokens.kinds, tokens.texts, tokens.starts):
            instead = CUDA_HEADER_MACROS.get(word) if kind == IDENT else None
            if instead and word not in defined:
                edits.append((start, start + len(word), instead))
    return edits


def _headers(text: str, lexed: Lexed) -> list[Edit]:
    """Each ``#include`` of an unmapped CUDA header, its name (delimiters kept) replaced."""
    edits: list[Edit] = []
    for directive in lexed.directives:
        tokens = directive.tokens
        if directive.name == "include" and tokens.kinds[:1] == [HEADER]:
            name = tokens.texts[0][1:-1]
            instead = HEADER_RENAMES.get(name) or hipcub_header(name)
            if instead is None and tokens.texts[0].startswith("<"):
                instead = SYSTEM_HEADER_RENAMES.get(name)
            if instead is not None:
                at = tokens.starts[0]
                edits.append((at + 1, at + len(tokens.texts[0]) - 1, instead))  # the delimiters stay
    return edits


def _runtime_include(text: str, lexed: Lexed) -> list[Edit]:
    """The include hipify writes, as the first line (after a byte-order mark), in the file's line endings."""
    if any(d.name == "include" and "hip_runtime.h" in "".join(d.tokens.texts) for d in lexed.directives):
        return []
    newline = "\r\n" if "\r\n" in text else "\n"
    at = 1 if text.startswith("\ufeff") else 0
    return [(at, at, f'#include "hip/hip_runtime.h"{newline}')]


def _c_defaults(text: str, lexed: Lexed) -> list[Edit]:
    """Each call of :data:`C_DEFAULT_ARGUMENTS` given only its required arguments: the defaults added before its
    closing parenthesis (a name not followed by a call, or given more, is left)."""
    starts = lexed.code.starts
    edits: list[Edit] = []
    for _, (required, defaults), arguments in _calls(lexed, C_DEFAULT_ARGUMENTS):
        if arguments and len(arguments) == required:
            close = arguments[-1][1]  # the token after the last argument: the closing parenthesis
            edits.append((starts[close], starts[close], ", " + ", ".join(defaults)))
    return edits


def _calls(lexed: Lexed, names: Mapping[str, T]) -> Iterator[tuple[int, T, list[tuple[int, int]]]]:
    """Each call of a name of ``names`` in the code: the name's token, its value in ``names``, and the token
    ranges of its arguments (a name not followed by ``(``, or a call that never closes, is none)."""
    kinds, texts = lexed.code.kinds, lexed.code.texts
    for i, (kind, word) in enumerate(zip(kinds, texts)):
        value = names.get(word) if kind == IDENT else None
        if value is None or i + 1 >= len(texts) or texts[i + 1] != "(":
            continue
        arguments = _call_arguments(kinds, texts, i + 1)
        if arguments is not None:
            yield i, value, arguments


def _kernel_pointers(text: str, lexed: Lexed) -> list[Edit]:
    """The kernel argument of each call of :data:`KERNEL_POINTER_ARGUMENTS`, cast to ``const void*``."""
    return _casts(text, lexed, KERNEL_POINTER_ARGUMENTS, "const void*")


def _void_pointers(text: str, lexed: Lexed) -> list[Edit]:
    """The pointer argument of each call of :data:`VOID_POINTER_ARGUMENTS`, cast to ``void**``."""
    return _casts(text, lexed, VOID_POINTER_ARGUMENTS, "void**")


def _casts(text: str, lexed: Lexed, arguments_at: Mapping[str, int], to: str) -> list[Edit]:
    """The argument (by index, ``arguments_at``) of each call of a function of ``arguments_at`` wrapped in
    ``reinterpret_cast<to>(...)``, unless a cast or a ``void`` pointer is already written there, it begins with
    a parenthesis, it chooses (``?``), or a directive stands among the call's tokens: left to a person."""
    code = lexed.code
    kinds, texts, starts = code.kinds, code.texts, code.starts
    edits: list[Edit] = []
    for i, at, arguments in _calls(lexed, arguments_at):
        if len(arguments) <= at:
            continue
        first = arguments[at][0]
        end = _template_argument_end(kinds, texts, first)
        if end > arguments[-1][1] or any(t in _CAST_WORDS or t == "?" for t in texts[first:end]) \
                or texts[first] == "(" or "#" in text[starts[i + 1] : starts[arguments[-1][1]]]:
            continue
        edits.append((starts[first], starts[first], f"reinterpret_cast<{to}>("))
        edits.append((starts[end - 1] + len(texts[end - 1]), starts[end - 1] + len(texts[end - 1]), ")"))
    return edits


def _template_argument_end(kinds: list[str], texts: list[str], first: int) -> int:
    """The token after the call argument that starts at token ``first``, reading ``<`` after a name as a template
    argument list (``kernel<true, 4>``: one argument)."""
    depth = angles = 0
    for j in range(first, len(texts)):
        word = texts[j]
        if kinds[j] == PUNCT and word in "([{":
            depth += 1
        elif kinds[j] == PUNCT and word in ")]}":
            if depth == 0:
                return j
            depth -= 1
        elif depth == 0 and word == "<" and j > first and kinds[j - 1] == IDENT:
            angles += 1
        elif depth == 0 and word in (">", ">>") and angles:
            angles = max(0, angles - len(word))
        elif word == "," and depth == 0 and angles == 0:
            return j
    return len(texts)


_CAST_WORDS = frozenset({"void", "reinterpret_cast", "static_cast", "const_cast"})


def _call_arguments(kinds: list[str], texts: list[str], open_at: int) -> list[tuple[int, int]] | None:
    """The token ranges of the arguments of the call whose ``(`` is token ``open_at``; None if it never closes."""
    depth, start, out = 0, open_at + 1, []
    for j in range(open_at, len(texts)):
        if kinds[j] == PUNCT and texts[j] in "([{":
            depth += 1
        elif kinds[j] == PUNCT and texts[j] in ")]}":
            depth -= 1
            if depth == 0:
                if j > start:
                    out.append((start, j))
                return out
        elif depth == 1 and texts[j] == ",":
            out.append((start, j))
            start = j + 1
    return None


def full_mask_macros(text: str) -> set[str]:
    """The macros ``text`` defines as the whole warp's mask (``#define FULLMASK 0xffffffff``)."""
    if _MASK_DEFINE.search(text) is None:
        return set()
    return _full_masks(lex(text))


#: Where such a definition may be (read exactly once lexed).
_MASK_DEFINE = re.compile(r"#\s*define\s+\w+\s+\(?\s*(?:0[xX][fF]{8}|~|-1|4294967295|\(\s*unsigned|__activemask)")


def _full_masks(lexed: Lexed) -> set[str]:
    return {d.tokens.texts[0] for d in lexed.directives
            if d.name == "define" and len(d.tokens.texts) >= 2
            and FULL_LANE_MASK.fullmatch("".join(d.tokens.texts[1:]))}  # fmt: skip


def _full_mask_constants(lexed: Lexed) -> set[str]:
    """Variables the file declares with the whole warp's mask (``unsigned full = 0xffffffff;``) and assigns
    nowhere else."""
    texts, kinds = lexed.code.texts, lexed.code.kinds
    declared: set[str] = set()
    assigned: dict[str, int] = {}
    declarations: dict[str, int] = {}  # a parameter or another variable of the name elsewhere: not this one
    for i in range(1, len(texts) - 1):
        if kinds[i] != IDENT:
            continue
        if texts[i - 1] in _MASK_TYPES:
            declarations[texts[i]] = declarations.get(texts[i], 0) + 1
        if texts[i + 1] not in _ASSIGNMENTS and texts[i + 1] not in ("++", "--") and texts[i - 1] not in ("++", "--"):
            continue
        assigned[texts[i]] = assigned.get(texts[i], 0) + 1
        if texts[i + 1] == "=" and texts[i - 1] in _MASK_TYPES:
            end = i + 2
            while end < len(texts) and texts[end] != ";" and end - i < 12:
                end += 1
            if FULL_LANE_MASK.fullmatch("".join(texts[i + 2:end])):
                declared.add(texts[i])
    return {name for name in declared if assigned[name] == 1 and declarations.get(name) == 1}


_ASSIGNMENTS = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="))
_MASK_TYPES = frozenset(("unsigned", "int", "long", "uint32_t", "uint64_t", "uint", "auto"))


def _warp_sync(text: str, lexed: Lexed, elsewhere: frozenset[str] = frozenset()) -> list[Edit]:
    """Each warp ``*_sync`` call whose mask names the whole warp: its name without ``_sync``, its mask and the
    comma after it dropped. A mask macro counts where this file or another of the project (``elsewhere``)
    defines it so, unless this file defines it otherwise."""
    defined_here = lexed.defined()
    full_macros = _full_masks(lexed) | (elsewhere - defined_here) | _full_mask_constants(lexed)
    texts, starts = lexed.code.texts, lexed.code.starts
    edits: list[Edit] = []
    for i, unsynced, args in _calls(lexed, UNSYNCED_WARP_FUNCTIONS):
        if len(args) < 2:
            continue
        first, end = args[0]
        mask = "".join(texts[first:end])
        if not (FULL_LANE_MASK.fullmatch(mask) or mask in full_macros or texts[i] in MASK_FREE_SHUFFLES):
            continue  # a vote's partial mask means what it says: left to the finding
        # the name, "(", the mask, its comma and the blanks after it: one edit a call
        edits.append((starts[i], starts[args[1][0]], unsynced + "("))
    for i, barrier, args in _calls(lexed, {SYNCWARP: WARP_BARRIER}):
        if args and not (FULL_LANE_MASK.fullmatch(mask := "".join(texts[args[0][0]:args[0][1]]))
                         or mask in full_macros):
            continue
        close = args[-1][1] if args else i + 2  # the ")" of __syncwarp() or __syncwarp(mask)
        edits.append((starts[i], starts[close] + 1, barrier))
    return edits


def _device_pass_macros(text: str, lexed: Lexed) -> list[Edit]:
    """For each ``#if``/``#ifdef`` testing ``__CUDA_ARCH__`` whose branch defines a macro as ``__device__`` and
    whose ``#else`` defines it as nothing: the test made true under HIP, the body ``__host__ __device__``."""
    directives = lexed.directives
    edits: list[Edit] = []
    for i, opening in enumerate(directives[:-1]):
        if opening.name not in ("if", "ifdef") or "__CUDA_ARCH__" not in opening.tokens.texts:
            continue
        define = directives[i + 1]
        if define.name != "define" or define.tokens.texts[1:] != ["__device__"]:
            continue
        name = define.tokens.texts[0]
        alternative = _alternative_define(directives, i, name)
        if alternative is None or alternative.tokens.texts != [name] or _code_between(lexed, define, i + 2):
            continue  # the branch holds more than that one definition, or the other defines it as something
        tokens = opening.tokens
        first, last = tokens.starts[0], tokens.starts[-1] + len(tokens.texts[-1])
        if opening.name == "ifdef":  # (only the keyword and the parentheses: other fixes may edit the name)
            keyword = text.index("ifdef", opening.start)
            edits.append((keyword, first, "if defined(__HIPCC__) || defined("))
            edits.append((last, last, ")"))
        else:
            edits.append((first, first, "defined(__HIPCC__) || ("))
            edits.append((last, last, ")"))
        at = define.tokens.starts[1]
        edits.append((at, at + len("__device__"), "__host__ __device__"))
    return edits


def _code_between(lexed: Lexed, define: Directive, after: int) -> bool:
    """Whether code, or another directive than the conditional's ``#else``, follows ``define`` in its branch."""
    directives = lexed.directives
    if after >= len(directives) or directives[after].name != "else":
        return True
    starts = lexed.code.starts
    at = bisect.bisect_right(starts, define.start)
    return at < len(starts) and starts[at] < directives[after].start


def _alternative_define(directives: list[Directive], opening: int, name: str) -> Directive | None:
    """The ``#define name`` of the ``#else`` branch of the conditional opened at ``opening`` (None without
    one, or with other directives in the way)."""
    depth = 0
    for j in range(opening + 1, len(directives)):
        directive = directives[j]
        if directive.name in ("if", "ifdef", "ifndef"):
            depth += 1
        elif directive.name == "endif":
            if depth == 0:
                return None
            depth -= 1
        elif directive.name in ("else", "elif") and depth == 0:
            if directive.name == "elif" or j + 1 >= len(directives):
                return None
            after = directives[j + 1]
            return after if after.name == "define" and after.tokens.texts[:1] == [name] else None
    return None


def _intrinsic_casts(text: str, lexed: Lexed) -> list[Edit]:
    """The argument of each one-argument call of :data:`SINGLE_TYPE_INTRINSICS` cast to CUDA's type; a number,
    or an argument that is a cast, is left."""
    kinds, texts, starts = lexed.code.kinds, lexed.code.texts, lexed.code.starts
    edits: list[Edit] = []
    for i, cuda_type, arguments in _calls(lexed, SINGLE_TYPE_INTRINSICS):
        if len(arguments) != 1 or texts[i] in lexed.defined():
            continue
        first, end = arguments[0]
        if end - first == 1 and kinds[first] == NUMBER or texts[first] == "(" and _is_cast(texts, first, end, cuda_type):
            continue
        edits.append((starts[first], starts[first], f"({cuda_type})("))
        edits.append((starts[end - 1] + len(texts[end - 1]),) * 2 + (")",))
    return edits


def _is_cast(texts: list[str], first: int, end: int, cuda_type: str) -> bool:
    """Whether the tokens from ``first`` (a ``(``) begin with a C cast to ``cuda_type`` (``int``, ``long long
    int``: with or without its ``int``, ``signed`` or ``unsigned``)."""
    try:
        close = texts.index(")", first, end)
    except ValueError:
        return False
    words = [t for t in texts[first + 1:close] if t not in ("signed", "unsigned", "const")]
    want = cuda_type.split()
    return close + 1 < end and bool(words) and (words == want or words + ["int"] == want)


def _fallbacks(text: str, lexed: Lexed) -> list[Edit]:
    """For each name of :data:`FALLBACKS` the file uses and neither defines nor guards: its definition, under its
    condition, after the last ``#include`` outside any conditional that comes before the first use (or first)."""
    texts = lexed.code.texts
    used: dict[str, int] = {}
    for tokens in (lexed.code, *(d.tokens for d in lexed.directives)):
        for kind, word, start in zip(tokens.kinds, tokens.texts, tokens.starts):
            if kind == IDENT and word in FALLBACKS and start < used.get(word, len(text)):
                used[word] = start
    defined = lexed.defined()
    for i, _, arguments in _calls(lexed, FALLBACKS):
        close = arguments[-1][1] if arguments else i + 2
        if close + 1 < len(texts) and texts[close + 1] == "{":
            defined |= {texts[i]}  # the file's own definition
    newline = "\r\n" if "\r\n" in text else "\n"
    edits: list[Edit] = []
    for name, first_use in sorted(used.items(), key=lambda item: item[1]):
        guard = _fallback_guard(name)
        if name in defined or guard in defined:
            continue
        fallback = FALLBACKS[name]
        lines = [f"#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)) && !defined({guard})", f"#define {guard}",
                 f"#include <{fallback.header}>"]
        body = fallback.definition.splitlines()
        lines += body if fallback.lacking == "1" else [f"#if {fallback.lacking}", *body, "#endif"]
        lines.append("#endif")
        at = _after_includes(text, lexed, first_use)
        lead = newline if at == len(text) and not text.endswith(("\n", "\r")) else ""
        edits.append((at, at, lead + "".join(line + newline for line in lines)))
    return edits


def _fallback_guard(name: str) -> str:
    return "BUILDPORT_FALLBACK_" + name.strip("_").upper()


def _after_includes(text: str, lexed: Lexed, before: int) -> int:
    """Where the line after the last ``#include`` before ``before`` begins that every preprocessor branch
    reaching ``before`` also reaches (one in a header's include guard does; one in an ``#if`` closed before, or
    in another branch, does not) and that stands outside braces (not in an ``extern "C"`` block or a namespace);
    past a comment that goes on from its line. The text's start, after a byte-order mark, when there is none."""
    at = 1 if text.startswith("\ufeff") else 0
    branches: list[int] = []  # the open conditionals: an id for the branch of each
    found: list[tuple[int, tuple[int, ...]]] = []
    braces = _brace_depths(lexed)
    for count, directive in enumerate(lexed.directives):
        if directive.start >= before:
            break
        if directive.name in ("if", "ifdef", "ifndef"):
            branches.append(count)
        elif directive.name in ("elif", "else", "elifdef", "elifndef") and branches:
            branches[-1] = count
        elif directive.name == "endif" and branches:
            branches.pop()
        elif directive.name == "include" and braces(directive.start) == 0:
            found.append((_line_after(text, lexed, directive), tuple(branches)))
    for after, within in reversed(found):
        if tuple(branches[:len(within)]) == within:
            return after
    return at


def _brace_depths(lexed: Lexed) -> Callable[[int], int]:
    """The depth of braces in the code at an offset."""
    starts, depths, depth = [], [], 0
    for text, start in zip(lexed.code.texts, lexed.code.starts):
        if text in ("{", "}"):
            depth += 1 if text == "{" else -1
            starts.append(start)
            depths.append(depth)
    return lambda at: depths[i - 1] if (i := bisect.bisect_left(starts, at)) else 0


def _line_after(text: str, lexed: Lexed, directive: Directive) -> int:
    """Where the line after ``directive`` begins, past a block comment that starts on its line and goes on."""
    end = text.find("\n", directive.start)
    comments = lexed.comments
    for body, start in zip(comments.texts, comments.starts):
        if directive.start < start and (end < 0 or start < end) and start + len(body) > end >= 0:
            end = text.find("\n", start + len(body))
    return len(text) if end < 0 else end + 1


def _cub_macros(text: str, lexed: Lexed) -> list[Edit]:
    """Each call of a macro of :data:`CUB_MACRO_FALLBACKS` with one argument, written as hipCUB's expression
    (unless the file defines the macro itself)."""
    defined = lexed.defined()
    starts, texts = lexed.code.starts, lexed.code.texts
    edits: list[Edit] = []
    for i, fallback, args in _calls(lexed, CUB_MACRO_FALLBACKS):
        if len(args) != 1 or texts[i] in defined:
            continue
        first, end = args[0]
        argument = text[starts[first] : starts[end - 1] + len(texts[end - 1])]
        edits.append((starts[i], starts[end] + 1, fallback.format(argument)))
    return edits


def _hip_defines(text: str, lexed: Lexed) -> list[Edit]:
    """Each ``__device__`` definition of a function :data:`HIP_DEFINED_DEVICE_FUNCTIONS` names, for the
    parameter types HIP defines it for, put between ``#ifndef __HIP_PLATFORM_AMD__`` and ``#endif``."""
    kinds, texts = lexed.code.kinds, lexed.code.texts
    edits: list[Edit] = []
    for i, kinds_of, arguments in _calls(lexed, HIP_DEFINED_DEVICE_FUNCTIONS):
        close = arguments[-1][1] if arguments else i + 2
        if close + 1 >= len(texts) or texts[close + 1] != "{":
            continue  # a call or a declaration, not a definition
        types = tuple("".join(texts[a:b - 1]) for a, b in arguments if b - a >= 2 and kinds[b - 1] == IDENT)
        if len(types) != len(arguments) or types not in kinds_of:
            continue
        first = _declaration_start(text, lexed, i)
        if "__device__" not in texts[first:i]:
            continue
        end = _matching_brace(texts, close + 1)
        if end is not None:
            edits += _cuda_only(text, lexed, first, end, "HIP defines it")
    return edits


def _vector_operators(text: str, lexed: Lexed) -> list[Edit]:
    """Each definition or declaration of a free ``operator`` of :data:`HIP_VECTOR_MEMBER_OPERATORS` whose two
    parameters are one HIP vector type (the first a non-const reference), put between ``#ifndef
    __HIP_PLATFORM_AMD__`` and ``#endif``: HIP's vector type has the member, and both together are ambiguous."""
    kinds, texts = lexed.code.kinds, lexed.code.texts
    edits: list[Edit] = []
    for i, word in enumerate(texts):
        if word != "operator" or kinds[i] != IDENT or i + 2 >= len(texts) or texts[i + 1] not in HIP_VECTOR_MEMBER_OPERATORS \
                or texts[i + 2] != "(":
            continue
        arguments = _call_arguments(kinds, texts, i + 2)
        if arguments is None or len(arguments) != 2:
            continue
        target, operand = (_parameter(texts[a:b]) for a, b in arguments)
        if target is None or operand is None or target[0] != operand[0] or target[0] not in HIP_VECTOR_TYPES \
                or target[1:] != (False, True):
            continue  # not the one vector type twice, or the target not a reference it can assign through
        close = arguments[-1][1]
        if close + 1 >= len(texts) or texts[close + 1] not in ("{", ";"):
            continue
        first = _declaration_start(text, lexed, i)
        if "template" in texts[first:i] or "::" in texts[first:i] or "friend" in texts[first:i]:
            continue  # a template (HIP's member outranks it), a member, or a friend: no conflict of this kind
        end = close + 1 if texts[close + 1] == ";" else _matching_brace(texts, close + 1)
        if end is not None:
            edits += _cuda_only(text, lexed, first, end, "HIP's vector types define it")
    return edits


def _parameter(tokens: list[str]) -> tuple[str, bool, bool] | None:
    """A parameter's type name, whether it is const, and whether it is a reference: ``const float3 &b`` is
    ``("float3", True, True)``; None for anything else than a name with those words (a pointer, a template)."""
    words = [t for t in tokens if t not in ("const", "&", "__restrict__", "__restrict")]
    if not words or len(words) > 2 or not all(w.isidentifier() for w in words):
        return None
    return words[0], "const" in tokens, "&" in tokens


def _declaration_start(text: str, lexed: Lexed, token: int) -> int:
    """The first token of the declaration whose name is token ``token``: after the last ``;``, ``{``, ``}`` or
    preprocessor line before it."""
    texts = lexed.code.texts
    first = token
    while first > 0 and texts[first - 1] not in (";", "}", "{") and not _directive_between(text, lexed, first):
        first -= 1
    return first


def _cuda_only(text: str, lexed: Lexed, first: int, last: int, why: str) -> list[Edit]:
    """Tokens ``first`` to ``last`` (whole lines) put between ``#ifndef __HIP_PLATFORM_AMD__`` and ``#endif``:
    the two edits, or none where they are so already or share a line with other code."""
    starts, texts = lexed.code.starts, lexed.code.texts
    line_start = text.rfind("\n", 0, starts[first]) + 1
    if text[line_start : starts[first]].strip():
        return []  # other code before it on its line
    previous_line = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : line_start]
    if line_start and previous_line.startswith(_HIP_GUARD):
        return []  # kept for CUDA only already
    after = starts[last] + len(texts[last])
    line_end = text.find("\n", after)
    rest = text[after : len(text) if line_end < 0 else line_end]
    closing = "\n#endif" if not rest.strip() or rest.lstrip().startswith("//") else "\n#endif\n"
    return [(line_start, line_start, f"{_HIP_GUARD}  // {why}\n"), (after, after, closing)]


_HIP_GUARD = "#ifndef __HIP_PLATFORM_AMD__"
_COMPOUND_OPERATOR = re.compile(r"\boperator\s*[-+*/]=")


def _directive_between(text: str, lexed: Lexed, token: int) -> bool:
    """Whether a preprocessor line stands between token ``token - 1`` and token ``token``."""
    starts, texts = lexed.code.starts, lexed.code.texts
    gap = text[starts[token - 1] + len(texts[token - 1]) : starts[token]]
    return "#" in gap


def _nvtx(text: str, lexed: Lexed) -> list[Edit]:
    """The first ``#include`` of an NVTX header made :data:`NVTX_DEFINITIONS` (in the file's line endings), the
    others dropped; nothing where the file uses NVTX beyond :data:`NVTX_KEPT` (event attributes, domains)."""
    used = {t for t in lexed.code.texts if t.startswith(("nvtx", "NVTX"))}
    if used - NVTX_KEPT:
        return []
    newline = "\r\n" if "\r\n" in text else "\n"
    edits: list[Edit] = []
    for directive in lexed.directives:
        tokens = directive.tokens
        if directive.name == "include" and tokens.kinds[:1] == [HEADER] and NVTX_HEADER.fullmatch(tokens.texts[0][1:-1]):
            end = tokens.starts[0] + len(tokens.texts[0])
            edits.append((directive.start, end, "" if edits else NVTX_DEFINITIONS.replace("\n", newline)))
    return edits


def _prop_members(text: str, lexed: Lexed, hip_version: tuple[int, int]) -> list[Edit]:
    """Each ``X.member`` or ``X->member`` of :data:`PROP_MEMBERS`: the member HIP has from its version on,
    else the value every AMD GPU has, with ``X`` still evaluated (``((void)(X), 1)``). Only in a file that
    names a device-properties type (a project's own struct with such a member is left alone elsewhere)."""
    kinds, texts, starts = lexed.code.kinds, lexed.code.texts, lexed.code.starts
    edits: list[Edit] = []
    for i, name in enumerate(texts):
        row = PROP_MEMBERS.get(name)
        if row is None or kinds[i] != IDENT or i < 2 or texts[i - 1] not in (".", "->"):
            continue
        end = starts[i] + len(name)
        if hip_version >= row.since:
            edits.append((starts[i], end, row.member))
            continue
        first = _postfix_start(kinds, texts, i - 2)
        if first is None:
            continue
        whole = text[starts[first]:starts[i - 1]]
        edits.append((starts[first], end, f"((void)({whole}), {row.value})"))
    return edits


def _postfix_start(kinds: list[str], texts: list[str], last: int) -> int | None:
    """The first token of the postfix expression whose last token is ``last`` (``prop``, ``props[i]``,
    ``(*p)``, ``get().p``), or None where it is not plain."""
    k = last
    while k >= 0:
        if texts[k] in (")", "]"):
            opening = _matching_open(texts, k)
            if opening is None:
                return None
            k = opening - 1
            if texts[opening] == "(" and (k < 0 or kinds[k] != IDENT and texts[k] not in (")", "]")):
                return opening  # a parenthesized expression
            continue  # a subscript or a call: what it applies to comes before
        if kinds[k] == IDENT:
            if k >= 2 and texts[k - 1] in (".", "->", "::"):
                k -= 2
                continue
            return k
        return None
    return None


def _matching_open(texts: list[str], close_at: int) -> int | None:
    """The ``(`` or ``[`` that the ``)`` or ``]`` at ``close_at`` closes."""
    pairs = {")": "(", "]": "["}
    closing = texts[close_at]
    depth = 0
    for j in range(close_at, -1, -1):
        if texts[j] == closing:
            depth += 1
        elif texts[j] == pairs[closing]:
            depth -= 1
            if depth == 0:
                return j
    return None


def _matching_brace(texts: list[str], open_at: int) -> int | None:
    depth = 0
    for j in range(open_at, len(texts)):
        if texts[j] == "{":
            depth += 1
        elif texts[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _launch_spacing(text: str, lexed: Lexed) -> list[Edit]:
    """``name << <`` ... ``>> >(``: each pair closed up where a launch's configuration stands between them."""
    code = lexed.code
    kinds, texts, starts = code.kinds, code.texts, code.starts
    edits: list[Edit] = []
    i = 1
    while i + 1 < len(texts):
        if texts[i] == "<<" and texts[i + 1] == "<" and (kinds[i - 1] == IDENT or texts[i - 1] in (">", ")")):
            close = next((j for j in range(i + 2, min(len(texts) - 2, i + 200))
                          if texts[j] == ">>" and texts[j + 1] == ">" and texts[j + 2] == "("), None)  # fmt: skip
            if close is not None:
                edits.append((starts[i], starts[i + 1] + 1, "<<<"))
                edits.append((starts[close], starts[close + 1] + 1, ">>>"))
                i = close + 2
                continue
        i += 1
    return edits


def _struct_typedefs(text: str, lexed: Lexed) -> list[Edit]:
    """Each name of :data:`TYPEDEF_NOT_TAG` after ``struct``: the tag HIP's typedef names."""
    code = lexed.code
    kinds, texts, starts = code.kinds, code.texts, code.starts
    return [(starts[i + 1], starts[i + 1] + len(texts[i + 1]), TYPEDEF_NOT_TAG[texts[i + 1]])
            for i in range(len(texts) - 1)
            if texts[i] == "struct" and kinds[i + 1] == IDENT and texts[i + 1] in TYPEDEF_NOT_TAG]


def _registers(text: str, lexed: Lexed) -> list[Edit]:
    """Each ``register`` keyword of the code, with the blanks after it."""
    return _dropped(text, lexed, frozenset({"register"}))


def _cub_namespaces(text: str, lexed: Lexed) -> list[Edit]:
    """Each ``using namespace hipcubNAME`` (code, not a comment or string) given back its ``cubNAME``."""
    kinds, texts, starts = lexed.code.kinds, lexed.code.texts, lexed.code.starts
    edits: list[Edit] = []
    for i in range(2, len(texts)):
        word = texts[i]
        if (kinds[i] == IDENT and len(word) > len("hipcub") and word.startswith("hipcub")
                and texts[i - 1] == "namespace" and texts[i - 2] == "using"):
            edits.append((starts[i], starts[i] + len("hip"), ""))
    return edits


def _callback_macros(text: str, lexed: Lexed) -> list[Edit]:
    """Each ``CUDART_CB`` / ``CUDA_CB`` of the code, with the blanks after it, unless the file defines it."""
    return _dropped(text, lexed, _CALLBACK_MACROS - lexed.defined())


_CALLBACK_MACROS = frozenset({"CUDART_CB", "CUDA_CB"})


def _dropped(text: str, lexed: Lexed, words: frozenset[str]) -> list[Edit]:
    """Each identifier of the code among ``words``, removed with the blanks after it."""
    code = lexed.code
    edits: list[Edit] = []
    for kind, word, start in zip(code.kinds, code.texts, code.starts):
        if kind == IDENT and word in words:
            end = start + len(word)
            while end < len(text) and text[end] in " \t":
                end += 1
            edits.append((start, end, ""))
    return edits


_FINDERS: dict[str, tuple[Callable[[str, Lexed], list[Edit]], Callable[[str], bool]]] = {
    "nvtx": (lambda text, lexed: _nvtx(text, lexed), lambda text: "nvToolsExt" in text),
    "header_tests": (_header_tests, _header_hint),
    "headers": (_headers, lambda text: "cub/" in text or any(name in text for name in HEADER_RENAMES)
                or any(name in text for name in SYSTEM_HEADER_RENAMES)),
    "callback_macro": (_callback_macros, lambda text: "_CB" in text),
    "register": (_registers, lambda text: "register" in text),
    "cub_namespace": (_cub_namespaces, lambda text: "namespace hipcub" in text or "namespace\thipcub" in text),
    "struct_typedef": (_struct_typedefs, lambda text: any(name in text for name in TYPEDEF_NOT_TAG)),
    "launch_spacing": (_launch_spacing, lambda text: "<< <" in text or "<<\t<" in text),
    "hip_defines": (_hip_defines, lambda text: "__device__" in text and any(n in text for n in HIP_DEFINED_DEVICE_FUNCTIONS)),
    "cub_macros": (_cub_macros, lambda text: any(name in text for name in CUB_MACRO_FALLBACKS)),
    "vector_operators": (_vector_operators, lambda text: _COMPOUND_OPERATOR.search(text) is not None),
    "fallbacks": (_fallbacks, lambda text: any(name in text for name in FALLBACKS)),
    "intrinsic_casts": (_intrinsic_casts, lambda text: "__ffs" in text),
    "device_pass_macros": (_device_pass_macros, lambda text: "__CUDA_ARCH__" in text and "__device__" in text),
}
assert set(_FINDERS) | {"runtime_include", "c_defaults", "warp_sync", "kernel_pointer", "void_pointer", "own_headers",
                        "prop_members"} == set(FIXES)
