"""Many files: discover build files below a directory and port each one.

Discovery skips hidden directories, build trees (a ``CMakeCache.txt`` or a
``CMakeFiles/`` marks one) and directory links that leave the root; it also
skips, with a message, file links that leave the root and binary files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from buildport.engine import Result, UnstableRewrite, port_cmake, port_make
from buildport.findings import Finding
from buildport.passes.base import Options
from buildport.passes.make import MakeFacts, gather
from buildport.syntax.make import parse_make
from buildport.syntax.errors import ParseError
from buildport.textio import InputError, SourceText, decode, read_source, write_atomic


def is_cmake_file(name: str) -> bool:
    return name == "CMakeLists.txt" or name.endswith(".cmake")


MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def is_make_file(name: str) -> bool:
    return name in MAKEFILE_NAMES or name.endswith(".mk")


def is_build_tree(path: Path) -> bool:
    return (path / "CMakeCache.txt").exists() or (path / "CMakeFiles").is_dir()


def discover(root: Path, wanted: Callable[[str], bool], skipped: list[str] | None = None) -> Iterator[Path]:
    """Build files below ``root`` in a stable order.

    A file link that leaves ``root`` is never yielded (so never written through),
    nor is a binary file; each gets a message in ``skipped``. A link inside the
    root comes after the real files, and only if its target was not yielded, so
    that no file is ported twice.
    """
    real_root = root.resolve()
    seen: set[Path] = set()
    links: list[Path] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        kept = []
        for d in sorted(dirs):
            sub = here / d
            if d.startswith(".") or is_build_tree(sub):
                continue
            if sub.is_symlink() and not _inside(sub.resolve(), real_root):
                continue
            kept.append(d)
        dirs[:] = kept
        for name in sorted(files):
            if wanted(name):
                reason = _skip_reason(here / name, real_root)
                if reason:
                    if skipped is not None:
                        skipped.append(f"{here / name}: skipped: {reason}")
                    continue
                if (here / name).is_symlink():
                    links.append(here / name)
                    continue
                seen.add((here / name).resolve())
                yield here / name
    for link in links:
        if link.resolve() not in seen:
            seen.add(link.resolve())
            yield link


def _skip_reason(path: Path, real_root: Path) -> str:
    """Why a discovered file must be left alone, or ``""``."""
    if path.is_symlink() and not _inside(path.resolve(), real_root):
        return f"symbolic link to {path.resolve()}, outside {real_root}"
    try:
        with open(path, "rb") as handle:
            binary = b"\x00" in handle.read()
    except OSError:
        return ""  # reading it again reports the error
    return "binary file (contains NUL bytes)" if binary else ""


def included_makefiles(files: list[str]) -> list[str]:
    """Files that discovered Makefiles ``include`` by a literal relative name (make.config...)."""
    import re

    seen = set(files)
    extra: list[str] = []
    pattern = re.compile(r"^[ \t]*(?:-include|sinclude|include)[ \t]+([^$#\n]+?)[ \t]*(?:#.*)?$", re.M)
    for name in files:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            continue
        for m in pattern.finditer(text):
            for word in m.group(1).split():
                target = (path.parent / word)
                if target.is_file() and str(target) not in seen:
                    seen.add(str(target))
                    extra.append(str(target))
    return extra


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(slots=True)
class FileOutcome:
    """What happened to one input."""

    path: str
    result: Result | None = None
    source: SourceText | None = None
    error: str = ""
    #: An unexpected exception behind ``error`` (a bug); the CLI re-raises it with --debug.
    exception: Exception | None = None


@dataclass(slots=True)
class Run:
    """The outcomes of one command over all its inputs."""

    outcomes: list[FileOutcome] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for o in self.outcomes:
            if o.result is not None:
                out.extend(o.result.findings)
        return sorted(out, key=Finding.sort_key)

    @property
    def errors(self) -> list[str]:
        return [o.error for o in self.outcomes if o.error]

    @property
    def changed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.result is not None and o.result.changed]


def expand_paths(paths: list[str], wanted: Callable[[str], bool], skipped: list[str] | None = None) -> list[str]:
    """Files as given, directories expanded (see :func:`discover`), ``-`` kept for standard input."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir() and not wanted(path.name):
            out.extend(str(f) for f in discover(path, wanted, skipped))
        else:
            out.append(p)
    return out


def port_files(paths: list[str], options: Options, stdin: bytes | None = None, kind: str = "cmake") -> Run:
    """Port every file; for CMake, the ROCm packages any file links are found where CUDA is."""
    run = Run()
    paths = _unique(paths)
    facts = _make_facts(paths) if kind == "make" else None
    for path in paths:
        run.outcomes.append(_port_one(path, options, stdin, kind, facts))
    if kind != "cmake":
        return run
    packages: set[str] = set()
    for o in run.outcomes:
        if o.result is not None:
            packages |= o.result.packages
    if len(run.outcomes) > 1 and packages:
        wider = Options(options.offload_arch, tuple(sorted(packages)))
        run.outcomes = [
            _port_one(o.path, wider, stdin, kind) if o.result is not None and "find_package" in o.result.original else o
            for o in run.outcomes
        ]
    return run


def _unique(paths: list[str]) -> list[str]:
    """Each file once, however it was reached (``a/../common.mk`` and ``b/../common.mk``)."""
    seen: set[str] = set()
    out: list[str] = []
    for p in paths:
        key = p if p == "-" else os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p if p == "-" else os.path.normpath(p))
    return out


def _make_facts(paths: list[str]) -> MakeFacts:
    """Compiler, flag and architecture variables across all Makefiles of the run."""
    facts = MakeFacts()
    for path in paths:
        if path == "-":
            continue
        try:
            gather(parse_make(read_source(path).text, path), facts)
        except (ParseError, InputError):
            continue  # reported when the file itself is ported
    return facts


def _port_one(
    path: str, options: Options, stdin: bytes | None, kind: str = "cmake", facts: MakeFacts | None = None
) -> FileOutcome:
    try:
        if path == "-":
            data = stdin or b""
            source = SourceText("<stdin>", decode(data, "<stdin>"), "")
        else:
            source = read_source(path)
        if kind == "cmake":
            result = port_cmake(source.text, source.path, options)
        else:
            result = port_make(source.text, source.path, options, facts=facts)
    except (ParseError, InputError) as exc:
        return FileOutcome(path, error=str(exc))
    except UnstableRewrite as exc:
        return FileOutcome(path, error=f"{exc} (internal error: please report it with this file)", exception=exc)
    except Exception as exc:  # a bug in a pass must not stop the other files
        message = str(exc).splitlines()[0] if str(exc) else ""
        error = (f"{path}: internal error: {type(exc).__name__}: {message} "
                 "(please report it with this file; --debug shows a traceback)")
        return FileOutcome(path, error=error, exception=exc)
    return FileOutcome(path, result, source)


def write_changes(run: Run) -> list[str]:
    """Write every changed file in place; returns the errors."""
    errors: list[str] = []
    for o in run.changed:
        assert o.result is not None and o.source is not None
        if o.path == "-":
            continue
        try:
            write_atomic(o.source, o.result.text)
        except InputError as exc:
            errors.append(str(exc))
    return errors
