"""Whole runs replayed: a run that writes nothing, over files that have not changed, prints again
what it printed before, without reading or porting anything.

A warm run that the per-file cache answers still does a little for every file
(look it up, make its outcome, take part in the report); over a tree of ten
thousand build files that is most of its time. A run of ``cmake``/``make``
without ``--in-place`` (``--check``, ``--diff``, or the ported text printed) or
of ``audit`` therefore keeps, beside the per-file results, a *memo* of itself:

- its *trail*, the metadata of everything its output depends on: each folder
  walked (the listing of a folder, as the file index keeps it, is known from its
  device, inode and times), each file found (device, inode, size and times, as
  the file index vouches for a file's bytes), and each path it looked at that did
  not exist (a file named on the command line, a Makefile's ``include``);
- its output to stdout and stderr, byte for byte and in order, and its exit code.

The memo is kept under a key made of buildport's code, the command and every
option that can change the output (not ``--jobs`` or the cache folder), the
working folder, and whether each stream is a terminal and its encoding. A later
run with the same key checks the trail (one system call per entry) and, if every
entry is as recorded, writes the output and exits with the code. Any difference
(a file edited, added, removed or renamed, an include that now exists) and the
run is done as usual.

The trail can only be trusted as far as the file index can (see
:mod:`buildport.cache.fileindex`): a run that met anything too recent to record, a
folder it could not list or a build-tree mark that is a link keeps no memo, and
with the index switched off (``BUILDPORT_FILE_INDEX=0``) there are none. A run
reading stdin, writing files or with ``--debug`` keeps none either; nor one whose
output is larger than :data:`MAX_OUTPUT`. The newest :data:`KEEP` memos are kept.
``BUILDPORT_REPLAY=0`` turns memos off (every run then goes file by file, through
the per-file cache).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from contextlib import contextmanager
from typing import IO, Any, Iterator

from buildport.cache.atomic import keep_newest, read_json, write_json
from buildport.cache.fileindex import FileIndex, folder_stamp, stamp

#: The layout of a memo; bumped when it changes.
FORMAT = 1
#: The cache's folder of memos, how many it keeps, and the most output (bytes) a memo holds.
FOLDER = "runs"
KEEP = 16
MAX_OUTPUT = 4_000_000

#: Kinds of trail entries: a folder (``os.stat``), a file found by the walk (``os.lstat``: a link is a
#: "path"), a path looked at by name (``os.stat``, following links; ``""``: it did not exist).
FOLDER_ENTRY, FILE_ENTRY, PATH_ENTRY = "d", "f", "p"


def enabled() -> bool:
    return os.environ.get("BUILDPORT_REPLAY", "1") != "0"


class Trail:
    """The metadata a run's output depends on, gathered as the run looks at folders and files.

    ``spoiled`` is set when something cannot be vouched for later (too recent,
    unreadable, a linked build-tree mark): the run then keeps no memo.
    """

    __slots__ = ("since", "entries", "spoiled")

    def __init__(self, since: int) -> None:
        #: Times at or after this are too recent to be sure a later change gives new ones.
        self.since = since
        self.entries: list[tuple[str, str, str]] = []
        self.spoiled = False

    def _add(self, kind: str, path: str, recorded: str, info: os.stat_result) -> None:
        if info.st_mtime_ns >= self.since or info.st_ctime_ns >= self.since:
            self.spoiled = True  # a later change could leave these times as they are
        self.entries.append((kind, path, recorded))

    def folder(self, path: str, info: os.stat_result) -> None:
        """A folder listed (or whose listing the index gave), with the metadata taken before listing it."""
        self._add(FOLDER_ENTRY, path, folder_stamp(info), info)

    def file(self, path: str, info: os.stat_result, stamped: str | None = None) -> None:
        """A file found by the walk, with its ``os.lstat`` taken before it was read (``stamped``: its
        :func:`~buildport.cache.fileindex.stamp`, if taken already)."""
        self._add(FILE_ENTRY, path, stamped or stamp(info), info)

    def path(self, path: str) -> None:
        """A path looked at by name (following links): its metadata now, or that it does not exist."""
        try:
            info = os.stat(path)
        except FileNotFoundError:
            self.entries.append((PATH_ENTRY, path, ""))
        except OSError:  # NotADirectoryError, a loop of links, no permission: not worth a memo
            self.spoiled = True
        else:
            self._add(PATH_ENTRY, path, stamp(info), info)

    def spoil(self) -> None:
        self.spoiled = True


def packed(entries: list[tuple[str, str, str]]) -> dict[str, str]:
    """A trail as three strings (kinds, NUL-separated paths, "/"-separated stamps): a memo of ten
    thousand files is read as three JSON strings rather than thirty thousand."""
    return {"kinds": "".join(e[0] for e in entries), "paths": "\0".join(e[1] for e in entries),
            "stamps": "/".join(e[2] for e in entries)}


def unchanged(trail: Any) -> bool:
    """Whether every entry of a stored (:func:`packed`) trail is as recorded (malformed data: no)."""
    lstat, stat_of = os.lstat, os.stat
    try:
        kinds, paths, stamps = trail["kinds"], trail["paths"].split("\0"), trail["stamps"].split("/")
        if not (len(kinds) == len(paths) == len(stamps)) or not kinds:
            return False
        for kind, path, recorded in zip(kinds, paths, stamps):
            try:
                info = lstat(path) if kind == FILE_ENTRY else stat_of(path)
            except FileNotFoundError:
                if kind == PATH_ENTRY and recorded == "":
                    continue
                return False
            except OSError:
                return False
            now = folder_stamp(info) if kind == FOLDER_ENTRY else stamp(info)
            if now != recorded:
                return False
    except (TypeError, ValueError, KeyError, AttributeError):
        return False
    return True


def key_of(fingerprint: str, command: str, options: dict[str, Any]) -> str:
    """The memo's name for a run: the code, the command, its options and what its output depends on
    beyond them (the working folder, and whether each stream is a terminal and how it encodes)."""
    streams = [[_isatty(s), getattr(s, "encoding", None), getattr(s, "errors", None)]
               for s in (sys.stdout, sys.stderr)]
    data = [FORMAT, fingerprint, command, options, os.getcwd(), streams]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8", "surrogatepass")).hexdigest()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Tee(io.BufferedIOBase):
    """A binary stream that writes through to ``target`` and keeps what was written (up to a bound)."""

    def __init__(self, target: IO[bytes], fd: int, recording: "_Recording") -> None:
        super().__init__()
        self.target, self.fd, self.recording = target, fd, recording

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.recording.add(self.fd, chunk)
        self.target.write(chunk)
        return len(chunk)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return _isatty(self.target)

    def fileno(self) -> int:
        return self.target.fileno()


class _Recording:
    """Output as (stream number, bytes) in the order written; ``overflow`` once it passed MAX_OUTPUT."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, bytes]] = []
        self.size = 0
        self.overflow = False

    def add(self, fd: int, chunk: bytes) -> None:
        if self.overflow:
            return
        self.size += len(chunk)
        if self.size > MAX_OUTPUT:
            self.overflow = True
            self.chunks = []
        elif chunk:
            self.chunks.append((fd, chunk))


def _teed(stream: Any, fd: int, recording: _Recording) -> io.TextIOWrapper:
    """``stream`` (a text stream with a binary ``buffer``) wrapped so that what is written is recorded too."""
    tee: Any = _Tee(stream.buffer, fd, recording)
    return io.TextIOWrapper(tee, encoding=stream.encoding, errors=stream.errors, write_through=True)


class Memos:
    """The memos of runs, kept in ``folder`` (the cache's ``runs/``)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = os.fspath(folder)

    def _name(self, key: str) -> str:
        return os.path.join(self.folder, key + ".json")

    def replay(self, key: str) -> int | None:
        """Write the output of the run memoised under ``key`` and return its exit code, if its trail
        is unchanged; None (nothing written) otherwise."""
        memo = read_json(self._name(key))
        if not isinstance(memo, dict) or memo.get("key") != key:
            return None
        code, output = memo.get("exit"), memo.get("output")
        if type(code) is not int or not isinstance(output, list) or not unchanged(memo.get("trail")):
            return None
        try:
            chunks = [(1 if fd == 1 else 2, text.encode("utf-8", "surrogateescape")) for fd, text in output]
        except (TypeError, ValueError, AttributeError):
            return None
        for fd, data in chunks:
            stream = sys.stdout if fd == 1 else sys.stderr
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
        return code

    def keep(self, key: str, trail: Trail, recording: _Recording, code: int) -> None:
        """Store a finished run (unless its trail is spoiled or its output too large); prune to KEEP."""
        if trail.spoiled or recording.overflow:
            return
        output = [[fd, data.decode("utf-8", "surrogateescape")] for fd, data in recording.chunks]
        if write_json(self._name(key), {"key": key, "exit": code, "trail": packed(trail.entries), "output": output}):
            keep_newest(self.folder, KEEP)


@contextmanager
def session(memos: Memos, key: str, index: FileIndex) -> Iterator[None]:
    """Replay the run memoised under ``key`` (exiting with its code), or run the body, recording its
    output and the trail it gathers through ``index`` (the file index the run uses), and keep the memo."""
    if getattr(sys.stdout, "buffer", None) is None or getattr(sys.stderr, "buffer", None) is None:
        yield  # streams of text alone (an embedding host): no bytes to record or to write back
        return
    code = memos.replay(key)
    if code is not None:
        sys.exit(code)
    trail = Trail(index.since)
    recording = _Recording()
    out, err = _teed(sys.stdout, 1, recording), _teed(sys.stderr, 2, recording)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    index.trail = trail
    finished: int | None = None
    try:
        yield
        finished = 0
    except SystemExit as exc:
        finished = exc.code if type(exc.code) is int else (0 if exc.code is None else None)
        raise
    finally:
        index.trail = None
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved
        if finished is not None and finished in (0, 1, 2):
            memos.keep(key, trail, recording, finished)
