"""Reading and writing build files without losing a byte.

Text is decoded as UTF-8 with ``surrogateescape``, so Latin-1 or broken bytes
survive a round trip exactly; a UTF-8 BOM stays part of the text. Files with a NUL
byte are binary and refused. Writes go through a temporary file in the same
directory and ``os.replace``, keeping the file's mode, and refuse to replace a
file whose content changed since it was read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENCODING = "utf-8"
ERRORS = "surrogateescape"


class InputError(Exception):
    """A file that cannot be processed at all (missing, binary, unreadable)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: error: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's text and the hash of the bytes it was decoded from."""

    path: str
    text: str
    digest: str


def decode(data: bytes, path: str = "<input>") -> str:
    """Bytes to text, byte-exact on the way back; binary data is refused."""
    if b"\x00" in data:
        raise InputError(path, "binary file (contains NUL bytes); skipped")
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_source(path: str | os.PathLike[str]) -> SourceText:
    """Read ``path`` as text; :class:`InputError` when that is impossible."""
    name = os.fspath(path)
    p = Path(name)
    if p.is_dir():
        raise InputError(name, "is a directory, not a file")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    return SourceText(name, decode(data, name), digest(data))


def write_atomic(source: SourceText, new_text: str) -> None:
    """Replace ``source.path`` with ``new_text``; all or nothing.

    The file is checked against the digest it had when read; a temporary file in
    the same directory gets the new bytes and the old mode, is flushed to disk, and
    is renamed over the original. On any failure the original is left as it was.
    """
    target = Path(source.path)
    data = encode(new_text)
    try:
        current = target.read_bytes()
    except OSError as exc:
        raise InputError(source.path, f"cannot re-read before writing: {exc.strerror or exc}") from None
    if digest(current) != source.digest:
        raise InputError(source.path, "file changed while buildport was running; not written")
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".buildport-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(source.path, f"cannot write: {exc.strerror or exc}") from None
        raise
