"""Everything the built-in conversion engine reads from an installed hipify-perl, as data.

hipify-perl is one Perl file: its conversion is a fixed program over data rows. The rows are read here in
the order the script applies them: the ``subst(...)`` rows of ``simpleSubstitutions``, the names each
warning function searches each line for (``warnUnsupportedFunctions``...), the hashes of experimental,
removed and deprecated names with their versions, the device functions it counts, and the ``@whitelist``
of words it never warns about.

The program around the rows is what :mod:`buildport.source.convert` re-implements, so it is checked too:
:func:`read_script` keeps the script's code with every data row taken out and compares its digest with
the code the engine was written against (:data:`KNOWN_CODE`). A hipify-perl whose code differs (another
ROCm release that changed how it converts) gives ``None``: every file then goes to the program itself.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

#: Digests of the code (data rows removed, see :func:`code_digest`) of the hipify-perl releases the
#: built-in engine reproduces: Debian 13's hipify-perl 6.0.2 (HIP 6.0.0).
KNOWN_CODE = frozenset({"16df2df54b90068f"})

_SUB_HEAD = re.compile(r"^sub (\w+) \{$", re.M)
SUBST = re.compile(r'^\s*subst\("((?:[^"\\]|\\.)+)", "((?:[^"\\]|\\.)*)", "(\w+)"\);$', re.M)
_LISTED = re.compile(r'^\s*,?\s*"(\w+)",?$', re.M)
_HASHED = re.compile(r'^\s*"(\w+)" => "([\w.]+)",?$', re.M)
#: a data row of any kind: a ``subst`` call, a list item, a hash pair (what :func:`code_digest` leaves out)
_DATA = re.compile(r'^\s*(?:subst\(.*\);|,?\s*"[^"]*"(?:\s*=>\s*"[^"]*")?,?)\s*$')
#: a header row's pattern may hold only these (``.`` is Perl's any character, as it is Python's)
_HEADER_PATTERN = re.compile(r"[\w./]+")


@dataclass(frozen=True)
class Row:
    """One ``subst(cuda, hip, kind)`` row: ``cuda`` is a Perl regex (a plain word for all but the headers)."""

    cuda: bytes
    hip: bytes
    kind: str


@dataclass(frozen=True)
class HipifyScript:
    """The data of one hipify-perl, in the order the script uses it."""

    rows: tuple[Row, ...]
    #: name → version: the hashes the script walks in Perl's (random) hash order
    experimental: dict[bytes, bytes]
    removed: dict[bytes, bytes]
    deprecated: dict[bytes, bytes]
    #: the lists the script walks in order
    unsupported: tuple[bytes, ...]
    hip_only_unsupported: tuple[bytes, ...]
    unsupported_device: tuple[bytes, ...]
    supported_device: tuple[bytes, ...]
    whitelist: tuple[bytes, ...]
    digest: str


def code_digest(text: str) -> str:
    """The digest of a script's code: every line but the data rows (``subst`` calls, list items, hash pairs)."""
    code = "\n".join(line for line in text.splitlines() if not _DATA.match(line))
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def read_script(text: str) -> HipifyScript | None:
    """The data of a hipify-perl script's text; None when its code is not one :data:`KNOWN_CODE` names, or
    a row is not of a form the built-in engine reads."""
    if code_digest(text) not in KNOWN_CODE:
        return None
    bodies = sub_bodies(text)
    simple = bodies.get("simpleSubstitutions", "")
    rows = []
    for cuda, hip, kind in SUBST.findall(simple):
        if "\\" in (cuda + hip).replace("\\/", ""):
            return None  # an escape other than \/ : a string this reader does not unquote
        cuda, hip = cuda.replace("\\/", "/"), hip.replace("\\/", "/")
        if not _HEADER_PATTERN.fullmatch(cuda) or not re.fullmatch(r"[\w./*]*", hip):
            return None
        rows.append(Row(cuda.encode(), hip.encode(), kind))
    if len(rows) != simple.count("subst("):
        return None
    return HipifyScript(
        rows=tuple(rows),
        experimental=_hash(text, "experimental_funcs"),
        removed=_hash(text, "removed_funcs"),
        deprecated=_hash(text, "deprecated_funcs"),
        unsupported=_listed(bodies.get("warnUnsupportedFunctions", "")),
        hip_only_unsupported=_listed(bodies.get("warnHipOnlyUnsupportedFunctions", "")),
        unsupported_device=_listed(bodies.get("warnUnsupportedDeviceFunctions", "")),
        supported_device=_listed(bodies.get("countSupportedDeviceFunctions", "")),
        whitelist=_listed(_between(text, "@whitelist = (", "\n);")),
        digest=hashlib.sha256(text.encode()).hexdigest()[:16],
    )


def sub_bodies(text: str) -> dict[str, str]:
    """Each Perl ``sub``'s text, by name (to the next ``sub``): where the script keeps each kind of row."""
    starts = [(m.group(1), m.end()) for m in _SUB_HEAD.finditer(text)]
    return {name: text[start : starts[i + 1][1] if i + 1 < len(starts) else len(text)]
            for i, (name, start) in enumerate(starts)}


def _between(text: str, start: str, end: str) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    stop = text.find(end, at)
    return text[at : stop if stop >= 0 else len(text)]


def _listed(body: str) -> tuple[bytes, ...]:
    return tuple(name.encode() for name in _LISTED.findall(body))


def _hash(text: str, name: str) -> dict[bytes, bytes]:
    body = _between(text, f"my %{name} = (", "\n);")
    return {key.encode(): value.encode() for key, value in _HASHED.findall(body)}




def script_version(engine: Path) -> tuple[str, int, int] | None:
    """What names one version of the hipify-perl at ``engine``: its resolved path, mtime and size (the key of
    the per-process reads below); None for an engine that is not a hipify-perl or cannot be looked at."""
    if not engine.name.startswith("hipify-perl"):
        return None
    try:
        stat = engine.stat()
    except OSError:
        return None
    return str(engine.resolve()), stat.st_mtime_ns, stat.st_size


@functools.cache
def script_text(path: str, mtime: int, size: int) -> str | None:
    """The text of the hipify-perl at ``path`` (resolved), read once per process for each version of the file
    (``mtime``, ``size``); None where it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


__all__ = ["KNOWN_CODE", "HipifyScript", "Row", "code_digest", "read_script", "SUBST", "script_text", "script_version",
           "sub_bodies"]
