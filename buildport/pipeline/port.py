"""Porting many build files: the cache as a filter in front of the work and a sink after it, the pool,
the facts Makefiles give each other, and one outcome per file."""

from __future__ import annotations

import dataclasses
import functools
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping

from buildport.cache.store import Cache, Keys, result_from_json, result_to_json
from buildport.findings import Finding
from buildport.options import MakeFacts, Options
from buildport.result import Result, UnstableRewrite
from buildport.syntax.errors import ParseError
from buildport.passes.includes import include_graph, include_targets
from buildport.passes.package_scopes import extra_packages
from buildport.rules.cmake import FIND_HIP
from buildport.textio import InputError, SourceText, decode, digest, encode, read_source
from buildport.pipeline.discovery import file_identity, unique_files
from buildport.pipeline.outcomes import FileOutcome, Run
from buildport.pipeline.pool import FEED_FIRST, Workers

# The parsers and passes (buildport.engine) are imported where a file is ported: a run that the
# cache answers whole never needs them.


def port_files(
    paths: Iterable[str], options: Options, stdin: bytes | None = None, kind: str = "cmake",
    jobs: int = 1, cache: Cache | None = None, contents: dict[str, SourceText] | None = None,
    walking: bool = False,
) -> Run:
    """Port every file; for CMake, the ROCm packages any file links are found where CUDA is.

    With ``jobs`` > 1 the files are ported in a pool of processes; the outcomes
    are the same, in the same order, as with ``jobs`` = 1 (which stays in this
    process). ``cache`` holds results from earlier runs; a hit is what the
    computation would return. ``contents`` holds what discovery read (see
    :func:`discover`); it is used, and dropped, instead of reading again.

    ``paths`` may be a discovery still under way (:func:`iter_paths`): CMake
    files go to the pool in chunks as they come, so the workers port while this
    process walks and reads. Makefiles are read as a whole first (what one
    defines, another uses). ``walking`` says that ``paths`` walks a directory
    as it is read: for Makefiles the workers are then started as soon as the
    walk has found files enough for a pool, and build the make parser's lexers
    while the walk goes on.
    """
    make = kind == "make"
    with Workers(jobs, _warm_make_parser if make else None, _load_make_port if make else _load_cmake_port) as workers:
        run = _port_files(paths, options, stdin, kind, workers, cache, contents, walking)
    if cache is not None and cache.files is not None:
        cache.files.save()  # what discovery recorded
    return run


def _load_make_port() -> None:
    """Before the workers are forked: the make port's modules and parser, which this process needs
    later (the facts of the run) or not at all, loaded once here rather than in each worker."""
    _engine().make_modules()
    _warm_make_parser()


def _load_cmake_port() -> None:
    """Before the workers are forked: the CMake port's modules and its search for the rules' words."""
    from buildport.prescan import cmake_trigger

    _engine()
    cmake_trigger()


def _warm_make_parser() -> None:
    """In each worker as it starts: every lexer of the make parser, compiled before the first chunk."""
    from buildport.syntax.make import warm_up

    warm_up()


