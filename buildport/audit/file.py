"""One file's audit: a build file through its rewrite engine without writing (its findings, the lines
they change, and the CUDA text no finding covers), a source through the source scan."""

from __future__ import annotations

import dataclasses
import functools
import re
from types import ModuleType
from typing import Literal

from buildport.findings import Finding
from buildport.options import MakeFacts
from buildport.dual import is_dual
from buildport.dual.view import hip_view
from buildport.rules.dual import COMPAT_MARK
from buildport.source.hipify_tables import HipifyTables, installed_tables
from buildport.source.left import cuda_left
from buildport.source.scan import scan_cuda_source
from buildport.audit.collect import CMAKE, PYTHON, SOURCE
from buildport.audit.residue import is_silenced, left_alone, line_changes, may_have_residue, residue, suppressions
from buildport.audit.results import FileAudit


def audit_text(text: str, path: str, kind: str, facts: MakeFacts | None = None,
               tables: HipifyTables | None | Literal["installed"] = "installed") -> FileAudit | None:
    """The findings of one file's text; None for a C/C++ file that does not use CUDA. ``facts``: for a
    Makefile, what the files make reads with it say (see :mod:`buildport.passes.make_facts`); None: alone.
    ``tables``: what a source's CUDA names are read with (the installed hipify-perl's by default). A build
    file that picks its GPU runtime (``migrate --keep-cuda``) is audited as the HIP build reads it."""
    if kind == SOURCE:
        if text.startswith(COMPAT_MARK):
            return None  # a header of a --keep-cuda tree's compatibility folder: buildport's own
        read = installed_tables() if tables == "installed" else tables
        findings = scan_cuda_source(path, text, lambda t, p, lexed: cuda_left(t, p, lexed, read))
        if findings and read is not None and read.carried:
            findings = [f for f in findings if not carried(f, text, read.carried)]
        return None if findings is None else FileAudit(path, kind, findings)
    if kind != PYTHON and is_dual(text, kind):
        text = hip_view(text, kind)  # line for line: the CUDA branches are the project's own, on purpose
    engine, prescan, cmake_syntax = engines()
    if kind == CMAKE and not prescan.may_need_cmake_audit(text):
        cmake_syntax.parse_cmake(text, path)  # nothing of CUDA in it, but bad input is still an error
        return FileAudit(path, kind)
    if kind == CMAKE:
        result = engine.port_cmake(text, path, verify=False)
    elif kind == PYTHON:
        result = engine.port_setup_py(text, path, verify=False)
    else:
        result = engine.port_make(text, path, verify=False, facts=facts)
    audited = FileAudit(path, kind)
    if not result.findings and not result.changed and not may_have_residue(text, kind):
        return audited  # parsed, and nothing of CUDA in it
    changes = line_changes(result) if result.changed else {}
    for finding in result.findings:
        derived = changes.get(finding.line)
        if finding.fixable and not finding.replacement and derived is not None:
            finding = dataclasses.replace(finding, replacement=derived)
            audited.line_scoped.add(finding)
        elif finding.fixable and derived is not None:
            audited.line_fixes[finding] = derived  # the finding names its text; the line is what a fix writes
        audited.findings.append(finding)
    quiet = left_alone(result) or kind == PYTHON
    for finding in [] if quiet else residue(text, path, kind, result.findings, changes):
        audited.findings.append(finding)
        if finding.fixable and changes.get(finding.line) is not None:
            audited.line_scoped.add(finding)
    silenced = suppressions(text)
    audited.keep_only(sorted((f for f in audited.findings if not is_silenced(silenced, f)), key=Finding.sort_key))
    return audited


#: Source rules about a construct a --keep-cuda tree's compatibility folder can define away: a test of a CUDA
#: header's macro, a warp ``*_sync`` function, NVTX.
_CARRIED_RULES = frozenset({"cuda-header-macro", "warp-sync-intrinsic", "library-different-api"})
_AT = re.compile(r"<[^>\n]*>|\"[^\"\n]*\"|\w+")


def carried(finding: Finding, text: str, names: frozenset[str]) -> bool:
    """Whether ``finding`` is about a name (or header) the compatibility folder defines (or holds)."""
    if finding.rule not in _CARRIED_RULES:
        return False
    lines = text.splitlines()
    if not 0 < finding.line <= len(lines):
        return False
    found = _AT.match(lines[finding.line - 1], finding.col - 1)
    return found is not None and found.group(0).strip('<>"') in names


@functools.cache
def engines() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The modules :func:`audit_text` calls, imported with the first file audited (a run the cache
    answers never needs the parsers and passes), once: an import statement run for each file costs
    microseconds each time."""
    import buildport.engine
    import buildport.prescan
    import buildport.syntax.cmake

    return buildport.engine, buildport.prescan, buildport.syntax.cmake
