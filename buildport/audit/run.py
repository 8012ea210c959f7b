"""One audit run: what is read (:mod:`buildport.audit.collect`), and the audit of one file as the work of
a run (:mod:`buildport.pipeline.run`: the cache, the pool, the facts Makefiles give each other)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from buildport.cache.store import Cache, finding_to_json, findings_from_json
from buildport.result import UnstableRewrite
from buildport.options import MakeFacts
from buildport.pipeline.ignore import Ignore
from buildport.pipeline.outcomes import FileOutcome
from buildport.pipeline.pool import Workers
from buildport.pipeline.run import MISS, Task, run
from buildport.dual.compat import carried_tables
from buildport.source.hipify_tables import HipifyTables, installed_tables
from buildport.syntax.errors import ParseError
from buildport.textio import InputError, SourceText

from buildport.audit.collect import MAKE, SOURCE, iter_collect
from buildport.audit.file import engines, audit_text
from buildport.audit.results import AuditReport, FileAudit, RuleFilter


def audit(paths: Iterable[str], rules: RuleFilter = RuleFilter(), jobs: int = 1,
          cache: Cache | None = None, ignore: Ignore | None = None) -> AuditReport:
    """Audit files and directories; never writes. Unreadable or unparsable inputs become ``errors``.

    ``jobs`` > 1 audits in a pool of processes and ``cache`` reuses earlier
    results; neither changes the report. ``ignore``: what the walk leaves out.
    """
    report = AuditReport()
    contents: dict[str, SourceText] = {}  # what discovery read, so that each file is read once
    index = cache.files if cache is not None else None
    words: dict[str, list[str]] = {}  # the include lines of the Makefiles found
    left_out: set[str] = set()  # included Makefiles the walk would leave out: read for their facts only
    paths = list(paths)
    looked: list[str] = []
    tables = carried_tables(installed_tables(), paths, looked)  # a --keep-cuda tree: what its folder maps is not left
    if index is not None and index.trail is not None:
        for path in looked:
            index.trail.path(path)  # a folder made, changed or removed later changes the run
    found = iter_collect(paths, report.errors, contents, index, words, ignore, left_out)  # as found
    for outcome in _audit_all(found, jobs, cache, contents, words, tables):
        if outcome.error:
            report.errors.append(outcome.error)
            continue
        audited = outcome.result
        if audited is None or outcome.path in left_out:
            continue
        if rules.select or rules.ignore:
            audited.keep_only([f for f in audited.findings if rules.wants(f.rule)])
        report.files.append(audited)
    report.files.sort(key=lambda a: a.path)
    if index is not None:
        index.save()
    return report


def _audit_all(items: Iterable[tuple[str, str]], jobs: int, cache: Cache | None,
               contents: dict[str, SourceText] | None = None,
               words: dict[str, list[str]] | None = None, tables: HipifyTables | None = None,
               ) -> list[FileOutcome[FileAudit]]:
    """Each (path, kind) audited in order: cache hits here, the misses in a pool when ``jobs`` > 1,
    handed over in chunks as ``items`` yields them (see :meth:`buildport.pipeline.pool.Workers.feed`).
    Each Makefile is audited with the facts of the files make reads with it, as ``buildport make``
    ports it: one with include lines waits for the end of ``items``; one without is audited alone as
    it comes, and again at the end if another includes it (``words``: the include lines, where
    discovery read them)."""
    kinds: set[str] = set()  # of the files found so far

    def noted() -> Iterator[tuple[str, str]]:
        for path, kind in items:
            kinds.add(kind)
            yield path, kind

    with Workers(jobs, preload=lambda: _load_engines(kinds)) as workers:
        return run(noted(), AuditWork(tables), workers, cache, contents, words)


def _load_engines(kinds: set[str]) -> None:
    """Before the workers are forked: the engines the kinds of files found so far need, loaded once
    here rather than in each worker (the make port only if a Makefile is among them)."""
    engine, prescan, _ = engines()
    prescan.cmake_trigger()
    if MAKE in kinds:
        from buildport.syntax.make import load_tables

        engine.make_modules()
        load_tables()  # also what this process parses: Makefiles that include one another


@dataclass(frozen=True, slots=True)
class AuditWork:
    """The audit of one file (see :class:`buildport.pipeline.run.Work`); ``tables``: what sources are
    read with (the installed hipify-perl's, less what a --keep-cuda tree's compatibility folder maps)."""

    tables: HipifyTables | None = None

    def settings(self, kind: str, facts: MakeFacts | None) -> tuple[str, object]:
        if kind == SOURCE:
            return f"audit-{kind}", self.tables.digest if self.tables else None
        return f"audit-{kind}", None if facts is None else facts.as_json()

    def compute(self, task: Task) -> FileOutcome[FileAudit]:
        """The file's findings; none at all (no result) for a C/C++ file without CUDA; or its error."""
        try:
            return FileOutcome(task.path, audit_text(task.source.text, task.path, task.kind, task.facts, self.tables))
        except (InputError, ParseError) as exc:
            return FileOutcome(task.path, error=_error_text(exc, task.path))
        except UnstableRewrite as exc:  # pragma: no cover - an engine bug, kept visible
            error = f"{exc} (internal error: please report it with this file)"
            return FileOutcome(task.path, error=error, exception=RuntimeError(error))

    def kept(self, task: Task, done: FileOutcome[FileAudit]) -> Iterator[tuple[str, object]]:
        if done.error:
            if done.exception is None:
                yield task.source.digest, {"error": done.error}  # input the parser rejected: the text alone decides
        elif not _nothing(done.result, task.kind):
            yield task.source.digest, _to_json(done.result)

    def nothing(self, task: Task, done: FileOutcome[FileAudit]) -> bool:
        return not done.error and _nothing(done.result, task.kind)

    def clean(self, task: Task) -> FileOutcome[FileAudit]:
        return FileOutcome(task.path, None if task.kind == SOURCE else FileAudit(task.path, task.kind))

    def stored(self, task: Task, entry: object) -> FileOutcome[FileAudit]:
        if isinstance(entry, dict) and isinstance(entry.get("error"), str):
            return FileOutcome(task.path, error=str(entry["error"]))
        ok, hit = _from_json(entry)
        return FileOutcome(task.path, hit) if ok else MISS

    def pack(self, done: FileOutcome[FileAudit]) -> FileAudit | None | tuple[str, bool]:
        """The findings (None: a source without CUDA), or the error and whether it is an engine's bug."""
        return (done.error, done.exception is not None) if done.error else done.result

    def unpack(self, task: Task, packed: FileAudit | None | tuple[str, bool]) -> FileOutcome[FileAudit]:
        if isinstance(packed, tuple):
            error, bug = packed
            return FileOutcome(task.path, error=error, exception=RuntimeError(error) if bug else None)
        return FileOutcome(task.path, packed)


