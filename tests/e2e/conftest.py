"""Shared machinery for the end-to-end tests: real toolchains, real builds.

The e2e tests build a CUDA project twice: as written, with nvcc, and after porting, with Debian's
ROCm 5.2. Everything that is a quirk of this test machine rather than of the projects lives here
and in ``tests/toolchain/*.cmake``, never in a ported build file:

- ``HIP_PLATFORM=amd`` in the environment, because nvcc is on PATH and hipcc/hipconfig would pick
  the NVIDIA backend otherwise;
- the CMake toolchain files (compiler paths, ROCm under /usr, the hip-lang package root);
- where ``.ci/setup.sh`` put hipify-perl and the CUDA math libraries.

A missing tool makes the tests fail with a message naming it (CI installs everything), never skip.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLCHAIN_DIR = REPO_ROOT / "tests" / "toolchain"
TOOLS_DIR = Path(os.environ.get("BUILDPORT_TOOLS", "/opt/buildport-tools"))
MULTIARCH_CMAKE = Path("/usr/lib/x86_64-linux-gnu/cmake")

SETUP_HINT = "run `bash .ci/setup.sh` as root to install the e2e toolchains"
# Extensions hipify-perl is run on; it leaves files without CUDA identifiers byte-for-byte alone.
HIPIFY_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp"})
# hipify-perl -inplace backs a file up with an unquoted `system("cp $file ...")`.
_SHELL_SAFE_PATH = re.compile(r"[A-Za-z0-9_./+-]+")

CONFIGURE_TIMEOUT = 300
BUILD_TIMEOUT = 1200
TOOL_TIMEOUT = 300


@dataclass(frozen=True)
class Tools:
    """Absolute paths of the programs and files the e2e tests drive."""

    cmake: Path
    nvcc: Path
    hipcc: Path  # not called by the CMake builds, but hip-config.cmake refuses to load without it
    hip_clang: Path
    hipify_perl: Path
    cuda_libs: Path
    nvcc_toolchain: Path
    rocm_toolchain: Path


def _which(name: str, *fallbacks: Path) -> Path | None:
    found = shutil.which(name)
    if found:
        return Path(found)
    return next((p for p in fallbacks if p.is_file() and os.access(p, os.X_OK)), None)


def find_tools() -> Tools:
    """Locate every tool; raise one error naming all that are missing."""
    hipify_override = os.environ.get("BUILDPORT_HIPIFY_PERL")
    cuda_libs = Path(os.environ.get("BUILDPORT_CUDA_LIBS", TOOLS_DIR / "cuda-libs"))
    candidates: dict[str, Path | None] = {
        "cmake": _which("cmake"),
        "nvcc": _which("nvcc", Path("/usr/local/cuda/bin/nvcc")),
        "hipcc": _which("hipcc"),
        "clang++-15 (HIP compiler)": _which("clang++-15"),
        "hipify-perl": (
            _which(hipify_override)
            if hipify_override
            else _which("hipify-perl", TOOLS_DIR / "hipify" / "usr" / "bin" / "hipify-perl")
        ),
        "CUDA math libraries (cuRAND/cuSPARSE wheels)": (
            cuda_libs if (cuda_libs / "nvidia" / "cu13" / "include" / "curand.h").is_file() else None
        ),
        "hip-lang CMake package": (
            MULTIARCH_CMAKE / "hip-lang"
            if (MULTIARCH_CMAKE / "hip-lang" / "hip-lang-config.cmake").is_file()
            else None
        ),
    }
    missing = [name for name, path in candidates.items() if path is None]
    if missing:
        raise LookupError(f"e2e tools missing: {', '.join(missing)}; {SETUP_HINT}")
    paths = {name: path for name, path in candidates.items() if path is not None}
    return Tools(
        cmake=paths["cmake"],
        nvcc=paths["nvcc"],
        hipcc=paths["hipcc"],
        hip_clang=paths["clang++-15 (HIP compiler)"],
        hipify_perl=paths["hipify-perl"],
        cuda_libs=cuda_libs,
        nvcc_toolchain=TOOLCHAIN_DIR / "cuda-nvcc.cmake",
        rocm_toolchain=TOOLCHAIN_DIR / "rocm-debian.cmake",
    )


def make_hip_root(root: Path) -> Path:
    """Create ``root/lib/cmake/hip-lang`` pointing at Debian's hip-lang package (CMake 3.25 wants it)."""
    link = root / "lib" / "cmake" / "hip-lang"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        link.symlink_to(MULTIARCH_CMAKE / "hip-lang", target_is_directory=True)
    return root


