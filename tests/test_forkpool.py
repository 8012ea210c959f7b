"""The forked worker pool: what a call returns or raises comes back whole, in order, and nothing hangs."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from buildport.pipeline import forkpool
from buildport.pipeline.pool import Workers

pytestmark = pytest.mark.skipif(not forkpool.available(), reason="needs os.fork")


def _square_all(numbers: list[int], offset: int) -> list[int]:
    return [n * n + offset for n in numbers]


def _echo(data: bytes) -> bytes:
    return data[::-1]


def _fail(message: str) -> None:
    raise ValueError(message)


def _unpicklable() -> object:
    return lambda: None


def _die() -> None:
    os._exit(3)


def _pid() -> int:
    return os.getpid()


def test_results_come_back_in_order_from_every_worker() -> None:
    pool = forkpool.ForkPool(2)
    try:
        chunks = [list(range(i, i + 5)) for i in range(0, 200, 5)]
        got = pool.map(_square_all, chunks, [1] * len(chunks))
        assert got == [_square_all(chunk, 1) for chunk in chunks]
        pids = {pool.submit(_pid).result() for _ in range(40)}
        assert pids <= set(pool._pids) and os.getpid() not in pids
    finally:
        pool.shutdown()


def test_messages_larger_than_the_pipes_both_ways_do_not_block() -> None:
    pool = forkpool.ForkPool(2)
    try:
        blobs = [os.urandom(1 << 20) + bytes([i]) for i in range(12)]  # 12 MB sent before any result is asked for
        pending = [pool.submit(_echo, blob) for blob in blobs]
        assert [p.result() for p in reversed(pending)] == [blob[::-1] for blob in reversed(blobs)]
    finally:
        pool.shutdown()


def test_an_exception_is_raised_again_here_and_the_pool_goes_on() -> None:
    pool = forkpool.ForkPool(2)
    try:
        with pytest.raises(ValueError, match="bad chunk"):
            pool.submit(_fail, "bad chunk").result()
        with pytest.raises(RuntimeError, match="PicklingError|AttributeError"):
            pool.submit(_unpicklable).result()
        assert pool.submit(_square_all, [3], 0).result() == [9]
    finally:
        pool.shutdown()


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    pool = forkpool.ForkPool(1)
    try:
        with pytest.raises(forkpool.WorkerDied):
            pool.submit(_die).result()
    finally:
        pool.shutdown()


def test_shutdown_ends_every_worker_even_with_work_left() -> None:
    pool = forkpool.ForkPool(2)
    pids = list(pool._pids)
    for _ in range(20):
        pool.submit(_echo, b"x" * 100_000)
    pool.shutdown()
    pool.shutdown()  # twice is harmless
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped already
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_an_interrupt_is_left_to_the_main_process() -> None:
    pool = forkpool.ForkPool(1)
    try:
        os.kill(pool._pids[0], signal.SIGINT)
        assert pool.submit(_square_all, [2], 0).result() == [4]
    finally:
        pool.shutdown()


def test_workers_run_chunks_in_the_forked_pool() -> None:
    with Workers(2) as workers:
        items = list(range(100))
        assert workers.run(_square_all, items, 0) == [n * n for n in items]
        assert isinstance(workers._pool, forkpool.ForkPool)
        feed = workers.feed(_square_all, 5)
        for n in items:
            feed.add(n)
        assert list(feed.results()) == [n * n + 5 for n in items]


def test_results_can_be_taken_after_a_shutdown_that_waits() -> None:
    pool = forkpool.ForkPool(2)
    pending = [pool.submit(_square_all, [n], 0) for n in range(30)]
    pool.shutdown()
    assert [p.result() for p in pending] == [[n * n] for n in range(30)]
    quick = forkpool.ForkPool(1)
    late = quick.submit(_echo, b"x" * 3_000_000)
    quick.shutdown(wait=False)
    with pytest.raises(RuntimeError, match="shut down"):
        late.result()


def test_without_fork_the_executor_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkpool, "available", lambda: False)
    items = list(range(100))
    with Workers(2) as workers:
        assert workers.run(_square_all, items, 2) == [n * n + 2 for n in items]
        assert not isinstance(workers._pool, forkpool.ForkPool)


_PREPARED: list[str] = []


def _prepare() -> None:
    _PREPARED.append(f"ready in {os.getpid()}")


def _prepared() -> list[str]:
    return list(_PREPARED)


_MARK = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"forkpool-initializer-{os.getpid()}")


def _slow_prepare() -> None:
    import time

    time.sleep(5)
    with open(_MARK, "w") as handle:  # only if the worker lived through the whole initializer
        handle.write("finished")


def test_the_initializer_runs_in_each_worker_before_its_first_call() -> None:
    pool = forkpool.ForkPool(2, _prepare)
    try:
        seen = [pool.submit(_prepared).result() for _ in range(10)]
        assert all(len(s) == 1 and s[0].startswith("ready in ") for s in seen)
        assert not _PREPARED  # not in this process
    finally:
        pool.shutdown()


def test_a_pool_never_used_ends_without_waiting_for_its_initializer() -> None:
    pool = forkpool.ForkPool(2, _slow_prepare)
    pool.shutdown()
    try:
        assert not os.path.exists(_MARK)  # the workers were ended, not waited for
    finally:
        if os.path.exists(_MARK):
            os.unlink(_MARK)


_PRELOADED: list[int] = []


def _preload() -> None:
    _PRELOADED.append(os.getpid())


def _preloaded(_items: list[int], _shared: object) -> list[list[int]]:
    return [list(_PRELOADED)]


def test_preload_runs_once_here_before_the_fork_and_the_workers_inherit_it() -> None:
    _PRELOADED.clear()
    with Workers(2, preload=_preload) as workers:
        assert _PRELOADED == []  # not before the pool is needed
        seen = workers.run(_preloaded, list(range(40)), None)
        assert _PRELOADED == [os.getpid()]
        assert all(s == [os.getpid()] for s in seen)  # each worker has what this process loaded, not its own
    with Workers(1, preload=_preload) as workers:
        workers.run(_preloaded, list(range(40)), None)
    assert _PRELOADED == [os.getpid()]  # one job: no pool, nothing to preload


def test_a_make_run_forks_its_workers_with_the_make_port_loaded(tmp_path: Path) -> None:
    import subprocess
    import sys

    for i in range(40):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "Makefile").write_text(f"all:\n\techo {i}\n")
    code = (
        "import sys, buildport.pipeline.port as r, buildport.pipeline.forkpool as f\n"
        "real = f.ForkPool\n"
        "def spy(*a, **k):\n"
        "    print('engine' if 'buildport.passes.make' in sys.modules else 'bare', file=sys.stderr)\n"
        "    return real(*a, **k)\n"
        "f.ForkPool = spy\n"
        "from buildport.cli import main\n"
        f"sys.exit(main(['make', '--check', '--jobs', '2', '--no-cache', {str(tmp_path)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if line in ("engine", "bare")] == ["engine"]
