"""Locate the Lark grammars, in a checkout and in an installed wheel alike.

The grammar files live at the top of the repository (``grammars/``); the wheel
force-includes them as ``buildport/grammars/``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "grammars"
_CHECKOUT = Path(__file__).resolve().parent.parent / "grammars"


@lru_cache(maxsize=None)
def grammar_text(name: str) -> str:
    """The text of ``grammars/<name>.lark``."""
    for folder in (_PACKAGED, _CHECKOUT):
        candidate = folder / f"{name}.lark"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(f"grammar {name}.lark not found in {_PACKAGED} or {_CHECKOUT}")
