"""Reading and writing build files without losing a byte.

Text is decoded as UTF-8 with ``surrogateescape``, so Latin-1 or broken bytes
survive a round trip exactly; a UTF-8 BOM stays part of the text. Files with a NUL
byte are binary and refused, with the position of the first NUL. Writes go
through a temporary file in the same directory and ``os.replace``, keeping the
file's mode; they refuse to replace a file whose content changed since it was
read or that has no write permission, write through symbolic links instead of
replacing them, and hold back SIGINT/SIGTERM while the temporary file exists.
"""

from __future__ import annotations

import bisect
import errno
from array import array
import hashlib
import os
import re
import signal
import stat
from contextlib import contextmanager
from itertools import accumulate, islice, repeat
from operator import add
from typing import Iterable, Iterator, Sequence

ENCODING = "utf-8"
ERRORS = "surrogateescape"
#: Any of CRLF, LF and a lone CR ends a line, as in the parsers' positions.
_LINE_END = re.compile(rb"\r\n|\n|\r")
#: Signals held back while a file is being replaced, so that an interrupt lands
#: before the temporary file exists or after the rename, never in between.
_HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM} | ({signal.SIGHUP} if hasattr(signal, "SIGHUP") else set()))


def line_starts(text: str) -> Sequence[int]:
    """Offsets at which each line of ``text`` starts; ``\\r\\n``, ``\\n`` and a lone ``\\r`` end lines.

    A large text's are kept in an ``array`` (8 bytes a line instead of a list's 40),
    found a piece of lines at a time: splitting the whole text would make a string
    of every line at once.
    """
    if len(text) <= _LARGE:
        return _line_starts(text)
    starts = array("q", (0,))
    for at, end in line_pieces(text, _LARGE):  # a piece ends after a "\n": no "\r\n" is cut
        starts.extend(map(at.__add__, islice(_line_starts(text[at:end]), 1, None)))  # its own start is known
    return starts


def line_pieces(text: str, size: int) -> Iterator[tuple[int, int]]:
    """Where ``text`` is cut into pieces of whole lines, in order: each runs from where the one before
    it ends to just after the first ``\\n`` at least ``size`` characters into it (the last, to the end)."""
    at, length = 0, len(text)
    while at < length:
        end = text.find("\n", at + size) + 1 or length
        yield at, end
        at = end


def _line_starts(text: str) -> list[int]:
    if "\r" in text:
        return [0] + [m.end() for m in _NEWLINE.finditer(text)]
    # each line's length and its line break, summed: iterators that never call back into Python
    starts = list(accumulate(map(add, map(len, text.split("\n")), repeat(1)), initial=0))
    starts.pop()  # past the end
    return starts


_NEWLINE = re.compile(r"\r\n|\n|\r")
#: A text longer than this (in characters) has its line starts in an array.
_LARGE = 1 << 20


