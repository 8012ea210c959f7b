"""Throughput, memory and lossless rate of buildport's parsers and of peer parsers.

Usage::

    python benchmarks/bench.py ROOT                    # a real source tree
    python benchmarks/bench.py --synthetic 400 --seed 1  # a generated tree

Every tool runs in its own subprocess (so peak RSS is its own), over the same
files, read into memory before the clock starts. Times are CPU seconds
(``time.process_time``) per repetition; the table shows the median and the
spread (min–max) in MB/s, files/s, peak RSS, the share of files parsed and the
share printed back byte for byte, and buildport's speed as a multiple of each
peer's. A peer that is not installed is listed as missing. The "big file" rows
concatenate the valid files into one file of ``--big-mb`` MB.

Lossless means: buildport and cmakelang print their tree back to the exact
input; tree-sitter keeps only byte ranges, so a tree without ERROR/MISSING
nodes counts as lossless; cmake-parser drops whitespace and comments' layout,
so it has no lossless figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
MAKE_NAMES = {"Makefile", "makefile", "GNUmakefile"}

#: (tool, language, what is measured); the first of each language is the reference for ratios.
TOOLS: list[tuple[str, str, str]] = [
    ("buildport", "cmake", "parse + print (leaves built on demand)"),
    ("buildport-eager", "cmake", "parse + build every leaf + print from leaves"),
    ("buildport-port", "cmake", "whole port: parse, passes, render, re-verify"),
    ("buildport-audit", "cmake", "audit of the file: port, residue, suppressions"),
    ("cmakelang", "cmake", "lexer + parser"),
    ("cmakelang-lex", "cmake", "lexer only"),
    ("tree-sitter-cmake", "cmake", "parse"),
    ("cmake-parser", "cmake", "parse_raw"),
    ("buildport-make", "make", "parse + print"),
    ("buildport-make-lark", "make", "parse + print with the Lark reference parser"),
    ("buildport-make-port", "make", "whole port of the file alone: parse, passes, prelude, re-verify"),
    ("buildport-make-audit", "make", "audit of the file: port, residue, suppressions"),
    ("tree-sitter-make", "make", "parse"),
]

#: Tools that do more than parse: no lossless figure (on the big file too: a file's cost must not grow with
#: the square of its size).
_WHOLE = frozenset({"buildport-port", "buildport-audit", "buildport-make-port", "buildport-make-audit"})

_WHOLE_ORDER = [t for t, _, _ in TOOLS if t in _WHOLE]
_LANGUAGE = {t: lang for t, lang, _ in TOOLS}

#: (outcome of one file: parsed, lossless)
Outcome = tuple[bool, bool]


# --- the tools, each as a function from text to outcome ---------------------------------


def _buildport(eager: bool) -> Callable[[str], Outcome]:
    from buildport.syntax.cmake import parse_cmake
    from buildport.syntax.errors import ParseError

    def run(text: str) -> Outcome:
        try:
            tree = parse_cmake(text)
        except ParseError:
            return False, False
        printed = "".join([leaf.value for leaf in tree.iter_leaves()]) if eager else str(tree)
        return True, printed == text

    return run


def _buildport_whole(kind: str, audit: bool) -> Callable[[str], Outcome]:
    from buildport.audit import audit_text
    from buildport.engine import port_cmake, port_make
    from buildport.syntax.errors import ParseError

    path = "bench/CMakeLists.txt" if kind == "cmake" else "bench/Makefile"
    port = port_cmake if kind == "cmake" else port_make

    def run(text: str) -> Outcome:
        try:
            if audit:
                audit_text(text, path, kind)
            else:
                port(text, path)
        except (ParseError, RecursionError):  # RecursionError: a pass's bug, counted as a failure
            return False, False
        return True, True

    return run


def _buildport_make(reference: bool = False) -> Callable[[str], Outcome]:
    from buildport.syntax.errors import ParseError
    from buildport.syntax.make import parse_make, parse_make_lark

    parse = parse_make_lark if reference else parse_make

    def run(text: str) -> Outcome:
        try:
            tree = parse(text)
        except ParseError:
            return False, False
        return True, str(tree) == text

    return run


def _cmakelang(full: bool) -> Callable[[str], Outcome]:
    from cmakelang import lex, parse

    def run(text: str) -> Outcome:
        try:
            tokens = lex.tokenize(text)
            if not full:
                return True, "".join(t.content for t in tokens) == text
            tree = parse.parse(tokens)
        except Exception:  # noqa: BLE001 - a peer's failure is a data point
            return False, False
        return True, "".join(t.content for t in tree.get_tokens(kind="all")) == text

    return run


def _tree_sitter(language: str) -> Callable[[str], Outcome]:
    import tree_sitter

    module = __import__(f"tree_sitter_{language}")
    parser = tree_sitter.Parser(tree_sitter.Language(module.language()))

    def run(text: str) -> Outcome:
        tree = parser.parse(text.encode("utf-8", "surrogateescape"))
        ok = not tree.root_node.has_error
        return ok, ok

    return run


def _cmake_parser() -> Callable[[str], Outcome]:
    import cmake_parser

    def run(text: str) -> Outcome:
        try:
            for _ in cmake_parser.parse_raw(text):
                pass
        except Exception:  # noqa: BLE001
            return False, False
        return True, False

    return run


def load_tool(name: str) -> Callable[[str], Outcome]:
    """The function that runs ``name`` on one text; ImportError when it is missing."""
    factories: dict[str, Callable[[], Callable[[str], Outcome]]] = {
        "buildport": lambda: _buildport(False),
        "buildport-eager": lambda: _buildport(True),
        "buildport-port": lambda: _buildport_whole("cmake", False),
        "buildport-audit": lambda: _buildport_whole("cmake", True),
        "buildport-make-port": lambda: _buildport_whole("make", False),
        "buildport-make-audit": lambda: _buildport_whole("make", True),
        "buildport-make": _buildport_make,
        "buildport-make-lark": lambda: _buildport_make(True),
        "cmakelang": lambda: _cmakelang(True),
        "cmakelang-lex": lambda: _cmakelang(False),
        "tree-sitter-cmake": lambda: _tree_sitter("cmake"),
        "tree-sitter-make": lambda: _tree_sitter("make"),
        "cmake-parser": _cmake_parser,
    }
    return factories[name]()


# --- the worker: one tool, one corpus, in its own process --------------------------------


def _rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _read(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


def worker(tool: str, listing: str, reps: int, big_mb: float) -> dict[str, object]:
    """Run ``tool`` over the files named in ``listing`` (or their concatenation) ``reps`` times."""
    sys.path.insert(0, str(REPO))
    try:
        run = load_tool(tool)
    except ImportError as exc:
        return {"missing": str(exc)}
    texts = [_read(p) for p in Path(listing).read_text().splitlines() if p]
    for text in texts[:50]:  # compile the regexes, grammars and lexer states outside the clock
        run(text)
    if big_mb:
        texts = [_concatenate(texts, int(big_mb * 1e6))]
    size = sum(len(t.encode("utf-8", "surrogateescape")) for t in texts)
    base = _rss_mb()
    times: list[float] = []
    parsed = lossless = 0
    for _ in range(reps):
        parsed = lossless = 0
        start = time.process_time()
        for text in texts:
            ok, exact = run(text)
            parsed += ok
            lossless += exact
        times.append(time.process_time() - start)
    return {
        "times": times, "bytes": size, "files": len(texts), "parsed": parsed, "lossless": lossless,
        "rss": _rss_mb(), "rss_base": base, "largest": max((len(t) for t in texts), default=0),
    }  # fmt: skip


def paired_worker(tools: list[str], listing: str, reps: int) -> dict[str, object]:
    """The first of ``tools`` (a parser) and the others, in turn within each of ``reps`` rounds, in
    this one process: a pipeline's share of the parser's speed, round by round, is then measured
    over the same minutes of a machine whose speed drifts."""
    sys.path.insert(0, str(REPO))
    runs = {tool: load_tool(tool) for tool in tools}
    texts = [_read(p) for p in Path(listing).read_text().splitlines() if p]
    for run in runs.values():
        for text in texts[:50]:  # compile the regexes, grammars and lexer states outside the clock
            run(text)
    times: dict[str, list[float]] = {tool: [] for tool in tools}
    for _ in range(reps):
        for tool, run in runs.items():
            start = time.process_time()
            for text in texts:
                run(text)
            times[tool].append(time.process_time() - start)
    return {"times": times, "files": len(texts)}


def _concatenate(texts: list[str], target: int) -> str:
    """Whole files, newline-separated, repeated until ``target`` bytes."""
    parts: list[str] = []
    total = 0
    while total < target and texts:
        for text in texts:
            text = text.removeprefix("\ufeff")  # a byte-order mark may only open a file
            parts.append(text if text.endswith(("\n", "\r")) else text + "\n")
            total += len(parts[-1])
            if total >= target:
                break
    return "".join(parts)


# --- the corpus --------------------------------------------------------------------------


def find_files(root: Path) -> tuple[list[Path], list[Path]]:
    """CMake sources and Makefiles under ``root``, in a stable order."""
    cmake: list[Path] = []
    make: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                cmake.append(path)
            elif name in MAKE_NAMES or name.endswith(".mk"):
                make.append(path)
    return cmake, make


def _valid(paths: list[Path], language: str) -> list[Path]:
    """The files buildport accepts, whose concatenation makes the big file. A Makefile that
    changes ``.RECIPEPREFIX`` is left out too: the change would carry over to the files after it."""
    sys.path.insert(0, str(REPO))
    from buildport.syntax.cmake import parse_cmake
    from buildport.syntax.errors import ParseError
    from buildport.syntax.make import parse_make

    parse = parse_cmake if language == "cmake" else parse_make
    valid = []
    for path in paths:
        text = _read(str(path))
        if language == "make" and ".RECIPEPREFIX" in text:
            continue
        try:
            parse(text)
        except (ParseError, RecursionError):
            continue
        valid.append(path)
    return valid


# --- the parent: run every tool, print the table -----------------------------------------


def measure(tool: str, paths: list[Path], reps: int, big_mb: float, scratch: Path) -> dict[str, object]:
    """Run one tool in a fresh interpreter and return what it measured."""
    listing = scratch / f"{tool}-{'big' if big_mb else 'files'}.txt"
    listing.write_text("\n".join(str(p) for p in paths))
    command = [sys.executable, __file__, "--worker", tool, "--listing", str(listing),
               "--reps", str(reps), "--big-mb", str(big_mb)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"missing": f"failed: {done.stderr.strip().splitlines()[-1:]}"}
    result: dict[str, object] = json.loads(done.stdout)
    return result


def paired(parser_tool: str, tools: list[str], paths: list[Path], reps: int, scratch: Path) -> list[str]:
    """The table of each pipeline's speed as a share of the parser's, from alternating rounds."""
    listing = scratch / f"paired-{parser_tool}.txt"
    listing.write_text("\n".join(str(p) for p in paths))
    command = [sys.executable, __file__, "--paired", ",".join([parser_tool, *tools]), "--listing", str(listing),
               "--reps", str(reps)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return [f"paired rounds failed: {done.stderr.strip().splitlines()[-1:]}", ""]
    times: dict[str, list[float]] = json.loads(done.stdout)["times"]
    lines = [f"#### {parser_tool} and the whole pipelines, in turn in each of {reps} rounds of one process", "",
             f"| tool | speed as a share of {parser_tool}'s, median (min–max over rounds) |", "|---|---|"]
    for tool in tools:
        shares = sorted(p / t for p, t in zip(times[parser_tool], times[tool]))
        lines.append(f"| {tool} | {statistics.median(shares):.0%} ({shares[0]:.0%}–{shares[-1]:.0%}) |")
    return lines + [""]


def _row(tool: str, what: str, r: dict[str, object], reference: Optional[float]) -> str:
    if "missing" in r:
        return f"| {tool} | {what} | missing ({r['missing']}) | | | | | | |"
    times = sorted(r["times"])  # type: ignore[arg-type]
    mb = r["bytes"] / 1e6  # type: ignore[operator]
    files = r["files"]
    median = statistics.median(times)
    speed, fast, slow = mb / median, mb / times[0], mb / times[-1]
    ratio = f"{reference / speed:.{1 if reference >= speed else 2}f}×" if reference else "—"
    parsed = 100 * r["parsed"] / max(1, files)  # type: ignore[operator]
    lossless = 100 * r["lossless"] / max(1, files)  # type: ignore[operator]
    lossless_text = "n/a" if tool == "cmake-parser" or tool in _WHOLE else f"{lossless:.2f}%"
    return (
        f"| {tool} | {what} | {speed:.2f} ({slow:.2f}–{fast:.2f}) | {files / median:,.0f} | "
        f"{r['rss']:.0f} (+{r['rss'] - r['rss_base']:.0f}) | {parsed:.2f}% | {lossless_text} | {ratio} |"  # type: ignore[operator]
    )


def report(title: str, results: dict[str, dict[str, object]], language: str, reference_tool: str) -> list[str]:
    """The Markdown table of one corpus."""
    ref = results.get(reference_tool, {})
    reference = None
    if "times" in ref:
        reference = ref["bytes"] / 1e6 / statistics.median(ref["times"])  # type: ignore[operator, arg-type]
    lines = [f"### {title}", "",
             f"| tool | measures | MB/s median (min–max) | files/s | peak RSS MB (+ during parse) | parsed | "
             f"lossless | {reference_tool} is |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for tool, lang, what in TOOLS:
        if lang == language and tool in results:
            lines.append(_row(tool, what, results[tool], None if tool == reference_tool else reference))
    first = next(iter(results.values()), {})
    if "bytes" in first:
        lines.append(f"\n{first['files']} files, {first['bytes'] / 1e6:.2f} MB, largest {first['largest'] / 1e6:.2f} MB")  # type: ignore[operator]
    return lines + [""]


def generate(root: Path, count: int, seed: int) -> None:
    """Write ``count`` CMake projects and Makefiles with CUDA content under ``root``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import write_tree

    write_tree(root, count, seed)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark buildport's parsers against peer parsers.")
    parser.add_argument("root", nargs="?", type=Path, help="a source tree to read")
    parser.add_argument("--synthetic", type=int, metavar="N", help="generate N CMake files and N Makefiles instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, default=5, help="repetitions per tool (default 5)")
    parser.add_argument("--big-mb", type=float, default=10.0, help="size of the single-file case (0: skip)")
    parser.add_argument("--tools", default=",".join(t for t, _, _ in TOOLS), help="comma-separated subset")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--paired", help=argparse.SUPPRESS)
    parser.add_argument("--listing", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.listing, args.reps, args.big_mb)))
        return 0
    if args.paired:
        print(json.dumps(paired_worker(args.paired.split(","), args.listing, args.reps)))
        return 0
    if (args.root is None) == (args.synthetic is None):
        parser.error("give either ROOT or --synthetic N")
    with tempfile.TemporaryDirectory(prefix="buildport-bench-") as scratch_name:
        scratch = Path(scratch_name)
        root = args.root
        if args.synthetic is not None:
            sys.path.insert(0, str(REPO))
            root = scratch / "tree"
            generate(root, args.synthetic, args.seed)
        return run_all(root, args, scratch)


