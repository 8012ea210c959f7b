"""One audit run: discovery, the cache a filter in front of the work and a sink after it, the pool of
workers, and the facts Makefiles read together give each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

from buildport.cache.store import Cache, Keys, finding_to_json, findings_from_json
from buildport.cache.fileindex import FileIndex
from buildport.result import UnstableRewrite
from buildport.passes.includes import include_graph, include_targets, scopes
from buildport.options import MakeFacts
from buildport.pipeline.discovery import (
    file_identity, include_words,
)
from buildport.pipeline.ignore import Ignore
from buildport.pipeline.pool import Feed, Workers
from buildport.pipeline.port import FactKeys
from buildport.dual.compat import carried_tables
from buildport.source.hipify_tables import HipifyTables, installed_tables
from buildport.syntax.errors import ParseError
from buildport.textio import InputError, SourceText, read_source

if TYPE_CHECKING:
    from buildport.passes.make_facts import FileFacts
from buildport.audit.collect import CMAKE, MAKE, PYTHON, SOURCE, iter_collect
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
        if isinstance(outcome, str):
            report.errors.append(outcome)
            continue
        if outcome is None or outcome.path in left_out:
            continue
        if rules.select or rules.ignore:
            outcome.findings = [f for f in outcome.findings if rules.wants(f.rule)]
            outcome.line_scoped &= set(outcome.findings)
        report.files.append(outcome)
    report.files.sort(key=lambda a: a.path)
    if index is not None:
        index.save()
    return report


def _audit_all(items: Iterable[tuple[str, str]], jobs: int, cache: Cache | None,
               contents: dict[str, SourceText] | None = None,
               words: dict[str, list[str]] | None = None, tables: HipifyTables | None = None,
               ) -> list[FileAudit | None | str]:
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
        return _audit_each(noted(), workers, cache, contents, words, tables)


def _load_engines(kinds: set[str]) -> None:
    """Before the workers are forked: the engines the kinds of files found so far need, loaded once
    here rather than in each worker (the make port only if a Makefile is among them)."""
    engine, prescan, _ = engines()
    prescan.cmake_trigger()
    if MAKE in kinds:
        from buildport.syntax.make import load_tables

        engine.make_modules()
        load_tables()  # also what this process parses: Makefiles that include one another


def _audit_each(items: Iterable[tuple[str, str]], workers: Workers, cache: Cache | None,
                contents: dict[str, SourceText] | None,
                words: dict[str, list[str]] | None = None, tables: HipifyTables | None = None,
                ) -> list[FileAudit | None | str]:
    out: list[FileAudit | None | str] = []
    tasks: list[AuditTask] = []
    task_keys: list[Keys] = []  # the cache keys of each task's kind and facts
    missing: list[int] = []
    kinds = _audit_keys(tables)
    lookups = cache is not None and cache.holds_entries()  # else the keys are worked out only to store
    feed = workers.feed(_audit_chunk, (cache, tables))
    pending = (tasks, task_keys, missing, feed)
    index = cache.files if cache is not None else None
    makefiles: list[tuple[int, str, SourceText]] = []  # (where in ``out``, path, source)
    waiting: set[int] = set()  # the Makefiles with include lines: audited once the walk is over
    owner: dict[int, int] = {}  # a Makefile audited again: its place → the task that fills it (-1: none)
    for path, kind in items:
        known = None
        if contents is not None:  # a Makefile's text stays: the walk may not be over, and its includes are read last
            known = contents.get(path) if kind == MAKE else contents.pop(path, None)
        try:
            source = known if known is not None else read_source(path)
        except InputError as exc:
            out.append(_error_text(exc, path))
            continue
        if kind == MAKE:
            makefiles.append((len(out), path, source))
            if _may_include(source, index):
                waiting.add(len(out))
                out.append(None)
                continue
        out.append(_audit_one(path, kind, source, None, kinds[kind], cache, lookups, len(out), pending))
    if makefiles:
        # most Makefiles include nothing and were audited alone as they came; one that others include
        # is audited again, with the facts of the files make reads it with (the later result wins)
        facts = _makefile_facts([(path, source) for _, path, source in makefiles], words or {}, cache)
        key_for = _make_keys()
        for at, path, source in makefiles:
            file_facts = facts.get(path)
            if at not in waiting and file_facts is None:
                continue  # audited alone already, as make reads it
            queued = len(tasks)
            out[at] = _audit_one(path, MAKE, source, file_facts, key_for(file_facts), cache, lookups, at, pending)
            owner[at] = queued if len(tasks) > queued else -1
    for n, (i, task, key_of, done) in enumerate(zip(missing, tasks, task_keys, feed.results())):
        if owner.get(i, n) == n:  # not a first audit of a Makefile audited again since
            out[i] = done
        if task[3] is not None and not isinstance(done, str) and _nothing(done, task[1]):
            assert cache is not None
            cache.mark_clean(key_of, task[0], task[3])
    if cache is not None and tasks:
        cache.save_clean()
        cache.prune()
    return out


def _may_include(source: SourceText, index: FileIndex | None) -> bool:
    """Whether a Makefile has an include line (or may have: its text is not read, and the cache's
    file index holds no words for it). The same answer on a warm run as on a cold one."""
    words = index.includes(source.digest) if index is not None else None
    if words is None and source.is_read:
        words = include_targets(source.text)
    return words is None or bool(words)


#: What a worker audits: path, kind, text, digest (None: store nothing), and a Makefile's facts (None: alone).
AuditTask = tuple[str, str, str, "str | None", "MakeFacts | None"]


#: Where the tasks go: the tasks, their cache keys, where each result goes in the output, the feed.
Pending = tuple[list[AuditTask], list[Keys], list[int], Feed[AuditTask, "FileAudit | None | str"]]


def _audit_one(
    path: str, kind: str, source: SourceText, facts: MakeFacts | None, key_of: Keys, cache: Cache | None,
    lookups: bool, at: int, pending: Pending,
) -> FileAudit | None | str:
    """One file's audit from the cache; or None, its task handed to the feed, whose result goes to ``at``."""
    if cache is not None:
        if cache.is_clean(key_of, path, source.digest):
            return None if kind == SOURCE else FileAudit(path, kind)
        stored = cache.get(key_of(path, source.digest)) if lookups else None
        if isinstance(stored, dict) and isinstance(stored.get("error"), str):
            return str(stored["error"])  # input the parser rejected: the text alone decides that
        ok, hit = _from_json(stored) if stored is not None else (False, None)
        if ok:
            return hit
    try:
        text = source.text  # a source the file index vouched for is read now
    except InputError as exc:
        return _error_text(exc, path)
    tasks, task_keys, missing, feed = pending
    missing.append(at)
    tasks.append((path, kind, text, source.digest if cache is not None else None, facts))
    task_keys.append(key_of)
    feed.add(tasks[-1])
    return None


