"""Ask CMake which sources a project compiles: its File API, where CMake and a CUDA compiler are installed.

Reading CMakeLists.txt statically trails what CMake evaluates (globs, variables set in functions and
included files, branches taken by the options' defaults, targets made by the project's own functions).
After a configure, CMake's File API answers exactly: the codemodel lists every target's sources, the
language each compiles as, and its include folders. The project is configured in a scratch copy (a
configure may write into its source tree), with the CUDA compiler CMake finds itself: without one, a
project of the CUDA language does not configure, and the static reading stands alone.
:mod:`buildport.migrate.plan` adds the sources the static reading missed and says which way each was found.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from buildport.migrate.asking import Answer, in_project, run_group, tool_environment
from buildport.migrate.dryrun import copy_project

#: The languages whose sources are converted.
COMPILED_LANGUAGES = frozenset({"CUDA", "CXX", "C"})
#: Seconds one configure may take, and all of them together.
TIMEOUT = 120
BUDGET = 300

_PROJECT = re.compile(r"^\s*project\s*\(", re.IGNORECASE | re.MULTILINE)
_ERROR = re.compile(r"^CMake Error.*$", re.MULTILINE)


@dataclass
class Configure(Answer):
    """What CMake's File API said of one top-level CMakeLists.txt: the sources and include folders of its
    targets, and how many targets."""

    targets: int = 0

    @property
    def lists_file(self) -> Path:
        return self.build_file


def cmake_program() -> str | None:
    return shutil.which("cmake")


def cuda_compiler() -> str | None:
    """The nvcc CMake would find: ``CUDACXX``, else on PATH."""
    given = os.environ.get("CUDACXX")
    if given and shutil.which(given):
        return given
    return shutil.which("nvcc")


def toolkit_root(nvcc: str) -> Path | None:
    """The CUDA toolkit's root as nvcc reports it (``#$ TOP=...`` in its dry run): nvcc on PATH may be a
    wrapper script elsewhere."""
    try:
        done = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                              capture_output=True, text=True, errors="replace", timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in (done.stderr + done.stdout).splitlines():
        if line.startswith("#$ TOP="):
            top = Path(line[len("#$ TOP="):].strip()).resolve()
            return top if (top / "bin").is_dir() else None
    return None


def top_level(lists_files: list[Path], root: Path) -> list[Path]:
    """The CMakeLists.txt files a user configures: each that calls ``project()`` with no such file in a
    folder above it (inside ``root``); the root's own, if it has one, whatever it holds."""
    tops: list[Path] = []
    resolved = root.resolve()
    candidates = sorted((p for p in lists_files if p.name == "CMakeLists.txt"), key=lambda p: (len(p.parts), str(p)))
    for path in candidates:
        folder = path.resolve().parent
        if folder != resolved and not _declares_project(path):
            continue
        if any(top.resolve().parent in folder.parents for top in tops):
            continue
        tops.append(path)
    return tops


def _declares_project(path: Path) -> bool:
    try:
        return _PROJECT.search(path.read_text(errors="replace")) is not None
    except OSError:
        return False


def configures(root: Path, lists_files: list[Path]) -> list[Configure]:
    """The File API's answer for each top-level CMakeLists.txt of the project ``root``, paths in ``root``."""
    tops = top_level(lists_files, root)
    if not tops:
        return []
    cmake = cmake_program()
    if cmake is None:
        return [Configure(t, False, "cmake is not installed") for t in tops]
    nvcc = cuda_compiler()
    if nvcc is None:
        return [Configure(t, False, "no CUDA compiler (nvcc) to configure the original with") for t in tops]
    out: list[Configure] = []
    with tempfile.TemporaryDirectory(prefix="buildport-cmake-") as scratch:
        copy = Path(scratch) / "tree"
        try:
            copy_project(root, copy)
        except (shutil.Error, OSError) as exc:
            why = f"the project could not be copied for it ({str(exc)[:160]})"
            return [Configure(t, False, why) for t in tops]
        toolkit = toolkit_root(nvcc)
        left = float(BUDGET)
        for index, top in enumerate(tops):
            if left <= 0:
                out.append(Configure(top, False, "the configures' time budget was spent"))
                continue
            relative = top.resolve().parent.relative_to(root.resolve())
            build = Path(scratch) / f"build-{index}"
            started = time.monotonic()
            answer = _configure(cmake, nvcc, toolkit, copy / relative, build, min(TIMEOUT, left))
            left -= time.monotonic() - started
            out.append(_answered_in(answer, top, copy.resolve(), root.resolve()))
    return out


