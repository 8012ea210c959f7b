"""``buildport audit``: every CUDA dependency in a tree, as findings; nothing is written.

Build files (CMake, Makefiles, ``*.mk`` and what Makefiles include) go through
the rewrite engines without writing: their fixable findings are what
``buildport cmake``/``buildport make`` would rewrite, the others need a human.
CUDA text that no engine finding covers is reported under the ``build-*`` rules
of :mod:`buildport.rules.build_rules`. CUDA sources (``.cu``, ``.cuh``, C/C++
files using CUDA) go through :func:`buildport.source.scan.scan_source`.

A build-file comment ``# buildport: ignore[rule-id, ...]`` silences those rules
on its own line and the next; ``# buildport: ignore`` silences every rule there.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import difflib
import operator
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from buildport.cache.store import Cache, Keys, finding_to_json, findings_from_json
from buildport.cache.fileindex import FileIndex
from buildport.findings import Finding, Severity
from buildport.result import Result, UnstableRewrite
from buildport.rules import build_rules, source_rules
from buildport.rules.build_rules import CUDA_WORD, RESIDUE_PATTERNS
from buildport.passes.includes import include_graph, include_targets, scopes
from buildport.report.linediff import line_blocks, lines, whole
from buildport.options import MakeFacts
from buildport.pipeline.discovery import (
    MAKEFILE_NAMES, file_identity, files_below, include_words, included_makefiles, is_cmake_file, is_make_file,
    is_setup_py,
)
from buildport.pipeline.ignore import Ignore
from buildport.pipeline.pool import Feed, Workers
from buildport.pipeline.port import FactKeys
from buildport.source.hipify_tables import installed_tables
from buildport.source.left import cuda_left
from buildport.source.lex import Lexed
from buildport.source.scan import C_FAMILY_EXTENSIONS, CUDA_EXTENSIONS, scan_cuda_source
from buildport.syntax.errors import ParseError
from buildport.textio import NOT_READ, InputError, SourceText, read_source

if TYPE_CHECKING:
    from buildport.passes.make_facts import FileFacts

CMAKE, MAKE, PYTHON, SOURCE = "cmake", "make", "python", "source"
_MARKER = re.compile(r"#[^\S\n]*buildport:[^\S\n]*ignore(?:\[([^\]\r\n]*)\]|(?![\w\[-]))")
_ALL = "*"
_BRACKET = re.compile(r"\[(=*)\[")
#: message() arguments are prose: "this needs CUDA" is no dependency.
_MESSAGE = re.compile(r"(?im)^[ \t]*message[ \t]*\(")


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
    found = iter_collect(list(paths), report.errors, contents, index, words, ignore, left_out)  # as found
    for outcome in _audit_all(found, jobs, cache, contents, words):
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
               words: dict[str, list[str]] | None = None) -> list[FileAudit | None | str]:
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
        return _audit_each(noted(), workers, cache, contents, words)


def _load_engines(kinds: set[str]) -> None:
    """Before the workers are forked: the engines the kinds of files found so far need, loaded once
    here rather than in each worker (the make port only if a Makefile is among them)."""
    engine, prescan, _ = _engine()
    prescan.cmake_trigger()
    if MAKE in kinds:
        from buildport.syntax.make import load_tables

        engine.make_modules()
        load_tables()  # also what this process parses: Makefiles that include one another


def _audit_each(items: Iterable[tuple[str, str]], workers: Workers, cache: Cache | None,
                contents: dict[str, SourceText] | None,
                words: dict[str, list[str]] | None = None) -> list[FileAudit | None | str]:
    out: list[FileAudit | None | str] = []
    tasks: list[AuditTask] = []
    task_keys: list[Keys] = []  # the cache keys of each task's kind and facts
    missing: list[int] = []
    kinds = _audit_keys()
    lookups = cache is not None and cache.holds_entries()  # else the keys are worked out only to store
    feed = workers.feed(_audit_chunk, cache)
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
                from buildport.passes.make_facts import combine, file_facts
                from buildport.syntax.make import parse_make

                for j in members:
                    if j not in parts:
                        try:
                            parts[j] = file_facts(parse_make(makefiles[j][1].text, paths[j]))
                        except (InputError, ParseError):
                            parts[j] = None  # reported when it is audited
                facts = MakeFacts()
                combine(facts, [part for j in members if (part := parts[j]) is not None])
                changed = {j for j in members if facts != _alone(parts[j])}
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


def _alone(part: FileFacts | None) -> MakeFacts:
    """The facts a Makefile's port reads when the file is read alone (see :func:`buildport.engine.port_make`)."""
    from buildport.passes.make_facts import combine

    facts = MakeFacts()
    combine(facts, [part] if part is not None else [])
    return facts


