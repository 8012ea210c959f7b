"""Locate the Lark grammars, in a checkout and in an installed wheel alike, and keep what is
derived from them in the parser cache.

The grammar files live at the top of the repository (``grammars/``); the wheel
force-includes them as ``buildport/grammars/``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from buildport.cache.atomic import TEMPORARY_PREFIX, read_json, write_json

T = TypeVar("T")

_PACKAGED = Path(__file__).resolve().parent.parent / "grammars"
_CHECKOUT = Path(__file__).resolve().parent.parent.parent / "grammars"


@lru_cache(maxsize=None)
def grammar_text(name: str) -> str:
    """The text of ``grammars/<name>.lark``."""
    for folder in (_PACKAGED, _CHECKOUT):
        candidate = folder / f"{name}.lark"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(f"grammar {name}.lark not found in {_PACKAGED} or {_CHECKOUT}")


def parser_cache_dir() -> Path | None:
    """Where parser tables are kept: ``$BUILDPORT_PARSER_CACHE``, else ``parsers/`` in the result
    cache's default folder; None when ``BUILDPORT_PARSER_CACHE=0`` (the command line sets it from
    ``--cache-dir`` and ``--no-cache``)."""
    setting = os.environ.get("BUILDPORT_PARSER_CACHE", "")
    if setting == "0":
        return None
    if setting:
        return Path(setting)
    from buildport.cache.store import default_dir

    return default_dir() / "parsers"


def cached_terminals(name: str, derive: Callable[[], dict[str, str]], required: Iterable[str]) -> dict[str, str]:
    """The terminals of ``grammars/<name>.lark`` as regexes (``derive()`` asks Lark), kept in the parser cache.

    Derived again when the grammar, Lark or Python changes (see :func:`cached_json`),
    or when the file kept lacks a ``required`` terminal.
    """
    def valid(found: object) -> bool:
        return (isinstance(found, dict) and all(isinstance(v, str) for v in found.values())
                and all(r in found for r in required))

    found: dict[str, str] = cached_json(f"{name}-terminals", grammar_text(name).encode(), derive, valid)
    return found


def cached_json(name: str, material: bytes, derive: Callable[[], T], valid: Callable[[object], bool]) -> T:
    """``derive()``, a JSON value that depends on ``material`` alone, kept in the parser cache.

    The file is named by ``name`` and a hash of ``material``, of Lark's version
    file and of the Python version, so the value is derived again when any of
    them changes; one that cannot be read, or that is not ``valid``, is derived
    again and replaced (atomically). A derived ``None`` says there is nothing to
    keep, and is not written. Without a cache folder, ``derive()`` answers each
    time.
    """
    folder = parser_cache_dir()
    if folder is None:
        return derive()
    key = hashlib.sha256(material + b"\0" + _lark_version() + b"\0" + sys.version.encode())
    target = folder / f"{name}-{key.hexdigest()[:24]}.json"
    found = read_json(target)
    if found is not None and valid(found):
        return found  # type: ignore[no-any-return]
    value = derive()
    if value is not None:
        write_json(target, value)  # an unwritable cache costs the next run the time to derive it again
    return value


@lru_cache(maxsize=1)
def _lark_version() -> bytes:
    """The text of Lark's ``__init__`` (which holds its version), found without importing it."""
    spec = importlib.util.find_spec("lark")
    try:
        return Path(spec.origin).read_bytes() if spec is not None and spec.origin else b""
    except OSError:
        return b""


def cached_lark(name: str, grammar: str, transformer: Any, options: dict[str, Any]) -> Any:
    """``Lark(grammar, transformer=transformer, **options)``, its tables kept by Lark in the parser cache.

    Building the LALR tables takes from a few hundredths of a second (CMake) to
    most of a second (make); loading them back, a few milliseconds. The file is
    named by ``name`` and a hash of the grammar, the options and the versions of
    Lark and Python; Lark checks the same inside the file. A new file is written
    under a temporary name and renamed, so a parallel run never reads half of
    one. Without a cache folder, or one that cannot be written, the parser is
    built each time.
    """
    from lark import Lark, __version__

    folder = parser_cache_dir()
    if folder is None:
        return Lark(grammar, transformer=transformer, **options)
    key = hashlib.sha256(repr((grammar, sorted(options.items()), __version__, sys.version)).encode())
    target = folder / f"{name}-{key.hexdigest()[:24]}.lark"
    try:
        if target.is_file():
            return Lark(grammar, transformer=transformer, cache=str(target), **options)
        folder.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMPORARY_PREFIX, suffix=".lark")
        os.close(fd)
        os.unlink(temp)  # Lark writes the file itself
        try:
            parser = Lark(grammar, transformer=transformer, cache=temp, **options)
            os.replace(temp, target)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
        return parser
    except OSError:
        return Lark(grammar, transformer=transformer, **options)
