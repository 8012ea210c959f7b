"""Files of the cache folder: written whole or not at all, read back as used, the oldest dropped."""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

#: A file read again after this long is marked used (its modification time set to now), so that
#: pruning, which drops the least recently modified, keeps it; more often would rewrite metadata
#: on every warm run.
USED_AGAIN_AFTER = 24 * 3600


def write_json(path: str | os.PathLike[str], value: object) -> bool:
    """Write ``value`` as compact JSON to ``path``; False if it could not be written.

    The text goes to a temporary file in the same folder (``.tmp-*.json``),
    which is then renamed over ``path``: a reader, or a run in parallel, sees
    the old file or the new one, never part of one. Text is written as UTF-8
    with lone surrogates as the bytes they stand for (names that are not UTF-8);
    readers open these files with ``errors="surrogateescape"``. A cache that
    cannot be written only costs a later run time, so failing is not an error.
    """
    try:
        # one write of the whole text: json.dump() writes piece by piece, several times slower
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return False
    folder = os.path.dirname(os.fspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.replace(temp, path)
        return True
    except (OSError, ValueError):  # ValueError: a surrogate that stands for no byte
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False


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
        files = [(entry.stat().st_mtime, entry.path) for entry in os.scandir(folder)
                 if entry.name.endswith(".json") and not entry.name.startswith(".tmp-")]
    except OSError:
        return
    for _, path in sorted(files, reverse=True)[count:]:
        try:
            os.unlink(path)
        except OSError:
            pass