def _configure(cmake: str, nvcc: str, toolkit: Path | None, source: Path, build: Path, timeout: float) -> Configure:
    """Configure ``source`` in ``build`` with the File API's codemodel asked for: with nvcc by its real path
    where nvcc names its toolkit, whose CMake packages (Thrust, CUB) are then found as they are where the
    toolkit's bin folder is on PATH."""
    query = build / ".cmake" / "api" / "v1" / "query"
    query.mkdir(parents=True)
    (query / "codemodel-v2").touch()
    compiler = toolkit / "bin" / "nvcc" if toolkit is not None and (toolkit / "bin" / "nvcc").is_file() else nvcc
    command = [cmake, "-S", str(source), "-B", str(build), "-G", "Unix Makefiles",
               f"-DCMAKE_CUDA_COMPILER={compiler}"]  # fmt: skip
    if toolkit is not None:  # for FindCUDA and FindCUDAToolkit too, which look for nvcc on PATH
        command += [f"-DCMAKE_PREFIX_PATH={toolkit}", f"-DCUDA_TOOLKIT_ROOT_DIR={toolkit}", f"-DCUDAToolkit_ROOT={toolkit}"]
    done = run_group(command, tool_environment(), timeout)
    if done is None:
        return Configure(source, False, f"cmake took longer than {timeout:.0f} s to configure")
    returncode, stdout, stderr = done
    if returncode != 0:
        return Configure(source, False, f"the configure failed: {_first_error(stderr + stdout)}")
    return read_codemodel(build, source)


def _first_error(output: str) -> str:
    """CMake's first error, its heading and the lines after it, on one line (at most 240 characters)."""
    error = _ERROR.search(output)
    if error is None:
        return (output.strip().splitlines() or ["no message"])[0][:240]
    lines = [error.group(0)] + [line.strip() for line in output[error.end():].splitlines()[:6] if line.strip()][:3]
    said = " ".join(lines)
    return said if len(said) <= 240 else said[:239] + "…"


def read_codemodel(build: Path, source: Path) -> Configure:
    """The sources (of the compiled languages, not generated) and include folders of every target of the
    first configuration in the codemodel reply under ``build``, for the project configured from ``source``."""
    reply = build / ".cmake" / "api" / "v1" / "reply"
    try:
        index_file = max(reply.glob("index-*.json"))
        index = json.loads(index_file.read_text())
        codemodel_file = next(
            r["jsonFile"] for r in index.get("reply", {}).values() if isinstance(r, dict) and r.get("kind") == "codemodel"
        )
        codemodel = json.loads((reply / codemodel_file).read_text())
    except (ValueError, OSError, StopIteration, KeyError, TypeError) as exc:
        return Configure(source, False, f"CMake wrote no codemodel ({type(exc).__name__})")
    found = Configure(source, True)
    top = Path(codemodel.get("paths", {}).get("source", str(source)))
    for configuration in codemodel.get("configurations", [])[:1]:
        for entry in configuration.get("targets", []):
            try:
                target = json.loads((reply / entry["jsonFile"]).read_text())
            except (OSError, ValueError, KeyError):
                continue
            found.targets += 1
            groups = target.get("compileGroups", [])
            for group in groups:
                if group.get("language") in COMPILED_LANGUAGES:
                    for include in group.get("includes", []):
                        path = Path(include.get("path", ""))
                        if path.is_dir():
                            found.include_dirs.add(path.resolve())
            for item in target.get("sources", []):
                at = item.get("compileGroupIndex")
                if item.get("isGenerated") or at is None or at >= len(groups):
                    continue
                if groups[at].get("language") not in COMPILED_LANGUAGES:
                    continue
                path = Path(item["path"])
                path = path if path.is_absolute() else top / path
                if path.is_file():
                    found.sources.add(path.resolve())
    return found


def _answered_in(result: Configure, lists_file: Path, copy: Path, root: Path) -> Configure:
    """``result`` (of the scratch copy) with its paths in the project; those outside the copy dropped."""
    return Configure(lists_file, result.ok, result.why, in_project(result.sources, copy, root),
                     in_project(result.include_dirs, copy, root), result.targets)
