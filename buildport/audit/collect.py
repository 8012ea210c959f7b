"""Which files an audit reads: build files, and the sources that may use CUDA, found as discovery walks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from buildport.cache.fileindex import FileIndex
from buildport.pipeline.discovery import (
    MAKEFILE_NAMES, files_below, included_makefiles, is_cmake_file, is_make_file, is_setup_py,
)
from buildport.pipeline.ignore import Ignore
from buildport.source.scan import C_FAMILY_EXTENSIONS, CUDA_EXTENSIONS
from buildport.textio import NOT_READ, SourceText


CMAKE, MAKE, PYTHON, SOURCE = "cmake", "make", "python", "source"


def kind_of(name: str) -> str | None:
    """``cmake``, ``make``, ``python`` (a ``setup.py``), ``source`` (a candidate: C/C++ files are checked for CUDA
    use) or None."""
    if is_cmake_file(name):
        return CMAKE
    if is_make_file(name):
        return MAKE
    if is_setup_py(name):
        return PYTHON
    extension = os.path.splitext(name)[1].lower()
    if extension in CUDA_EXTENSIONS or extension in C_FAMILY_EXTENSIONS:
        return SOURCE
    return None


def is_audited(name: str) -> bool:
    """Whether discovery gives ``audit`` a file of this name (a build file or a candidate source).

    :func:`kind_of`'s answer; asked of every file of a tree, so a name is first told by its last
    dot alone: no kind but a Makefile's name has none, and every kind's ends in one of a few suffixes.
    """
    dot = name.rfind(".")
    if dot < 0:
        return name in MAKEFILE_NAMES
    return (name[dot:].lower() in _AUDITED_SUFFIXES or name == "CMakeLists.txt") and kind_of(name) is not None


_AUDITED_SUFFIXES = frozenset({".cmake", ".mk", ".py", *CUDA_EXTENSIONS, *C_FAMILY_EXTENSIONS})


def iter_collect(paths: list[str], errors: list[str], contents: dict[str, SourceText] | None = None,
                 index: FileIndex | None = None,
                 words: dict[str, list[str]] | None = None, ignore: Ignore | None = None,
                 left_out: set[str] | None = None) -> Iterator[tuple[str, str]]:
    """(path, kind) of every file to audit, as discovery finds them: files as given, directories
    walked (the first kind given for a path wins), then the Makefiles those include.

    A file given by name whose kind is unknown is skipped (a pre-commit hook passes
    every staged file); a path that does not exist is an error. ``contents`` keeps
    what discovery read, and ``index`` vouches for files (see :func:`buildport.pipeline.discovery.discover`).
    """
    seen: set[str] = set()
    makefiles: list[str] = []
    skipped: list[str] = []  # what discovery left out; of it, what is no regular file is not audited: said
    trail = index.trail if index is not None else None  # what the run looks at (buildport.cache.replay)
    for p in paths:
        path = Path(p)
        found: Iterator[tuple[str, str]]
        if ignore is not None and ignore.named(p):
            continue
        if trail is not None and not path.is_dir():
            trail.path(p)  # a file named, or a name that does not exist
        if path.is_dir():
            found = ((f, kind_of(os.path.basename(f)) or "")
                     for f in files_below(path, is_audited, skipped, contents, index, ignore))
        elif path.exists():
            kind = kind_of(path.name)
            found = iter([(p, kind)] if kind is not None else [])
        else:
            errors.append(f"{p}: error: no such file or directory")
            continue
        for name, kind in found:
            if name not in seen:
                seen.add(name)
                if kind == MAKE:
                    makefiles.append(name)
                yield name, kind
    # a named pipe or a device under a build file's name (links out of the tree and binary files are left out
    # of an audit quietly)
    errors.extend(note.replace(": skipped: ", ": error: ", 1) for note in skipped if note.endswith(NOT_READ))
    for p in included_makefiles(makefiles, contents, index, words):
        if p not in seen:
            if ignore is not None and left_out is not None and ignore.excluded(p):
                left_out.add(p)  # read for what it defines to the others, not reported
            yield p, MAKE
