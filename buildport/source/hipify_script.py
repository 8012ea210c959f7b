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
from dataclasses import dataclass, field
from pathlib import Path

#: Digests of the code (data rows removed, see :func:`code_digest`) of the hipify-perl releases the
#: built-in engine reproduces: one for ROCm 5.7 to 6.1 (Debian 13's hipify-perl 6.0.2 among them), one for
#: ROCm 6.2 and 6.3, whose ``transformHostFunctions`` also casts some arguments to ``const void*`` (6.3 words
#: its warnings otherwise: the words are data).
KNOWN_CODE = frozenset({"018d4c9eff610314", "f4277a6d6def778c"})

_SUB_HEAD = re.compile(r"^sub (\w+) \{$", re.M)
SUBST = re.compile(r'^\s*subst\("((?:[^"\\]|\\.)+)", "((?:[^"\\]|\\.)*)", "(\w+)"\);$', re.M)
_LISTED = re.compile(r'^\s*,?\s*"(\w+)",?$', re.M)
_HASHED = re.compile(r'^\s*"(\w+)" => "([\w.]*)",?$', re.M)  # the version may be empty (ROCm 6.2)
_PAIR = re.compile(r'^\s*"[^"]*"\s*=>', re.M)
_ITEM = re.compile(r'^\s*,?\s*"[^"]*",?\s*$', re.M)
#: a data row of any kind: a ``subst`` call, a list item, a hash pair (what :func:`code_digest` leaves out)
_DATA = re.compile(r'^\s*(?:subst\(.*\);|,?\s*"[^"]*"(?:\s*=>\s*"[^"]*")?,?)\s*$')
#: lines of a script that are no part of its conversion: blank lines, and the version ``--version`` prints
_NOT_CODE = re.compile(r'^\s*$|^\s*print STDERR "HIP version [\d.]+\\n";$')
#: a warning the script prints of a line (``warning: FILE:LINE: ...`` up to ROCm 6.2, ``FILE:LINE: warning: ...``
#: since): a template of the file's name, the line's number and what the warning function knows
_WARNING = re.compile(r'^\s*print STDERR "(?P<template>  (?:warning: )?\$fileName:\$line_num: '
                      r'(?:[^"\\$]|\\[\\"]|\$(?:func|val|cuda|_)\b)*)\\n";$')
#: the functions whose warnings the engine writes, each from its template
WARNING_FUNCTIONS = ("warnUnsupportedDeviceFunctions", "warnExperimentalFunctions", "warnDeprecatedFunctions",
                     "warnRemovedFunctions", "warnUnsupportedFunctions", "warnHipOnlyUnsupportedFunctions")
#: one ``foreach $func (NAMES) { $k += s/PATTERN/REPLACEMENT/g; }`` of ``transformHostFunctions``
_HOST_BLOCK = re.compile(r'foreach \$func \(\n(?P<names>(?:\s*"\w+",?\n)*)\s*\)\n\s*\{\n'
                         r'\s*\$k \+= s/(?P<pattern>(?:[^/\\\n]|\\.)+)/(?P<replacement>(?:[^/\\\n]|\\.)*)/g;\n\s*\}')
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
    #: ``transformHostFunctions``, in order: (Perl pattern, Perl replacement, the functions it is applied for)
    host_functions: tuple[tuple[str, str, tuple[bytes, ...]], ...] = ()
    #: each of :data:`WARNING_FUNCTIONS` → the text of its warning, a Perl string (``$func``, ``$_``...)
    warnings: dict[str, str] = field(default_factory=dict)


def code_digest(text: str) -> str:
    """The digest of a script's code: every line but the data rows (``subst`` calls, list items, hash pairs),
    the interpreter line (``#!/usr/bin/env perl`` upstream, ``#! /usr/bin/perl`` in Debian), blank lines, the
    version line, and the words of the warnings (read as data: :func:`read_script` checks their form)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    code = "\n".join(line for line in lines
                     if not _DATA.match(line) and not _NOT_CODE.match(line) and not _WARNING.match(line))
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
    host_body = bodies.get("transformHostFunctions", "")
    try:
        host = tuple((m["pattern"], m["replacement"], _listed(m["names"])) for m in _HOST_BLOCK.finditer(host_body))
        hashes = [_hash(text, name) for name in ("experimental_funcs", "removed_funcs", "deprecated_funcs")]
        lists = [_listed(bodies.get(name, "")) for name in (
            "warnUnsupportedFunctions", "warnHipOnlyUnsupportedFunctions", "warnUnsupportedDeviceFunctions",
            "countSupportedDeviceFunctions")] + [_listed(_between(text, "@whitelist = (", "\n);"))]
    except ValueError:
        return None
    if len(host) != host_body.count("foreach") or not all(_plain_substitution(p, r) for p, r, _ in host):
        return None
    warnings = {}
    for name in WARNING_FUNCTIONS:
        found = [m["template"] for m in map(_WARNING.match, bodies.get(name, "").splitlines()) if m is not None]
        if len(found) != 1:
            return None
        warnings[name] = found[0]
    return HipifyScript(
        rows=tuple(rows),
        experimental=hashes[0],
        removed=hashes[1],
        deprecated=hashes[2],
        unsupported=lists[0],
        hip_only_unsupported=lists[1],
        unsupported_device=lists[2],
        supported_device=lists[3],
        whitelist=lists[4],
        digest=hashlib.sha256(text.encode()).hexdigest()[:16],
        host_functions=host,
        warnings=warnings,
    )


#: a Perl replacement the engine reads: ``$func``, groups (``$2``), escaped characters, literal text
_PERL_REPLACEMENT = re.compile(r"(?:\$func|\$\d+|\\.|[^$\\])*", re.S)


def _plain_substitution(pattern: str, replacement: str) -> bool:
    """Whether ``s/pattern/replacement/g`` means the same read as Python's ``re`` (``$func`` put in): no
    other Perl variable in either, and a pattern ``re`` compiles."""
    if "$func" not in pattern or re.search(r"\$(?!func\b)", pattern) or not _PERL_REPLACEMENT.fullmatch(replacement):
        return False
    try:
        re.compile(pattern.replace("$func", "f"))
    except re.error:
        return False
    return True


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
    """The items of the lists in ``body``; one of a form this reader does not know makes it raise
    :class:`ValueError` (the script then goes to hipify-perl rather than lose an item)."""
    names = _LISTED.findall(body)
    if len(names) != len(_ITEM.findall(body)):
        raise ValueError("a list item this reader does not know")
    return tuple(name.encode() for name in names)


def _hash(text: str, name: str) -> dict[bytes, bytes]:
    """The pairs of the hash ``name``; a pair of a form this reader does not know makes it raise
    :class:`ValueError` (the script then goes to hipify-perl rather than lose a row)."""
    body = _between(text, f"my %{name} = (", "\n);")
    pairs = _HASHED.findall(body)
    if len(pairs) != len(_PAIR.findall(body)):
        raise ValueError(f"a row of %{name} this reader does not know")
    return {key.encode(): value.encode() for key, value in pairs}




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
