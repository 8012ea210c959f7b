"""The compatibility folder of a dual build: CUDA's header names for the HIP build, and a header that maps
the CUDA names the project's sources use to HIP's.

The HIP build reads the folder first; the CUDA build never sees it. Each header the sources include by a
name of CUDA's that hipify maps (``cuda_runtime.h``, ``cublas_v2.h``, ``cub/cub.cuh``) gets a file of that
name that includes HIP's counterpart and the mapping header; the mapping header ``#define``s each CUDA name
the sources use that the conversion engine's tables map, to the name hipify would have written. A name the
tables list as having no HIP counterpart is returned apart, for the report.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet as Set, Iterable

from buildport.rules.dual import (
    COMPAT_FOLDER, COMPAT_MARK, HEADER_GUARDS, MAPPING_HEADER, RUNTIME_GUARDS, RUNTIME_MAPPING, WARP_SYNC_HIP_VERSION,
)
from buildport.rules.source_rules import (
    C_DEFAULT_ARGUMENTS, CUB_MACRO_FALLBACKS, FALLBACKS, HEADER_RENAMES, KERNEL_POINTER_ARGUMENTS, NVTX_DEFINITIONS,
    NVTX_HEADER, NVTX_KEPT, SINGLE_TYPE_INTRINSICS, SYNCWARP, TYPEDEF_NOT_TAG, UNSYNCED_WARP_FUNCTIONS,
    VOID_POINTER_ARGUMENTS, WARP_BARRIER, hipcub_header,
)
from buildport.source.hipify_tables import HipifyTables
from buildport.source.lex import HEADER, IDENT, INCLUDE_NAMES, lex

#: HIP headers that older ROCm installs at another path: each spelling tried in turn (``__has_include``).
_SPELLINGS = {
    "hipblas.h": ("hipblas/hipblas.h", "hipblas.h"),
    "hipsparse.h": ("hipsparse/hipsparse.h", "hipsparse.h"),
    "hipfft/hipfft.h": ("hipfft/hipfft.h", "hipfft.h"),
    "hipfft/hipfftXt.h": ("hipfft/hipfftXt.h", "hipfftXt.h"),
    "hiprand/hiprand.h": ("hiprand/hiprand.h", "hiprand.h"),
    "hiprand/hiprand_kernel.h": ("hiprand/hiprand_kernel.h", "hiprand_kernel.h"),
}


@dataclass(slots=True)
class Usage:
    """What the project's sources name of CUDA: identifiers and included header names."""

    names: set[str] = field(default_factory=set)
    headers: set[str] = field(default_factory=set)

    def add(self, text: str) -> None:
        lexed = lex(text)
        self.names.update(t for k, t in zip(lexed.code.kinds, lexed.code.texts) if k == IDENT)
        for directive in lexed.directives:
            tokens = directive.tokens
            self.names.update(t for k, t in zip(tokens.kinds, tokens.texts) if k == IDENT)
            if directive.name in INCLUDE_NAMES and tokens.kinds[:1] == [HEADER]:
                self.headers.add(tokens.texts[0][1:-1])
            elif directive.name in INCLUDE_NAMES and tokens.texts[:1] and tokens.texts[0].startswith('"'):
                self.headers.add(tokens.texts[0][1:-1])


@dataclass(slots=True)
class Compat:
    """The folder's files (relative path → text) and the CUDA names the tables say HIP lacks."""

    files: dict[str, str]
    mapped: list[str]
    unsupported: list[str]


def compat_files(usage: Usage, tables: HipifyTables, own_headers: Iterable[str] = ()) -> Compat:
    """The compatibility folder for ``usage``. ``own_headers``: relative paths of the project's own files;
    a CUDA header name one of them ends with is the project's, and gets no file (it would hide it)."""
    owned = tuple(own_headers)
    mapped = sorted(n for n in usage.names if n in tables.identifiers)
    unsupported = sorted(n for n in usage.names if n in tables.unsupported)
    forwarded: dict[str, str] = {}
    nvtx = sorted(n for n in usage.names if n.startswith("nvtx"))
    for header in sorted(usage.headers):
        if NVTX_HEADER.fullmatch(header) and set(nvtx) <= NVTX_KEPT and not _owned(header, owned):
            forwarded[header] = ""  # NVTX's ranges and marks, which ROCm does not have: no-ops (or roctx's)
            continue
        hip = tables.headers.get(header)
        if hip is None:
            hip = HEADER_RENAMES.get(header) or hipcub_header(header)
        if hip is None or _owned(header, owned):
            continue
        forwarded[header] = hip
    used = usage.names
    hip_names = {tables.identifiers[n] for n in mapped}
    files = {MAPPING_HEADER: _mapping(mapped, tables, used), RUNTIME_MAPPING: _runtime(mapped, tables, used)}
    for header, hip in forwarded.items():
        files[header] = _forwarding(header, hip, used, hip_names)
    warp = sorted(n for n in used if n in UNSYNCED_WARP_FUNCTIONS or n == SYNCWARP)
    unsupported = [n for n in unsupported if n not in warp and n not in FALLBACKS]
    return Compat(files, mapped, unsupported)