def _port_files(
    paths: Iterable[str], options: Options, stdin: bytes | None, kind: str, workers: Workers, cache: Cache | None,
    contents: dict[str, SourceText] | None, walking: bool = False,
) -> Run:
    run = Run()
    known = contents if contents is not None else {}
    # a Makefile's text stays in ``known``: the walk may still be going on, and its includes are read at its end
    take = known.get if kind == "make" else known.pop
    loading: Iterator[FileOutcome] = (_load(path, stdin, take(path, None)) for path in unique_files(paths, known))
    facts = None
    ported: dict[str, Any] = {}
    if kind == "make":
        sources = []
        # with nothing stored, no facts can be found in the cache: the workers read each file's as the walk finds it
        early = walking and workers.jobs > 1 and (cache is None or not cache.holds_entries())
        feed = workers.feed(_file_facts_chunk, options) if early else None
        tasks: list[tuple[str, str, str]] = []
        for loaded in loading:
            sources.append(loaded)
            if feed is not None:
                if (task := _facts_task(loaded)) is not None:
                    tasks.append(task)
                    feed.add(task)  # the pool starts with the first chunk: its workers build the make lexers first
            elif walking and len(sources) == FEED_FIRST and workers.jobs > 1:
                workers.pool()  # files enough for a pool: its workers build the make lexers while the walk goes on
        fed = (tasks, list(feed.results())) if feed is not None else None
        facts, ported = _make_facts(sources, options, cache, workers, fed)
        loading = iter(sources)
    run.outcomes = _port_all(loading, options, kind, facts, workers, cache, ported)
    if kind != "cmake":
        return run
    if len(run.outcomes) < 2 or not any(o.result is not None and o.result.packages for o in run.outcomes):
        return run
    linked = [o.result.packages if o.result is not None else set() for o in run.outcomes]
    finds = [o.result is not None and _finds_cuda(o.result) for o in run.outcomes]
    # the packages a file links are found where CUDA is found for it (buildport.passes.package_scopes); they
    # reach only find_package(CUDA/CUDAToolkit) rewrites, each reported, and change nothing in a file
    # that links every one of them itself
    again: dict[tuple[str, ...], list[int]] = {}
    for i, extra in extra_packages([o.path for o in run.outcomes], linked, finds).items():
        if not set(extra) <= linked[i]:
            again.setdefault(extra, []).append(i)
    for extra, indices in again.items():
        wider = dataclasses.replace(options, extra_packages=extra)
        redone = _port_all([run.outcomes[i] for i in indices], wider, kind, None, workers, cache)
        for i, outcome in zip(indices, redone):
            run.outcomes[i] = outcome
    return run


def _finds_cuda(result: Result) -> bool:
    """Whether the port turned a find_package(CUDA/CUDAToolkit) of the file into find_package(hip)."""
    return any(f.rule == "cmake-find-package" and f.replacement.startswith((FIND_HIP + ")", FIND_HIP + " "))
               for f in result.findings)


def _load(path: str, stdin: bytes | None, known: SourceText | None = None) -> FileOutcome:
    """The file read and decoded (``source`` set; ``known`` is what discovery read), or its read error."""
    if known is not None:
        return FileOutcome(path, source=known)
    try:
        if path == "-":
            source = SourceText("<stdin>", decode(stdin or b"", "<stdin>"), "")
        else:
            source = read_source(path)
    except InputError as exc:
        return FileOutcome(path, error=str(exc))
    return FileOutcome(path, source=source)


def _port_all(
    loaded: Iterable[FileOutcome], options: Options, kind: str, facts: Mapping[str, MakeFacts] | None,
    workers: Workers, cache: Cache | None, ported: dict[str, Any] | None = None,
) -> list[FileOutcome]:
    """Port every loaded file: cache hits here, the misses in a pool when ``jobs`` > 1, handed over
    in chunks as ``loaded`` yields them. ``facts``: each Makefile's facts by path (see
    :func:`_make_facts`; a file without is read alone). ``ported``: Makefiles already ported while
    their facts were read, each taken where its facts cannot change it."""
    ported = ported or {}
    taken = 0
    out: list[FileOutcome] = []
    missing: list[int] = []
    keys: dict[int, str] = {}
    digests: dict[int, str] = {}
    key_for = FactKeys(kind, lambda made: _settings(options, made))
    lookups = cache is not None and cache.holds_entries()  # else no key is worked out here: the workers store
    feed = workers.feed(_port_chunk, (options, kind, cache), _pack_outcome, _unpack_outcome)
    for i, item in enumerate(loaded):
        source = item.source
        if source is None or item.error:
            out.append(FileOutcome(item.path, error=item.error))
            continue
        file_facts = facts.get(item.path) if facts is not None else None
        key_of = key_for(file_facts)
        if cache is not None and source.digest:
            if cache.is_clean(key_of, item.path, source.digest):
                item.result = Result.unchanged(source)
                out.append(item)
                continue
            if lookups:
                keys[i] = key_of(item.path, source.digest)
                stored = cache.get(keys[i])
                if isinstance(stored, dict) and isinstance(stored.get("error"), str):
                    out.append(FileOutcome(item.path, error=stored["error"]))  # input the parser rejected
                    continue
                result = result_from_json(stored, source) if stored is not None else None
                if result is not None:
                    again = functools.partial(_port_one, item.path, source, options, kind, file_facts)
                    out.append(FileOutcome(item.path, result, source, recompute=again))
                    continue
        try:
            source.text  # a source the file index vouched for is read now, for the pass (or its error)
        except InputError as exc:
            out.append(FileOutcome(item.path, error=str(exc)))
            continue
        if file_facts is not None and (packed := ported.get(item.path)) is not None:
            done = _unpack_outcome((item.path, source, None, file_facts), packed)
            if done.result is not None and _unaffected(file_facts)(source.text, done.result.text):
                out.append(done)
                taken += 1
                if cache is not None and source.digest:
                    if _nothing(done.result):
                        cache.mark_clean(key_of, item.path, source.digest)
                    else:
                        cache.put(keys.get(i) or key_of(item.path, source.digest), packed[2])
                continue
        out.append(item)
        missing.append(i)
        digests[i] = source.digest
        feed.add((item.path, source, keys.get(i), file_facts))
    for i, outcome in zip(missing, feed.results()):
        out[i] = outcome
        if cache is not None and digests[i] and outcome.result is not None and _nothing(outcome.result):
            cache.mark_clean(key_for(facts.get(outcome.path) if facts is not None else None), outcome.path,
                             digests[i])
    if cache is not None and (missing or taken):
        cache.save_clean()
        cache.prune()
    return out


