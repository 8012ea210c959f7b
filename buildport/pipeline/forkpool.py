"""A pool of forked worker processes fed through pipes, with no thread in the main process.

:class:`concurrent.futures.ProcessPoolExecutor` moves work and results with two
threads of the main process, which take the interpreter lock from the thread
that walks the tree each time a chunk goes out or comes back (over CMake's
tree, about 0.07 s of the main process's 1.2 s). Here the main process writes
each chunk to one pipe that all workers read from (a lock lets one worker at a time take a whole message), and reads
each worker's results from that worker's own pipe whenever it sends another
chunk, or when it waits for a result. Writes never wait on a full pipe: what
does not fit stays pending while the results are read, so neither side can
block the other for good.

Messages are pickled and framed by an 8-byte length. A worker that dies makes
its result pipe end: the main process raises :class:`WorkerDied` instead of
waiting for ever. Needs ``os.fork`` (a POSIX system); :func:`available` says
whether it can be used.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import struct
from collections.abc import Callable
from multiprocessing import Lock
from typing import Any

_HEADER = struct.Struct("<Q")
#: Bytes a pipe may hold before a write waits (Linux raises a pipe to this when asked).
_PIPE_SIZE = 1 << 20


class WorkerDied(RuntimeError):
    """A worker process ended while it still had work."""


def available() -> bool:
    return hasattr(os, "fork") and hasattr(os, "set_blocking")


class Pending:
    """A submitted call: :meth:`result` waits for it (and reads any other results on the way)."""

    __slots__ = ("pool", "number")

    def __init__(self, pool: ForkPool, number: int) -> None:
        self.pool = pool
        self.number = number

    def result(self) -> Any:
        return self.pool.result(self.number)


class ForkPool:
    """``workers`` processes forked now; :meth:`submit` calls a function in one of them."""

    def __init__(self, workers: int, initializer: Callable[[], None] | None = None) -> None:
        self._lock = Lock()
        task_read, self._tasks = os.pipe()
        _widen(self._tasks)
        self._results: dict[int, int] = {}  # result pipe → worker pid
        self._buffers: dict[int, bytearray] = {}
        self._done: dict[int, tuple[bool, Any]] = {}
        self._outbox = bytearray()  # framed tasks not yet written
        self._next = 0  # the number of the next call
        self._taken = 0  # results handed out
        self._pids: list[int] = []
        gc.freeze()  # what exists now is shared with the workers: their collector leaves it (and its pages) alone
        try:
            for _ in range(workers):
                result_read, result_write = os.pipe()
                _widen(result_write)
                pid = os.fork()
                if pid == 0:  # the worker: it never returns from here
                    os.close(self._tasks)
                    os.close(result_read)
                    for fd in self._results:
                        os.close(fd)
                    _serve(task_read, result_write, self._lock, initializer)
                os.close(result_write)
                os.set_blocking(result_read, False)
                self._results[result_read] = pid
                self._buffers[result_read] = bytearray()
                self._pids.append(pid)
        finally:
            os.close(task_read)
            gc.unfreeze()
        os.set_blocking(self._tasks, False)

    def submit(self, function: Callable[..., Any], *args: Any) -> Pending:
        number = self._next
        self._next += 1
        data = pickle.dumps((number, function, args), protocol=pickle.HIGHEST_PROTOCOL)
        self._outbox += _HEADER.pack(len(data))
        self._outbox += data
        self._flush()
        self._read(wait=False)
        return Pending(self, number)

    def map(self, function: Callable[..., Any], *iterables: Any) -> list[Any]:
        pending = [self.submit(function, *args) for args in zip(*iterables)]
        return [p.result() for p in pending]

    def result(self, number: int) -> Any:
        """What the call numbered ``number`` returned (its exception raised here)."""
        while number not in self._done:
            if self._tasks < 0:
                raise RuntimeError("the pool was shut down before this call's result came back")
            self._read(wait=True)
        ok, value = self._done.pop(number)
        self._taken += 1
        if not ok:
            raise value
        return value

    def shutdown(self, wait: bool = True) -> None:
        """End the workers: each reads the end of its input and leaves. With ``wait``, what was
        submitted is done first, and its results can still be asked for; without, each worker
        only finishes the call at hand."""
        if self._tasks < 0:
            return
        if not self._next:  # never used: no need to let the workers finish preparing
            for pid in self._pids:
                os.kill(pid, signal.SIGKILL)
        try:
            while wait and len(self._done) + self._taken < self._next:
                self._read(wait=True)
        except WorkerDied:
            pass
        os.close(self._tasks)
        self._tasks = -1
        for fd in self._results:
            os.close(fd)  # a worker still sending gets a broken pipe, and leaves
        self._results = {}
        for pid in self._pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def _flush(self) -> None:
        """Write as much of the outbox as the task pipe takes now."""
        while self._outbox:
            try:
                written = os.write(self._tasks, self._outbox)
            except BlockingIOError:
                return
            del self._outbox[:written]

    def _read(self, wait: bool) -> None:
        """Take in what the workers have sent; with ``wait``, wait until some result arrives or the
        task pipe has room for the outbox."""
        readable = list(self._results)
        writable = [self._tasks] if self._outbox else []
        ready, room, _ = select.select(readable, writable, [], None if wait else 0)
        if room:
            self._flush()
        for fd in ready:
            buffer = self._buffers[fd]
            while True:
                try:
                    data = os.read(fd, _PIPE_SIZE)
                except BlockingIOError:
                    break
                if not data:
                    raise WorkerDied(f"a worker process (pid {self._results[fd]}) ended unexpectedly")
                buffer += data
            while len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if len(buffer) < _HEADER.size + size:
                    break
                number, ok, value = pickle.loads(memoryview(buffer)[_HEADER.size:_HEADER.size + size])
                del buffer[:_HEADER.size + size]
                self._done[number] = (ok, value)


def _widen(fd: int) -> None:
    """Let the pipe of ``fd`` hold :data:`_PIPE_SIZE` bytes where the system allows it."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or a lower limit: writes wait sooner, nothing else changes


def _serve(tasks: int, results: int, lock: Any, initializer: Callable[[], None] | None) -> None:
    """A worker's life: take a task, run it, send back what it returned or raised; leave at the end of input."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the main process's to handle
    code = 0
    try:
        if initializer is not None:
            try:
                initializer()
            except Exception:  # noqa: BLE001 - what it prepares is then built when first needed
                pass
        while True:
            with lock:
                header = _read_exactly(tasks, _HEADER.size)
                if header is None:
                    break
                (size,) = _HEADER.unpack(header)
                data = _read_exactly(tasks, size)
            if data is None:
                break
            number, function, args = pickle.loads(data)
            try:
                message = (number, True, function(*args))
            except BaseException as exc:  # noqa: BLE001 - raised again in the main process
                message = (number, False, exc)
            try:
                out = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - a result or exception that cannot cross
                out = pickle.dumps((number, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            _write_all(results, _HEADER.pack(len(out)) + out)
    except BaseException:  # noqa: BLE001 - a broken pipe or a bug here: the main process sees the pipe end
        code = 1
    finally:
        os._exit(code)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        data = os.read(fd, min(size, _PIPE_SIZE))
        if not data:
            return None
        chunks.append(data)
        size -= len(data)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
