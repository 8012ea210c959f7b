"""Rendering an :class:`~buildport.audit.AuditReport`: text for people, JSON and SARIF for tools.

The JSON form is described by ``buildport/schemas/audit-v1.json`` (its
``version`` field is :data:`JSON_VERSION`); the SARIF form is SARIF 2.1.0 as
GitHub code scanning reads it. Paths in SARIF are relative to the working
directory (``%SRCROOT%``) when they lie below it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path
from json.encoder import encode_basestring  # the C one where available
from typing import Any, Callable
from urllib.parse import quote

import click

from buildport import __version__
from buildport.audit import AuditReport, FileAudit, describe
from buildport.findings import Finding, Severity
from buildport.report import ruledoc
from buildport.report.jsontext import RawJSON, dumps_indented
from buildport.rules import source_rules

JSON_VERSION = 1
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def short_message(finding: Finding) -> str:
    """The first, specific part of a message: source findings end with their rule's long rationale."""
    rule = source_rules.BY_ID.get(finding.rule)
    if rule is not None and finding.message.endswith(f". {rule.rationale}"):
        return finding.message[: -len(rule.rationale) - 2]
    return finding.message


def share(fixable: int, total: int) -> int:
    """Whole percent of findings a tool can migrate (0 when there are none)."""
    return round(100 * fixable / total) if total else 0


def render_text(report: AuditReport, color: bool = False, verbosity: int = 0) -> str:
    """Findings grouped by file, then the summary; ``color`` adds ANSI styles. ``verbosity`` -1 (``-q``):
    the totals alone; 1 (``-v``): the summary also names each file audited without findings."""

    def style(text: str, **kw: Any) -> str:
        return click.style(text, **kw) if color else text

    out: list[str] = []
    for audited in report.files if verbosity >= 0 else ():
        if not audited.findings:
            continue
        out.append(style(audited.path, bold=True) + f"  ({audited.kind}: {_counts(audited)})")
        for f in audited.findings:
            where = f"{f.line}:{f.col}".ljust(8)
            level = style(str(f.severity).ljust(7), fg=_COLORS[f.severity])
            out.append(f"  {where} {level} {f.rule}: {short_message(f)}")
            if f.fixable and f.replacement:
                for i, line in enumerate(f.replacement.splitlines() or [""]):
                    out.append(" " * 19 + style(("fix: " if i == 0 else "     ") + line, fg="green"))
        out.append("")
    out.extend(_summary(report, style, verbosity))
    return "\n".join(out) + "\n"


def _counts(audited: FileAudit) -> str:
    n = len(audited.findings)
    return f"{n} finding{'s' if n != 1 else ''}, {audited.fixable} auto-fixable"


def _summary(report: AuditReport, style: Any, verbosity: int = 0) -> list[str]:
    findings = report.findings
    fixable = sum(1 for f in findings if f.fixable)
    with_findings = [a for a in report.files if a.findings]
    listed = report.files if verbosity > 0 else with_findings if verbosity == 0 else []
    lines = [style("Summary", bold=True)]
    width = max((len(a.path) for a in listed), default=0)
    for a in listed:
        lines.append(f"  {a.path.ljust(width)}  {_counts(a) if a.findings else 'no findings'}")
    by_severity = Counter(f.severity for f in findings)
    levels = ", ".join(f"{by_severity[s]} {s}" for s in sorted(Severity, reverse=True))
    lines.append(f"  {len(report.files)} files audited, {len(with_findings)} with findings")
    lines.append(f"  {len(findings)} findings ({levels}), {fixable} auto-fixable")
    lines.append(f"  a tool can migrate an estimated {share(fixable, len(findings))}% "
                 f"({fixable} of {len(findings)} findings)")
    for error in report.errors:
        lines.append(style(f"  {error}", fg="red"))
    return lines


def to_json(report: AuditReport) -> dict[str, Any]:
    """The report as the data of ``audit-v1.json``."""
    return _document(report, finding_json)