def _audit_keys() -> dict[str, Keys]:
    """The cache keys of each kind's audit: a source's depends on the hipify-perl whose tables read it."""
    tables = installed_tables()
    return {kind: Cache.keys(f"audit-{kind}", tables.digest if kind == SOURCE and tables else None)
            for kind in (CMAKE, MAKE, PYTHON, SOURCE)}


def _audit_chunk(tasks: list[AuditTask], cache: Cache | None) -> list[FileAudit | None | str]:
    """Audit a chunk of tasks (see :data:`AuditTask`); runs in a worker process with ``jobs`` > 1."""
    out: list[FileAudit | None | str] = []
    kinds = _audit_keys() if cache is not None else {}
    key_for = _make_keys()  # a Makefile read with others: one object for the files that share its facts
    for path, kind, text, digest, facts in tasks:
        key_of = key_for(facts) if facts is not None and cache is not None else kinds.get(kind)
        try:
            audited = audit_text(text, path, kind, facts)
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


def kind_of(name: str) -> str | None:
    """``cmake``, ``make``, ``python`` (a ``setup.py``), ``source`` (a candidate: C/C++ files are checked for CUDA use) or None."""
    if is_cmake_file(name):
        return CMAKE
    if is_make_file(name):
        return MAKE
    if is_setup_py(name):
        return PYTHON
    extension = os.path.splitext(name)[1].lower()
    if extension in CUDA_EXTENSIONS or extension in C_FAMILY_EXTENSIONS:
        return SOURCE
    return None


def is_audited(name: str) -> bool:
    """Whether discovery gives ``audit`` a file of this name (a build file or a candidate source).

    :func:`kind_of`'s answer; asked of every file of a tree, so a name is first told by its last
    dot alone: no kind but a Makefile's name has none, and every kind's ends in one of a few suffixes.
    """
    dot = name.rfind(".")
    if dot < 0:
        return name in MAKEFILE_NAMES
    return (name[dot:].lower() in _AUDITED_SUFFIXES or name == "CMakeLists.txt") and kind_of(name) is not None


_AUDITED_SUFFIXES = frozenset({".cmake", ".mk", ".py", *CUDA_EXTENSIONS, *C_FAMILY_EXTENSIONS})


def iter_collect(paths: list[str], errors: list[str], contents: dict[str, SourceText] | None = None,
                 index: FileIndex | None = None,
                 words: dict[str, list[str]] | None = None, ignore: Ignore | None = None,
                 left_out: set[str] | None = None) -> Iterator[tuple[str, str]]:
    """(path, kind) of every file to audit, as discovery finds them: files as given, directories
    walked (the first kind given for a path wins), then the Makefiles those include.

    A file given by name whose kind is unknown is skipped (a pre-commit hook passes
    every staged file); a path that does not exist is an error. ``contents`` keeps
    what discovery read, and ``index`` vouches for files (see :func:`buildport.pipeline.discovery.discover`).
    """
    seen: set[str] = set()
    makefiles: list[str] = []
    skipped: list[str] = []  # what discovery left out; of it, what is no regular file is not audited: said
    trail = index.trail if index is not None else None  # what the run looks at (buildport.cache.replay)
    for p in paths:
        path = Path(p)
        found: Iterator[tuple[str, str]]
        if ignore is not None and ignore.named(p):
            continue
        if trail is not None and not path.is_dir():
            trail.path(p)  # a file named, or a name that does not exist
        if path.is_dir():
            found = ((f, kind_of(os.path.basename(f)) or "")
                     for f in files_below(path, is_audited, skipped, contents, index, ignore))
        elif path.exists():
            kind = kind_of(path.name)
            found = iter([(p, kind)] if kind is not None else [])
        else:
            errors.append(f"{p}: error: no such file or directory")
            continue
        for name, kind in found:
            if name not in seen:
                seen.add(name)
                if kind == MAKE:
                    makefiles.append(name)
                yield name, kind
    # a named pipe or a device under a build file's name (links out of the tree and binary files are left out
    # of an audit quietly)
    errors.extend(note.replace(": skipped: ", ": error: ", 1) for note in skipped if note.endswith(NOT_READ))
    for p in included_makefiles(makefiles, contents, index, words):
        if p not in seen:
            if ignore is not None and left_out is not None and ignore.excluded(p):
                left_out.add(p)  # read for what it defines to the others, not reported
            yield p, MAKE


