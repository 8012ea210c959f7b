"""What an audit gives: each file's findings (:class:`FileAudit`), the run's report (:class:`AuditReport`),
the ``--select``/``--ignore`` filter and the rule catalogue it checks against."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Iterator

from buildport.findings import Finding, Severity
from buildport.rules import build_rules, source_rules


class UsageError(ValueError):
    """A ``--select``/``--ignore`` entry that names no known rule."""


@dataclass(slots=True)
class FileAudit:
    """The findings of one audited file.

    ``line_scoped`` holds the fixable findings whose ``replacement`` is the
    rewritten line: the engine did not name the replacing text itself. A fixable
    finding with an empty replacement outside it either removes its text or (when
    the engine named nothing and the line could not be paired) has none known.
    """

    path: str
    kind: str
    findings: list[Finding] = field(default_factory=list)
    line_scoped: set[Finding] = field(default_factory=set)
    #: The fixable findings that name the text they write in a line (``-lhipblas``), each with the whole line
    #: the rewrite puts in place of theirs ("" when the line goes): what a SARIF fix replaces the line with.
    line_fixes: dict[Finding, str] = field(default_factory=dict)

    def keep_only(self, findings: list[Finding]) -> None:
        """``findings`` (a subset of this file's) become its findings, with what is known of each."""
        self.findings = findings
        kept = set(findings)
        self.line_scoped &= kept
        self.line_fixes = {f: line for f, line in self.line_fixes.items() if f in kept}

    @property
    def fixable(self) -> int:
        return sum(1 for f in self.findings if f.fixable)


#: Finding.sort_key, in C: a report sorts every finding of the run.
_SORT_KEY = operator.attrgetter("path", "line", "col", "rule")


@dataclass(slots=True)
class AuditReport:
    """Every audited file and every input that could not be read or parsed."""

    files: list[FileAudit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for a in self.files for f in a.findings), key=_SORT_KEY)

    def at_or_above(self, threshold: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity >= threshold]

    def any_at_or_above(self, threshold: Severity) -> bool:
        """Whether ``at_or_above(threshold)`` is not empty (without sorting every finding)."""
        return any(f.severity >= threshold for a in self.files for f in a.findings)

    def fails(self, threshold: Severity) -> bool:
        """Whether the gate fails at ``threshold`` (``--fail-on``): a finding at or above it, or one that
        ``buildport cmake``/``make`` would fix, which counts as a warning there (CUDA left in a build file the
        port rewrites: a hard-coded nvcc, ``-lcublas``), whatever its own severity."""
        return any(f.severity >= threshold or (f.fixable and threshold <= Severity.WARNING)
                   for a in self.files for f in a.findings)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RuleFilter:
    """``--select``/``--ignore``: rule ids or id prefixes (``warp-`` matches every ``warp-*`` rule)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @classmethod
    def parse(cls, select: str = "", ignore: str = "") -> RuleFilter:
        """Comma lists → a filter; :class:`UsageError` for an entry that matches no rule."""
        chosen = tuple(_entries(select))
        dropped = tuple(_entries(ignore))
        known = known_rules()
        for entry in chosen + dropped:
            if not any(_matches(entry, rule) for rule in known):
                raise UsageError(f"no rule id starts with {entry!r}")
        return cls(chosen, dropped)

    def wants(self, rule: str) -> bool:
        if self.select and not any(_matches(e, rule) for e in self.select):
            return False
        return not any(_matches(e, rule) for e in self.ignore)


def _entries(text: str) -> Iterator[str]:
    return (part.strip() for part in text.split(",") if part.strip())


def _matches(entry: str, rule: str) -> bool:
    return rule.startswith(entry)


def known_rules() -> list[str]:
    """Every rule id an audit can report: the build catalogue, then the source one."""
    return [r.id for r in build_rules.RULES] + [r.id for r in source_rules.RULES]


def describe(rule: str) -> tuple[str, Severity, str]:
    """(title, default severity, rationale) of any rule id an audit reports."""
    if rule in build_rules.BY_ID:
        b = build_rules.BY_ID[rule]
        return b.title, b.severity, b.rationale
    if rule in source_rules.BY_ID:
        s = source_rules.BY_ID[rule]
        return s.title, s.severity, s.rationale
    return rule, Severity.WARNING, ""