def _document(report: AuditReport, finding: Callable[[Finding, str, str | None], Any]) -> dict[str, Any]:
    """The JSON data of the report, each finding as ``finding(f, kind, replacement_scope)``."""
    findings = report.findings
    fixable = sum(1 for f in findings if f.fixable)
    scoped = {f for a in report.files for f in a.line_scoped}
    kinds = {a.path: a.kind for a in report.files}
    return {
        "format": "buildport-audit",
        "version": JSON_VERSION,
        "tool": {"name": "buildport", "version": __version__},
        "files": [
            {"path": a.path, "kind": a.kind, "findings": len(a.findings), "fixable": a.fixable} for a in report.files
        ],
        "findings": [finding(f, kinds[f.path], _scope(f, scoped)) for f in findings],
        "rules": [_rule_json(rule) for rule in sorted({f.rule for f in findings})],
        "summary": {
            "files": len(report.files),
            "files_with_findings": sum(1 for a in report.files if a.findings),
            "findings": len(findings),
            "fixable": fixable,
            "migratable_percent": share(fixable, len(findings)),
            "by_severity": {str(s): sum(1 for f in findings if f.severity == s) for s in Severity},
            "by_rule": dict(sorted(Counter(f.rule for f in findings).items())),
        },
        "errors": [error_json(e) for e in report.errors],
    }


_PLACED = re.compile(r"(?P<path>(?:(?!: ).)+?):(?P<line>\d+):(?P<col>\d+): (?:error: )?(?P<message>.*)", re.S)
_FILED = re.compile(r"(?P<path>[^:\n]+): (?:error: )?(?P<message>.*)", re.S)


def error_json(error: str) -> dict[str, Any]:
    """An input error (``path:line:col: error: message``, or ``path: error: message``) as its parts; a line or
    column the message does not give is null."""
    placed = _PLACED.fullmatch(error)
    if placed is not None:
        return {"path": placed["path"], "line": int(placed["line"]), "col": int(placed["col"]),
                "message": placed["message"].strip()}
    filed = _FILED.fullmatch(error)
    if filed is not None:
        return {"path": filed["path"], "line": None, "col": None, "message": filed["message"].strip()}
    return {"path": None, "line": None, "col": None, "message": error.strip()}


def finding_json(f: Finding, kind: str, scope: str | None) -> dict[str, Any]:
    """One entry of the report's ``findings``."""
    return {
        "path": f.path, "kind": kind, "line": f.line, "column": f.col, "rule": f.rule,
        "severity": str(f.severity), "message": f.message, "suggestion": f.suggestion,
        "fixable": f.fixable, "replacement": f.replacement if f.fixable else None,
        "replacement_scope": scope,
    }


def finding_line(f: Finding, kind: str, scope: str | None) -> RawJSON:
    """``json.dumps(finding_json(f, kind, scope), ensure_ascii=False)``, written directly: a report
    of a large tree has a hundred thousand of them."""
    enc = encode_basestring
    replacement = enc(f.replacement) if f.fixable else "null"
    return RawJSON(
        f'{{"path": {enc(f.path)}, "kind": {enc(kind)}, "line": {int.__repr__(f.line)}, '
        f'"column": {int.__repr__(f.col)}, "rule": {enc(f.rule)}, "severity": {_SEVERITY_JSON[f.severity]}, '
        f'"message": {enc(f.message)}, "suggestion": {enc(f.suggestion)}, '
        f'"fixable": {"true" if f.fixable else "false"}, "replacement": {replacement}, '
        f'"replacement_scope": {"null" if scope is None else enc(scope)}}}'
    )


_SEVERITY_JSON = {s: encode_basestring(str(s)) for s in Severity}


def _scope(f: Finding, scoped: set[Finding]) -> str | None:
    """span: replaces the reported text; line: the rewritten line; unknown: a removal or not known."""
    if not f.fixable:
        return None
    if scoped and f in scoped:
        return "line"
    return "span" if f.replacement else "unknown"


