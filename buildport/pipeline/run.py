"""One run over many files, for every command alike (port and audit): each file read once, the cache a
filter in front of the work and a sink after it, the misses done by the pool as they are found, and
each Makefile read with the facts of the files make reads with it.

What is done to one file is a :class:`Work`: the port of a kind of build file
(:mod:`buildport.pipeline.port`) or the audit (:mod:`buildport.audit.run`). It
says what one file comes to and how that is kept; this module decides which
files need it done, hands them to the workers and keeps what they give back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, Protocol, TypeVar

from buildport.cache.store import Cache, Keys
from buildport.options import MakeFacts
from buildport.pipeline.makefacts import makefile_facts, may_include
from buildport.pipeline.outcomes import FileOutcome
from buildport.pipeline.pool import Workers
from buildport.textio import InputError, SourceText, read_source

#: The kind of file that is read with the facts of the files make reads with it.
MAKE = "make"

#: What the work makes of a file (see :class:`FileOutcome`).
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Task:
    """One file to work on: its path and kind, its source, the facts make reads it with (None: the
    file alone), and the cache key its result was looked up under (None: none was)."""

    path: str
    kind: str
    source: SourceText
    facts: MakeFacts | None = None
    key: str | None = None


#: A cache entry the work does not recognise: the file is worked on again.
MISS: Any = object()


class Work(Protocol[T]):
    """What a run does to each file; what one file comes to is a :class:`FileOutcome` (a file that cannot
    be read fails with its error, whatever the work). Its methods other than :meth:`compute` and
    :meth:`kept` run in the process that runs; those two in a worker (the object is sent to it)."""

    def settings(self, kind: str, facts: MakeFacts | None) -> tuple[str, object]:
        """The cache's kind of work for a file of ``kind`` read with ``facts``, and what besides the
        file's text its result depends on (canonical JSON data)."""
        ...

    def compute(self, task: Task) -> FileOutcome[T]:
        """The file worked on (an input error becomes a result: one file's fault stops no other)."""
        ...

    def kept(self, task: Task, done: FileOutcome[T]) -> Iterable[tuple[str, object]]:
        """What to keep of ``done`` in the cache: (the digest of the text it is the result for, the
        entry). Nothing for a result :meth:`nothing` calls so (that is kept apart)."""
        ...

    def nothing(self, task: Task, done: FileOutcome[T]) -> bool:
        """Whether ``done`` is what most files of a tree come to (kept as a mark, not an entry)."""
        ...

    def clean(self, task: Task) -> FileOutcome[T]:
        """What a file the cache marked as :meth:`nothing` comes to."""
        ...

    def stored(self, task: Task, entry: object) -> FileOutcome[T]:
        """What a file comes to from the entry kept for it; :data:`MISS` if the entry is malformed."""
        ...

    def pack(self, done: FileOutcome[T]) -> object:
        """``done`` as a worker sends it back (plain data); :meth:`unpack` makes it whole here."""
        ...

    def unpack(self, task: Task, packed: Any) -> FileOutcome[T]:
        ...


def run(
    items: Iterable[tuple[str, str]], work: Work[T], workers: Workers, cache: Cache | None = None,
    contents: dict[str, SourceText] | None = None, words: dict[str, list[str]] | None = None,
    read: Callable[[str], SourceText] = read_source,
) -> list[FileOutcome[T]]:
    """What each (path, kind) of ``items`` comes to, in their order.

    Cache hits are answered here; the misses go to the workers in chunks as
    ``items`` yields them (see :meth:`Workers.feed`), each result kept in the
    cache by the worker that made it. ``contents``: what discovery read (used,
    and dropped, instead of reading again; ``read`` reads the others). A
    Makefile with no include line is worked on alone as it comes; one with
    include lines waits for the end of ``items``; then each Makefile whose
    facts the files make reads with it change (:func:`makefile_facts`) is
    worked on again with them, and that result is its result. ``words``: the
    include lines of the Makefiles discovery read them for.
    """
    return _Run(work, workers, cache).over(items, contents, words, read)