class CommandFailed(AssertionError):
    """A build step exited non-zero or timed out; the message carries the output's tail."""


class Runner:
    """Runs commands with a timeout, keeps each one's full output in a log file."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # the compilers' temporary folders (clang leaves empty ones behind) stay in the test's own tree
        self.temp_dir = log_dir.parent / "tmp"
        self.temp_dir.mkdir(exist_ok=True)
        self._count = 0

    def run(
        self,
        step: str,
        cmd: Sequence[str | os.PathLike[str]],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = TOOL_TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``cmd``; raise CommandFailed naming ``step`` unless it exits 0 within ``timeout``."""
        __tracebackhide__ = True  # failures show the command's output, not this function
        self._count += 1
        log = self.log_dir / f"{self._count:02d}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', step)}.log"
        argv = [os.fspath(c) for c in cmd]
        # A session of its own, so a timeout can stop make and every compiler it started.
        with subprocess.Popen(
            argv,
            cwd=cwd,
            env={**(env if env is not None else os.environ), "TMPDIR": str(self.temp_dir)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        ) as proc:
            try:
                output, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                output, _ = proc.communicate()
                log.write_text(output)
                raise CommandFailed(
                    f"{step}: timed out after {timeout} s: {' '.join(argv)}\n{_tail(output)}"
                ) from None
        log.write_text(f"$ {' '.join(argv)}\n(cwd {cwd})\n\n{output}")
        if proc.returncode != 0:
            raise CommandFailed(
                f"{step}: exit code {proc.returncode}: {' '.join(argv)}\n"
                f"(full log: {log})\n{_errors(output)}{_tail(output)}"
            )
        return subprocess.CompletedProcess(argv, proc.returncode, output, None)


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


_ERROR_LINE = re.compile(r"\berror\b|CMake Error", re.IGNORECASE)


def _errors(text: str, limit: int = 20) -> str:
    """The output's first error lines, ahead of its tail: warnings tend to bury them."""
    found = [line for line in text.splitlines() if _ERROR_LINE.search(line)][:limit]
    return "errors:\n" + "\n".join(found) + "\n--- output tail ---\n" if found else ""


def make_program() -> Path:
    """GNU make; its absence fails the test (CI installs it)."""
    found = shutil.which("make")
    if not found:
        pytest.fail("e2e tools missing: GNU make; run `bash .ci/setup.sh` as root", pytrace=False)
    return Path(found)


def cuda_root(tools: Tools) -> Path:
    """The toolkit root of the nvcc in use (nvcc on PATH may be a wrapper script elsewhere)."""
    standard = Path("/usr/local/cuda")
    if (standard / "bin" / "nvcc").is_file():
        return standard
    return tools.nvcc.resolve().parent.parent


def nvcc_trap(directory: Path) -> Path:
    """A directory holding an `nvcc` that records being called and fails; put it first on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    record = directory / "nvcc-was-called"
    trap = directory / "nvcc"
    trap.write_text(
        "#!/bin/sh\n"
        f'echo "$0 $*" >> "{record}"\n'
        'echo "nvcc must not run in a ported build: $0 $*" >&2\n'
        "exit 1\n"
    )
    trap.chmod(trap.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return record


def cuda_env(tools: Tools) -> dict[str, str]:
    """Environment for the original nvcc builds (tests/toolchain/cuda-nvcc.cmake reads it)."""
    env = dict(os.environ)
    env["BUILDPORT_CUDA_LIBS"] = str(tools.cuda_libs)
    return env


def rocm_env(hip_root: Path) -> dict[str, str]:
    """Environment for the ROCm builds and for hipcc-driven Makefiles."""
    env = dict(os.environ)
    env["HIP_PLATFORM"] = "amd"  # nvcc is on PATH: without this hipcc/hipconfig choose NVIDIA
    env["BUILDPORT_HIP_ROOT"] = str(hip_root)
    # no ROCM_PATH: a ported build finds Debian's ROCm (hipcc in /usr/bin, no /opt/rocm) by itself
    env.pop("ROCM_PATH", None)
    # clang run by a custom command gets no --rocm-device-lib-path from the toolchain file; Debian keeps the
    # device libraries in the multiarch directory, where clang finds them only through this
    env.setdefault("HIP_DEVICE_LIB_PATH", "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
    return env


def hipify_sources(root: Path, tools: Tools, runner: Runner) -> list[Path]:
    """Run hipify-perl in place on every C/C++/CUDA source below ``root``; return the files.

    ``-inplace`` writes the translation over the file and keeps the original as ``<file>.prehip``
    (a rerun reads from that backup, so it is idempotent). The backups are removed afterwards so
    the tree looks like a finished port. Warnings (unsupported identifiers) go to the step's log.
    """
    __tracebackhide__ = True
    sources = sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and p.suffix in HIPIFY_SUFFIXES
    )
    unsafe = [str(p) for p in sources if not _SHELL_SAFE_PATH.fullmatch(str(p))]
    if unsafe:
        raise CommandFailed(f"hipify-perl -inplace cannot handle these paths: {unsafe}")
    if sources:
        runner.run("hipify-perl", [tools.hipify_perl, "-inplace", *sources], cwd=root)
    for rel in sources:
        backup = root / f"{rel}.prehip"
        if not backup.is_file():
            raise CommandFailed(f"hipify-perl did not process {rel} (no {backup.name})")
        backup.unlink()
    return [root / rel for rel in sources]


def cmake_configure_build(
    runner: Runner,
    tools: Tools,
    label: str,
    *,
    source: Path,
    build: Path,
    toolchain: Path,
    env: Mapping[str, str],
    defines: Mapping[str, str] | None = None,
) -> None:
    """Configure ``source`` into ``build`` with ``toolchain`` and build every target."""
    __tracebackhide__ = True
    args = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    runner.run(
        f"{label}-configure",
        [tools.cmake, "-S", source, "-B", build, f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
         "-DCMAKE_BUILD_TYPE=Release", *args],
        cwd=source.parent,
        env=env,
        timeout=CONFIGURE_TIMEOUT,
    )
    jobs = str(os.cpu_count() or 2)
    runner.run(
        f"{label}-build",
        [tools.cmake, "--build", build, "--parallel", jobs, "--verbose"],
        cwd=source.parent,
        env=env,
        timeout=BUILD_TIMEOUT,
    )


class Workbench:
    """One e2e test's view of the toolchains: run steps, port, hipify, build with nvcc or ROCm."""

    def __init__(self, tools: Tools, runner: Runner, hip_root: Path) -> None:
        self.tools = tools
        self.runner = runner
        self.hip_root = hip_root

    @property
    def cuda_env(self) -> dict[str, str]:
        """Environment for nvcc builds."""
        return cuda_env(self.tools)

    @property
    def rocm_env(self) -> dict[str, str]:
        """Environment for ROCm builds (HIP_PLATFORM=amd and the hip-lang root)."""
        return rocm_env(self.hip_root)

    def run(
        self,
        step: str,
        cmd: Sequence[str | os.PathLike[str]],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = TOOL_TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        """Run one step (see Runner.run)."""
        __tracebackhide__ = True
        return self.runner.run(step, cmd, cwd=cwd, env=env, timeout=timeout)

    def buildport(self, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        """Run ``python -m buildport ARGS`` from the repository root."""
        __tracebackhide__ = True
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        return self.run("buildport", [sys.executable, "-m", "buildport", *args], cwd=REPO_ROOT, env=env)

    def hipify(self, root: Path) -> list[Path]:
        """hipify-perl every source below ``root`` in place (see hipify_sources)."""
        __tracebackhide__ = True
        return hipify_sources(root, self.tools, self.runner)

    def cmake_cuda(self, source: Path, build: Path, defines: Mapping[str, str] | None = None) -> None:
        """Configure and build ``source`` with nvcc."""
        __tracebackhide__ = True
        cmake_configure_build(
            self.runner, self.tools, "cuda", source=source, build=build,
            toolchain=self.tools.nvcc_toolchain, env=self.cuda_env, defines=defines,
        )

    def cmake_rocm(self, source: Path, build: Path, defines: Mapping[str, str] | None = None) -> None:
        """Configure and build ``source`` with Debian's ROCm (CMake HIP language, clang 15)."""
        __tracebackhide__ = True
        cmake_configure_build(
            self.runner, self.tools, "rocm", source=source, build=build,
            toolchain=self.tools.rocm_toolchain, env=self.rocm_env, defines=defines,
        )


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The located toolchain; fails (does not skip) every e2e test when something is missing."""
    try:
        return find_tools()
    except LookupError as exc:
        missing = str(exc)
    pytest.fail(missing, pytrace=False)


@pytest.fixture(scope="session")
def hip_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private root holding lib/cmake/hip-lang, for CMAKE_HIP_COMPILER_ROCM_ROOT."""
    return make_hip_root(tmp_path_factory.mktemp("hip-root"))


@pytest.fixture
def workbench(tools: Tools, hip_root: Path, tmp_path: Path) -> Workbench:
    """Toolchains plus a command runner whose logs stay in the test's temporary directory."""
    return Workbench(tools, Runner(tmp_path / "logs"), hip_root)


# --- tree snapshots and unchecked buildport runs (used by test_migrate_projects.py) ---------------

TreeEntry = tuple[str, object, int]


def snapshot_tree(root: Path) -> dict[str, TreeEntry]:
    """Every entry below ``root`` (``root`` itself included as ``.``), symlinks not followed.

    A file is recorded with its bytes, a symlink with its target text, a directory as such; each with
    its permission bits. Two snapshots are equal exactly when the trees are byte for byte the same.
    A missing ``root`` gives an empty snapshot.
    """
    if not os.path.lexists(root):
        return {}
    entries: dict[str, TreeEntry] = {}

    def record(path: Path, rel: str) -> None:
        st = path.lstat()
        perms = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            entries[rel] = ("link", os.readlink(path), perms)
        elif stat.S_ISDIR(st.st_mode):
            entries[rel] = ("dir", None, perms)
        elif stat.S_ISREG(st.st_mode):
            entries[rel] = ("file", path.read_bytes(), perms)
        else:
            entries[rel] = ("other", stat.S_IFMT(st.st_mode), perms)

    record(root, ".")
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = base / name
            record(path, path.relative_to(root).as_posix())
    return entries


def tree_differences(before: Mapping[str, TreeEntry], after: Mapping[str, TreeEntry]) -> list[str]:
    """Human-readable list of what differs between two snapshots (empty when identical)."""
    lines = []
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        if old is None:
            lines.append(f"added: {rel}")
        elif new is None:
            lines.append(f"removed: {rel}")
        elif old[0] != new[0]:
            lines.append(f"changed kind ({old[0]} -> {new[0]}): {rel}")
        elif old[1] != new[1]:
            lines.append(f"changed content: {rel}")
        else:
            lines.append(f"changed permissions ({old[2]:o} -> {new[2]:o}): {rel}")
    return lines


def run_buildport(
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    timeout: float = TOOL_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m buildport ARGS`` from the repository root without checking its exit code.

    stdout and stderr are kept apart, for tests about refusals and their messages.
    """
    run_env = dict(os.environ if env is None else env)
    run_env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO_ROOT), run_env.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "buildport", *(os.fspath(a) for a in args)],
        cwd=REPO_ROOT,
        env=run_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )
