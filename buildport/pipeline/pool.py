"""The worker pool every run shares: chunks of work in forked processes (plain data across), in order."""

from __future__ import annotations

import functools
from typing import Any, Callable, Generic, Iterator, TypeVar

from buildport.rules import ruleset


#: A worker costs about as much to start as porting a few files, so a small run stays in one process.
MIN_ITEMS_PER_WORKER = 4
#: Files per chunk when they are handed to the pool as they come (:meth:`Workers.feed`): the first
#: chunk is small, so that the pool starts early, and each next one twice as large up to the last
#: size, large enough to cost little to send.
FEED_FIRST = 2 * MIN_ITEMS_PER_WORKER
FEED_CHUNK = 64

Task = TypeVar("Task")
Done = TypeVar("Done")


class Workers:
    """A pool of ``jobs`` processes, started when first needed and kept for every phase of a run,
    so that what a worker compiled for one phase (parser tables, regexes) serves the next.

    ``initializer`` runs in each worker as it starts, before its first chunk (it
    may start early, while this process still finds the items: see
    :func:`port_files`). A run that never starts the pool never calls it.
    ``preload`` runs here, once, just before the workers are forked, which then
    have what it loaded (modules, tables) without loading it themselves.
    """

    def __init__(
        self, jobs: int, initializer: Callable[[], None] | None = None, preload: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        self.jobs = jobs
        self.initializer = initializer
        self.preload = preload
        self._pool: Any = None

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=exc_type is None)  # an error or an interrupt: no need to finish the work
            self._pool = None

    def run(
        self, function: Callable[[list[Task], Any], list[Done]], items: list[Task], shared: Any,
        pack: Callable[[Done], Any] | None = None, unpack: Callable[[Task, Any], Done] | None = None,
    ) -> list[Done]:
        """``function(chunk, shared)`` over chunks of ``items``, in the pool when ``jobs`` > 1.

        The results come back in the order of ``items``, whatever the pool does.
        One process, or too few items to repay starting workers, runs here without a pool.
        With ``pack`` and ``unpack``, a result crosses from a worker as ``pack(result)``
        (plain data, cheap to send) and becomes ``unpack(item, packed)`` here again.
        """
        workers = min(self.jobs, len(items) // MIN_ITEMS_PER_WORKER)
        if workers <= 1:
            return function(items, shared)
        size = max(1, -(-len(items) // (workers * 4)))  # about four chunks per worker balances uneven files
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        n = len(chunks)
        out: list[Done] = []
        for chunk, part in zip(chunks, self.pool().map(_call, [function] * n, chunks, [shared] * n, [pack] * n)):
            out += _unpacked(chunk, part, unpack)
        return out

    def pool(self) -> Any:
        """The process pool, started on first use: forked workers fed through pipes where the
        system can fork (:mod:`buildport.pipeline.forkpool`), else a ``ProcessPoolExecutor``."""
        if self._pool is None:
            from buildport.pipeline import forkpool

            if forkpool.available():
                if self.preload is not None:
                    self.preload()  # once here, and every forked worker has it
                self._pool = forkpool.ForkPool(self.jobs, self.initializer)
            else:
                from concurrent.futures import ProcessPoolExecutor

                # a started worker has the built-in rule set: it is given this run's
                self._pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=functools.partial(
                    _start_worker, ruleset.active(), self.initializer))
        return self._pool

    def feed(
        self, function: Callable[[list[Task], Any], list[Done]], shared: Any,
        pack: Callable[[Done], Any] | None = None, unpack: Callable[[Task, Any], Done] | None = None,
    ) -> "Feed[Task, Done]":
        """:meth:`run` for items that come one by one: see :class:`Feed`."""
        return Feed(self, function, shared, pack, unpack)


def _start_worker(rules: ruleset.RuleSet, initializer: Callable[[], None] | None) -> None:
    ruleset.use(rules)
    if initializer is not None:
        initializer()


class Feed(Generic[Task, Done]):
    """Items handed to the pool in chunks as they are added (:data:`FEED_FIRST` items, then twice
    as many each time up to :data:`FEED_CHUNK`), so that the workers start while the items are
    still being found; :meth:`results` yields what :meth:`Workers.run` would have returned for
    all of them, in their order. What is left at the end is shared out among the workers; fewer
    items than the first chunk go to :meth:`Workers.run`, as they would have."""

    def __init__(
        self, workers: Workers, function: Callable[[list[Task], Any], list[Done]], shared: Any,
        pack: Callable[[Done], Any] | None, unpack: Callable[[Task, Any], Done] | None,
    ) -> None:
        self.workers, self.function, self.shared, self.pack, self.unpack = workers, function, shared, pack, unpack
        self.pending: list[Task] = []
        self.sent: list[tuple[list[Task], Any]] = []  # (chunk, future)
        self.size = FEED_FIRST

    def add(self, item: Task) -> None:
        self.pending.append(item)
        if len(self.pending) >= self.size and self.workers.jobs > 1:
            self._send(self.pending)
            self.pending = []
            self.size = min(2 * self.size, FEED_CHUNK)

    def _send(self, chunk: list[Task]) -> None:
        self.sent.append((chunk, self.workers.pool().submit(_call, self.function, chunk, self.shared, self.pack)))

    def results(self) -> Iterator[Done]:
        """The results in the order of the items, each chunk's as soon as it is done (what is left
        is sent at once): the caller takes in the first chunks' while the workers port the last."""
        if not self.sent:
            return iter(self.workers.run(self.function, self.pending, self.shared, self.pack, self.unpack))
        left, jobs = self.pending, self.workers.jobs
        share = -(-len(left) // jobs)
        for i in range(0, len(left), share or 1):  # the last items, one part per worker
            self._send(left[i : i + share])
        return self._collected()

    def _collected(self) -> Iterator[Done]:
        for chunk, future in self.sent:
            yield from _unpacked(chunk, future.result(), self.unpack)


def _unpacked(chunk: list[Task], part: list[Any], unpack: Callable[[Task, Any], Done] | None) -> list[Done]:
    """A chunk's results as a worker sent them, made whole again here (see :meth:`Workers.run`)."""
    return part if unpack is None else [unpack(item, packed) for item, packed in zip(chunk, part)]


def _call(function: Callable[[list[Task], Any], list[Done]], chunk: list[Task], shared: Any,
          pack: Callable[[Done], Any] | None) -> list[Any]:
    """In a worker: ``function`` over a chunk, each result packed for the way back."""
    done = function(chunk, shared)
    return done if pack is None else [pack(result) for result in done]
