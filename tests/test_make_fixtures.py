"""Every fixture under fixtures/make/<case>/ is a byte-exact input/expected pair.

``input.mk`` is ported; the result must equal ``expected.mk`` byte for byte,
or the input itself when there is no expected file. ``findings.txt`` lists the
warnings (``line:col severity rule``) the case must produce — exactly those.
``args`` holds command-line options (``--offload-arch``). Invariants on every
case: the input and output round-trip through the parser, the output reparses, a second run is a
no-op.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from buildport.engine import port_make
from buildport.findings import Severity
from buildport.passes.base import Options
from buildport.syntax.make import parse_make
from buildport.textio import decode

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

CASES = sorted(p for p in (FIXTURES / "make").iterdir() if p.is_dir())


def _options(case: Path) -> Options:
    args = case / "args"
    if not args.exists():
        return Options()
    words = shlex.split(args.read_text())
    return Options(tuple(words[words.index("--offload-arch") + 1].split(",")))


def _read(path: Path) -> str:
    return decode(path.read_bytes(), str(path))


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture(case: Path) -> None:
    source = _read(case / "input.mk")
    expected_file = case / "expected.mk"
    expected = _read(expected_file) if expected_file.exists() else source
    result = port_make(source, f"{case.name}/input.mk", _options(case))
    assert result.text == expected
    shown = sorted(
        f"{f.line}:{f.col} {f.severity} {f.rule}" for f in result.findings if f.severity >= Severity.WARNING
    )
    wanted_file = case / "findings.txt"
    wanted = sorted(wanted_file.read_text().splitlines()) if wanted_file.exists() else []
    assert shown == wanted


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_invariants(case: Path) -> None:
    for name in ("input.mk", "expected.mk"):
        path = case / name
        if not path.exists():
            continue
        text = _read(path)
        assert str(parse_make(text)) == text
    expected_file = case / "expected.mk"
    if expected_file.exists():
        expected = _read(expected_file)
        again = port_make(expected, "expected.mk", _options(case))
        assert again.text == expected, "a second run must change nothing"


def test_crlf_fixture_keeps_crlf() -> None:
    data = (FIXTURES / "make" / "crlf-endings" / "expected.mk").read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") > 4
