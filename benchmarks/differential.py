"""Check that the fast CMake parser and the Lark reference parser agree, file by file.

Usage: ``python benchmarks/differential.py ROOT`` — every ``CMakeLists.txt`` and
``*.cmake`` under ROOT is parsed by both :func:`parse_cmake` and
:func:`parse_cmake_lark`. They agree when both build equal trees that print back
to the input byte for byte, or both raise a :class:`ParseError` at the same line
and column. Exits 1 and lists the files on any disagreement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    args = parser.parse_args()
    counts: dict[str, int] = {}
    disagree: list[Path] = []
    for path in cmake_files(args.root):
        same, how = compare(path)
        counts[how] = counts.get(how, 0) + 1
        if not same:
            disagree.append(path)
    total = sum(counts.values())
    detail = ", ".join(f"{n} {how}" for how, n in sorted(counts.items()))
    print(f"{total - len(disagree)} of {total} files: identical trees and print-back ({detail})")
    for path in disagree:
        print(f"DISAGREE {path}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
