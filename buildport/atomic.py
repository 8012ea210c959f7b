"""Files of the cache folder, written whole or not at all."""

from __future__ import annotations

import json
import os
import tempfile


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