def _unaffected(facts: MakeFacts) -> Callable[[str, str], bool]:
    """Whether a Makefile's port made with no facts but the defaults (its text, and the text it was
    ported to, given) is also its port with ``facts``.

    The make passes ask the facts only whether a name they read in the text (a
    variable assigned, referred to, or given to ``-arch=``) is a compiler,
    architecture or flag variable, and whether a host compiler links (only for a
    runtime library's ``-l``, a word of the search: a file ported early holds
    none). So the port is the same if none of the names the facts add occurs in
    either text.
    """
    base = MakeFacts()
    added = (facts.compiler_vars - base.compiler_vars) | (facts.arch_vars - base.arch_vars) | (
        facts.flag_vars - base.flag_vars)  # fmt: skip
    return lambda text, new: not any(name in text or name in new for name in added)


def _nothing(result: Result) -> bool:
    """Unchanged, no findings, no packages: what most files of a tree come out as."""
    return not result.changed and not result.findings and not result.packages


class FactKeys:
    """The cache keys of one kind of work for each set of make facts met (files that share facts share
    one object): the code, kind, options and facts are hashed once for each set, not once per file."""

    __slots__ = ("_kind", "_settings", "_made")

    def __init__(self, kind: str, settings: Callable[[MakeFacts | None], object]) -> None:
        self._kind = kind
        self._settings = settings
        self._made: dict[int, tuple[MakeFacts | None, Keys]] = {}  # by id, the facts kept alive beside their keys

    def __call__(self, facts: MakeFacts | None) -> Keys:
        found = self._made.get(id(facts))
        if found is None:
            found = self._made[id(facts)] = (facts, Cache.keys(self._kind, self._settings(facts)))
        return found[1]


def _settings(options: Options, facts: MakeFacts | None) -> list[object]:
    """Everything besides the file that its result depends on, as canonical JSON data."""
    made = None if facts is None else facts.as_json()
    return [list(options.offload_arch), list(options.extra_packages), made, options.keep_cuda]


#: What a worker ports: the path, the source, the cache key looked up (if any) and the file's make facts.
PortTask = tuple[str, SourceText | None, str | None, MakeFacts | None]