def _rule_json(rule: str) -> dict[str, str]:
    title, severity, rationale = describe(rule)
    return {"id": rule, "title": title, "severity": str(severity), "rationale": rationale}


def render_json(report: AuditReport) -> str:
    # each file, finding and rule on one line; the findings written by finding_line, the rest by the encoder
    return dumps_indented(_document(report, finding_line), one_line_at=2, end="\n")


def to_sarif(report: AuditReport, root: Path | None = None) -> dict[str, Any]:
    """The report as one SARIF 2.1.0 run; ``root`` (default: the working directory) is ``%SRCROOT%``."""
    base = (root or Path.cwd()).resolve()
    findings = report.findings
    # what a fix writes in place of a finding's line: the finding's replacement (it is the line), or the line
    # the rewrite writes where the finding names only its own text
    fixes = {f: f.replacement for audited in report.files for f in audited.line_scoped}
    fixes.update((f, line) for audited in report.files for f, line in audited.line_fixes.items())
    artifacts: dict[str, dict[str, str]] = {}  # path → its location: resolved once, not once per finding
    lines: dict[str, list[str]] = {}  # path → its lines, read once, for the fingerprints
    rule_ids = sorted({f.rule for f in findings})
    index = {rule: i for i, rule in enumerate(rule_ids)}
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "buildport", "version": __version__, "semanticVersion": semantic_version(__version__),
            "rules": [_sarif_rule(rule) for rule in rule_ids],
        }},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{
            "executionSuccessful": not report.errors,
            "toolExecutionNotifications": [_notification(error, base, artifacts) for error in report.errors],
        }],
        "results": [_sarif_result(f, index[f.rule], base, artifacts, lines, fixes.get(f)) for f in findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


#: An error that names where it is: ``path:line:col: error: message`` (a parse error), or ``path: error: ...``.
_LOCATED = re.compile(r"^(?P<path>.+?):(?:(?P<line>\d+):(?P<col>\d+):)? error: (?P<message>.*)$", re.S)


def _notification(error: str, base: Path, artifacts: dict[str, dict[str, str]]) -> dict[str, Any]:
    """An error of the run as a SARIF notification, located in its file (and line) where it names them."""
    out: dict[str, Any] = {"level": "error", "message": {"text": error}}
    m = _LOCATED.match(error)
    if m is None or not Path(m.group("path")).exists():
        return out
    path = m.group("path")
    location: dict[str, Any] = {
        "artifactLocation": artifacts.get(path) or artifacts.setdefault(path, _artifact(path, base))}
    if m.group("line"):
        location["region"] = {"startLine": int(m.group("line")), "startColumn": int(m.group("col"))}
    out["message"] = {"text": m.group("message")}
    out["locations"] = [{"physicalLocation": location}]
    return out


def _sarif_rule(rule: str) -> dict[str, Any]:
    """A reported rule: its catalogue entry, and its documentation as ``help.markdown`` (what code scanning
    shows beside an alert; the text of its section in docs/source-rules.md for a source rule)."""
    title, severity, rationale = describe(rule)
    return {
        "id": rule,
        "name": "".join(part.capitalize() for part in rule.split("-")),
        "shortDescription": {"text": title},
        "fullDescription": {"text": rationale or title},
        "help": {"text": rationale or title, "markdown": ruledoc.markdown(rule) or rationale or title},
        "defaultConfiguration": {"level": _SARIF_LEVEL[severity]},
        "properties": {"tags": ["cuda", "portability"]},
    }


def semantic_version(version: str) -> str:
    """A PEP 440 version as SemVer 2.0 (``0.1.0.dev0`` → ``0.1.0-dev.0``, ``1.2rc1`` → ``1.2.0-rc.1``,
    ``1.0.post2`` → ``1.0.0+post.2``)."""
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(a|b|rc|dev|post)\.?(\d+))?.*", version)
    if m is None:
        return "0.0.0"
    core = ".".join(n or "0" for n in m.group(1, 2, 3))
    if m.group(4) == "post":  # after the release: build metadata, which does not sort before it
        return f"{core}+post.{m.group(5)}"
    return core + (f"-{m.group(4)}.{m.group(5)}" if m.group(4) else "")