def _make_keys() -> FactKeys:
    """The cache keys of a Makefile's audit, by the facts it is read with (None: alone, the key of
    :func:`_audit_keys`): what the audit depends on besides the file's text."""
    return FactKeys(f"audit-{MAKE}", lambda facts: None if facts is None else facts.as_json())


def _makefile_facts(
    makefiles: list[tuple[str, SourceText]], words: dict[str, list[str]], cache: Cache | None = None,
) -> dict[str, MakeFacts]:
    """The facts of each Makefile that make reads with others (see :func:`buildport.passes.includes.scopes`), by
    path, where they differ from what the file says alone; a Makefile that includes nothing of the others,
    and that none of them includes, or whose facts are its own, is read alone and is not in it.

    ``words``: the include lines of the files discovery read them for; the others' come from the
    cache's file index (by hash) or from their text. The facts of each set of files read together are
    kept in ``cache`` under their paths and hashes, so that a warm run reads none of the files.
    """
    index = cache.files if cache is not None else None
    paths = [path for path, _ in makefiles]
    lines: list[list[str]] = []
    for path, source in makefiles:
        found = words.get(path)
        if found is None:
            try:
                found = include_words(source, index)
            except InputError:
                found = []  # reported when it is audited
        lines.append(found)
    graph = include_graph(paths, lines, lambda i: makefiles[i][1].identity or file_identity(paths[i], None))
    parts: dict[int, FileFacts | None] = {}
    out: dict[str, MakeFacts] = {}
    made: dict[frozenset[int], tuple[MakeFacts, set[int]]] = {}  # scope → its facts, the members they change
    for i, scope in enumerate(scopes(graph)):
        if len(scope) == 1:
            continue
        scoped = made.get(scope)
        if scoped is None:
            members = sorted(scope)
            key = None
            if cache is not None:
                key = cache.key("audit-make-facts", "", "", [[paths[j], makefiles[j][1].digest] for j in members])
                scoped = _stored_scope(cache.get(key), members)
            if scoped is None:
                from buildport.passes.make_facts import file_facts, scope_facts
                from buildport.syntax.make import parse_make

                for j in members:
                    if j not in parts:
                        try:
                            parts[j] = file_facts(parse_make(makefiles[j][1].text, paths[j]))
                        except (InputError, ParseError):
                            parts[j] = None  # reported when it is audited
                facts = scope_facts(parts[j] for j in members)
                changed = {j for j in members if facts != scope_facts([parts[j]])}
                scoped = facts, changed
                if cache is not None and key is not None:
                    cache.put(key, [*facts.as_json(), [members.index(j) for j in sorted(changed)]])
            made[scope] = scoped
        facts, changed = scoped
        if i in changed:
            out[paths[i]] = facts  # a file whose own facts are the scope's is ported as alone
    return out


