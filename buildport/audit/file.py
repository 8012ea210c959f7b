"""One file's audit: a build file through its rewrite engine without writing (its findings, the lines
they change, and the CUDA text no finding covers), a source through the source scan."""

from __future__ import annotations

import dataclasses
import functools
from types import ModuleType

from buildport.findings import Finding
from buildport.options import MakeFacts
from buildport.source.hipify_tables import installed_tables
from buildport.source.left import cuda_left
from buildport.source.lex import Lexed
from buildport.source.scan import scan_cuda_source
from buildport.audit.collect import CMAKE, PYTHON, SOURCE
from buildport.audit.residue import is_silenced, left_alone, line_changes, may_have_residue, residue, suppressions
from buildport.audit.results import FileAudit


def audit_text(text: str, path: str, kind: str, facts: MakeFacts | None = None) -> FileAudit | None:
    """The findings of one file's text; None for a C/C++ file that does not use CUDA. ``facts``: for a
    Makefile, what the files make reads with it say (see :mod:`buildport.passes.make_facts`); None: alone."""
    if kind == SOURCE:
        findings = scan_cuda_source(path, text, _cuda_left)
        return None if findings is None else FileAudit(path, kind, findings)
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
        audited.findings.append(finding)
    quiet = left_alone(result) or kind == PYTHON
    for finding in [] if quiet else residue(text, path, kind, result.findings, changes):
        audited.findings.append(finding)
        if finding.fixable and changes.get(finding.line) is not None:
            audited.line_scoped.add(finding)
    silenced = suppressions(text)
    audited.findings = sorted((f for f in audited.findings if not is_silenced(silenced, f)), key=Finding.sort_key)
    audited.line_scoped &= set(audited.findings)
    return audited


def _cuda_left(text: str, path: str, lexed: Lexed) -> list[Finding]:
    """CUDA names left in a source, read with the installed hipify-perl's tables (:mod:`buildport.source.left`)."""
    return cuda_left(text, path, lexed, installed_tables())


@functools.cache
def engines() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The modules :func:`audit_text` calls, imported with the first file audited (a run the cache
    answers never needs the parsers and passes), once: an import statement run for each file costs
    microseconds each time."""
    import buildport.engine
    import buildport.prescan
    import buildport.syntax.cmake

    return buildport.engine, buildport.prescan, buildport.syntax.cmake
