"""Reading a dual build file as one runtime would: each branch of the runtime switch resolved.

``projected(text, "HIP")`` is what CMake or make reads with ``GPU_RUNTIME=HIP``, as text: every block the
dual build added is replaced by the branch that runtime takes, and each joined condition by its half. A
dual file is right when its CUDA projection is the project's file and its HIP projection the port.
"""

from __future__ import annotations

import re

from buildport.rules.dual import CMAKE_IF_CUDA, CMAKE_IF_HIP, CMAKE_IS_HIP, MAKE_IF_CUDA, MAKE_IF_HIP

_CMAKE_OPEN = re.compile(r"^[ \t]*(if|foreach|while|function|macro|block)[ \t]*\(", re.I)
_CMAKE_CLOSE = re.compile(r"^[ \t]*(endif|endforeach|endwhile|endfunction|endmacro|endblock)[ \t]*\(", re.I)
_CMAKE_ELSE = re.compile(r"^[ \t]*else[ \t]*\([ \t]*\)[ \t]*\r?$")
_MAKE_OPEN = re.compile(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef)\b")
_MAKE_CLOSE = re.compile(r"^[ \t]*endif\b")
_MAKE_ELSE = re.compile(r"^[ \t]*else[ \t]*\r?$")


def projected(text: str, runtime: str, kind: str = "cmake") -> str:
    """``text`` as the runtime ``runtime`` (``CUDA`` or ``HIP``) reads it (see the module's note)."""
    hip = runtime == "HIP"
    if kind == "cmake":
        marks = (CMAKE_IF_HIP, CMAKE_IF_CUDA)
        opening, closing, middle = _CMAKE_OPEN, _CMAKE_CLOSE, _CMAKE_ELSE
        text = _conditions(text, hip)
    else:
        marks = (MAKE_IF_HIP, MAKE_IF_CUDA)
        opening, closing, middle = _MAKE_OPEN, _MAKE_CLOSE, _MAKE_ELSE
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # per open block: (ours, taking its lines); a project block: (False, ·)
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        taking = all(take for _, take in stack)
        if bare in marks:
            stack.append((True, hip == (bare == marks[0])))
            continue
        if stack and stack[-1][0] and middle.match(line) and _depth_ok(stack):
            stack[-1] = (True, not stack[-1][1])
            continue
        if stack and stack[-1][0] and closing.match(line):
            stack.pop()
            continue
        if opening.match(line):
            stack.append((False, True))
        elif closing.match(line) and stack:
            stack.pop()
        if taking:
            out.append(line)
    return "".join(out)


def _depth_ok(stack: list[tuple[bool, bool]]) -> bool:
    return bool(stack) and stack[-1][0]


_JOINED = re.compile(
    r"\(" + re.escape(CMAKE_IS_HIP) + r" AND \((?P<hip>.*?)\)\) OR \(NOT " + re.escape(CMAKE_IS_HIP)
    + r" AND \((?P<cuda>.*?)\)\)(?=\))", re.S)


def _conditions(text: str, hip: bool) -> str:
    return _JOINED.sub(lambda m: m.group("hip") if hip else m.group("cuda"), text)
