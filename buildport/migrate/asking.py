"""What the build tools answer when migrate asks them which sources a build compiles.

:mod:`buildport.migrate.dryrun` asks make (its dry run), :mod:`buildport.migrate.cmakeapi` asks CMake (its File API after a
configure). Both ask in a scratch copy of the project; this module holds what they share: the answer for one
build file, its paths moved from the copy back into the project, and a command run in its own process group
that is killed with everything it started when its time is up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Answer:
    """What a build tool said of one build file."""

    build_file: Path
    ok: bool
    #: Why it could not answer (the tool missing, an error, a timeout); empty when it did.
    why: str = ""
    sources: set[Path] = field(default_factory=set)
    include_dirs: set[Path] = field(default_factory=set)


def in_project(paths: set[Path], copy: Path, root: Path) -> set[Path]:
    """``paths`` of the scratch ``copy`` as the project ``root``'s; those outside the copy dropped."""
    out = set()
    for path in paths:
        with contextlib.suppress(ValueError):
            out.add(root / path.relative_to(copy))
    return out


def run_group(command: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str] | None:
    """``command``'s exit code, output and errors (text, lines ended by ``\\n``); None when it took longer
    than ``timeout`` seconds (it is killed then, with what it started: a Makefile's ``$(shell ...)``,
    CMake's compiler checks)."""
    done = run_group_bytes(command, timeout, env)
    if done is None:
        return None
    code, stdout, stderr = done
    return code, _text(stdout), _text(stderr)


def run_group_bytes(command: list[str], timeout: float, env: dict[str, str] | None = None,
                    cwd: str | None = None) -> tuple[int, bytes, bytes] | None:
    """``command``'s exit code, output and errors, run in a process group of its own; None when it took
    longer than ``timeout`` seconds: the whole group is killed then, so nothing it started lives on."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=env, cwd=cwd, start_new_session=True)  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return process.returncode, stdout, stderr


def _text(data: bytes) -> str:
    """``data`` as text, as a text-mode pipe reads it (undecodable bytes replaced, universal newlines)."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def tool_environment() -> dict[str, str]:
    """The environment a tool is asked in: no make flags of a make that runs buildport, messages in English."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE") and k != "MFLAGS"}
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)
    return env