def run_all(root: Path, args: argparse.Namespace, scratch: Path) -> int:
    """Measure every selected tool on ``root`` and print the tables."""
    wanted = set(args.tools.split(","))
    cmake, make = find_files(root)
    corpora = {"cmake": cmake, "make": make}
    everything: dict[str, dict[str, dict[str, object]]] = {}
    out = [f"# buildport benchmark: {root}", "",
           f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.reps} repetitions, CPU time.", ""]  # fmt: skip
    for language, reference_tool in (("cmake", "buildport"), ("make", "buildport-make")):
        paths = corpora[language]
        if not paths:
            continue
        results = {t: measure(t, paths, args.reps, 0, scratch) for t, lang, _ in TOOLS if lang == language and t in wanted}
        everything[f"{language} files"] = results
        out += report(f"{language}: {len(paths)} files", results, language, reference_tool)
        pipelines = [t for t in _WHOLE_ORDER if t in wanted and _LANGUAGE[t] == language]
        if reference_tool in wanted and pipelines:
            out += paired(reference_tool, pipelines, paths, args.reps, scratch)
    for language, reference_tool in (("cmake", "buildport"), ("make", "buildport-make")):
        if not args.big_mb or not corpora[language]:
            continue
        valid = _valid(corpora[language], language)
        big_tools = [t for t, lang, _ in TOOLS if lang == language and t in wanted
                     and t != "buildport-make-lark"]  # the reference parser: minutes on 10 MB, and no news
        results = {t: measure(t, valid, max(1, min(args.reps, 3)), args.big_mb, scratch) for t in big_tools}
        everything[f"{language} big file"] = results
        out += report(f"{language}: one file of {args.big_mb:g} MB (valid files concatenated)", results, language,
                      reference_tool)
    print("\n".join(out))
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