def audit_text(text: str, path: str, kind: str, facts: MakeFacts | None = None) -> FileAudit | None:
    """The findings of one file's text; None for a C/C++ file that does not use CUDA. ``facts``: for a
    Makefile, what the files make reads with it say (see :mod:`buildport.passes.make_facts`); None: alone."""
    if kind == SOURCE:
        findings = scan_cuda_source(path, text, _cuda_left)
        return None if findings is None else FileAudit(path, kind, findings)
    engine, prescan, cmake_syntax = _engine()
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
    if not result.findings and not result.changed and not _may_have_residue(text, kind):
        return audited  # parsed, and nothing of CUDA in it
    changes = line_changes(result) if result.changed else {}
    for finding in result.findings:
        derived = changes.get(finding.line)
        if finding.fixable and not finding.replacement and derived is not None:
            finding = dataclasses.replace(finding, replacement=derived)
            audited.line_scoped.add(finding)
        audited.findings.append(finding)
    quiet = _left_alone(result) or kind == PYTHON
    for finding in [] if quiet else residue(text, path, kind, result.findings, changes):
        audited.findings.append(finding)
        if finding.fixable and changes.get(finding.line) is not None:
            audited.line_scoped.add(finding)
    silenced = suppressions(text)
    audited.findings = sorted((f for f in audited.findings if not _silenced(silenced, f)), key=Finding.sort_key)
    audited.line_scoped &= set(audited.findings)
    return audited


def _cuda_left(text: str, path: str, lexed: Lexed) -> list[Finding]:
    """CUDA names left in a source, read with the installed hipify-perl's tables (:mod:`buildport.source.left`)."""
    return cuda_left(text, path, lexed, installed_tables())