def _port_chunk(tasks: list[PortTask], shared: Any) -> list[FileOutcome]:
    """Port a chunk of loaded files and store the results under their keys (in a worker with ``jobs`` > 1)."""
    options, kind, cache = shared
    key_for = FactKeys(kind, lambda made: _settings(options, made))  # a chunk's files that share facts share one object
    out = []
    for path, source, key, facts in tasks:
        assert source is not None
        key_of = key_for(facts) if cache is not None else None
        outcome = _port_one(path, source, options, kind, facts)
        kept = outcome.error or (outcome.result is not None and not _nothing(outcome.result))
        if key is None and key_of is not None and source.digest and kept:
            key = key_of(path, source.digest)  # the main process, with nothing stored, looked nothing up
        if cache is not None and key is not None and outcome.result is not None and not _nothing(outcome.result):
            cache.put(key, result_to_json(outcome.result))  # "nothing" is kept apart (see _port_all)
        rerun = outcome.result.rerun if outcome.result is not None else None
        if cache is not None and key_of is not None and key is not None and rerun is not None:
            # the stability check ported the rewritten text: a run after --in-place finds it here
            cache.put(key_of(path, digest(encode(rerun.original))), result_to_json(rerun))
        elif cache is not None and key is not None and outcome.error and outcome.exception is None:
            cache.put(key, {"error": outcome.error})  # a parse error depends on the text alone, too
        if outcome.exception is not None and not _picklable(outcome.exception):
            outcome.exception = RuntimeError(f"{type(outcome.exception).__name__}: {outcome.exception}")
        out.append(outcome)
    return out


def _pack_outcome(outcome: FileOutcome) -> tuple[Any, ...]:
    """A worker's outcome as the cache stores a result: without the source text the parent holds;
    ``()`` for what most files of a tree come to, their text unchanged and nothing found."""
    if outcome.result is not None and not outcome.error and outcome.exception is None and _nothing(outcome.result):
        return ()
    packed = None if outcome.result is None else result_to_json(outcome.result)
    return outcome.error, outcome.exception, packed


def _unpack_outcome(task: PortTask, packed: tuple[Any, ...]) -> FileOutcome:
    path, source = task[0], task[1]
    if not packed and source is not None:
        return FileOutcome(path, Result.unchanged(source), source)
    error, exception, data = packed
    if data is None or source is None:
        return FileOutcome(path, error=error, exception=exception)
    result = result_from_json(data, source)
    assert result is not None, "packed by _pack_outcome in a worker of this run"
    return FileOutcome(path, result, source, error, exception)


def _picklable(exc: Exception) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any failure means the exception cannot cross a process boundary
        return False
    return True


def _make_facts(
    loaded: list[FileOutcome], options: Options, cache: Cache | None, workers: Workers,
    fed: tuple[list[tuple[str, str, str]], list[Any]] | None = None,
) -> tuple[dict[str, MakeFacts], dict[str, Any]]:
    """Each Makefile's compiler, flag and architecture variables (by path), read with the files make
    reads along with it (see :func:`buildport.passes.make_facts.scopes`), and the Makefiles ported
    on the way (path → packed outcome).

    Each file is read on its own (by the pool's workers, if any), then the parts
    of the files that include each other are combined; the facts depend on all
    of them, so the cache keeps them under the paths and hashes of every file. A
    file that holds no word a make rule looks for is ported as soon as it is
    parsed, with the default facts: where its facts turn out not to concern it
    (:func:`_unaffected`), that is its port, and it is neither sent nor parsed
    again. ``fed``: the tasks already handed to the workers as the walk found
    the files, and what they gave back (a run whose cache holds nothing).
    """
    key = None
    named = [o.path for o in loaded]
    if cache is not None and "-" not in named:
        digests = [[o.path, o.source.digest if o.source else ""] for o in loaded]
        key = cache.key(_SCOPED_FACTS, "", "", digests)
        stored = cache.get(key) if fed is None else None  # with ``fed``, the cache held nothing
        known = _stored_facts(stored, len(named))
        if known is not None:
            return {path: facts for path, facts in zip(named, known) if facts is not None}, {}
    from buildport.passes.make_facts import scoped_facts

    if fed is not None:
        tasks, parts = fed
    else:
        tasks = [task for task in map(_facts_task, loaded) if task is not None]
        parts = workers.run(_file_facts_chunk, tasks, options)
    paths = [path for path, _, _ in tasks]
    identities = {item.path: item.source.identity for item in loaded if item.source is not None}
    includes = include_graph(paths, [include_targets(text) for _, _, text in tasks],
                             lambda i: identities.get(paths[i]) or file_identity(paths[i], None))
    by_task = scoped_facts([part for part, _ in parts], includes)
    facts = {path: made for (path, _, _), made in zip(tasks, by_task)}
    if key is not None:
        distinct: dict[int, int] = {}
        table: list[list[Any]] = []
        of: list[int] = []
        for path in named:
            made = facts.get(path)
            if made is None:
                of.append(-1)
                continue
            if id(made) not in distinct:
                distinct[id(made)] = len(table)
                table.append(made.as_json())
            of.append(distinct[id(made)])
        cache.put(key, {"facts": table, "of": of})  # type: ignore[union-attr]  # a key only with a cache
    return facts, {task[0]: packed for task, (_, packed) in zip(tasks, parts) if packed is not None}


