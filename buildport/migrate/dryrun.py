"""Ask GNU make which sources a Makefile compiles: its dry run, where make is installed.

Reading build files statically trails what make evaluates (``$(foreach d,$(DIRS),$(wildcard $(d)/*.cu))``,
computed object lists, included fragments, conditionals). ``make -n -B`` prints every command the build
would run, resolved as make resolves it, without running it. It runs in a scratch copy of the project
(make still remakes included makefiles and dependency files, and runs ``$(shell ...)``), with an ``nvcc``
first on PATH that runs nothing (a Makefile may ask it for its version). The sources the printed commands
name are what the build compiles; :mod:`buildport.migrate.plan` adds those the static reading missed and says
which way each was found.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from buildport.migrate.asking import Answer, in_project, run_group, tool_environment

#: What a compile command names as its input.
COMPILED_SUFFIXES = (".cu", ".c", ".cpp", ".cc", ".cxx", ".C")
#: Seconds one Makefile's dry run may take, and all of them together.
TIMEOUT = 30
BUDGET = 180
#: Files larger than this are not copied into the scratch tree (data, not sources or build files).
LARGEST_COPIED = 8 << 20

_STUB_NVCC = """#!/bin/sh
# stands in for nvcc during a dry run: answers a version query, runs nothing
for arg in "$@"; do
  case "$arg" in
    --version|-V) echo "nvcc: NVIDIA (R) Cuda compiler driver"
                  echo "Cuda compilation tools, release 12.4, V12.4.131"; exit 0 ;;
  esac
done
exit 0
"""

_DIRECTORY = re.compile(r"^\S*make(?:\[\d+\])?: (Entering|Leaving) directory ['`\"](.*)['\"]$")
_CD = re.compile(r"^\s*\(?\s*cd\s+(\S+)\s*(?:&&|;)")


class DryRun(Answer):
    """What make's dry run of one Makefile said."""

    @property
    def makefile(self) -> Path:
        return self.build_file


def make_program() -> str | None:
    return shutil.which("make")


def dry_runs(root: Path, makefiles: list[Path]) -> list[DryRun]:
    """The dry run of each Makefile (a file make reads by default: ``Makefile``, ``makefile``,
    ``GNUmakefile``) of the project ``root``, paths answered in ``root``."""
    make = make_program()
    chosen = [m for m in makefiles if m.name in ("Makefile", "makefile", "GNUmakefile")]
    if not chosen:
        return []
    if make is None:
        return [DryRun(m, False, "make is not installed") for m in chosen]
    out: list[DryRun] = []
    with tempfile.TemporaryDirectory(prefix="buildport-dry-run-") as scratch:
        copy = Path(scratch) / "tree"
        try:
            copy_project(root, copy)
        except (shutil.Error, OSError) as exc:
            why = f"the project could not be copied for it ({str(exc)[:160]})"
            return [DryRun(m, False, why) for m in chosen]
        stub = Path(scratch) / "bin"
        stub.mkdir()
        (stub / "nvcc").write_text(_STUB_NVCC)
        (stub / "nvcc").chmod(0o755)
        env = tool_environment()  # make's "Entering directory" lines, untranslated
        env["PATH"] = os.pathsep.join([str(stub), env.get("PATH", "")])
        left = float(BUDGET)
        for makefile in chosen:
            relative = makefile.resolve().relative_to(root.resolve())
            if left <= 0:
                out.append(DryRun(makefile, False, "the dry runs' time budget was spent"))
                continue
            run = _dry_run(make, copy / relative, env, min(TIMEOUT, left))
            left -= run.seconds
            out.append(_answered_in(run.result, makefile, copy.resolve(), root.resolve()))
    return out


@dataclass
class _Timed:
    result: DryRun
    seconds: float


def _dry_run(make: str, makefile: Path, env: dict[str, str], timeout: float) -> _Timed:
    import time

    started = time.monotonic()
    command = [make, "-n", "-B", "-k", "-w", "-f", makefile.name, "-C", str(makefile.parent)]
    done = run_group(command, env, timeout)
    if done is None:
        return _Timed(DryRun(makefile, False, f"make -n took longer than {timeout:.0f} s"), timeout)
    returncode, stdout, stderr = done
    seconds = time.monotonic() - started
    result = read_commands(stdout, makefile.parent)
    result.build_file = makefile
    if not result.sources and returncode != 0:
        error = next((line for line in stderr.splitlines() if "***" in line), stderr.strip()[:200])
        return _Timed(DryRun(makefile, False, f"make -n failed: {error}"), seconds)
    return _Timed(result, seconds)


def read_commands(output: str, start: Path) -> DryRun:
    """The sources and include folders of the commands a dry run printed (``-w``: make says which directory
    each recursive make runs in; ``cd dir &&`` at a command's start is followed too)."""
    found = DryRun(start, True)
    directories = [start]
    for line in output.replace("\\\n", " ").splitlines():  # a command continued over lines, as one
        m = _DIRECTORY.match(line.strip())
        if m is not None:
            if m.group(1) == "Entering":
                directories.append(Path(m.group(2)))
            elif len(directories) > 1:
                directories.pop()
            continue
        here = directories[-1]
        cd = _CD.match(line)
        if cd is not None and "$" not in cd.group(1):
            here = here / cd.group(1)
        try:
            words = shlex.split(line, comments=False)
        except ValueError:
            words = line.split()
        for i, word in enumerate(words):
            word = word.rstrip(");")  # the end of a subshell or of a command: (cd sub && nvcc -c a.cu)
            if word.startswith("-I") and len(word) > 2:
                _add_dir(found, here / word[2:])
            elif word == "-I" and i + 1 < len(words):
                _add_dir(found, here / words[i + 1])
            elif word.endswith(COMPILED_SUFFIXES) and not word.startswith("-"):
                path = here / word
                if path.is_file():
                    found.sources.add(path.resolve())
    return found


def _add_dir(found: DryRun, path: Path) -> None:
    if path.is_dir():
        found.include_dirs.add(path.resolve())


def _answered_in(result: DryRun, makefile: Path, copy: Path, root: Path) -> DryRun:
    """``result`` (of the scratch copy) with its paths in the project, those outside the copy dropped."""
    return DryRun(makefile, result.ok, result.why, in_project(result.sources, copy, root),
                  in_project(result.include_dirs, copy, root))


def copy_project(root: Path, copy: Path) -> None:
    """The project as make sees it: links kept as links, version control and large data files left out."""

    top = root.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {".git", ".hg", ".svn"} & set(names)
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                if top not in Path(path).resolve().parents:
                    skipped.add(name)  # leads out of the project: nothing is written through it
            elif os.path.isdir(path):
                continue
            elif not os.path.isfile(path) or os.path.getsize(path) > LARGEST_COPIED:
                skipped.add(name)  # a pipe, a socket, a device; or data, not sources
        return skipped

    shutil.copytree(root, copy, symlinks=True, ignore=ignore)
