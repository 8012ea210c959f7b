"""Porting many build files: the port of one file as the work of a run (:mod:`buildport.pipeline.run`),
and the ROCm packages of a CMake project found wherever it finds CUDA."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterable, Iterator

from buildport.cache.store import Cache, result_from_json, result_to_json
from buildport.findings import Finding
from buildport.options import MakeFacts, Options
from buildport.result import Result, UnstableRewrite
from buildport.syntax.errors import ParseError
from buildport.passes.package_scopes import extra_packages
from buildport.rules.cmake import FIND_HIP
from buildport.textio import InputError, SourceText, decode, digest, encode, read_source
from buildport.pipeline.discovery import unique_files
from buildport.pipeline.outcomes import FileOutcome, Run
from buildport.pipeline.pool import Workers
from buildport.pipeline.run import MISS, Task, run as run_files

# The parsers and passes (buildport.engine) are imported where a file is ported: a run that the
# cache answers whole never needs them.


def port_files(
    paths: Iterable[str], options: Options, stdin: bytes | None = None, kind: str = "cmake",
    jobs: int = 1, cache: Cache | None = None, contents: dict[str, SourceText] | None = None,
) -> Run:
    """Port every file; for CMake, the ROCm packages any file links are found where CUDA is.

    With ``jobs`` > 1 the files are ported in a pool of processes; the outcomes
    are the same, in the same order, as with ``jobs`` = 1 (which stays in this
    process). ``cache`` holds results from earlier runs; a hit is what the
    computation would return. ``contents`` holds what discovery read (see
    :func:`discover`); it is used, and dropped, instead of reading again.

    ``paths`` may be a discovery still under way (:func:`iter_paths`): the
    files go to the pool in chunks as they come, so the workers port while this
    process walks and reads; a Makefile with include lines waits for the end of
    the walk, and each is ported with the facts of the files make reads with it
    (see :func:`buildport.pipeline.run.run`).
    """
    make = kind == "make"
    with Workers(jobs, _warm_make_parser if make else None, _load_make_port if make else _load_cmake_port) as workers:
        run = _port_files(paths, options, stdin, kind, workers, cache, contents)
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
    contents: dict[str, SourceText] | None,
) -> Run:
    known = contents if contents is not None else {}
    read = functools.partial(_read, stdin=stdin)
    items = ((path, kind) for path in unique_files(paths, known))
    run = Run(run_files(items, PortWork(options, kind), workers, cache, known, None, read))
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
        if not set(extra) <= linked[i] and run.outcomes[i].source is not None:
            again.setdefault(extra, []).append(i)
    for extra, indices in again.items():
        wider = PortWork(dataclasses.replace(options, extra_packages=extra), kind)
        sources = {run.outcomes[i].path: run.outcomes[i].source for i in indices}
        redone = run_files([(run.outcomes[i].path, kind) for i in indices], wider, workers, cache,
                           sources, None, read)  # type: ignore[arg-type]  # each has its source
        for i, outcome in zip(indices, redone):
            run.outcomes[i] = outcome
    return run


def _finds_cuda(result: Result) -> bool:
    """Whether the port turned a find_package(CUDA/CUDAToolkit) of the file into find_package(hip)."""
    return any(f.rule == "cmake-find-package" and f.replacement.startswith((FIND_HIP + ")", FIND_HIP + " "))
               for f in result.findings)


def _read(path: str, stdin: bytes | None) -> SourceText:
    """The file read and decoded (``-``: ``stdin``); :class:`InputError` if it cannot be."""
    if path == "-":
        return SourceText("<stdin>", decode(stdin or b"", "<stdin>"), "")
    return read_source(path)


def _nothing(result: Result) -> bool:
    """Unchanged, no findings, no packages: what most files of a tree come out as."""
    return not result.changed and not result.findings and not result.packages


@dataclass(frozen=True, slots=True)
class PortWork:
    """The port of one kind of build file (see :class:`buildport.pipeline.run.Work`)."""

    options: Options
    kind: str

    def settings(self, kind: str, facts: MakeFacts | None) -> tuple[str, object]:
        made = None if facts is None else facts.as_json()
        options = self.options
        return kind, [list(options.offload_arch), list(options.extra_packages), made, options.keep_cuda]

    def compute(self, task: Task) -> FileOutcome[Result]:
        outcome = _port_one(task.path, task.source, self.options, self.kind, task.facts)
        if outcome.exception is not None and not _picklable(outcome.exception):
            outcome.exception = RuntimeError(f"{type(outcome.exception).__name__}: {outcome.exception}")
        return outcome

    def kept(self, task: Task, done: FileOutcome[Result]) -> Iterator[tuple[str, object]]:
        result = done.result
        if result is not None and not _nothing(result):
            yield task.source.digest, result_to_json(result)
        if result is not None and result.rerun is not None:
            # the stability check ported the rewritten text: a run after --in-place finds it here
            yield digest(encode(result.rerun.original)), result_to_json(result.rerun)
        elif done.error and done.exception is None:
            yield task.source.digest, {"error": done.error}  # a parse error depends on the text alone, too

    def nothing(self, task: Task, done: FileOutcome[Result]) -> bool:
        return done.result is not None and _nothing(done.result)

    def clean(self, task: Task) -> FileOutcome[Result]:
        return FileOutcome(task.path, Result.unchanged(task.source), task.source)

    def stored(self, task: Task, entry: object) -> FileOutcome[Result]:
        if isinstance(entry, dict) and isinstance(entry.get("error"), str):
            return FileOutcome(task.path, error=entry["error"])  # input the parser rejected
        result = result_from_json(entry, task.source)
        if result is None:
            return MISS  # type: ignore[no-any-return]
        again = functools.partial(_port_one, task.path, task.source, self.options, self.kind, task.facts)
        return FileOutcome(task.path, result, task.source, recompute=again)

    def pack(self, done: FileOutcome[Result]) -> tuple[Any, ...]:
        return _pack_outcome(done)

    def unpack(self, task: Task, packed: tuple[Any, ...]) -> FileOutcome[Result]:
        return _unpack_outcome(task.path, task.source, packed)


def _pack_outcome(outcome: FileOutcome[Result]) -> tuple[Any, ...]:
    """A worker's outcome as the cache stores a result: without the source text the parent holds;
    ``()`` for what most files of a tree come to, their text unchanged and nothing found."""
    if outcome.result is not None and not outcome.error and outcome.exception is None and _nothing(outcome.result):
        return ()
    packed = None if outcome.result is None else result_to_json(outcome.result)
    return outcome.error, outcome.exception, packed


def _unpack_outcome(path: str, source: SourceText, packed: tuple[Any, ...]) -> FileOutcome[Result]:
    if not packed:
        return FileOutcome(path, Result.unchanged(source), source)
    error, exception, data = packed
    if data is None:
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


@functools.cache
def _engine() -> ModuleType:
    """:mod:`buildport.engine`, imported with the first file ported (see the note on imports above),
    once: an import statement run for each file costs microseconds each time."""
    import buildport.engine

    return buildport.engine


def _port_one(path: str, source: SourceText, options: Options, kind: str = "cmake",
              facts: MakeFacts | None = None) -> FileOutcome[Result]:
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