class LineMap:
    """Offsets to 1-based (line, column); ``\\r\\n``, ``\\n`` and a lone ``\\r`` end lines."""

    def __init__(self, text: str) -> None:
        self._starts = line_starts(text)

    def position(self, offset: int) -> tuple[int, int]:
        """The line and column of ``offset``; columns count characters, a tab as one."""
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset``."""
        return bisect.bisect_right(self._starts, offset)


class InputError(Exception):
    """A file that cannot be processed at all (missing, binary, unreadable).

    ``line`` and ``col`` (1-based) are set when the problem has a place in the
    file, such as the first NUL byte of a binary file; the message then reads
    ``path:line:col: error: ...`` like a parse error.
    """

    def __init__(self, path: str, message: str, line: int = 0, col: int = 0) -> None:
        where = f"{path}:{line}:{col}" if line else path
        super().__init__(f"{where}: error: {message}")
        self.path = path
        self.message = message
        self.line = line
        self.col = col


class SourceText:
    """A file's text and the SHA-256 of the bytes it was decoded from.

    A source from :meth:`vouched` starts with the digest alone (the cache's file
    index vouched for the file from its metadata): its text is read when first
    asked for, and must still hash to that digest, else :class:`InputError` (the
    file changed while buildport was running).
    """

    __slots__ = ("path", "digest", "identity", "_text")

    def __init__(self, path: str, text: str, digest: str, identity: tuple[int, int] | None = None) -> None:
        self.path = path
        self.digest = digest
        #: (device, inode) of the file it was read from, when discovery knew them.
        self.identity = identity
        self._text: str | None = text

    @classmethod
    def vouched(cls, path: str, digest: str, identity: tuple[int, int] | None = None) -> "SourceText":
        """The file at ``path``, known to hash to ``digest``; read only if its text is needed."""
        source = cls(path, "", digest, identity)
        source._text = None
        return source

    @property
    def text(self) -> str:
        if self._text is None:
            data = read_input(self.path)
            if digest(data) != self.digest:
                raise InputError(self.path, "file changed while buildport was running")
            self._text = decode(data, self.path)
        return self._text

    @property
    def is_read(self) -> bool:
        """Whether the text is at hand (false only for a vouched source not yet read)."""
        return self._text is not None

    def __reduce__(self) -> tuple[object, ...]:
        return SourceText, (self.path, self.text, self.digest, self.identity)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceText):
            return NotImplemented
        return (self.path, self.digest) == (other.path, other.digest) and self.text == other.text

    def __hash__(self) -> int:
        return hash((self.path, self.digest))

    def __repr__(self) -> str:
        text = repr(self._text) if self._text is not None else "<not read>"
        return f"SourceText(path={self.path!r}, text={text}, digest={self.digest!r})"


def decode(data: bytes, path: str = "<input>") -> str:
    """Bytes to text, byte-exact on the way back; binary data is refused."""
    nul = data.find(b"\x00")
    if nul >= 0:
        lines = _LINE_END.split(data[:nul])
        raise InputError(path, "binary file (contains NUL bytes); skipped", len(lines), len(lines[-1]) + 1)
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    """Text from :func:`decode` back to the exact bytes it came from."""
    return text.encode(ENCODING, ERRORS)


def spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` of ``edits`` (in order, none overlapping) made, in one join:
    slicing the whole text once per edit would be quadratic."""
    pieces: list[str] = []
    at = 0
    for start, end, new in edits:
        pieces += (text[at:start], new)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def digest(data: bytes) -> str:
    """The SHA-256 of ``data``, as hex: what a file must still hash to when it is replaced."""
    return hashlib.sha256(data).hexdigest()


def read_source(
    path: str | os.PathLike[str], data: bytes | None = None, identity: tuple[int, int] | None = None,
) -> SourceText:
    """Read ``path`` as text (or decode ``data``, its bytes read before, from the file with
    ``identity``); :class:`InputError` when that is impossible."""
    name = os.fspath(path)
    if data is None:
        data = read_input(name)
    return SourceText(name, decode(data, name), digest(data), identity)


#: The largest file read (build files and the sources they name): a bigger one is refused with a message
#: rather than read into memory (a device or a runaway file would otherwise take it all).
MAX_FILE_BYTES = 64 << 20
#: How the messages about files refused unread (not regular, too large) end.
NOT_READ = ": not read"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO: no wait


class NotARegularFile(OSError):
    """A path that names a named pipe, a device, a socket or a folder, or a file over the size limit."""


def read_bytes(name: str, size: int | None = None) -> bytes:
    """The bytes of the regular file ``name``, whose size is ``size`` if known (from a stat just before,
    which also said that it is a regular file).

    With ``os.read`` on a file descriptor rather than a buffered file object,
    which costs about as much as the read itself for the small files a tree
    holds. A file that grew or read short is read on to its end, up to
    :data:`MAX_FILE_BYTES`. Opened without waiting (a named pipe does not block
    the run); :class:`NotARegularFile` for anything but a regular file.
    """
    fd = os.open(name, _READ_FLAGS)
    try:
        if size is None:
            info = os.fstat(fd)
            check_regular(info)
            size = info.st_size
        return _read_open(fd, size)
    finally:
        os.close(fd)


