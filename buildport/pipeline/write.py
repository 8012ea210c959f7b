"""Writing the rewritten files back, each below the folder it was named through."""

from __future__ import annotations

import os
from typing import Sequence

from buildport.pipeline.outcomes import Run
from buildport.textio import InputError, remove_stale_temporaries, write_atomic


def write_changes(run: Run, roots: Sequence[str] = ()) -> list[str]:
    """Write every changed file in place; returns the errors.

    With ``roots`` (the folders the user named, and the folders of the files named), a file is written
    only if it is below the root that holds it when it is written (see :func:`write_atomic`)."""
    errors: list[str] = []
    named = sorted({(os.path.abspath(r), os.path.realpath(r)) for r in roots}, key=lambda r: -len(r[0]))
    for o in run.changed:
        assert o.result is not None and o.source is not None
        if o.path == "-":
            continue
        if o.recompute is not None:
            fresh = o.recompute()
            if fresh.result is None or fresh.result.text != o.result.text:
                errors.append(f"{o.path}: error: the cache's result for this file is not what porting it gives "
                              "(a cache restored from elsewhere?); not written: rerun with --no-cache")
                continue
        try:
            write_atomic(o.source, o.result.text, _root_of(o.path, named) if named else None)
        except InputError as exc:
            errors.append(str(exc))
    remove_stale_temporaries(os.path.dirname(os.path.realpath(o.path)) for o in run.changed if o.path != "-")
    return errors


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _root_of(path: str, roots: Sequence[tuple[str, str]]) -> str:
    """The resolved root, of ``roots`` (each as named and resolved, innermost first), that holds
    ``path``: by its name as discovery wrote it, else by where it leads now; with none, the
    innermost (the write is then refused as outside)."""
    absolute = os.path.abspath(path)
    for given, real in roots:
        if _below(absolute, given) or _below(absolute, real):
            return real
    now = os.path.realpath(absolute)  # a file named through a link: where the link leads
    for _given, real in roots:
        if _below(now, real):
            return real
    return roots[0][1]
