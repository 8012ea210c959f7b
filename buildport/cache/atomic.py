"""Files of the cache folder: written whole or not at all, read back as used, the oldest dropped."""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any

#: A file read again after this long is marked used (its modification time set to now), so that
#: pruning, which drops the least recently modified, keeps it; more often would rewrite metadata
#: on every warm run.
USED_AGAIN_AFTER = 24 * 3600
#: What the name of a writer's temporary file begins with (the file it becomes does not).
TEMPORARY_PREFIX = ".tmp-"


def is_entry(name: str) -> bool:
    """Whether a file named ``name`` is a JSON file :func:`write_json` has finished (not a writer's
    temporary file)."""
    return name.endswith(".json") and not name.startswith(TEMPORARY_PREFIX)


def write_json(path: str | os.PathLike[str], value: object) -> bool:
    """Write ``value`` as compact JSON to ``path``; False if it could not be written.

    The text goes to a temporary file in the same folder (``.tmp-*.json``),
    which is then renamed over ``path``: a reader, or a run in parallel, sees
    the old file or the new one, never part of one. Text is written as UTF-8
    with lone surrogates as the bytes they stand for (names that are not UTF-8);
    readers open these files with ``errors="surrogateescape"``. A cache that
    cannot be written only costs a later run time, so failing is not an error.

    A run that ports a tree full of CUDA stores thousands of entries, so each
    costs four system calls: create the temporary file (its folder is made only
    when that fails for want of it), one write, close, rename.
    """
    try:
        # one write of the whole text: json.dump() writes piece by piece, several times slower
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogateescape")
    except ValueError:  # a surrogate that stands for no byte (UnicodeEncodeError), or a circular value
        return False
    target = os.fspath(path)
    try:
        fd, temp = _temporary(os.path.dirname(target))
    except OSError:
        return False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, target)
        return True
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False


_TEMPORARY_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
                    | getattr(os, "O_BINARY", 0))
_numbers = itertools.count()


def _temporary(folder: str) -> tuple[int, str]:
    """A new file ``.tmp-<pid>-<n>.json`` in ``folder``, open for writing (as :func:`tempfile.mkstemp`
    makes one, without its search for a random name: the process id and a count are unique among
    the writers alive); ``folder`` is made if it is missing."""
    made = False
    for _ in range(100):
        temp = os.path.join(folder, f"{TEMPORARY_PREFIX}{os.getpid()}-{next(_numbers)}.json")
        try:
            return os.open(temp, _TEMPORARY_FLAGS, 0o600), temp
        except FileExistsError:
            continue  # left by a writer that died with this process id
        except FileNotFoundError:
            if made or not folder:
                raise
            os.makedirs(folder, exist_ok=True)
            made = True
    raise FileExistsError(f"no free temporary name in {folder}")


def read_json(path: str | os.PathLike[str]) -> Any | None:
    """The JSON value in ``path`` (written by :func:`write_json`), or None if it cannot be read or
    decoded; a file last modified more than :data:`USED_AGAIN_AFTER` ago is marked used."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            value = json.load(handle)
            if time.time() - os.fstat(handle.fileno()).st_mtime > USED_AGAIN_AFTER:
                os.utime(handle.fileno())  # used again: pruning keeps it
    except (OSError, ValueError):
        return None
    return value


def keep_newest(folder: str | os.PathLike[str], count: int) -> None:
    """Delete all but the ``count`` most recently modified JSON files of ``folder`` (not the
    temporary files of writers at work)."""
    try:
        files = [(entry.stat().st_mtime, entry.path) for entry in os.scandir(folder) if is_entry(entry.name)]
    except OSError:
        return
    for _, path in sorted(files, reverse=True)[count:]:
        try:
            os.unlink(path)
        except OSError:
            pass