def _nothing(audited: FileAudit | None, kind: str) -> bool:
    """A C/C++ file without CUDA, or a build file without findings: what most files of a tree are."""
    return audited is None if kind == SOURCE else audited is not None and not audited.findings


def _to_json(audited: FileAudit | None) -> dict[str, object]:
    if audited is None:
        return {"cuda": False}
    return {"path": audited.path, "kind": audited.kind,
            "findings": [finding_to_json(f) for f in audited.findings],
            "scoped": [i for i, f in enumerate(audited.findings) if f in audited.line_scoped],
            "lines": [[i, audited.line_fixes[f]] for i, f in enumerate(audited.findings) if f in audited.line_fixes]}


def _from_json(data: object) -> tuple[bool, FileAudit | None]:
    """(True, a cached audit), or (False, None) when the entry is malformed (then it is recomputed)."""
    if not isinstance(data, dict):
        return False, None
    if data.get("cuda") is False:
        return True, None
    try:
        findings = findings_from_json(data["findings"])
        scoped = {findings[int(i)] for i in data["scoped"]}
        lines = {findings[int(i)]: str(line) for i, line in data["lines"]}
        return True, FileAudit(str(data["path"]), str(data["kind"]), findings, scoped, lines)
    except (KeyError, TypeError, ValueError, IndexError):
        return False, None


def _error_text(exc: Exception, path: str) -> str:
    if isinstance(exc, ParseError):
        return f"{exc.path or path}:{exc.line}:{exc.col}: error: {exc.message}"
    return str(exc)