def _stored_scope(stored: Any, members: list[int]) -> tuple[MakeFacts, set[int]] | None:
    """What :func:`_makefile_facts` kept for the files ``members``; None for a miss or a malformed entry."""
    try:
        *data, changed = stored
        return MakeFacts.from_json(data), {members[k] for k in changed}
    except (TypeError, ValueError, IndexError):
        return None


def _audit_keys(tables: HipifyTables | None) -> dict[str, Keys]:
    """The cache keys of each kind's audit: a source's depends on the tables that read it (the installed
    hipify-perl's, less what a --keep-cuda tree's compatibility folder maps)."""
    return {kind: Cache.keys(f"audit-{kind}", tables.digest if kind == SOURCE and tables else None)
            for kind in (CMAKE, MAKE, PYTHON, SOURCE)}


def _audit_chunk(tasks: list[AuditTask], shared: tuple[Cache | None, HipifyTables | None]
                 ) -> list[FileAudit | None | str]:
    """Audit a chunk of tasks (see :data:`AuditTask`); runs in a worker process with ``jobs`` > 1. ``shared``:
    the cache, and the tables sources are read with."""
    cache, tables = shared
    out: list[FileAudit | None | str] = []
    kinds = _audit_keys(tables) if cache is not None else {}
    key_for = _make_keys()  # a Makefile read with others: one object for the files that share its facts
    for path, kind, text, digest, facts in tasks:
        key_of = key_for(facts) if facts is not None and cache is not None else kinds.get(kind)
        try:
            audited = audit_text(text, path, kind, facts, tables)
            out.append(audited)
            if key_of is not None and digest is not None and not _nothing(audited, kind):
                cache.put(key_of(path, digest), _to_json(audited))  # type: ignore[union-attr]  # "nothing" is kept apart
        except (InputError, ParseError) as exc:
            out.append(_error_text(exc, path))
            if key_of is not None and digest is not None:
                cache.put(key_of(path, digest), {"error": out[-1]})  # type: ignore[union-attr]
        except UnstableRewrite as exc:  # pragma: no cover - an engine bug, kept visible
            out.append(f"{exc} (internal error: please report it with this file)")
    return out


def _nothing(audited: FileAudit | None, kind: str) -> bool:
    """A C/C++ file without CUDA, or a build file without findings: what most files of a tree are."""
    return audited is None if kind == SOURCE else audited is not None and not audited.findings


def _to_json(audited: FileAudit | None) -> dict[str, object]:
    if audited is None:
        return {"cuda": False}
    return {"path": audited.path, "kind": audited.kind,
            "findings": [finding_to_json(f) for f in audited.findings],
            "scoped": [i for i, f in enumerate(audited.findings) if f in audited.line_scoped]}


def _from_json(data: object) -> tuple[bool, FileAudit | None]:
    """(True, a cached audit), or (False, None) when the entry is malformed (then it is recomputed)."""
    if not isinstance(data, dict):
        return False, None
    if data.get("cuda") is False:
        return True, None
    try:
        findings = findings_from_json(data["findings"])
        scoped = {findings[int(i)] for i in data["scoped"]}
        return True, FileAudit(str(data["path"]), str(data["kind"]), findings, scoped)
    except (KeyError, TypeError, ValueError, IndexError):
        return False, None


def _error_text(exc: Exception, path: str) -> str:
    if isinstance(exc, ParseError):
        return f"{exc.path or path}:{exc.line}:{exc.col}: error: {exc.message}"
    return str(exc)
