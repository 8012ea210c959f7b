"""Regular expressions compiled once and kept in the parser cache.

``re`` compiles a pattern in Python (its parser, then its code generator): the
make parser's lexers, a dozen alternations of up to 14 KB each, take a quarter
of a second, paid again by every process that reads a Makefile (each worker of
a ``--jobs`` run). What ``re`` makes of a pattern is a program, a list of
integers, that ``_sre.compile`` turns into a pattern object in microseconds.
:func:`pattern` keeps that program in the parser cache
(:func:`buildport.syntax.grammars.cached_json`), in a JSON file named by a hash of the
pattern, its flags and the interpreter (its version and ``_sre.MAGIC``, the
version of the program format; Lark's too, as for everything in that cache), and
builds the pattern from it when found.

The pattern object is the one ``re.compile`` returns: patterns compare equal
when their text, flags and program do, which ``tests/test_compiled.py`` checks.
A file that cannot be read or that ``_sre`` rejects (it validates every
program) is replaced; without a cache folder, or where the interpreter lacks
these internals, this is ``re.compile``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from buildport.syntax.grammars import cached_json

_sre: Any
_compiler: Any
_parser: Any
try:  # the modules behind re (typeshed describes none of them)
    _sre = importlib.import_module("_sre")
    _compiler = importlib.import_module("re._compiler")
    _parser = importlib.import_module("re._parser")
except ImportError:  # another interpreter: re alone
    _sre = _compiler = _parser = None


def pattern(text: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(text, flags)``, built from the program kept for it when there is one."""
    if _sre is None:
        return re.compile(text, flags)
    built: list[re.Pattern[str]] = []

    def usable(found: object) -> bool:  # a program this interpreter's _sre accepts
        try:
            built.append(_built(text, found))  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError, RuntimeError):
            return False
        return True

    material = f"{_sre.MAGIC}\0{int(flags)}\0{text}".encode("utf-8", "surrogatepass")
    try:
        program = cached_json("re", material, lambda: _program(text, flags), usable)
        return built[-1] if built else _built(text, program)
    except (AttributeError, TypeError, ValueError, RuntimeError):  # re's internals are not what they were
        return re.compile(text, flags)


def _program(pattern: str, flags: int) -> dict[str, Any]:
    """What ``re``'s compiler makes of ``pattern``: the arguments of ``_sre.compile`` after the pattern."""
    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return {
        "flags": int(flags | parsed.state.flags),
        "code": [int(op) for op in code],  # opcodes are named int constants: plain numbers for JSON
        "groups": parsed.state.groups - 1,
        "groupindex": groupindex,
        "indexgroup": indexgroup,
    }


def _built(pattern: str, program: dict[str, Any]) -> re.Pattern[str]:
    compiled: re.Pattern[str] = _sre.compile(
        pattern, program["flags"], program["code"], program["groups"], program["groupindex"],
        tuple(program["indexgroup"]),
    )
    return compiled
