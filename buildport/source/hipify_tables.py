"""What the installed hipify-perl converts and what it cannot, read from the script as data.

hipify-perl is one Perl file whose substitutions are rows: ``subst("cudaMalloc", "hipMalloc",
"memory");`` in ``simpleSubstitutions``, and lists of the names it warns it cannot convert in its
``warnUnsupportedFunctions``, ``warnHipOnlyUnsupportedFunctions`` and ``warnUnsupportedDeviceFunctions``.
Reading those rows tells the audit which CUDA names in a source the engine would convert (so that
``buildport migrate`` fixes them) and which it would leave (a person must), for the ROCm release the
user's hipify-perl maps to, without running the engine on every file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from buildport.source.hipify import EngineMissing, find_engine
from buildport.source.hipify_script import SUBST, script_text, script_version, sub_bodies

#: The substitution functions of the default mode (hipify-perl's -roc and -experimental ones are not used
#: by ``migrate``), and the warning lists of names it has no HIP name for.
_SUBSTITUTIONS = ("simpleSubstitutions",)
_UNSUPPORTED = ("warnUnsupportedFunctions", "warnHipOnlyUnsupportedFunctions", "warnUnsupportedDeviceFunctions")
_LISTED = re.compile(r'^\s*"([^"\\]+)",?$', re.M)
_INCLUDES = frozenset(("include", "include_cuda_main_header", "include_cuda_main_header_v2"))


@dataclass(frozen=True)
class HipifyTables:
    """The names one hipify-perl converts (identifier → HIP name; header → HIP header) and those it warns
    it cannot convert; ``digest`` names the script's content (for caches)."""

    identifiers: dict[str, str]
    headers: dict[str, str]
    unsupported: frozenset[str]
    digest: str
    #: What a ``--keep-cuda`` tree's compatibility folder defines and holds (names, header paths): carried
    #: for its HIP build, so neither CUDA left nor a construct to convert (see buildport.dual.compat).
    carried: frozenset[str] = frozenset()

    def converts(self, name: str) -> bool:
        return name in self.identifiers


def read_tables(text: str) -> HipifyTables:
    """The tables of a hipify-perl script's text (empty where the script has none of these functions)."""
    bodies = sub_bodies(text)
    identifiers: dict[str, str] = {}
    headers: dict[str, str] = {}
    for name in _SUBSTITUTIONS:
        for cuda, hip, kind in SUBST.findall(bodies.get(name, "")):
            cuda, hip = cuda.replace("\\", ""), hip.replace("\\", "")
            if cuda == hip:
                continue  # a name HIP spells as CUDA does (__half, texture): not CUDA left in a port
            if kind in _INCLUDES:
                headers[cuda] = hip
            elif re.fullmatch(r"\w+", cuda):
                identifiers[cuda] = hip
    unsupported: set[str] = set()
    for name in _UNSUPPORTED:
        listed = _LISTED.findall(bodies.get(name, ""))
        if name == "warnUnsupportedDeviceFunctions":
            # bare device-function names (umin, mul24) are common names of a project's own: only CUDA's own
            # spellings are taken
            listed = [n for n in listed if n.startswith("__")]
        unsupported.update(n for n in listed if re.fullmatch(r"\w+", n) and n not in identifiers)
    return HipifyTables(identifiers, headers, frozenset(unsupported), hashlib.sha256(text.encode()).hexdigest()[:16])


def installed_tables(explicit: str | None = None) -> HipifyTables | None:
    """The tables of the hipify-perl ``migrate`` would run (``explicit``, else as :func:`find_engine` finds
    one); None where there is none, or it is hipify-clang (whose tables are compiled in)."""
    where = tuple(os.environ.get(name) for name in ("PATH", "ROCM_PATH", "HIP_PATH"))
    engine = _engine(explicit, where)
    version = script_version(engine) if engine is not None else None
    return None if version is None else _tables_of(*version)


@functools.lru_cache(maxsize=8)
def _engine(explicit: str | None, where: tuple[str | None, ...]) -> Path | None:
    """:func:`find_engine`, once for each place it looks in (``where``: the variables it reads)."""
    try:
        return find_engine(explicit)
    except EngineMissing:
        return None


@functools.cache
def _tables_of(path: str, mtime: int, size: int) -> HipifyTables | None:
    """One script's tables, read once per process for each version of the file."""
    text = script_text(path, mtime, size)
    if text is None:
        return None
    tables = read_tables(text)
    return tables if tables.identifiers else None


def describe(tables: HipifyTables | None) -> str:
    """What the audit read CUDA names with, for a report."""
    if tables is None:
        return "CUDA's name patterns (no hipify-perl found)"
    return f"hipify-perl's tables ({len(tables.identifiers)} names, {len(tables.unsupported)} unsupported)"


__all__ = ["HipifyTables", "describe", "installed_tables", "read_tables"]