def _read_open(fd: int, size: int) -> bytes:
    """The bytes of the open regular file ``fd``, whose size a stat said was ``size``: read to its end
    (it may have grown), up to :data:`MAX_FILE_BYTES`."""
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data  # as the stat said: no need to ask for the end
    chunks = [data]
    total = len(data)
    while data:
        data = os.read(fd, 1 << 20)
        chunks.append(data)
        total += len(data)
        if total > MAX_FILE_BYTES:
            raise NotARegularFile(0, f"larger than {MAX_FILE_BYTES >> 20} MiB{NOT_READ}")
    return b"".join(chunks)


def check_regular(info: os.stat_result) -> None:
    """:class:`NotARegularFile` unless ``info`` is of a regular file within the size limit."""
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(info.st_mode):
        raise NotARegularFile(0, f"not a regular file ({file_kind(info.st_mode)}){NOT_READ}")
    if info.st_size > MAX_FILE_BYTES:
        raise NotARegularFile(0, f"larger than {MAX_FILE_BYTES >> 20} MiB ({info.st_size >> 20} MiB){NOT_READ}")


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in a few words."""
    for test, kind in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return kind
    return "a regular file" if stat.S_ISREG(mode) else "an unknown kind of file"


def read_input(name: str) -> bytes:
    try:
        return read_bytes(name)
    except IsADirectoryError:
        raise InputError(name, "is a directory, not a file") from None
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except NotARegularFile as exc:
        raise InputError(name, str(exc.strerror)) from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None


def write_atomic(source: SourceText, new_text: str, root: str | os.PathLike[str] | None = None) -> None:
    """Replace ``source.path`` with ``new_text``; all or nothing.

    A symbolic link is written through: the file it points to is replaced and
    the link stays a link (callers decide which links may be followed). With
    ``root``, the file the path leads to *now* must be below ``root`` (a folder
    replaced by a link to elsewhere since discovery is refused), and the
    folders from ``root`` down to it are opened one by one without following
    links, so that a link swapped in after that check is refused too: nothing
    is written outside ``root`` whatever races the run. A file without any write
    permission bit is refused, even for root. The file is checked against the
    digest it had when read; a temporary file in the same directory, created
    exclusively, gets the new bytes and the old mode (and owner, where allowed),
    is flushed to disk, and is renamed over the original. SIGINT, SIGTERM and
    SIGHUP are held back from creating the temporary file until it is renamed or
    removed, so an interrupted run leaves no temporary file. On any failure the
    original is left as it was.
    """
    target = os.path.realpath(source.path)
    data = encode(new_text)
    folder, name = _folder_below(source.path, target, root, "cannot re-read before writing")
    try:
        try:
            current, info = _read_at(name, folder)
        except OSError as exc:
            raise InputError(source.path, f"cannot re-read before writing: {_folder_reason(exc)}") from None
        if digest(current) != source.digest:
            raise InputError(source.path, "file changed while buildport was running; not written")
        mode = stat.S_IMODE(info.st_mode)
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise InputError(source.path, "file is read-only; not written")
        with _signals_held():
            _replace(folder, name, data, mode, (info.st_uid, info.st_gid), source.path)
    finally:
        os.close(folder)


def write_new(path: str | os.PathLike[str], new_text: str, mode: int, root: str | os.PathLike[str]) -> None:
    """Write ``new_text`` to ``path`` below ``root`` (a file buildport makes: a report, a renamed source),
    replacing what is there, a link included (it is not followed): through a temporary file created
    exclusively in the folder, opened from ``root`` down without following links as in
    :func:`write_atomic`, then renamed. :class:`InputError` when the folder leads outside ``root``."""
    shown = os.fspath(path)
    target = os.path.join(os.path.realpath(os.path.dirname(shown)), os.path.basename(shown))  # a link: replaced
    folder, name = _folder_below(shown, target, root, "cannot write")
    try:
        with _signals_held():
            _replace(folder, name, encode(new_text), mode, None, shown)
    finally:
        os.close(folder)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _folder_below(shown: str, target: str, root: str | os.PathLike[str] | None, failing: str) -> tuple[int, str]:
    """A descriptor of the folder of ``target`` (a resolved path) and its name there, the folder opened from
    ``root`` (default: the folder itself) down without following links; :class:`InputError` (about ``shown``)
    when ``target`` is not below ``root`` or a link is met on the way (``failing`` begins that message)."""
    base = os.path.realpath(root) if root is not None else os.path.dirname(target)
    relative = os.path.relpath(target, base)
    if relative == os.curdir or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise InputError(shown, f"leads to {target} now, outside {base}; not written")
    *folders, name = relative.split(os.sep)
    try:
        return _open_folder(base, folders), name
    except OSError as exc:
        raise InputError(shown, f"{failing}: {_folder_reason(exc)}") from None


def _open_folder(base: str, folders: list[str]) -> int:
    """A descriptor of ``base``/``folders``, each folder opened inside the one before without following
    a link (ELOOP or ENOTDIR when one is a link now)."""
    fd = os.open(base, _FOLDER_FLAGS & ~_NOFOLLOW)  # resolved just before: no link in it then
    try:
        for part in folders:
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _folder_reason(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a symbolic link was put in its way during the run"
    return exc.strerror or str(exc)


def _read_at(name: str, folder: int) -> tuple[bytes, os.stat_result]:
    """The bytes and status of the file ``name`` in the open ``folder``, not through a link."""
    fd = os.open(name, _READ_FLAGS | _NOFOLLOW, dir_fd=folder)
    try:
        info = os.fstat(fd)
        check_regular(info)
        return _read_open(fd, info.st_size), info
    finally:
        os.close(fd)


def _replace(folder: int, name: str, data: bytes, mode: int, owner: tuple[int, int] | None, shown: str) -> None:
    """Write ``data`` to a new temporary file beside ``name`` in the open ``folder`` and rename it over
    ``name``; the file gets ``mode`` and, where allowed, ``owner`` (user and group ids; None: the
    process's)."""
    tmp, fd = "", -1
    for _ in range(100):
        tmp = f".{name}.{os.urandom(4).hex()}{TEMPORARY_SUFFIX}"
        try:
            fd = os.open(tmp, _TEMP_FLAGS, 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(shown, f"cannot write: {exc.strerror or exc}") from None
    else:
        raise InputError(shown, "cannot write: no free temporary name")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
            if owner is not None and hasattr(os, "fchown") and owner != (os.getuid(), os.getgid()):
                try:
                    os.fchown(handle.fileno(), *owner)
                except PermissionError:
                    pass  # an ordinary user cannot give a file away; the mode is kept all the same
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as exc:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(shown, f"cannot write: {exc.strerror or exc}") from None
        raise


#: How the temporary files of writes end; one older than :data:`STALE_AFTER` seconds was left by a run
#: that was killed (a write keeps one for milliseconds), and is removed by the next that writes there.
TEMPORARY_SUFFIX = ".buildport-tmp"
STALE_AFTER = 60.0


def remove_stale_temporaries(folders: Iterable[str]) -> list[str]:
    """Delete the temporary files a killed run left in ``folders`` (hidden, ending in
    :data:`TEMPORARY_SUFFIX`, older than :data:`STALE_AFTER` seconds); returns their paths."""
    import time

    removed: list[str] = []
    limit = time.time() - STALE_AFTER
    for folder in dict.fromkeys(folders):
        try:
            with os.scandir(folder) as entries:
                stale = [e.path for e in entries if e.name.startswith(".") and e.name.endswith(TEMPORARY_SUFFIX)
                         and e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_mtime < limit]
        except OSError:
            continue
        for path in stale:
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


@contextmanager
def _signals_held() -> Iterator[None]:
    """Block the interrupting signals for the duration (where the platform can)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
