#!/usr/bin/env python3
"""Round-trip every build file below a directory through buildport's parsers.

Usage::

    python scripts/roundtrip_corpus.py DIR [--kind cmake|make|all] [--port] [--quiet]

For each file it reads the bytes, parses them and prints the tree back, and
reports four counts: files read, parsed, identical after print, and rejected
(the parser raised its own positioned ``ParseError``). Every rejection is listed
as ``path:line:col: message``; anything else (a print-back that differs, an
exception that is not a ``ParseError``) is a *failure*, listed with its position
too, and makes the exit status 1.

With ``--port`` every CMake file that parses is also run through
``buildport.engine.port_cmake``; a file that has no CUDA in it but comes out
changed, or any exception, is listed as a failure.

Binary files (NUL bytes) are counted as skipped, not read.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from buildport.syntax.errors import ParseError, position_of  # noqa: E402
from buildport.textio import InputError, decode  # noqa: E402

Parser = Callable[[str, str], object]

#: Words that mark a file as having CUDA content; such files may be changed by a port.
CUDA_WORDS = re.compile(r"cuda|cublas|cufft|curand|cusparse|cusolver|nvcc|nvrtc|nvtx|cudnn|nccl|thrust|cub\b|\.cu\b|\.cuh\b|nvidia|nvml|npp", re.IGNORECASE)


def is_cmake(name: str) -> bool:
    """CMake files as buildport discovers them."""
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def is_make(name: str) -> bool:
    """GNU make files by their usual names."""
    return name in ("Makefile", "makefile", "GNUmakefile") or name.endswith((".mk", ".mak", ".make"))


@dataclass(slots=True)
class Tally:
    """The counts and listings for one kind of file."""

    kind: str
    read: int = 0
    skipped: int = 0
    parsed: int = 0
    identical: int = 0
    rejected: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    ported: int = 0
    port_changed_no_cuda: list[str] = field(default_factory=list)
    seconds: float = 0.0
    size: int = 0

    def summary(self) -> str:
        mb = self.size / 1e6
        line = (
            f"{self.kind}: read {self.read} ({mb:.1f} MB), parsed {self.parsed}, "
            f"identical after print {self.identical}, rejected with a position {len(self.rejected)}, "
            f"failures {len(self.failures)}, skipped {self.skipped} (binary)"
        )
        if self.ported:
            line += f"; ported {self.ported}, no-CUDA files changed {len(self.port_changed_no_cuda)}"
        return line + f"; {self.seconds:.1f} s"


def walk(root: Path, wanted: Callable[[str], bool]) -> Iterator[Path]:
    """Regular files below ``root`` (or ``root`` itself) whose name is wanted, sorted."""
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = Path(folder) / name
            if wanted(name) and path.is_file() and not path.is_symlink():
                yield path


def first_difference(a: str, b: str) -> int:
    """Offset of the first character where ``a`` and ``b`` differ."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def check_file(path: Path, parse: Parser, tally: Tally, port: bool) -> None:
    """Read, parse, print back and (optionally) port one file, counting what happened."""
    data = path.read_bytes()
    name = str(path)
    try:
        text = decode(data, name)
    except InputError:
        tally.skipped += 1
        return
    tally.read += 1
    tally.size += len(data)
    try:
        tree = parse(text, name)
    except ParseError as exc:
        tally.rejected.append(f"{name}:{exc.line}:{exc.col}: {exc.message}")
        return
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        tally.failures.append(f"{name}:1:1: crash {type(exc).__name__}: {exc}")
        return
    tally.parsed += 1
    printed = str(tree)
    if printed != text:
        line, col, _ = position_of(text, first_difference(text, printed))
        tally.failures.append(f"{name}:{line}:{col}: printed text differs from the input")
        return
    tally.identical += 1
    if port:
        port_file(name, text, tally)


def port_file(name: str, text: str, tally: Tally) -> None:
    """Port a parsed CMake file; a no-CUDA file must come out unchanged."""
    from buildport.engine import port_cmake

    try:
        result = port_cmake(text, name)
    except Exception as exc:  # noqa: BLE001
        where = f"{name}:{exc.line}:{exc.col}" if isinstance(exc, ParseError) else f"{name}:1:1"
        tally.failures.append(f"{where}: port_cmake raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
        return
    tally.ported += 1
    if result.changed and not CUDA_WORDS.search(text):
        line, col, _ = position_of(text, first_difference(text, result.text))
        tally.port_changed_no_cuda.append(f"{name}:{line}:{col}: changed by port_cmake, but has no CUDA in it")


def parsers(kind: str) -> list[tuple[str, Callable[[str], bool], Parser]]:
    """The (kind, file filter, parser) triples to run for ``--kind``."""
    out: list[tuple[str, Callable[[str], bool], Parser]] = []
    if kind in ("cmake", "all"):
        from buildport.syntax.cmake import parse_cmake

        out.append(("cmake", is_cmake, parse_cmake))
    if kind in ("make", "all"):
        from buildport.syntax.make import parse_make

        out.append(("make", is_make, parse_make))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the corpus check; exit 1 when any file failed, else 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, metavar="DIR")
    ap.add_argument("--kind", choices=("cmake", "make", "all"), default="all")
    ap.add_argument("--port", action="store_true", help="also port every CMake file and check no-CUDA files stay identical")
    ap.add_argument("--quiet", "-q", action="store_true", help="list failures only, not rejections")
    args = ap.parse_args(argv)
    failed = False
    for kind, wanted, parse in parsers(args.kind):
        tally = Tally(kind)
        started = time.perf_counter()
        for path in walk(args.root, wanted):
            try:
                check_file(path, parse, tally, args.port and kind == "cmake")
            except Exception:  # noqa: BLE001 - a bug in this script must not hide the rest
                tally.failures.append(f"{path}:1:1: {traceback.format_exc(limit=1)}")
        tally.seconds = time.perf_counter() - started
        if not args.quiet:
            for line in tally.rejected:
                print(f"rejected: {line}")
        for line in tally.failures:
            print(f"FAILURE: {line}")
        for line in tally.port_changed_no_cuda:
            print(f"NO-CUDA CHANGED: {line}")
        print(tally.summary())
        failed = failed or bool(tally.failures or tally.port_changed_no_cuda)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