@functools.cache
def _engine() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The modules :func:`audit_text` calls, imported with the first file audited (a run the cache
    answers never needs the parsers and passes), once: an import statement run for each file costs
    microseconds each time."""
    import buildport.engine
    import buildport.prescan
    import buildport.syntax.cmake

    return buildport.engine, buildport.prescan, buildport.syntax.cmake


def _make_quiet(text: str) -> bool:
    """Whether a Makefile's text holds no residue word (:func:`~buildport.prescan.may_have_residue`), from
    the search the make port already made of it (which looks for those words too)."""
    return _make_prescan().holds_no_word(text) or not _engine()[1].may_have_residue(text)


@functools.cache
def _make_prescan() -> ModuleType:
    """:mod:`buildport.passes.make_prescan`, imported with the first Makefile audited, once."""
    from buildport.passes import make_prescan

    return make_prescan


def line_changes(result: Result) -> dict[int, str | None]:
    """Changed original line number → the text the rewrite puts there ("" when the line goes).

    None: the line changes, but within a block of unequal size no new line is
    close enough to say which text replaces it.
    """
    original, text = result.original, result.text
    regions = result.regions if result.regions is not None else whole(original, text)
    changes: dict[int, str | None] = {}
    line, at = 0, 0  # lines of the original before offset ``at``
    for start, end, new_start, new_end in line_blocks(original, text, regions):
        line += original.count("\n", at, start)
        at = start
        old, new = lines(original[start:end]), lines(text[new_start:new_end])
        if old == new:
            continue
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "delete":
                changes.update((line + n, "") for n in range(i1 + 1, i2 + 1))
            elif tag == "replace":
                changes.update((line + n, new_line) for n, new_line in _pair(old, i1, i2, new, j1, j2))
    return changes


def _pair(old: list[str], i1: int, i2: int, new: list[str], j1: int, j2: int) -> Iterator[tuple[int, str | None]]:
    """Each changed old line → the most similar new line after the previous pick (None if none is close).

    "Most similar" is :meth:`difflib.SequenceMatcher.ratio`, the first of equals,
    at least 0.5. Two cheaper upper bounds of the ratio (from the lengths, then
    from the characters the lines share) rule candidates out, and the ratio is
    computed highest bound first until no candidate left can beat the best; the
    picks are the same as from every ratio.
    """
    if i2 - i1 == j2 - j1:
        for k in range(i2 - i1):
            yield i1 + k + 1, new[j1 + k].rstrip("\r\n")
        return
    picks: dict[int, int] = {}
    shared: dict[int, Counter[str]] = {}
    matchers: dict[int, difflib.SequenceMatcher[str]] = {}
    j = j1
    for i in range(i1, i2):
        a = old[i]
        chars = Counter(a)
        bounds: list[tuple[float, int]] = []  # (an upper bound of the ratio, candidate), each bound ≥ 0.5
        for k in range(j, j2):
            b = new[k]
            total = len(a) + len(b)
            if not total:
                bounds.append((1.0, k))
                continue
            if 2.0 * min(len(a), len(b)) / total < 0.5:
                continue
            if k not in shared:
                shared[k] = Counter(b)
            bound = 2.0 * sum((chars & shared[k]).values()) / total
            if bound >= 0.5:
                bounds.append((bound, k))
        bounds.sort(key=lambda c: (-c[0], c[1]))
        best, at = -1.0, -1
        for bound, k in bounds:  # highest bound first: stop once no candidate left can beat or tie the best
            if bound < best:
                break
            if bound == best and k > at:
                continue
            if k not in matchers:  # the new line's index is built once, whichever old line it is compared with
                matchers[k] = difflib.SequenceMatcher(None, "", new[k], autojunk=False)
            matchers[k].set_seq1(a)
            ratio = matchers[k].ratio()
            if ratio > best or (ratio == best and k < at):
                best, at = ratio, k
        if best >= 0.5:
            picks[i] = j = at
            j += 1
    for i in range(i1, i2):
        yield i + 1, new[picks[i]].rstrip("\r\n") if i in picks else None


def left_behind(text: str, path: str, kind: str, result: Result) -> list[Finding]:
    """The findings of :func:`residue` that need a person (warnings): CUDA text the rewrite of ``text``
    (``result``) keeps and no finding of the engine names."""
    if not _may_have_residue(text, kind) or _left_alone(result):
        return []
    changes: Mapping[int, str | None] = _LazyChanges(result) if result.changed else {}
    found = residue(text, path, kind, result.findings, changes, Severity.WARNING)
    silenced = suppressions(text) if found else {}
    return [f for f in found if not f.fixable and not _silenced(silenced, f)]


def _may_have_residue(text: str, kind: str) -> bool:
    """Whether CUDA text may be in a build file's code (the prescans' answer: no means none is). A
    ``setup.py`` has no residue search: its engine's findings are all that is reported of it."""
    if kind == PYTHON:
        return False
    return _engine()[1].may_have_residue(text) if kind == CMAKE else not _make_quiet(text)


def _left_alone(result: Result) -> bool:
    """A copy of CMake's CUDA module: CUDA by design, and left as it is (its text is no residue)."""
    return any(f.rule == "cmake-cuda-module" for f in result.findings)


