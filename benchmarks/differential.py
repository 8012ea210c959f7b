"""Check that the fast CMake parser and the Lark reference parser agree, file by file.

Usage: ``python benchmarks/differential.py ROOT`` — every ``CMakeLists.txt`` and
``*.cmake`` under ROOT is parsed by both :func:`parse_cmake` and
:func:`parse_cmake_lark`. They agree when both build equal trees that print back
to the input byte for byte, or both raise a :class:`ParseError` at the same line
and column. Exits 1 and lists the files on any disagreement.

``--port`` checks the pre-scan instead (:mod:`buildport.prescan`): every file is
ported twice, skipping untouched files and commands and with the skip switched
off; new text and findings must be the same.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from buildport.engine import port_cmake  # noqa: E402
from buildport.prescan import disabled, may_need_cmake_port  # noqa: E402
from buildport.syntax.cmake import _recognize, parse_cmake, parse_cmake_lark  # noqa: E402
from buildport.syntax.errors import ParseError  # noqa: E402


def cmake_files(root: Path) -> list[Path]:
    """CMake sources under ``root``, in a stable order."""
    return sorted(p for p in root.rglob("*") if p.is_file() and (p.name == "CMakeLists.txt" or p.suffix == ".cmake"))


def _outcome(parse: object, text: str) -> object:
    try:
        return parse(text)  # type: ignore[operator]
    except ParseError as error:
        return ("error", error.line, error.col)


def compare(path: Path) -> tuple[bool, str]:
    """Whether both parsers agree on ``path``, and how the file came out."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    fast, reference = _outcome(parse_cmake, text), _outcome(parse_cmake_lark, text)
    if isinstance(fast, tuple) or isinstance(reference, tuple):
        return fast == reference, "error"
    leaves = list(fast.iter_leaves())  # type: ignore[attr-defined]
    same = fast == reference and str(fast) == text and "".join(leaf.value for leaf in leaves) == text
    return same, "recognized" if _recognize(text) is not None else "token scanner"


def _port(text: str, path: str) -> object:
    try:
        result = port_cmake(text, path)
    except ParseError as error:
        return ("error", error.line, error.col)
    return result.text, result.findings


def compare_port(path: Path) -> tuple[bool, str]:
    """Whether porting ``path`` gives the same text and findings with and without the pre-scan."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    skipping = _port(text, str(path))
    with disabled():
        full = _port(text, str(path))
    return skipping == full, "ported" if may_need_cmake_port(text) else "skipped"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", action="store_true", help="check the pre-scan rather than the parsers")
    args = parser.parse_args()
    counts: dict[str, int] = {}
    disagree: list[Path] = []
    for path in cmake_files(args.root):
        same, how = compare_port(path) if args.port else compare(path)
        counts[how] = counts.get(how, 0) + 1
        if not same:
            disagree.append(path)
    total = sum(counts.values())
    detail = ", ".join(f"{n} {how}" for how, n in sorted(counts.items()))
    what = "same text and findings with and without the pre-scan" if args.port else "identical trees and print-back"
    print(f"{total - len(disagree)} of {total} files: {what} ({detail})")
    for path in disagree:
        print(f"DISAGREE {path}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
