"""Which source files a build references, and the local headers they include.

CMake: every argument that names a source file (add_executable, add_library,
target_sources, user functions and macros alike), through simple ``set()`` /
``list(APPEND)`` variables and ``file(GLOB)``; ``${CMAKE_CURRENT_SOURCE_DIR}``
and the project directories are known. make: words that name source files,
``$(wildcard ...)`` patterns, and objects whose source a pattern rule builds.
Then ``#include "..."`` headers, transitively. Paths outside the root are never
returned as sources; the files and folders outside it that the build or a source
names by a relative path (``../common/util.h``, ``-I../other``) are listed apart
(:attr:`SourceSet.outside`): a migration neither converts nor copies them.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from buildport.cmake_args import value_of
from buildport.includes import include_targets
from buildport.syntax.cmake import parse_cmake
from buildport.syntax.errors import ParseError
from buildport.syntax.make import parse_make
from buildport.textio import InputError, read_source

SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl")
CUDA_SUFFIXES = (".cu", ".cuh")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
_SIMPLE_REF = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_WILDCARD = re.compile(r"\$[({]wildcard\s+([^)}$]+)[)}]")
_MAKE_INCLUDE_DIR = re.compile(r"(?<![\w$])-I\s*([^\s$()]+)")
#: The words of a Makefile, as its build names files: split at blanks and at ``: = | ; \``.
_MAKE_WORD = re.compile(r"[^\s:=|;\\]+")


@dataclass(slots=True)
class SourceSet:
    """What the build compiles, found by reading it."""

    sources: set[Path] = field(default_factory=set)
    headers: set[Path] = field(default_factory=set)
    include_dirs: set[Path] = field(default_factory=set)
    #: Existing files and folders outside the root that the build or a source names by a relative
    #: path: each (absolute, normalized) → the file that names it first, and the line.
    outside: dict[Path, tuple[Path, int]] = field(default_factory=dict)
    #: For a copy of a project (``migrate --out``): the copy's root and the original's. A path that
    #: leaves the copy is looked for where it leads from the original, as the build there finds it.
    copied: tuple[Path, Path] | None = None

    @property
    def all(self) -> set[Path]:
        return self.sources | self.headers


def inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


#: Where a file names another: the naming file, its text, and the offset in it (its line is counted only
#: for a file outside the root).
Origin = tuple[Path, str, int]


def _add(found: SourceSet, root: Path, path: Path, origin: Origin | None = None) -> None:
    """``path`` as a source if it is one inside ``root``; with ``origin`` (where a file names it),
    an existing file outside is noted in ``found.outside``."""
    if path.suffix not in SOURCE_SUFFIXES:
        return
    if inside(path, root):
        if path.is_file() and not path.is_symlink():
            found.sources.add(path.resolve())
    elif origin is not None:
        note_outside(found, root, path, origin)


def note_outside(found: SourceSet, root: Path, path: Path, origin: Origin) -> bool:
    """Note ``path``, outside ``root``, as named at ``origin``, if there is such a file or folder (beside
    the original, for a copy); whether there is."""
    if inside(path, root):
        return False
    where = Path(os.path.normpath(path.absolute()))
    if found.copied is not None:
        copy, original = found.copied
        if not (original / os.path.relpath(where, copy.absolute())).exists():
            return False
    elif not where.exists():
        return False
    if where not in found.outside:
        named_in, text, offset = origin
        found.outside[where] = (named_in, text.count("\n", 0, offset) + 1)
    return True


def cmake_sources(path: Path, root: Path, found: SourceSet) -> None:
    """Source files one CMake file names (relative to its own directory)."""
    try:
        tree = parse_cmake(read_source(path).text, str(path), cut=True)  # every command is read
    except (ParseError, InputError):
        return
    here = path.parent
    text = tree.text
    # absolute, as CMake's are: a path made from them is not taken again relative to the file's folder
    known = {
        "CMAKE_CURRENT_SOURCE_DIR": str(here.absolute()), "CMAKE_CURRENT_LIST_DIR": str(here.absolute()),
        "PROJECT_SOURCE_DIR": str(root.absolute()), "CMAKE_SOURCE_DIR": str(root.absolute()),
    }
    variables: dict[str, list[str]] = {}
    for command in tree.commands():
        values = [value_of(a.value) for a in command.arguments()]
        name = command.identifier
        origin = (path, text, command.start)
        if name == "set" and values:
            variables[values[0]] = values[1:]
        elif name == "list" and len(values) > 2 and values[0] == "APPEND":
            variables.setdefault(values[1], []).extend(values[2:])
        elif name == "file" and len(values) > 2 and values[0] in ("GLOB", "GLOB_RECURSE"):
            for pattern in values[2:]:
                if pattern.isupper():
                    continue
                full = _substitute(pattern, known)
                if full is not None:
                    pattern_path = full if Path(full).is_absolute() else str(here / full)
                    for hit in glob.glob(pattern_path, recursive=values[0] == "GLOB_RECURSE"):
                        _add(found, root, Path(hit), None if _absolute(pattern) else origin)
        if name in ("include_directories", "target_include_directories"):
            for value in values:
                full = _substitute(value, known)
                if full is not None and value not in ("PUBLIC", "PRIVATE", "INTERFACE", "SYSTEM", "BEFORE"):
                    candidate = Path(full) if Path(full).is_absolute() else here / full
                    if candidate.is_dir() and inside(candidate, root):
                        found.include_dirs.add(candidate.resolve())
                    elif not _absolute(value):
                        note_outside(found, root, candidate, origin)
        for value in values:
            for item in _expand(value, variables):
                full = _substitute(item, known)
                if full is not None and full.endswith(SOURCE_SUFFIXES):
                    _add(found, root, Path(full) if Path(full).is_absolute() else here / full,
                         None if _absolute(item) else origin)


def _absolute(written: str) -> bool:
    """Whether a path is written as an absolute one (``/usr/local/cuda/include``): an installed
    package, not a part of the project that lies outside its folder."""
    return written.startswith(("/", "~")) or (len(written) > 2 and written[1] == ":" and written[0].isalpha())


def _expand(value: str, variables: dict[str, list[str]], depth: int = 0) -> list[str]:
    m = re.fullmatch(r"\$\{([A-Za-z0-9_]+)\}", value)
    if m and m.group(1) in variables and depth < 8:
        out: list[str] = []
        for item in variables[m.group(1)]:
            out.extend(_expand(item, variables, depth + 1))
        return out
    return [value]


def _substitute(value: str, known: dict[str, str]) -> str | None:
    """``${CMAKE_CURRENT_SOURCE_DIR}/a.cu`` → a path; ``None`` when other references remain."""
    out = _SIMPLE_REF.sub(lambda m: known.get(m.group(1), m.group(0)), value)
    return None if "${" in out or "$<" in out else out


def make_sources(path: Path, root: Path, found: SourceSet) -> None:
    """Source files one Makefile names (relative to its directory)."""
    try:
        text = read_source(path).text
        parse_make(text, str(path))
    except (ParseError, InputError):
        return
    here = path.parent
    for m in _WILDCARD.finditer(text):
        for pattern in m.group(1).split():
            for hit in glob.glob(str(here / pattern)):
                _add(found, root, Path(hit), None if _absolute(pattern) else (path, text, m.start()))
    for m in _MAKE_INCLUDE_DIR.finditer(text):
        candidate = here / m.group(1)
        if candidate.is_dir() and inside(candidate, root):
            found.include_dirs.add(candidate.resolve())
        elif not _absolute(m.group(1)):
            note_outside(found, root, candidate, (path, text, m.start()))
    for word in include_targets(text):  # what it includes from outside (rodinia's ../../common/make.config)
        if "$" not in word and not _absolute(word):
            note_outside(found, root, here / word, (path, text, text.find(word)))
    pattern_sources = set(re.findall(r"%(\.\w+)", text)) & set(SOURCE_SUFFIXES)
    for m in _MAKE_WORD.finditer(text):
        word = m.group()
        if "$" in word or "%" in word or "*" in word:
            continue
        if word.endswith(SOURCE_SUFFIXES):
            _add(found, root, here / word, None if _absolute(word) else (path, text, m.start()))
        elif word.endswith(".o"):
            for suffix in pattern_sources or CUDA_SUFFIXES:
                _add(found, root, here / (word[:-2] + suffix))


def add_headers(found: SourceSet, root: Path) -> None:
    """``#include "x.h"`` of every source, resolved like a compiler would, transitively."""
    pending = list(found.sources)
    seen = set(found.sources)
    while pending:
        source = pending.pop()
        try:
            text = read_source(source).text
        except InputError:
            continue
        for m in _INCLUDE.finditer(text):
            name = m.group(1)
            for folder in [source.parent, *sorted(found.include_dirs)]:
                candidate = (folder / name)
                if not inside(candidate, root):
                    # the header the compiler takes, outside the project (beside the original, for a copy)
                    if not _absolute(name) and note_outside(found, root, candidate, (source, text, m.start())):
                        break
                    continue
                if candidate.is_file() and not candidate.is_symlink():
                    resolved = candidate.resolve()
                    if resolved not in seen:
                        seen.add(resolved)
                        found.headers.add(resolved)
                        pending.append(resolved)
                    break


def unreferenced(root: Path, found: SourceSet, files: list[Path]) -> list[Path]:
    """CUDA sources in the tree that nothing in the build references."""
    used = found.all
    return sorted(p for p in files if p.suffix in CUDA_SUFFIXES and p.resolve() not in used)
