"""Every fixture under fixtures/<kind>/<case>/ (cmake, make, python) is a byte-exact input/expected pair.

``input.<ext>`` is ported; the result must equal ``expected.<ext>`` byte for byte,
or the input itself when there is no expected file. ``findings.txt`` lists the
warnings (``line:col severity rule``) the case must produce — exactly those.
``args`` holds command-line options (``--offload-arch``). Invariants on every
case: the input and the output round-trip through the parser (for CMake both
parsers, which must agree), and a second run over the output is a no-op.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from buildport.engine import Result, port_cmake, port_make, port_setup_py
from buildport.findings import Severity
from buildport.passes.base import Options
from buildport.syntax.cmake import parse_cmake, parse_cmake_lark
from buildport.syntax.make import parse_make
from buildport.textio import decode

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _cmake_round_trip(text: str) -> None:
    fast, reference = parse_cmake(text), parse_cmake_lark(text)
    assert fast == reference
    assert str(fast) == text


def _make_round_trip(text: str) -> None:
    assert str(parse_make(text)) == text


def _python_round_trip(text: str) -> None:
    import libcst

    assert libcst.parse_module(text).code == text


@dataclass(frozen=True)
class Kind:
    name: str
    ext: str
    port: Callable[..., Result]
    round_trip: Callable[[str], None]
    at_least: int


KINDS = (
    Kind("cmake", "cmake", port_cmake, _cmake_round_trip, 30), Kind("make", "mk", port_make, _make_round_trip, 25),
    Kind("python", "py", port_setup_py, _python_round_trip, 5),
)
CASES = [(kind, case) for kind in KINDS for case in sorted(p for p in (FIXTURES / kind.name).iterdir() if p.is_dir())]
IDS = [f"{kind.name}/{case.name}" for kind, case in CASES]


def _options(case: Path) -> Options:
    args = case / "args"
    if not args.exists():
        return Options()
    words = shlex.split(args.read_text())
    return Options(tuple(words[words.index("--offload-arch") + 1].split(",")))


def _read(path: Path) -> str:
    return decode(path.read_bytes(), str(path))


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_there_are_enough_cases(kind: Kind) -> None:
    assert sum(1 for k, _ in CASES if k is kind) >= kind.at_least


@pytest.mark.parametrize("kind,case", CASES, ids=IDS)
def test_fixture(kind: Kind, case: Path) -> None:
    source = _read(case / f"input.{kind.ext}")
    expected_file = case / f"expected.{kind.ext}"
    expected = _read(expected_file) if expected_file.exists() else source
    result = kind.port(source, f"{case.name}/input.{kind.ext}", _options(case))
    assert result.text == expected
    assert _with_regions(source, result) == expected, "the regions say where the texts differ"
    shown = sorted(
        f"{f.line}:{f.col} {f.severity} {f.rule}" for f in result.findings if f.severity >= Severity.WARNING
    )
    wanted_file = case / "findings.txt"
    wanted = sorted(wanted_file.read_text().splitlines()) if wanted_file.exists() else []
    assert shown == wanted


def _with_regions(original: str, result: Result) -> str:
    """``original`` with each of the result's regions replaced by its part of the new text."""
    assert result.regions is not None
    pieces: list[str] = []
    at = new_at = 0  # the end of the last region in both texts
    for start, end, new_start, new_end in result.regions:
        assert at <= start <= end and new_start - new_at == start - at, "in order, the text between them shared"
        pieces += (original[at:start], result.text[new_start:new_end])
        at, new_at = end, new_end
    pieces.append(original[at:])
    return "".join(pieces)


@pytest.mark.parametrize("kind,case", CASES, ids=IDS)
def test_invariants(kind: Kind, case: Path) -> None:
    for name in (f"input.{kind.ext}", f"expected.{kind.ext}"):
        if (case / name).exists():
            kind.round_trip(_read(case / name))
    expected_file = case / f"expected.{kind.ext}"
    if expected_file.exists():
        expected = _read(expected_file)
        again = kind.port(expected, f"expected.{kind.ext}", _options(case))
        assert again.text == expected, "a second run must change nothing"


@pytest.mark.parametrize("path", ["cmake/crlf-line-endings/expected.cmake", "make/crlf-endings/expected.mk"])
def test_crlf_fixtures_keep_crlf(path: str) -> None:
    data = (FIXTURES / path).read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") > 4


def test_latin1_fixture_keeps_bytes() -> None:
    data = (FIXTURES / "cmake" / "latin1-bytes" / "expected.cmake").read_bytes()
    assert b"Ren\xe9" in data and b"caf\xe9" in data