#: The kind of work the cache keeps each run's facts under (by the paths and hashes of its Makefiles).
_SCOPED_FACTS = "make-facts-scoped"


def _stored_facts(stored: Any, count: int) -> list[MakeFacts | None] | None:
    """The facts of each of ``count`` files as :func:`_make_facts` stored them; None if malformed."""
    try:
        table, of = stored["facts"], stored["of"]
        if type(of) is not list or len(of) != count:
            return None
        made = [MakeFacts.from_json(data) for data in table]
        return [None if i == -1 else made[i] for i in of]
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _facts_task(item: FileOutcome) -> tuple[str, str, str] | None:
    """What :func:`_file_facts_chunk` reads of a loaded Makefile; None for one that could not be
    read (reported when it is ported)."""
    if item.path == "-" or item.source is None:
        return None
    try:
        return item.path, item.source.path, item.source.text
    except InputError:
        return None


def _file_facts_chunk(tasks: list[tuple[str, str, str]], options: Options) -> list[Any]:
    """What each Makefile of a chunk says on its own (None for one that does not parse: reported
    when it is ported), and, for one that holds no word a make rule looks for, its port with the
    default facts, packed (else None). Runs in a worker process with ``jobs`` > 1."""
    from buildport.engine import port_make
    from buildport.passes.make_facts import file_facts
    from buildport.passes.make_prescan import may_hold_rule_words
    from buildport.syntax.errors import ParseError
    from buildport.syntax.make import parse_make

    out: list[Any] = []
    for path, source_path, text in tasks:
        try:
            tree = parse_make(text, path)
        except ParseError:
            out.append((None, None))
            continue
        packed = None
        if not may_hold_rule_words(text):
            try:
                result = port_make(text, source_path, options, facts=MakeFacts(), tree=tree)
            except Exception:  # noqa: BLE001 - ported again, and reported, with the run's facts
                pass
            else:
                packed = _pack_outcome(FileOutcome(path, result))
        out.append((file_facts(tree), packed))
    return out


@functools.cache
def _engine() -> ModuleType:
    """:mod:`buildport.engine`, imported with the first file ported (see the note on imports above),
    once: an import statement run for each file costs microseconds each time."""
    import buildport.engine

    return buildport.engine


def _port_one(path: str, source: SourceText, options: Options, kind: str = "cmake",
              facts: MakeFacts | None = None) -> FileOutcome:
    engine = _engine()
    try:
        if kind == "cmake":
            result = engine.port_cmake(source.text, source.path, options)
        elif kind == "python":
            result = engine.port_setup_py(source.text, source.path, options)
        else:
            result = engine.port_make(source.text, source.path, options, facts=facts)
        result.findings.extend(_left_behind(source.text, source.path, kind, result))
    except (ParseError, InputError) as exc:
        return FileOutcome(path, error=str(exc))
    except UnstableRewrite as exc:
        return FileOutcome(path, error=f"{exc} (internal error: please report it with this file)", exception=exc)
    except Exception as exc:  # a bug in a pass must not stop the other files
        message = str(exc).splitlines()[0] if str(exc) else ""
        error = (f"{path}: internal error: {type(exc).__name__}: {message} "
                 "(please report it with this file; --debug shows a traceback)")
        return FileOutcome(path, error=error, exception=exc)
    return FileOutcome(path, result, source)


def _left_behind(text: str, path: str, kind: str, result: Result) -> list[Finding]:
    """CUDA the rewrite leaves in the file that no finding of the engine names (a CUDA library's file name,
    a path into the toolkit): what ``audit`` reports of it, so ``cmake`` and ``make`` say it too."""
    from buildport.audit import left_behind

    return left_behind(text, path, kind, result)