class _Run(Generic[T]):
    def __init__(self, work: Work[T], workers: Workers, cache: Cache | None) -> None:
        self.work, self.workers, self.cache = work, workers, cache
        self.lookups = cache is not None and cache.holds_entries()  # else no key is worked out here: the workers store
        self.keys = KeysBySettings(work)
        self.places: list[int] = []  # where each task's result goes
        self.tasks: list[Task] = []
        self.feed = workers.feed(_chunk, (work, cache), work.pack, work.unpack)

    def over(self, items: Iterable[tuple[str, str]], contents: dict[str, SourceText] | None,
             words: dict[str, list[str]] | None, read: Callable[[str], SourceText]) -> list[FileOutcome[T]]:
        out: list[Any] = []
        index = self.cache.files if self.cache is not None else None
        makefiles: list[tuple[int, str, SourceText]] = []  # (where in ``out``, path, source)
        waiting: set[int] = set()  # the Makefiles with include lines: worked on once the walk is over
        for path, kind in items:
            known = None
            if contents is not None:  # a Makefile's text stays: the walk may not be over, and its includes are read last
                known = contents.get(path) if kind == MAKE else contents.pop(path, None)
            try:
                source = known if known is not None else read(path)
            except InputError as exc:
                out.append(FileOutcome(path, error=str(exc)))
                continue
            if kind == MAKE and path != "-":
                makefiles.append((len(out), path, source))
                if may_include(source, index):
                    waiting.add(len(out))
                    out.append(None)
                    continue
            out.append(self.one(Task(path, kind, source), len(out)))
        owner: dict[int, int] = {}  # a Makefile worked on again: its place → the task that fills it (-1: none)
        if makefiles:
            # most Makefiles include nothing and were worked on alone as they came; one that others include
            # is worked on again, with the facts of the files make reads it with (the later result wins)
            facts = makefile_facts([(path, source) for _, path, source in makefiles], words or {}, self.cache,
                                   self.workers)
            for at, path, source in makefiles:
                file_facts = facts.get(path)
                if at not in waiting and file_facts is None:
                    continue  # worked on alone already, as make reads it
                queued = len(self.tasks)
                out[at] = self.one(Task(path, MAKE, source, file_facts), at)
                owner[at] = queued if len(self.tasks) > queued else -1
        cache = self.cache
        for n, (at, task, done) in enumerate(zip(self.places, self.tasks, self.feed.results())):
            if owner.get(at, n) == n:  # not a first run of a Makefile worked on again since
                out[at] = done
            if cache is not None and task.source.digest and self.work.nothing(task, done):
                cache.mark_clean(self.keys(task.kind, task.facts), task.path, task.source.digest)
        if cache is not None and self.tasks:
            cache.save_clean()
            cache.prune()
        return out

    def one(self, task: Task, at: int) -> Any:
        """A file's result from the cache; or None, its task handed to the feed, whose result goes to ``at``."""
        cache, source = self.cache, task.source
        if cache is not None and source.digest:
            key_of = self.keys(task.kind, task.facts)
            if cache.is_clean(key_of, task.path, source.digest):
                return self.work.clean(task)
            if self.lookups:
                key = key_of(task.path, source.digest)
                stored = cache.get(key)
                if stored is not None:
                    hit = self.work.stored(task, stored)
                    if hit is not MISS:
                        return hit
                task = Task(task.path, task.kind, source, task.facts, key)
        try:
            source.text  # a source the file index vouched for is read now, for the work (or its error)
        except InputError as exc:
            return FileOutcome(task.path, error=str(exc))
        self.places.append(at)
        self.tasks.append(task)
        self.feed.add(task)
        return None


class KeysBySettings:
    """The cache keys of a work for each kind of file and set of make facts met (files that share
    facts share one object): the code, kind and settings are hashed once for each, not once per file."""

    __slots__ = ("_work", "_made")

    def __init__(self, work: Work[Any]) -> None:
        self._work = work
        self._made: dict[tuple[str, int], tuple[MakeFacts | None, Keys]] = {}  # the facts kept alive beside their keys

    def __call__(self, kind: str, facts: MakeFacts | None) -> Keys:
        found = self._made.get((kind, id(facts)))
        if found is None:
            found = self._made[kind, id(facts)] = (facts, Cache.keys(*self._work.settings(kind, facts)))
        return found[1]


def _chunk(tasks: list[Task], shared: tuple[Work[T], Cache | None]) -> list[FileOutcome[T]]:
    """Work on a chunk of tasks and keep each result in the cache (in a worker with ``jobs`` > 1)."""
    work, cache = shared
    keys = KeysBySettings(work) if cache is not None else None
    out = []
    for task in tasks:
        done = work.compute(task)
        if keys is not None and task.source.digest:
            for text_digest, entry in work.kept(task, done):
                key = task.key if task.key is not None and text_digest == task.source.digest else None
                cache.put(key or keys(task.kind, task.facts)(task.path, text_digest), entry)  # type: ignore[union-attr]
        out.append(done)
    return out

