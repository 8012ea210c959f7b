#!/usr/bin/env python3
"""Records every compiler run of a build: which program, which arguments, the exit code, the errors.

Used two ways by ``run.py``:

- as a CMake compiler launcher (``-DCMAKE_HIP_COMPILER_LAUNCHER=compile_log.py``): ``argv[1:]`` is
  the compiler command;
- as a stand-in named like a compiler (``hipcc``, ``g++``, ``nvcc``...) in a folder put first on
  PATH for a Makefile build: the real program of that name is the next one on PATH.

Each run appends one JSON line to ``$REALWORLD_LOG`` and passes the compiler's output through. A
compiler started by a logged run (``mpicxx`` running ``g++``, say) is not logged again.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

_NESTED = "REALWORLD_LOG_NESTED"
_KEEP = 6000  # characters of a failed run's output kept in the log


def _kept(output: str) -> str:
    """A failed run's output, at most ``_KEEP`` characters: from its first error on (the warnings before it
    would crowd it out), with the lines that lead to it (``In file included from``)."""
    at = output.find("error")
    start = 0 if at < 0 else output.rfind("\n", 0, max(0, at - 2000)) + 1
    return output[start : start + _KEEP]


def _real_program(name: str) -> str | None:
    """The first ``name`` on PATH that is not in this script's folder."""
    here = os.path.dirname(os.path.realpath(__file__))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, name)
        if os.path.realpath(folder) == here or os.path.realpath(candidate) == os.path.realpath(__file__):
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _command() -> list[str]:
    name = os.path.basename(sys.argv[0])
    if name in ("compile_log.py", "compile_log"):
        return sys.argv[1:]
    real = _real_program(name)
    if real is None:
        sys.stderr.write(f"{name}: command not found\n")
        sys.exit(127)
    return [real, *sys.argv[1:]]


def _record(entry: dict[str, object]) -> None:
    path = os.environ.get("REALWORLD_LOG")
    if not path:
        return
    line = json.dumps(entry) + "\n"
    with open(path, "a", encoding="utf-8") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        log.write(line)


def main() -> int:
    command = _command()
    if os.environ.get(_NESTED):
        os.execvp(command[0], command)
    env = dict(os.environ, **{_NESTED: "1"})
    # each stream where it was going: $(shell hipcc ... 2>/dev/null && echo y) must still read stdout alone
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    sys.stdout.buffer.write(done.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(done.stderr)
    sys.stderr.flush()
    output = (done.stderr + done.stdout).decode("utf-8", "replace")
    _record({
        "program": os.path.basename(command[0]),
        "argv": command[1:],
        "cwd": os.getcwd(),
        "rc": done.returncode,
        "output": _kept(output) if done.returncode else "",
    })  # fmt: skip
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