class _LazyChanges(Mapping[int, "str | None"]):
    """:func:`line_changes` of a result, worked out when :func:`residue` first asks (most files have no hit)."""

    def __init__(self, result: Result) -> None:
        self._result = result
        self._changes: dict[int, str | None] | None = None

    def _all(self) -> dict[int, str | None]:
        if self._changes is None:
            self._changes = line_changes(self._result)
        return self._changes

    def __getitem__(self, line: int) -> str | None:
        return self._all()[line]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def residue(text: str, path: str, kind: str, reported: list[Finding], changes: Mapping[int, str | None],
            least: Severity = Severity.INFO) -> list[Finding]:
    """CUDA text in the code of a build file that no engine finding covers.

    A line with a finding that needs a human is covered whole. Text the rewrite
    removes is covered by any finding on its line, and is a fixable finding of its
    own on a line without one; text that survives the rewrite is reported unless a
    finding points at it.
    """
    human = {f.line for f in reported if not f.fixable}
    any_line = {f.line for f in reported}
    at = {(f.line, f.col) for f in reported}
    out: list[Finding] = []
    # the line of offset ``at_line`` and where it starts: the hits come in order, so the text is read once
    line, at_line, line_start = 1, 0, 0
    kept: dict[tuple[int, str], bool] = {}  # (line, token) → whether the token is in the line's new text
    for rule, start, token in _residue_hits(code_only(text, kind)):
        newlines = text.count("\n", at_line, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", at_line, start) + 1
        at_line = start
        col = start - line_start + 1
        if line in human or (line, col) in at or build_rules.BY_ID[rule].severity < least:
            continue
        new = changes.get(line, text)
        survives = line not in changes
        if not survives and new is not None:
            found = kept.get((line, token))
            if found is None:
                found = kept[(line, token)] = token in new
            survives = found
        if not survives and line in any_line:
            continue
        info = build_rules.BY_ID[rule]
        if survives:
            severity = info.severity
            message = f"{info.title} `{token}`; `buildport {kind}` leaves it as it is"
            out.append(Finding(path, line, col, rule, severity, message, "port it by hand"))
        else:
            message = f"{info.title} `{token}`; `buildport {kind}` rewrites this line"
            out.append(Finding(path, line, col, rule, Severity.INFO, message, fixable=True,
                               replacement=new or ""))
    return out


def _residue_hits(code: str) -> Iterator[tuple[str, int, str]]:
    """Each pattern's matches, in the order of :data:`RESIDUE_PATTERNS`, where no earlier match
    claimed their text; yielded in the order of the text."""
    # claimed stretches are disjoint, so sorted by start they are sorted by end too: the only
    # one that can overlap [start, end) is the last one starting before end. Those of one
    # pattern come in order and are added once the pattern is done (merged, not inserted one
    # by one: a file of many hits would move the list's tail at each)
    claimed: list[tuple[int, int]] = []
    hits: list[tuple[int, str, str]] = []
    for rule, pattern in RESIDUE_PATTERNS:
        spans = _cuda_names(code) if rule == "build-cuda-name" else (m.span() for m in pattern.finditer(code))
        kept: list[tuple[int, int]] = []
        for start, end in spans:
            i = bisect.bisect_left(claimed, (end,))
            if i and claimed[i - 1][1] > start:
                continue
            if kept and kept[-1][1] > start:
                continue  # (a pattern's own matches do not overlap; kept for certainty)
            kept.append((start, end))
            hits.append((start, rule, code[start:end]))
        if kept:
            claimed = sorted(claimed + kept)  # two sorted runs: merged in linear time
    for start, rule, token in sorted(hits):
        yield rule, start, token


_NAME_SEED = re.compile(r"CUDA|(?i:cuda_)")
_WORD_REST = re.compile(r"\w*")
_NAME_HEAD = re.compile(r"[A-Za-z_]")


def _cuda_names(code: str) -> Iterator[tuple[int, int]]:
    """The spans the name pattern ``[A-Za-z_]\\w*`` matches that :func:`_cuda_name` keeps, in order.

    Rather than every word of the file, only words around a ``CUDA`` or ``cuda_``
    are looked at: a run of word characters holds one match of the pattern, from
    its first ASCII letter or underscore to the run's end.
    """
    last_end = -1
    for seed in _NAME_SEED.finditer(code):
        if seed.start() < last_end:
            continue  # inside the word already looked at
        run = seed.start()
        while run > 0 and (code[run - 1].isalnum() or code[run - 1] == "_"):
            run -= 1
        head = _NAME_HEAD.search(code, run, seed.start() + 1)
        assert head is not None  # the seed itself starts with a letter
        start = head.start()
        end = _WORD_REST.match(code, seed.start()).end()  # type: ignore[union-attr]
        last_end = end
        if _cuda_name(code, start, end):
            yield start, end


def _cuda_name(code: str, start: int, end: int) -> bool:
    """An upper-case CUDA/NVCC name, or a ``cuda_*`` command call (not a lower-case target name)."""
    word = code[start:end]
    if CUDA_WORD.search(word):
        return True
    return word.lower().startswith("cuda_") and code[end:end + 64].lstrip(" \t").startswith("(")


def code_only(text: str, kind: str) -> str:
    """``text`` with its comments blanked out (newlines kept), so offsets still match.

    CMake: ``#`` outside a quoted argument starts a line comment, ``#[[``/``#[=[``
    a bracket comment. make: an unescaped ``#`` starts a comment to the line end.
    """
    if kind != CMAKE:
        return _blanked(text, [m.span() for m in _MAKE_COMMENT.finditer(text) if m.group(1) is None])
    spans: list[tuple[int, int]] = []
    i = 0
    search = _CMAKE_SPECIAL.search
    while (m := search(text, i)) is not None:  # every other character is passed over as it is
        c = text[m.start()]
        if c == "[":
            spans.append((m.start(), _bracket_end(text, m.start())))
            i = spans[-1][1]
        elif c == "#":
            spans.append((m.start(), _comment_end(text, m.start())))
            i = spans[-1][1]
        else:  # a quoted argument or an escape, passed over whole
            i = m.end()
    messages = [(m.end(), _close_paren(text, m.end())) for m in _MESSAGE.finditer(text)]
    return _blanked(text, sorted(spans + messages) if messages else spans)


#: What :func:`code_only` stops at outside a quoted argument: a quoted argument (to its closing quote,
#: escapes passed over; to the end if unclosed), an escape, a bracket's opening, a ``#``.
_CMAKE_SPECIAL = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*\\?"?|\\[\s\S]?|\[=*\[|#')
#: make: an escaped character (group 1), or a comment to the line's end.
_MAKE_COMMENT = re.compile(r"(\\[\s\S]?)|#[^\n]*")
_NOT_NEWLINES = re.compile(r"[^\r\n]+")


def _spaces(m: re.Match[str]) -> str:
    return " " * (m.end() - m.start())


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character but newlines in ``spans`` (sorted by start) made a space."""
    if not spans:
        return text
    pieces: list[str] = []
    at = 0  # what is before ``at`` is in ``pieces``
    for start, end in spans:
        start = max(start, at)  # spans may overlap: a comment inside a message()
        if start < end:
            gap = text[start:end]
            blank = " " * len(gap) if "\n" not in gap and "\r" not in gap else _NOT_NEWLINES.sub(_spaces, gap)
            pieces += (text[at:start], blank)
            at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _bracket_end(text: str, start: int) -> int:
    m = _BRACKET.match(text, start)
    assert m is not None
    close = text.find(f"]{m.group(1)}]", m.end())
    return len(text) if close < 0 else close + len(m.group(1)) + 2


def _close_paren(text: str, start: int) -> int:
    """The offset of the ``)`` closing a command whose arguments start at ``start``."""
    depth, quoted = 1, False
    for m in _PAREN_SPECIAL.finditer(text, start):
        c = m.group()
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "()":
            depth += 1 if c == "(" else -1
            if depth == 0:
                return m.start()
    return len(text)


#: What :func:`_close_paren` looks at: a backslash and the character it escapes, a quote, a parenthesis.
_PAREN_SPECIAL = re.compile(r'\\[\s\S]?|["()]')


def _comment_end(text: str, start: int) -> int:
    """The end of the CMake comment whose ``#`` is at ``start``: a bracket comment's, or the line's."""
    if _BRACKET.match(text, start + 1):
        return _bracket_end(text, start + 1)
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def suppressions(text: str) -> dict[int, set[str]]:
    """Line → rule ids silenced by ``# buildport: ignore[...]`` markers on that line (``*``: all)."""
    silenced: dict[int, set[str]] = {}
    number, at = 1, 0  # the line number at offset ``at``
    for marker in _MARKER.finditer(text):  # a marker stays on its line: its blanks are not newlines
        number += text.count("\n", at, marker.start())
        at = marker.start()
        rules = silenced.setdefault(number, set())
        if marker.group(1) is None:
            rules.add(_ALL)
        else:
            rules.update(part.strip() for part in marker.group(1).split(",") if part.strip())
    return silenced


def _silenced(silenced: dict[int, set[str]], finding: Finding) -> bool:
    for line in (finding.line, finding.line - 1):
        rules = silenced.get(line)
        if rules and (_ALL in rules or finding.rule in rules):
            return True
    return False


def describe(rule: str) -> tuple[str, Severity, str]:
    """(title, default severity, rationale) of any rule id an audit reports."""
    if rule in build_rules.BY_ID:
        b = build_rules.BY_ID[rule]
        return b.title, b.severity, b.rationale
    if rule in source_rules.BY_ID:
        s = source_rules.BY_ID[rule]
        return s.title, s.severity, s.rationale
    return rule, Severity.WARNING, ""
