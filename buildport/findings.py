"""Findings: what a pass or a scanner reports instead of printing.

Passes never print. They hand :class:`Finding` objects to a :class:`Collector`; the
command line decides how to show them (text, JSON, SARIF).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    """How much a finding matters; ordered so that ``>=`` compares strength."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing found at one place.

    ``line`` and ``col`` are 1-based. ``fixable`` is true when a ``buildport``
    rewrite changes the spot by itself; ``replacement`` then says what it writes.
    """

    path: str
    line: int
    col: int
    rule: str
    severity: Severity
    message: str
    suggestion: str = ""
    fixable: bool = False
    replacement: str = ""

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.rule)

    def format(self) -> str:
        """``path:line:col: severity[rule]: message`` — one line, compiler style."""
        text = f"{self.path}:{self.line}:{self.col}: {self.severity}[{self.rule}]: {self.message}"
        if self.suggestion:
            text += f" ({self.suggestion})"
        return text


@dataclass(slots=True)
class Collector:
    """Gathers findings for one run; deduplicates exact repeats."""

    findings: list[Finding] = field(default_factory=list)
    _seen: set[Finding] = field(default_factory=set)

    def add(self, finding: Finding) -> None:
        if finding not in self._seen:
            self._seen.add(finding)
            self.findings.append(finding)

    def extend(self, findings: list[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    def sorted(self) -> list[Finding]:
        return sorted(self.findings, key=Finding.sort_key)
