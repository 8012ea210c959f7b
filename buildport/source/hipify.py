"""Find and run a hipify engine (hipify-perl or hipify-clang) on source files.

:func:`convert_source` is the one call per source: the built-in engine (:mod:`buildport.source.convert`,
hipify-perl's conversion compiled from the installed script's tables) where it is certain of what
hipify-perl would write, else the program itself (:func:`run_engine`).

The engine runs without a shell, with an argument list, a timeout and its
stderr captured; its translation is read from stdout and written by buildport
itself (atomically), so the engine never touches the tree. A run that converts
nothing leaves the file as it was: hipify-perl adds a second
``#include "hip/hip_runtime.h"`` to an already converted file otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from buildport.migrate.asking import run_group_bytes
from buildport.textio import decode

if TYPE_CHECKING:
    from buildport.source.convert import Converter

ENGINES = ("hipify-perl", "hipify-clang")
INSTALL_HINT = (
    "install one: ROCm ships hipify-perl and hipify-clang in $ROCM_PATH/bin; on Debian/Ubuntu the package "
    "'hipify-perl' (Debian 13 and later) provides hipify-perl; or name one with --hipify PATH"
)


class EngineMissing(Exception):
    """No hipify engine where buildport looked."""

    def __init__(self, searched: list[str]) -> None:
        super().__init__(
            "no hipify engine found; looked for "
            + ", ".join(ENGINES) + " in: " + ", ".join(searched) + ". " + INSTALL_HINT
        )
        self.searched = searched


def find_engine(explicit: str | None = None) -> Path:
    """``--hipify PATH``, else PATH, $ROCM_PATH/bin, $HIP_PATH/bin, /opt/rocm/bin."""
    if explicit:
        path = Path(explicit)
        if path.is_file() and os.access(path, os.X_OK):
            return path.absolute()  # the engine runs in other folders too
        found = shutil.which(explicit)
        if found:
            return Path(found).absolute()
        raise EngineMissing([explicit])
    searched = ["PATH"]
    for name in ENGINES:
        found = shutil.which(name)
        if found:
            return Path(found)
    for variable in ("ROCM_PATH", "HIP_PATH"):
        root = os.environ.get(variable)
        if root:
            searched.append(f"${variable}/bin ({root}/bin)")
            for name in ENGINES:
                candidate = Path(root) / "bin" / name
                if candidate.is_file() and os.access(candidate, os.X_OK):
                    return candidate
    searched.append("/opt/rocm/bin")
    for name in ENGINES:
        candidate = Path("/opt/rocm/bin") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EngineMissing(searched)


def installed_hip_version() -> tuple[int, int] | None:
    """(major, minor) of the HIP whose headers a build here would use: $ROCM_PATH, $HIP_PATH, /opt/rocm, the
    root of hipcc on PATH (/usr for Debian's packages); None when none is found."""
    roots = [os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), "/opt/rocm"]
    hipcc = shutil.which("hipcc")
    if hipcc:
        roots.append(str(Path(hipcc).resolve().parent.parent))
    for root in filter(None, roots):
        header = Path(root) / "include" / "hip" / "hip_version.h"
        try:
            text = header.read_text(errors="replace")
        except OSError:
            continue
        major = re.search(r"#define\s+HIP_VERSION_MAJOR\s+(\d+)", text)
        minor = re.search(r"#define\s+HIP_VERSION_MINOR\s+(\d+)", text)
        if major and minor:
            return int(major.group(1)), int(minor.group(1))
    return None


@dataclass(slots=True)
class HipifyResult:
    """One file through the engine."""

    path: str
    text: str | None = None  # the translation; None when the engine failed
    converted: int = 0
    unconverted: int = 0
    warnings: list[str] = field(default_factory=list)
    #: (line, name) of each identifier the engine reported it could not convert
    unsupported: list[tuple[int, str]] = field(default_factory=list)
    error: str = ""
    stats: dict[str, int] = field(default_factory=dict)


_STAT = re.compile(r"^\s*([A-Z][A-Za-z ]+?)(?: count)?:\s*(\d+)\s*$")
#: a warning of hipify-perl's: ``warning: FILE:LINE: ...`` (up to ROCm 6.2; also ``warning: FILE:#LINE : the
#: line`` for a CUDA name left), or ``FILE:LINE: warning: ...`` (since)
_WARNING = re.compile(r"^\s*(?:warning:|\S.*?:\d+:\s*warning:)")
#: its warning of a name it cannot convert: ``warning: FILE:LINE: unsupported identifier "NAME"``, or since
#: ROCm 6.3 ``FILE:LINE: warning: unsupported HIP identifier: NAME`` (and ``unsupported device function "NAME"``)
_UNSUPPORTED = re.compile(r'^\s*(?:warning:\s*.+?:(\d+):|.+?:(\d+):\s*warning:)\s*'
                          r'unsupported (?:[\w ]*?identifier|device function)(?: "([^"]+)"|: (\w+))')


#: How long the engine may take over one file, by default (``migrate --engine-timeout``).
ENGINE_TIMEOUT = 300.0


