"""Check that the fast make parser and the Lark reference parser agree, file by file.

Usage: ``python benchmarks/make_differential.py ROOT`` — every ``Makefile``,
``makefile``, ``GNUmakefile``, ``Makefile.*`` and ``*.mk`` under ROOT is parsed by
both :func:`parse_make` and :func:`parse_make_lark`. They agree when both build
equal lines that print back to the input byte for byte, or both raise a
:class:`ParseError` with the same message at the same line and column. Prints
MB/s (CPU time, collector off) of both, and exits 1 listing the files on any
disagreement.

With ``--port`` it also ports every file with :func:`port_make` twice, with the
make pre-scan skipping lines and with it switched off, and requires the same
output text and findings (or the same error); it prints port_make MB/s next to
the parser's. It does so twice: each file read alone, and each file read with
the facts of every file under ROOT combined (a variable that another file makes
a compiler or a flag variable). That is more than a run gives any file, which
reads a Makefile with the files it includes or is included by alone, and so
puts the pre-scan's handling of another file's facts to a harder test.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from buildport.engine import UnstableRewrite, port_make
from buildport.options import MakeFacts
from buildport.passes.make_facts import combine, file_facts
from buildport.prescan import disabled
from buildport.syntax.errors import ParseError
from buildport.syntax.make import MakeFile, parse_make, parse_make_lark

Outcome = tuple[object, ...]
MAKE_NAMES = {"Makefile", "makefile", "GNUmakefile"}


def make_files(root: Path) -> list[Path]:
    """Makefiles under ``root``, in a stable order."""
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and (p.name in MAKE_NAMES or p.name.startswith("Makefile.") or p.suffix == ".mk")
    )  # fmt: skip


def _outcome(parse: Callable[[str], MakeFile], text: str) -> Outcome:
    try:
        makefile = parse(text)
    except ParseError as error:
        return ("error", error.message, error.line, error.col)
    return ("tree", makefile.bom, makefile.lines, str(makefile) == text)


def _rate(parse: Callable[[str], MakeFile], texts: list[str]) -> float:
    """MB/s of parse + print over ``texts``: CPU time, best of three."""
    size = sum(len(t.encode("utf-8", "surrogateescape")) for t in texts)
    best = float("inf")
    for _ in range(3):
        gc.disable()
        start = time.process_time()
        for text in texts:
            try:
                str(parse(text))
            except ParseError:
                pass
        best = min(best, time.process_time() - start)
        gc.enable()
    return size / 1e6 / max(best, 1e-9)


def _port(path: Path, text: str, facts: MakeFacts | None = None) -> Outcome:
    try:
        result = port_make(text, str(path), facts=facts)
    except (ParseError, UnstableRewrite) as error:
        return ("error", type(error).__name__, str(error))
    return ("ported", result.text, result.findings)


def _port_rate(paths: list[Path], texts: list[str]) -> float:
    """MB/s of port_make over ``texts``: CPU time, best of three (the collector as in a real run)."""
    size = sum(len(t.encode("utf-8", "surrogateescape")) for t in texts)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for path, text in zip(paths, texts):
            _port(path, text)
        best = min(best, time.process_time() - start)
    return size / 1e6 / max(best, 1e-9)


def run_facts(paths: list[Path], texts: list[str]) -> MakeFacts:
    """The facts of all the files together (a run combines only files that include one another)."""
    parts = []
    for path, text in zip(paths, texts):
        try:
            parts.append(file_facts(parse_make(text, str(path))))
        except ParseError:
            continue
    facts = MakeFacts()
    combine(facts, parts)
    return facts


def compare_ports(paths: list[Path], texts: list[str], facts: MakeFacts | None = None) -> list[Path]:
    """The files whose port differs with the pre-scan on and off."""
    differ: list[Path] = []
    for path, text in zip(paths, texts):
        skipping = _port(path, text, facts)
        with disabled():
            everything = _port(path, text, facts)
        if skipping != everything:
            differ.append(path)
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--no-timing", action="store_true", help="only compare, do not measure speed")
    parser.add_argument("--port", action="store_true", help="also compare port_make with the pre-scan on and off")
    args = parser.parse_args()
    paths = make_files(args.root)
    texts = [p.read_bytes().decode("utf-8", "surrogateescape") for p in paths]
    if not args.no_timing:  # first: timing after the comparison's garbage reads low
        print(f"parse + print: fast {_rate(parse_make, texts):.2f} MB/s, "
              f"Lark reference {_rate(parse_make_lark, texts):.2f} MB/s")
    rejected = 0
    disagree: list[Path] = []
    for path, text in zip(paths, texts):
        fast, reference = _outcome(parse_make, text), _outcome(parse_make_lark, text)
        if fast != reference or (fast[0] == "tree" and not fast[3]):
            disagree.append(path)
        elif fast[0] == "error":
            rejected += 1
    agree = len(paths) - len(disagree)
    print(f"{len(paths)} files: {agree} agree ({agree - rejected} identical lossless trees, "
          f"{rejected} rejected by both at the same place), {len(disagree)} disagree")
    for path in disagree:
        print(f"DISAGREE {path}")
    if not args.port:
        return 1 if disagree else 0
    if not args.no_timing:
        parse, port = _rate(parse_make, texts), _port_rate(paths, texts)
        print(f"port_make {port:.2f} MB/s, parse + print {parse:.2f} MB/s: {port / parse:.0%} of the parser's speed")
    differ = compare_ports(paths, texts)
    print(f"port_make with and without the pre-scan, each file alone: {len(paths) - len(differ)} identical, "
          f"{len(differ)} differ")
    facts = run_facts(paths, texts)
    differ_run = compare_ports(paths, texts, facts)
    print(f"the same with the facts of all {len(paths)} files ({len(facts.compiler_vars)} compiler, "
          f"{len(facts.flag_vars)} flag, {len(facts.arch_vars)} architecture variables): "
          f"{len(paths) - len(differ_run)} identical, {len(differ_run)} differ")
    for path in differ + differ_run:
        print(f"PORT DIFFERS {path}")
    return 1 if disagree or differ or differ_run else 0


if __name__ == "__main__":
    sys.exit(main())