def _owned(header: str, owned: tuple[str, ...]) -> bool:
    return any(p == header or p.endswith("/" + header) for p in owned)


def _mapping(names: list[str], tables: HipifyTables, used: Set[str]) -> str:
    """The names: macros alone, which include nothing, so that the HIP build can include them first in every
    C, C++ and HIP source (a project header that declares with CUDA's names reads HIP's from its first line)."""
    lines = [
        f"{COMPAT_MARK}: the CUDA names this project's sources use, as hipify spells them in HIP.",
        "// Read by the HIP build only (GPU_RUNTIME=HIP), which includes it first in every source; the CUDA build",
        "// never sees this folder. Written again by each migrate --keep-cuda: edit the sources, not this file.",
        "#pragma once",
    ]
    width = max((len(n) for n in names), default=0)
    plain = [n for n in names if tables.identifiers[n] not in C_DEFAULT_ARGUMENTS]
    lines += ["", *(f"#define {name:<{width}} {_spelled(tables.identifiers[name])}" for name in plain)]
    lines += _c_defaults([n for n in names if n not in plain], tables)
    if "CUDART_CB" in used:
        lines.append("#define CUDART_CB")
    if "register" in used:  # C++17 removed the specifier; nvcc, and C, accept it
        lines += ["#ifdef __cplusplus", '#pragma GCC diagnostic ignored "-Wregister"', "#endif"]
    return "\n".join(lines) + "\n"


def _runtime(names: list[str], tables: HipifyTables, used: Set[str]) -> str:
    """What nvcc's cuda_runtime.h is to a CUDA source: HIP's runtime, the names, the runtime's include guards,
    and what HIP declares otherwise or lacks of what the sources call (after HIP's own declarations)."""
    lines = [
        f"{COMPAT_MARK}: HIP's runtime and the CUDA names, included in every HIP source as nvcc includes",
        "// cuda_runtime.h in every CUDA source.",
        "#pragma once",
        "#include <hip/hip_runtime.h>",
        f'#include "{MAPPING_HEADER}"',
        "",
    ]
    lines += [f"#define {guard} 1" for guard in RUNTIME_GUARDS]
    lines += _pointer_wrappers(names, tables)
    lines += _device_functions(used)
    return "\n".join(lines) + "\n"


def _spelled(hip: str) -> str:
    """The HIP name a CUDA name becomes in code: a typedef's struct tag where CUDA's is a struct tag too
    (``struct cudaGraphicsResource``)."""
    return TYPEDEF_NOT_TAG.get(hip, hip)


def _c_defaults(names: list[str], tables: HipifyTables) -> list[str]:
    """CUDA functions whose HIP function C calls with more arguments (C++ has defaults): in C, a macro that
    writes the defaults in."""
    lines = []
    for name in names:
        hip = tables.identifiers[name]
        given, defaults = C_DEFAULT_ARGUMENTS[hip]
        params = ", ".join(f"a{i}" for i in range(given))
        lines += ["#ifdef __cplusplus", f"#define {name} {hip}", "#else",
                  f"#define {name}({params}) {hip}({params}, {', '.join(defaults)})", "#endif"]
    return lines


def _pointer_wrappers(names: list[str], tables: HipifyTables) -> list[str]:
    """CUDA functions with a C++ template overload for any pointer, whose HIP function takes ``void**`` or
    ``const void*`` only: in C++, a template that casts, named in place of the HIP function."""
    lines: list[str] = []
    for name in names:
        hip = tables.identifiers[name]
        for table, param, cast in ((VOID_POINTER_ARGUMENTS, "T** p", "(void**)p"),
                                   (KERNEL_POINTER_ARGUMENTS, "T* p", "(const void*)p")):
            at = table.get(hip)
            if at is None:
                continue
            before = [f"B{i} b{i}" for i in range(at)]
            kinds = "".join(f"class B{i}, " for i in range(at))
            head = ", ".join([*before, param, "A... a"])
            call = ", ".join([*(f"b{i}" for i in range(at)), cast, "a..."])
            lines += ["#ifdef __cplusplus", f"#undef {name}",
                      f"template <{kinds}class T, class... A> static inline hipError_t buildport_{hip}({head}) "
                      f"{{ return {hip}({call}); }}", f"#define {name} buildport_{hip}", "#endif"]
    return lines


