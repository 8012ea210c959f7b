"""End to end: each CUDA project under fixtures/projects/make-* builds with GNU make and nvcc, and
builds again with GNU make and Debian's ROCm after `buildport make` has rewritten its Makefiles and
hipify-perl its sources.

The builds are in-tree, so the nvcc build and the port each get a fresh copy of the project: objects
left by one build can never stand in for the other's.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conftest import cuda_root, make_program, nvcc_trap

if TYPE_CHECKING:
    from conftest import Tools, Workbench

pytestmark = pytest.mark.e2e

PROJECTS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
OFFLOAD_ARCH = "gfx90a"
OTHER_ARCH = "gfx1030"
BUILD_TIMEOUT = 1200
MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


@dataclass(frozen=True)
class Expected:
    """How to build a project with nvcc, and the programs a build leaves (relative to the project)."""

    executables: tuple[str, ...]
    # Extra `make` arguments for the nvcc build; {cuda} is the toolkit root, {libs} the directory
    # holding the cuRAND/cuSPARSE wheels' include/ and lib/.
    cuda_make_args: tuple[str, ...] = ()
    # Device code alone (nvcc -fatbin), which must carry the AMD target too.
    modules: tuple[str, ...] = ()


_BIN = f"bin/{platform.machine()}/linux/release"

EXPECTED = {
    "make-single-benchmark": Expected(executables=("pathfinder",), modules=("pathfinder.fatbin",)),
    "make-samples-template": Expected(
        executables=(
            "Samples/monteCarloPi/monteCarloPi",
            "Samples/transposeShared/transposeShared",
            f"{_BIN}/monteCarloPi",
            f"{_BIN}/transposeShared",
        ),
        cuda_make_args=(
            "CUDA_PATH={cuda}",
            "EXTRA_NVCCFLAGS=-I{libs}/include",
            "EXTRA_LDFLAGS=-L{libs}/lib -rpath={libs}/lib",
        ),
    ),
    "make-suite-shared-config": Expected(
        executables=("histogram/histogram", "kmeans/kmeans"),
        cuda_make_args=("CUDA_DIR={cuda}",),
    ),
}

PROJECT_NAMES = sorted(p.name for p in PROJECTS_DIR.glob("make-*") if p.is_dir())


def test_every_make_project_has_expectations() -> None:
    assert PROJECT_NAMES == sorted(EXPECTED)


# --- toolchain ------------------------------------------------------------------------------------


def _cuda_libs(tools: Tools) -> Path:
    return tools.cuda_libs / "nvidia" / "cu13"


def _jobs() -> str:
    return f"-j{os.cpu_count() or 2}"


def _cuda_make_args(expected: Expected, tools: Tools) -> list[str]:
    values = {"cuda": str(cuda_root(tools)), "libs": str(_cuda_libs(tools))}
    return [arg.format(**values) for arg in expected.cuda_make_args]


def _cuda_run_env(workbench: Workbench) -> dict[str, str]:
    """Programs linked by g++ against libcudart.so must find it at run time."""
    env = workbench.cuda_env
    lib_dirs = [str(cuda_root(workbench.tools) / "lib64"), env.get("LD_LIBRARY_PATH", "")]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, lib_dirs))
    return env


def _rocm_build_env(workbench: Workbench, trap_dir: Path) -> dict[str, str]:
    """HIP_PLATFORM=amd (set by the workbench) and an nvcc on PATH that fails if anything calls it."""
    env = workbench.rocm_env
    env["PATH"] = os.pathsep.join([str(trap_dir), env.get("PATH", "")])
    return env


# --- steps ----------------------------------------------------------------------------------------


def _copy_project(name: str, dest: Path) -> Path:
    project = dest / name
    shutil.copytree(PROJECTS_DIR / name, project)
    return project


def _makefiles(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and (p.name in MAKEFILE_NAMES or p.suffix == ".mk")
    )


def _assert_executables(project: Path, expected: Expected) -> None:
    for rel in expected.executables:
        exe = project / rel
        assert exe.is_file(), f"{rel} was not built"
        assert exe.stat().st_mode & 0o111, f"{rel} is not executable"


def _smoke_run(workbench: Workbench, project: Path, expected: Expected, env: dict[str, str]) -> None:
    """Each program must start and exit 0: it reports that there is no GPU, or runs on the one there is.

    This proves the link is complete and every shared library resolves at run time.
    """
    for rel in expected.executables:
        exe = project / rel
        result = workbench.run(f"run-{exe.name}", [exe], cwd=exe.parent, env=env, timeout=120)
        assert result.stdout.strip(), f"{rel} printed nothing"


def _assert_offload_arch(project: Path, expected: Expected, arch: str = OFFLOAD_ARCH) -> None:
    for rel in expected.executables + expected.modules:
        data = (project / rel).read_bytes()
        assert f"amdgcn-amd-amdhsa--{arch}".encode() in data, f"{rel} carries no {arch} device code"


def _dry_run(workbench: Workbench, make: Path, project: Path, args: list[str], env: dict[str, str],
              label: str) -> str:
    """Every command a full rebuild would run (-B), sub-makes included, without running them."""
    return workbench.run(label, [make, "-n", "-B", *args], cwd=project, env=env).stdout


def _build_original(workbench: Workbench, make: Path, name: str, dest: Path) -> Path:
    expected = EXPECTED[name]
    project = _copy_project(name, dest)
    args = _cuda_make_args(expected, workbench.tools)
    env = workbench.cuda_env
    commands = _dry_run(workbench, make, project, args, env, "cuda-make-dry-run")
    assert "nvcc" in commands, f"the original {name} does not build with nvcc"
    workbench.run("cuda-make", [make, _jobs(), *args], cwd=project, env=env, timeout=BUILD_TIMEOUT)
    _assert_executables(project, expected)
    _smoke_run(workbench, project, expected, _cuda_run_env(workbench))
    return project


def _port(workbench: Workbench, name: str, dest: Path) -> Path:
    project = _copy_project(name, dest)
    originals = {p: p.read_text() for p in _makefiles(project)}
    assert originals, f"{name} has no Makefiles"
    workbench.buildport("make", project, "--in-place", "--offload-arch", OFFLOAD_ARCH)
    unchanged = [str(p.relative_to(project)) for p, text in originals.items()
                 if p.read_text() == text and "nvcc" in text.lower()]
    assert not unchanged, f"buildport make left these CUDA Makefiles as they were: {unchanged}"
    workbench.hipify(project)
    return project


def _build_port(workbench: Workbench, make: Path, project: Path, trap_dir: Path,
                extra: tuple[str, ...] = ()) -> None:
    record = nvcc_trap(trap_dir)
    env = _rocm_build_env(workbench, trap_dir)
    args = list(extra)  # no ROCM_PATH: the ported Makefile finds Debian's ROCm (hipcc in /usr/bin) itself
    commands = _dry_run(workbench, make, project, args, env, "rocm-make-dry-run")
    nvcc_lines = [line for line in commands.splitlines() if "nvcc" in line]
    assert not nvcc_lines, "the ported build still calls nvcc:\n" + "\n".join(nvcc_lines)
    workbench.run("rocm-make", [make, _jobs(), *args], cwd=project, env=env, timeout=BUILD_TIMEOUT)
    assert not record.exists(), f"nvcc ran during the ported build:\n{record.read_text()}"


# --- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_make_project_builds_before_and_after_porting(
    name: str, tmp_path: Path, workbench: Workbench
) -> None:
    make = make_program()
    expected = EXPECTED[name]

    # 1. The original, with nvcc.
    _build_original(workbench, make, name, tmp_path / "cuda")

    # 2. A fresh copy: port the Makefiles, then the sources.
    project = _port(workbench, name, tmp_path / "rocm")

    # 3. The port, with hipcc from Debian's ROCm.
    _build_port(workbench, make, project, tmp_path / "nvcc-trap")
    _assert_executables(project, expected)
    _assert_offload_arch(project, expected)
    _smoke_run(workbench, project, expected, workbench.rocm_env)


_ARCH_ASSIGNMENT = re.compile(
    rf"^[ \t]*(?:override[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\?|:|::)?=[ \t]*{OFFLOAD_ARCH}[ \t]*$",
    re.MULTILINE,
)


def test_offload_architectures_stay_overridable(tmp_path: Path, workbench: Workbench) -> None:
    """The ported target list is a make variable; setting it on the command line picks other GPUs."""
    make = make_program()
    name = "make-single-benchmark"
    expected = EXPECTED[name]
    project = _port(workbench, name, tmp_path)
    variables = sorted(
        {m.group(1) for p in _makefiles(project) for m in _ARCH_ASSIGNMENT.finditer(p.read_text())}
    )
    assert variables, f"no Makefile of the port assigns {OFFLOAD_ARCH} to a variable"
    assert not any(
        line.lstrip().startswith("override") for p in _makefiles(project)
        for line in p.read_text().splitlines() if OFFLOAD_ARCH in line
    ), "the target list is marked `override`: the command line cannot change it"

    _build_port(workbench, make, project, tmp_path / "nvcc-trap",
                extra=tuple(f"{var}={OTHER_ARCH}" for var in variables))
    _assert_offload_arch(project, expected, OTHER_ARCH)
    for rel in expected.executables:
        data = (project / rel).read_bytes()
        assert f"amdgcn-amd-amdhsa--{OFFLOAD_ARCH}".encode() not in data, (
            f"{rel} still carries {OFFLOAD_ARCH} code although {variables} chose {OTHER_ARCH}"
        )


def test_nvcc_trap_catches_a_call(tmp_path: Path, workbench: Workbench) -> None:
    """Guards the harness: an nvcc reached through PATH during a ported build is recorded and fails."""
    record = nvcc_trap(tmp_path / "trap")
    env = _rocm_build_env(workbench, tmp_path / "trap")
    with pytest.raises(AssertionError, match="probe-nvcc: exit code 1"):
        workbench.run("probe-nvcc", ["nvcc", "--version"], cwd=tmp_path, env=env)
    assert "--version" in record.read_text()
