"""``buildport audit``: every CUDA dependency in a tree, as findings; nothing is written.

Build files (CMake, Makefiles, ``*.mk`` and what Makefiles include) go through
the rewrite engines without writing: their fixable findings are what
``buildport cmake``/``buildport make`` would rewrite, the others need a human.
CUDA text that no engine finding covers is reported under the ``build-*`` rules
of :mod:`buildport.rules.build_rules`. CUDA sources (``.cu``, ``.cuh``, C/C++
files using CUDA) go through :func:`buildport.source.scan.scan_source`.

A build-file comment ``# buildport: ignore[rule-id, ...]`` silences those rules
on its own line and the next; ``# buildport: ignore`` silences every rule there.


The package: :mod:`~buildport.audit.collect` (which files), :mod:`~buildport.audit.run` (the run),
:mod:`~buildport.audit.file` (one file), :mod:`~buildport.audit.residue` (what no finding names, and
suppressions), :mod:`~buildport.audit.results` (what it gives).
"""

from buildport.audit.collect import CMAKE, MAKE, PYTHON, SOURCE, is_audited, iter_collect, kind_of
from buildport.audit.file import audit_text
from buildport.audit.residue import code_only, left_behind, line_changes, residue, suppressions
from buildport.audit.results import AuditReport, FileAudit, RuleFilter, UsageError, describe, known_rules
from buildport.audit.run import audit

__all__ = [
    "CMAKE", "MAKE", "PYTHON", "SOURCE", "AuditReport", "FileAudit", "RuleFilter", "UsageError", "audit", "audit_text",
    "code_only", "describe", "is_audited", "iter_collect", "kind_of", "known_rules", "left_behind",
    "line_changes", "residue", "suppressions",
]
