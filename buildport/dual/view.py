"""A dual build file as one GPU runtime reads it: what the audit checks of a ``--keep-cuda`` tree (the HIP
build's view, line for line), and what a dual file is checked against (each view, the port and the project).

The lines only the other runtime reads (the branches of the switch it takes), the switch's own lines and the
branch markers are left out, or become empty lines where the view keeps every line at its number (then a
finding in the view is a finding at that line of the file); a joined condition keeps its half.
"""

from __future__ import annotations

import re

from buildport.rules.dual import (
    CMAKE_CLOSERS, CMAKE_IF_CUDA, CMAKE_IF_HIP, CMAKE_IS_HIP, CMAKE_OPENERS, CMAKE_SWITCH, MAKE_IF_CUDA, MAKE_IF_HIP,
    MAKE_OPENERS, MAKE_SWITCH,
)


def _words(words: frozenset[str]) -> str:
    return "|".join(sorted(words))


_CMAKE_OPEN = re.compile(rf"^[ \t]*(?:{_words(CMAKE_OPENERS)})[ \t]*\(", re.I)
_CMAKE_CLOSE = re.compile(rf"^[ \t]*(?:{_words(CMAKE_CLOSERS)})[ \t]*\(", re.I)
_CMAKE_ELSE = re.compile(r"^[ \t]*else[ \t]*\([ \t]*\)[ \t]*$")
_MAKE_OPEN = re.compile(rf"^[ \t]*(?:{_words(MAKE_OPENERS)})\b")
_MAKE_CLOSE = re.compile(r"^[ \t]*endif\b")
_MAKE_ELSE = re.compile(r"^[ \t]*else[ \t]*$")
_JOINED = re.compile(r"\(" + re.escape(CMAKE_IS_HIP) + r" AND \((?P<hip>.*?)\)\) OR \(NOT " + re.escape(CMAKE_IS_HIP)
                     + r" AND \((?P<cuda>.*?)\)\)(?=\))", re.S)


def hip_view(text: str, kind: str) -> str:
    """``text`` (a dual CMake file, ``kind`` ``cmake``, or Makefile) as the HIP build reads it, line for line."""
    return read_as(text, kind, "HIP")


def read_as(text: str, kind: str, runtime: str, keep_lines: bool = True) -> str:
    """``text`` (a dual CMake file, ``kind`` ``cmake``, or Makefile) as the build for ``runtime`` (``CUDA`` or
    ``HIP``) reads it; ``keep_lines``: every line kept at its number (an empty one where the text is not read)."""
    hip = runtime == "HIP"
    switch: tuple[str, ...]
    if kind == "cmake":
        marks, switch = (CMAKE_IF_HIP, CMAKE_IF_CUDA), CMAKE_SWITCH
        opening, closing, middle = _CMAKE_OPEN, _CMAKE_CLOSE, _CMAKE_ELSE
        text = _JOINED.sub(lambda m: m.group("hip" if hip else "cuda"), text)
    else:
        marks, switch = (MAKE_IF_HIP, MAKE_IF_CUDA), MAKE_SWITCH
        opening, closing, middle = _MAKE_OPEN, _MAKE_CLOSE, _MAKE_ELSE
    lines = text.splitlines(keepends=True)
    bodies = [line.rstrip("\r\n") for line in lines]
    ours = {i + k for i in range(len(lines)) if bodies[i : i + len(switch)] == list(switch) for k in range(len(switch))}
    out: list[str] = []
    stack: list[tuple[bool, bool]] = []  # each open block: (one of the switch's, whether the runtime reads its lines)
    for at, line in enumerate(lines):
        body = bodies[at]
        bare = body.strip()
        ending = line[len(body):] if keep_lines else ""
        reading = all(taken for _, taken in stack)
        if at in ours:
            out.append(ending)  # the switch's declaration and check
        elif bare in marks:
            stack.append((True, hip == (bare == marks[0])))
            out.append(ending)
        elif stack and stack[-1][0] and middle.match(body):
            stack[-1] = (True, not stack[-1][1])
            out.append(ending)
        elif stack and stack[-1][0] and closing.match(body):
            stack.pop()
            out.append(ending)
        else:
            if opening.match(body):
                stack.append((False, True))
            elif closing.match(body) and stack:
                stack.pop()
            out.append(line if reading else ending)
    return "".join(out)
