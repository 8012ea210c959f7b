"""Write each fixture's expected output (fixtures/cmake, fixtures/make, fixtures/python) from the engine as it is now.

For a change that is meant to change ported output: run it, then read ``git diff fixtures/`` line by
line: every changed expectation must be a change you meant. Cases whose output equals their input
keep no expected file. Findings files are rewritten too (warnings and errors, as the test reads them).

    python scripts/update_fixtures.py [CASE ...]     # e.g. make/gencode-list; default: every case
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from test_fixtures import CASES, _options, _read  # noqa: E402

from buildport.findings import Severity  # noqa: E402
from buildport.textio import encode  # noqa: E402


def main(names: list[str]) -> int:
    changed = 0
    for kind, case in CASES:
        if names and f"{kind.name}/{case.name}" not in names:
            continue
        source = _read(case / f"input.{kind.ext}")
        result = kind.port(source, f"{case.name}/input.{kind.ext}", _options(case))
        expected = case / f"expected.{kind.ext}"
        if result.text == source:
            if expected.exists():
                expected.unlink()
                changed += 1
        elif not expected.exists() or _read(expected) != result.text:
            expected.write_bytes(encode(result.text))
            changed += 1
        shown = sorted(
            f"{f.line}:{f.col} {f.severity} {f.rule}" for f in result.findings if f.severity >= Severity.WARNING
        )
        findings = case / "findings.txt"
        old = sorted(findings.read_text().splitlines()) if findings.exists() else []
        if shown != old:
            changed += 1
            if shown:
                findings.write_text("\n".join(shown) + "\n")
            else:
                findings.unlink()
    print(f"{changed} files written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