def _device_functions(used: Set[str]) -> list[str]:
    """What HIP lacks or declares otherwise of the device functions the sources call: the warp ``*_sync``
    functions before ROCm 6.2 (the mask dropped), ``__dp4a``, the intrinsics CUDA declares for one type."""
    lines: list[str] = []
    warp = [n for n in sorted(used) if n in UNSYNCED_WARP_FUNCTIONS]
    if warp or SYNCWARP in used:
        lines += ["", f"#if !defined(HIP_VERSION) || HIP_VERSION < {WARP_SYNC_HIP_VERSION}"]
        for name in warp:
            plain = UNSYNCED_WARP_FUNCTIONS[name]
            lines.append(f"#define {name}(mask, ...) {plain}(__VA_ARGS__)")
        if SYNCWARP in used:
            lines.append(f"#define {SYNCWARP}(...) {WARP_BARRIER}")
        lines.append("#endif")
    for name in sorted(used & SINGLE_TYPE_INTRINSICS.keys()):
        lines.append(f"#define {name}(x) {name}(({SINGLE_TYPE_INTRINSICS[name]})(x))")
    for name in sorted(used & FALLBACKS.keys()):
        fallback = FALLBACKS[name]
        if fallback.header == "hip/hip_runtime.h":
            lines += ["", f"#if {fallback.lacking}", fallback.definition.rstrip("\n"), "#endif"]
    return lines


def _forwarding(header: str, hip: str, used: Set[str] = frozenset(), hip_names: Set[str] = frozenset()) -> str:
    depth = header.count("/")
    up = "../" * depth
    lines = [
        f"{COMPAT_MARK}: CUDA's <{header}> for the HIP build.",
        "#pragma once",
    ]
    spellings = _SPELLINGS.get(hip, (hip,) if hip else ())
    if len(spellings) > 1:
        for i, spelling in enumerate(spellings):
            keyword = "#if" if i == 0 else "#elif"
            lines += [f"{keyword} __has_include(<{spelling}>)", f"#include <{spelling}>"]
        lines.append("#endif")
    elif spellings:
        lines.append(f"#include <{spellings[0]}>")
    lines.append(f'#include "{up}{RUNTIME_MAPPING}"')
    lines += [f"#define {guard} 1" for guard in HEADER_GUARDS.get(header, ())]
    if not hip and NVTX_HEADER.fullmatch(header):
        lines.append(NVTX_DEFINITIONS)
    if hip.startswith("hipcub/"):
        lines.append("namespace cub = hipcub;  // hipify writes hipcub:: for cub::")
        lines += [f"#define {name}(e) {form.format('(e)')}" for name, form in sorted(CUB_MACRO_FALLBACKS.items())
                  if name in used]
    for name in sorted(hip_names & FALLBACKS.keys()):
        fallback = FALLBACKS[name]
        if fallback.header in spellings:
            lines += [f"#if {fallback.lacking}", fallback.definition.rstrip("\n"), "#endif"]
    return "\n".join(lines) + "\n"


_DEFINE = re.compile(r"^#define[ \t]+(\w+)", re.M)


def carried_tables(tables: HipifyTables | None, paths: Iterable[str], looked: list[str] | None = None
                   ) -> HipifyTables | None:
    """``tables`` less what the compatibility folder of a ``--keep-cuda`` tree carries, where one of ``paths``
    lies in such a tree (its folder found beside the path or above it): the names its mapping header defines
    and the headers it holds are not CUDA left for the HIP build. ``tables`` itself where there is none.
    ``looked``: told every path the search looked at, and the folder's files (what a replayed run checks)."""
    if tables is None:
        return None
    names: set[str] = set()
    headers: set[str] = set()
    defined: set[str] = set()  # every name a file of the folder defines
    for folder in _folders(paths, looked):
        for path in sorted(folder.rglob("*")):
            if looked is not None:
                looked.append(str(path))
            try:
                text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            except OSError:
                continue
            if not text.startswith(COMPAT_MARK):
                continue
            defined.update(_DEFINE.findall(text))
            if path.name == MAPPING_HEADER and path.parent == folder:
                names.update(_DEFINE.findall(text))
            else:
                headers.add(path.relative_to(folder).as_posix())
                if NVTX_HEADER.fullmatch(path.relative_to(folder).as_posix()):
                    defined.update(NVTX_KEPT)
    if not names and not headers:
        return tables
    defined.update(guard for guards in HEADER_GUARDS.values() for guard in guards)  # defined as CUDA's headers do
    key = hashlib.sha256("\n".join(sorted(defined) + sorted(headers)).encode()).hexdigest()[:16]
    return HipifyTables({k: v for k, v in tables.identifiers.items() if k not in names},
                        {k: v for k, v in tables.headers.items() if k not in headers},
                        tables.unsupported - defined, f"{tables.digest}+{key}", frozenset(defined | headers))


def _folders(paths: Iterable[str], looked: list[str] | None = None) -> list[Path]:
    """The compatibility folders of the trees ``paths`` lie in (nearest first, each once); ``looked`` is told
    each mapping header looked for."""
    found: dict[Path, None] = {}
    seen: set[Path] = set()
    for given in paths:
        start = Path(given).resolve()
        for place in [start, *start.parents]:
            if place in seen:
                break  # looked at from another path already
            seen.add(place)
            header = place / COMPAT_FOLDER / MAPPING_HEADER
            if looked is not None:
                looked.append(str(header))
            if header.is_file():
                found[header.parent] = None
                break
    return list(found)