def _fingerprint(f: Finding, lines: dict[str, list[str]]) -> str:
    """A hash of the rule, the file and the text of the finding's line (blanks squeezed): it stays when lines
    above it come and go, so code scanning matches a finding across runs."""
    if f.path not in lines:
        try:
            lines[f.path] = Path(f.path).read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        except OSError:
            lines[f.path] = []
    text = lines[f.path][f.line - 1] if 0 < f.line <= len(lines[f.path]) else ""
    material = "\0".join((f.rule, f.path, " ".join(text.split())))
    return hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _sarif_result(f: Finding, rule_index: int, base: Path, artifacts: dict[str, dict[str, str]],
                  lines: dict[str, list[str]], new_line: str | None = None) -> dict[str, Any]:
    text = f.message + (f" ({f.suggestion})" if f.suggestion else "")
    if f.fixable and f.replacement:
        text += f" Auto-fixable: buildport writes `{f.replacement}`."
    fingerprint = _fingerprint(f, lines)  # reads the file's lines, which a fix needs too
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifacts.get(f.path) or artifacts.setdefault(f.path, _artifact(f.path, base)),
            "region": {"startLine": f.line, "startColumn": f.col},
        }}],
        "partialFingerprints": {"buildportLine/v1": fingerprint},
        "properties": {"fixable": f.fixable},
    }
    fix = _line_fix(f.line, new_line, lines.get(f.path, [])) if new_line is not None and f.fixable else None
    if fix is not None:
        out["fixes"] = [{"description": {"text": f"buildport rewrites line {f.line}"}, "artifactChanges": [{
            "artifactLocation": out["locations"][0]["physicalLocation"]["artifactLocation"],
            "replacements": [fix],
        }]}]
    return out


def _line_fix(line: int, new_line: str, lines: list[str]) -> dict[str, Any] | None:
    """A SARIF replacement of a finding's whole line by the line the rewrite writes (``new_line``; empty: the
    line goes, with its end); None where the file's line is not known."""
    if not 0 < line <= len(lines):
        return None
    if new_line:
        region = {"startLine": line, "startColumn": 1, "endLine": line, "endColumn": len(lines[line - 1]) + 1}
    elif line < len(lines):
        region = {"startLine": line, "startColumn": 1, "endLine": line + 1, "endColumn": 1}
    else:
        return None  # the last line goes: SARIF has no column past its end to name
    return {"deletedRegion": region, "insertedContent": {"text": new_line}}


def _artifact(path: str, base: Path) -> dict[str, str]:
    absolute = Path(path).resolve()
    try:
        return {"uri": quote(absolute.relative_to(base).as_posix()), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def render_sarif(report: AuditReport, root: Path | None = None) -> str:
    return dumps_indented(to_sarif(report, root), end="\n")


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(report: AuditReport) -> str:
    """One GitHub Actions workflow command per finding (``::warning file=...,line=...,col=...,title=...::``),
    which a workflow shows as an annotation on the line; the fix, where there is one, after the message."""
    out = []
    for f in report.findings:
        message = short_message(f) + (f"\nfix: {f.replacement}" if f.fixable and f.replacement else "")
        properties = ",".join(f"{key}={_github_property(str(value))}" for key, value in
                              (("file", f.path), ("line", f.line), ("col", f.col), ("title", f.rule)))
        out.append(f"::{_GITHUB_LEVEL[f.severity]} {properties}::{_github_data(message)}")
    out += [f"::error::{_github_data(error)}" for error in report.errors]
    return "".join(line + "\n" for line in out)


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")