def builtin_engine(engine: Path, explicit: str | None, extra: tuple[str, ...]) -> Converter | None:
    """The built-in engine ``migrate`` converts with: the one compiled from ``engine`` when that is a
    hipify-perl whose code it knows, found (not named with ``--hipify PATH``: a program named is run) and
    given no arguments of the user's (``--hipify-arg``); else None."""
    if explicit or extra:
        return None
    from buildport.source.convert import converter_for  # compiles its tables: only for a run that converts

    return converter_for(engine)


def convert_source(engine: Path, path: Path, include_dirs: list[Path], timeout: float, data: bytes,
                   extra: tuple[str, ...] = (), builtin: Converter | None = None) -> HipifyResult:
    """Translate one file (``data``, its bytes) as ``engine`` would: with ``builtin`` (the built-in
    engine, see :func:`builtin_engine`) where it is certain of hipify-perl's output, which also spares a
    file with nothing to convert any engine; else with the program itself (:func:`run_engine`)."""
    if builtin is not None:
        done = builtin.convert(data, str(path))
        if done is not None:
            return engine_result(HipifyResult(str(path)), engine.name, 0, done.output,
                                 done.messages.decode("utf-8", "replace"), data)
    return run_engine(engine, path, include_dirs, timeout, data, extra)


def run_engine(engine: Path, path: Path, include_dirs: list[Path], timeout: float = ENGINE_TIMEOUT,
               data: bytes | None = None, extra: tuple[str, ...] = ()) -> HipifyResult:
    """Translate one file; the file itself is not written.

    With ``data`` (the file's bytes, read by the caller), the engine is given a copy of them in a
    folder of its own, never the user's file: an engine that deletes or truncates its input costs
    nothing. Its messages name ``path`` all the same. An engine that takes longer than ``timeout``
    seconds is killed with everything it started. Output that cannot be a translation of the input
    (nothing for a file with text, or less than half its lines) is a failure, not a result. ``extra``:
    the user's arguments for the engine (``--hipify-arg``), given before the file (``-roc``; for
    hipify-clang ``-p build/``, a compile database).
    """
    result = HipifyResult(str(path))
    with tempfile.TemporaryDirectory(prefix="buildport-engine-") as scratch:
        given = path
        if data is not None:
            given = Path(scratch) / path.name
            given.write_bytes(data)
        args = [str(engine), *extra]
        if engine.name.startswith("hipify-perl"):
            args += ["-print-stats", str(given)]
        else:  # hipify-clang: stdout output, include dirs from the build (and the file's own folder)
            args += ["--print-stats", "-o", "-", str(given), "--", f"-I{path.parent}"]
            args += [f"-I{d}" for d in include_dirs] + ["-x", "cuda"]
        try:
            done = run_group_bytes(args, timeout)
        except OSError as exc:
            result.error = f"{engine.name} could not run: {exc}"
            return result
    if done is None:
        result.error = f"{engine.name} timed out after {timeout:g} s"
        return result
    code, stdout, stderr_bytes = done
    stderr = stderr_bytes.decode("utf-8", "replace")
    if given != path:
        stderr = stderr.replace(str(given), str(path))
    return engine_result(result, engine.name, code, stdout, stderr, data)


def engine_result(result: HipifyResult, name: str, code: int, stdout: bytes, stderr: str,
                  data: bytes | None) -> HipifyResult:
    """``result`` filled in from what an engine called ``name`` wrote (``stdout``, ``stderr``) and its exit
    ``code``, for the file whose bytes are ``data``: the same for hipify-perl and for the built-in engine
    (:mod:`buildport.source.convert`), which writes what hipify-perl would."""
    path = result.path
    for line in stderr.splitlines():
        if _WARNING.match(line):  # not the statistics' "WARNINGS: 0"
            result.warnings.append(line.strip())
            unsupported = _UNSUPPORTED.match(line)
            if unsupported:
                number, name = unsupported.group(1) or unsupported.group(2), unsupported.group(3) or unsupported.group(4)
                result.unsupported.append((int(number), name))
        m = _STAT.match(line)
        if m:
            result.stats[m.group(1).strip().lower()] = int(m.group(2))
    result.converted = result.stats.get("converted refs", 0)
    result.unconverted = result.stats.get("unconverted refs", 0)
    if code != 0:
        said = [line.strip() for line in stderr.splitlines() if line.strip()]
        last = f": {said[-1][:300]}" if said else ""
        result.error = f"{name} exited with {code}{last}"
        return result
    if data is not None:
        implausible = _implausible(data, stdout)
        if implausible:
            result.error = f"{name} gave {implausible}; its output was not used"
            return result
    result.text = decode(stdout, path)
    return result


def _implausible(given: bytes, output: bytes) -> str:
    """What is wrong with ``output`` as the engine's translation of ``given``, or ``""``: the engines
    rename identifiers and add includes, so a translation keeps at least half of the lines."""
    if given.strip() and not output.strip():
        return "no output for a file with text"
    lines, kept = given.count(b"\n"), output.count(b"\n")
    if lines >= 4 and kept < lines // 2:
        return f"{kept} lines for a file of {lines}"
    return ""
