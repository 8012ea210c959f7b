"""End to end: `buildport migrate` on whole multi-directory CUDA projects (fixtures/migrate).

For each project: the original builds with nvcc; `migrate --out` writes a ported copy (build files
rewritten, the referenced sources hipified, MIGRATION.md and migration.json beside them) and leaves
the original byte for byte as it was; a second run over the migrated tree changes nothing; the copy
builds with Debian's ROCm and its programs run. With --keep-cuda, the sources stay byte for byte and the
dual tree builds with nvcc (GPU_RUNTIME left at CUDA) and with ROCm (GPU_RUNTIME=HIP). Then the
command's promises that need no build: --dry-run writes nothing, a missing hipify engine and a .cu/.cpp
rename collision are refused with exit code 2 before anything is written, and symlinks leading out of
the tree are never followed into a write or a copy.

Every project tree is copied to a temporary directory first; nvcc builds use a copy of their own
(the Makefile builds are in-tree), so build products never reach the tree that is migrated.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import (
    REPO_ROOT, CommandFailed, cuda_root, make_program, nvcc_trap, run_buildport, snapshot_tree, tree_differences,
)

if TYPE_CHECKING:
    from conftest import Tools, Workbench

pytestmark = pytest.mark.e2e

PROJECTS_DIR = REPO_ROOT / "fixtures" / "migrate"
OFFLOAD_ARCH = "gfx90a"
BUILD_TIMEOUT = 1200
MIGRATE_TIMEOUT = 600
REPORTS = ("MIGRATION.md", "migration.json")
HIPIFY_ENGINES = ("hipify-perl", "hipify-clang")


@dataclass(frozen=True)
class Project:
    """A fixture project and what its migration must produce."""

    kind: str  # "cmake" or "make"
    # Programs a build leaves: relative to the build directory (CMake) or to the project (make).
    executables: tuple[str, ...]
    # Build files the migration must rewrite and sources hipify must change (relative paths).
    build_files: tuple[str, ...]
    sources: tuple[str, ...]
    # Files no build file references: reported as unreferenced, left byte for byte alone.
    unreferenced: tuple[str, ...] = ()
    # Extra `make` arguments for the nvcc build; {cuda} is the toolkit root.
    cuda_make_args: tuple[str, ...] = ()
    # The folder `make` runs in (make projects), relative to the project.
    make_dir: str = ""
    # Whether the project registers tests with CTest (run after the ROCm build).
    ctest: bool = False
    # Files that must carry AMD device code (default: the executables); a module a custom command
    # compiles carries it, the program that loads it does not.
    device_code: tuple[str, ...] | None = None
    # Sources whose HIP build needs a change no header can carry (migrate --keep-cuda reports each as
    # dual-source-not-carried, and the dual tree's HIP build fails on it).
    not_carried: tuple[str, ...] = ()
    # Whether only CMake's configure (its File API) names some of the sources the build compiles.
    configure_names_sources: bool = False

    @property
    def with_device_code(self) -> tuple[str, ...]:
        return self.executables if self.device_code is None else self.device_code


PROJECTS = {
    "cmake-subdirs": Project(
        kind="cmake",
        executables=("app/vecdemo",),
        build_files=("CMakeLists.txt", "cmake/gpu.cmake", "lib/CMakeLists.txt", "app/CMakeLists.txt"),
        sources=("lib/saxpy.cu", "lib/reduce.cu", "lib/include/vecops/vecops.cuh", "app/main.cu"),
        unreferenced=("unused/old_kernel.cu",),
    ),
    "cmake-filelists": Project(
        kind="cmake",
        executables=("ensemble_gpu",),
        build_files=("CMakeLists.txt", "cmake/GPUSetup.cmake"),
        # named only in cmake/FileLists.cmake, used in cmake/GPUSetup.cmake; a recursive glob without **;
        # headers reached through include_directories(src/gpu)
        sources=("src/gpu/EnergyKernel.cu", "src/gpu/Variables.cuh", "src/extra/deep/Scale.cu"),
        not_carried=("src/extra/deep/Scale.cu",),  # a launch written k<< <g, b >> >
    ),
    "cmake-cpu-gpu-header": Project(
        kind="cmake",
        executables=("compare-cpu", "compare-gpu"),
        build_files=("CMakeLists.txt",),
        # compare.h includes CUDA's runtime only in the GPU build: hipify's include on top of it is taken off
        # again, or the C++ compiler of the CPU tool meets HIP's headers without the platform defined
        sources=("compare.h", "tool.cu"),
        device_code=("compare-gpu",),
    ),
    "cmake-computed-sources": Project(
        kind="cmake",
        executables=("solve",),
        build_files=("CMakeLists.txt",),
        # the kernels are named in a foreach() loop: CMake's File API lists them, the static reading does not
        sources=("main.cu", "kernels/jacobi_kernel.cu", "kernels/scale_kernel.cu"),
        configure_names_sources=True,
    ),
    "cmake-legacy-objects": Project(
        kind="cmake",
        executables=("noisegen",),
        build_files=("cmake/Gpu.cmake", "src/CMakeLists.txt"),
        # globbed in a function of cmake/Sources.cmake from its parameter, handed back with PARENT_SCOPE; compiled
        # by FindCUDA's cuda_compile() in a function of cmake/Gpu.cmake (its objects listed by the library)
        sources=("src/kernels/fill.cu", "src/kernels/scale.cu", "src/kernels/scale.cuh", "src/generate.cpp",
                 "src/check.cpp"),
    ),
    "cmake-sources-from-a-subfolder": Project(
        kind="cmake",
        executables=("spinsim",),
        build_files=("CMakeLists.txt", "gpu/CMakeLists.txt"),
        # gpu/ adds its sources to a library the root creates (a source's LANGUAGE is its folder's: marked where the
        # target is); a C++ file there includes CUDA's runtime through -I in CMAKE_CXX_FLAGS (HIP's needs the
        # platform definition)
        sources=("gpu/rotate.cu", "gpu/device.cpp"),
    ),
    "cmake-thrust-cub": Project(
        kind="cmake",
        executables=("ranks",),
        build_files=("CMakeLists.txt",),
        # Thrust's package target becomes one linking rocThrust; CUB's names and header become hipCUB's
        sources=("src/ranks.cu", "src/block_sums.cu", "src/main.cpp"),
    ),
    "cmake-device-pass-macro": Project(
        kind="cmake",
        executables=("clampdemo",),
        build_files=("CMakeLists.txt",),
        # platform.h's SHARED_CODE is __device__ in nvcc's device pass only: clang reads kernels in its host pass
        # too, so for HIP it becomes __host__ __device__ (main.cpp, compiled by the C++ compiler, still gets nothing)
        sources=("platform.h", "kernels.cu"),
        not_carried=("platform.h",),
    ),
    "cmake-int8-sparse": Project(
        kind="cmake",
        executables=("int8dot",),
        build_files=("CMakeLists.txt",),
        # __dp4a, which HIP lacks, and hipsparseGetErrorString, which hipSPARSE before 3.0 (ROCm 6.0) lacks, get
        # definitions of their own (in the header for the error string, used by a macro there); __ffsll(uint64_t),
        # ambiguous in HIP, gets the type CUDA declares; shuffles with a ballot for their mask lose it before ROCm 6.2
        sources=("src/checks.h", "src/dots.cu", "src/sparse.cu", "src/main.cu"),
    ),
    "cmake-samples": Project(
        kind="cmake",
        executables=("Samples/vectorAdd/vectorAdd", "Samples/mergeHost/mergeHost", "Samples/randomFill/randomFill",
                     "Samples/moduleBuild/moduleBuild"),
        build_files=("CMakeLists.txt", "Samples/vectorAdd/CMakeLists.txt", "Samples/mergeHost/CMakeLists.txt",
                     "Samples/randomFill/CMakeLists.txt", "Samples/moduleBuild/CMakeLists.txt"),
        sources=("Common/helper_cuda.h", "Samples/vectorAdd/vectorAdd.cu", "Samples/mergeHost/scale.cu",
                 "Samples/mergeHost/main.cpp", "Samples/randomFill/randomFill.cu"),
        device_code=("Samples/vectorAdd/vectorAdd", "Samples/mergeHost/mergeHost",  # randomFill: cuRAND's host API
                     "Samples/moduleBuild/scale_kernel.fatbin"),
    ),
    "make-suite": Project(
        kind="make",
        executables=("scan/scan", "stencil/stencil"),
        build_files=("config.mk",),
        sources=(
            "common/bench.h",
            "scan/main.cu",
            "scan/scan_kernel.cu",
            "stencil/main.cu",
            "stencil/stencil.cu",
        ),
        cuda_make_args=("CUDA_PATH={cuda}",),
    ),
    "make-vpath": Project(
        kind="make",
        executables=("netlite",),
        build_files=("Makefile",),
        # found through VPATH (src/, examples/) from objects named $(OBJDIR)x.o; C files gcc compiles with CUDA's
        # headers, a header found through -Iinclude/
        # src/cuda.h is the project's own header: utils.c's #include "cuda.h" stays (hipify renames it)
        sources=("src/layer_kernels.cu", "src/layer.c", "src/utils.c", "examples/netlite.c", "include/netlite.h"),
    ),
    "make-nvtx-ranges": Project(
        kind="make",
        executables=("saxpy", "saxpy-debug"),
        build_files=("Makefile",),
        # NVTX 3 ships with CUDA and not with ROCm: its include becomes definitions that do nothing (or roctx's);
        # saxpy-debug is compiled with -G -lineinfo (-g -O0 for hipcc); the profile and gdb targets run nsys and
        # cuda-gdb (rocprof and rocgdb once ported), the memcheck target compute-sanitizer (left, reported)
        sources=("saxpy.cu", "profile.h"),
    ),
    "make-computed-sources": Project(
        kind="make",
        executables=("solve",),
        build_files=("Makefile",),
        # listed by a $(foreach) of wildcards no static reading expands: make's dry run names them
        sources=("main.cu", "solvers/jacobi/jacobi.cu", "solvers/scale/scale.cu"),
        not_carried=("solvers/jacobi/jacobi.cu",),  # its own atomicMax(float*, float), which HIP defines too
    ),
    "make-generated-options": Project(
        kind="make",
        executables=("sph",),
        build_files=("Makefile",),
        # main.cc, compiled (and first preprocessed for its dependency file) by the host C++ compiler, calls the
        # runtime; options/DamBreak.gen.cc is written at build time and includes the converted headers;
        # vector_math.h's own float3 compound operators are kept for CUDA only
        sources=("src/main.cc", "src/particles.cu", "src/vector_math.h"),
        cuda_make_args=("CUDA_INSTALL_PATH={cuda}",),
        not_carried=("src/vector_math.h",),  # its own float3 operator+=, ambiguous beside HIP's
    ),
    "make-host-runtime": Project(
        kind="make",
        executables=("main/model",),
        build_files=("main/Makefile",),
        # device.c comes from ../device/device.o by an old suffix rule (.c.o:), and its CUDA header
        # device_runtime.h through <...> and -I../device; cc compiles both, and links the HIP runtime by name
        # device.h, read by cc and hipcc, keeps an opaque struct cudaGraphicsResource pointer
        sources=("device/device.c", "device/device_runtime.h", "device/device_kernels.cu", "device/device.h"),
        cuda_make_args=("OTHER_INCLUDES=-I{cuda}/include", "TEST_LDFLAGS=-L{cuda}/lib64"),
        make_dir="main",
    ),
    "make-device-link": Project(
        kind="make",
        executables=("model", "model_from_lib"),
        build_files=("Makefile",),
        # nvcc -dlink makes model_devlink.o of the -dc objects' device code (a kernel of step.cu calls a device
        # function of physics.cu), which cc links with them: the port's step makes the same object for cc;
        # model_from_lib: the objects archived by nvcc -lib (hipcc --emit-static-lib), device-linked from it
        sources=("step.cu",),
        cuda_make_args=("TEST_LDFLAGS=-L{cuda}/lib64",),
    ),
    "mixed-library": Project(
        kind="cmake",
        executables=("test_randstats",),
        build_files=("CMakeLists.txt",),
        sources=(
            "include/randstats/randstats.h",
            "src/launch.h",
            "src/generate.cu",
            "src/summary.cpp",
            "src/pinned.c",  # C: hipHostMalloc gets the flags argument only C++ defaults
            "tests/test_randstats.cpp",
        ),
        ctest=True,
    ),
}

PROJECT_NAMES = sorted(p.name for p in PROJECTS_DIR.iterdir() if p.is_dir())


def test_every_migrate_project_has_expectations() -> None:
    assert PROJECT_NAMES == sorted(PROJECTS)


def test_fixtures_have_the_shapes_the_migration_tests_rely_on() -> None:
    """Guards the fixtures: each keeps the layout feature its migration is meant to exercise."""
    subdirs = PROJECTS_DIR / "cmake-subdirs"
    top = (subdirs / "CMakeLists.txt").read_text()
    assert "add_subdirectory(lib)" in top and "add_subdirectory(app)" in top
    assert "function(add_gpu_library" in (subdirs / "cmake" / "gpu.cmake").read_text()
    assert "add_gpu_library(" in (subdirs / "lib" / "CMakeLists.txt").read_text()
    assert '#include "vecops/vecops.cuh"' in (subdirs / "app" / "main.cu").read_text()
    build_text = "".join(
        p.read_text() for p in subdirs.rglob("*") if p.name == "CMakeLists.txt" or p.suffix == ".cmake"
    )
    assert "old_kernel" not in build_text and "unused" not in build_text
    assert "cuda" in (subdirs / "unused" / "old_kernel.cu").read_text()

    samples = PROJECTS_DIR / "cmake-samples"
    sample = {name: (samples / "Samples" / name / "CMakeLists.txt").read_text()
              for name in ("vectorAdd", "mergeHost", "randomFill", "moduleBuild")}
    assert all("find_package(CUDAToolkit REQUIRED)" in text for text in sample.values())  # separate projects
    assert "CUDA::curand" in sample["randomFill"] and "curand" not in sample["vectorAdd"]
    assert "${CUDAToolkit_INCLUDE_DIRS}" in sample["mergeHost"] and (samples / "Samples/mergeHost/main.cpp").exists()
    assert "COMMAND ${CMAKE_CUDA_COMPILER}" in sample["moduleBuild"] and "-fatbin" in sample["moduleBuild"]
    assert "#ifdef __CUDA_RUNTIME_H__" in (samples / "Common" / "helper_cuda.h").read_text()

    suite = PROJECTS_DIR / "make-suite"
    config = (suite / "config.mk").read_text()
    assert "CUDA_PATH ?=" in config and "$(CUDA_PATH)/bin/nvcc" in config
    assert "-gencode" in config and "-I../common" in config
    scan, stencil = (suite / "scan" / "Makefile").read_text(), (suite / "stencil" / "Makefile").read_text()
    assert "include ../config.mk" in scan and "include ../config.mk" in stencil
    assert "$(wildcard *.cu)" in scan and "SRCS := stencil.cu main.cu" in stencil

    computed = (PROJECTS_DIR / "make-computed-sources" / "Makefile").read_text()
    assert "$(foreach s,$(SOLVERS),$(wildcard solvers/$(s)/*.cu))" in computed and "jacobi.cu" not in computed

    header = (PROJECTS_DIR / "cmake-cpu-gpu-header" / "compare.h").read_text()
    assert "#ifdef COMPARE_GPU\n#include <cuda_runtime.h>" in header and "__global__" in header
    assert '#include "compare.h"' in (PROJECTS_DIR / "cmake-cpu-gpu-header" / "tool.cpp").read_text()

    computed_cmake = (PROJECTS_DIR / "cmake-computed-sources" / "CMakeLists.txt").read_text()
    assert "foreach(solver IN LISTS SOLVERS)" in computed_cmake and "jacobi" not in computed_cmake.split("SOLVERS ")[0]
    assert "kernels/${solver}_kernel.cu" in computed_cmake

    thrust = (PROJECTS_DIR / "cmake-thrust-cub" / "CMakeLists.txt").read_text()
    assert "find_package(Thrust REQUIRED CONFIG)" in thrust and "thrust_create_target(Thrust)" in thrust
    assert "#include <cub/cub.cuh>" in (PROJECTS_DIR / "cmake-thrust-cub" / "src" / "block_sums.cu").read_text()

    generated = PROJECTS_DIR / "make-generated-options"
    makefile = (generated / "Makefile").read_text()
    assert "-MG -MM -MT" in makefile and "$(OPTSDIR)/%.gen.cc: $(SRCDIR)/problem.tpl" in makefile
    assert "-lcudart" in makefile and "-I $(CUDA_INCLUDE_PATH)" in makefile
    assert "void operator+=(float3 &a, const float3 &b)" in (generated / "src" / "vector_math.h").read_text()

    host = PROJECTS_DIR / "make-host-runtime"
    makefile = (host / "main" / "Makefile").read_text()
    assert ".c.o:" in makefile and "model: COMP_FLAGS = ${TEST_CC}" in makefile and "-lcudart" in makefile
    assert "%.o: %.c\n" not in makefile and "device.c" not in makefile  # found through its object only
    assert "#include <device_runtime.h>" in (host / "device" / "device.c").read_text()

    nvtx = (PROJECTS_DIR / "make-nvtx-ranges" / "Makefile").read_text()
    assert "all: saxpy saxpy-debug" in nvtx and "saxpy-debug: NVCCFLAGS += -G -lineinfo" in nvtx
    assert "\tnsys profile --stats=true" in nvtx and "\tcuda-gdb " in nvtx and "\tcompute-sanitizer " in nvtx

    mixed = PROJECTS_DIR / "mixed-library"
    assert "#include <cuda_runtime.h>" in (mixed / "include" / "randstats" / "randstats.h").read_text()
    assert '#include "launch.h"' in (mixed / "src" / "summary.cpp").read_text()
    assert "curandGenerateUniform" in (mixed / "src" / "generate.cu").read_text()
    assert "add_test(" in (mixed / "CMakeLists.txt").read_text()
    assert "cudaMallocHost((void **)&buffer, n * sizeof(float))" in (mixed / "src" / "pinned.c").read_text()


# --- helpers --------------------------------------------------------------------------------------


def _copy_project(name: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    project = dest / name
    shutil.copytree(PROJECTS_DIR / name, project, symlinks=True)
    return project


def _jobs() -> str:
    return f"-j{os.cpu_count() or 2}"


def _migrate_env(tools: Tools) -> dict[str, str]:
    """The environment `migrate` runs in: hipify-perl reachable through PATH, as on a user's machine."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    on_path = shutil.which("hipify-perl", path=env.get("PATH", ""))
    if on_path is None or Path(on_path).resolve() != tools.hipify_perl.resolve():
        env["PATH"] = os.pathsep.join(filter(None, [str(tools.hipify_perl.parent), env.get("PATH")]))
    return env


def _migrate(workbench: Workbench, *args: str | os.PathLike[str]) -> str:
    """Run `buildport migrate ARGS` with the default GPU targets; fail the test unless it exits 0.

    The defaults (gfx90a, gfx942) are narrowed by each migrated build to those its compiler knows: with
    ROCm 5.2's clang, gfx90a alone, which the built programs must carry.
    """
    __tracebackhide__ = True
    result = workbench.run(
        "migrate",
        [sys.executable, "-m", "buildport", "migrate", *args],
        cwd=REPO_ROOT,
        env=_migrate_env(workbench.tools),
        timeout=MIGRATE_TIMEOUT,
    )
    return result.stdout


def _assert_unchanged(before: dict[str, Any], root: Path, what: str) -> None:
    __tracebackhide__ = True
    differences = tree_differences(before, snapshot_tree(root))
    assert not differences, f"{what} changed:\n" + "\n".join(differences)


def _run_programs(
    workbench: Workbench, base: Path, executables: tuple[str, ...], env: dict[str, str]
) -> None:
    """Each program must start and exit 0: it reports that there is no GPU, or runs on the one there is."""
    __tracebackhide__ = True
    for rel in executables:
        exe = base / rel
        assert exe.is_file() and exe.stat().st_mode & 0o111, f"{rel} was not built"
        result = workbench.run(f"run-{exe.name}", [exe], cwd=exe.parent, env=env, timeout=120)
        assert result.stdout.strip(), f"{rel} printed nothing"


def _assert_offload_arch(base: Path, executables: tuple[str, ...]) -> None:
    for rel in executables:
        data = (base / rel).read_bytes()
        assert f"amdgcn-amd-amdhsa--{OFFLOAD_ARCH}".encode() in data, f"{rel} carries no {OFFLOAD_ARCH} code"


# --- builds ---------------------------------------------------------------------------------------


def _build_original(workbench: Workbench, project: Project, root: Path, build: Path) -> None:
    """Build the unported project with nvcc and run its programs."""
    __tracebackhide__ = True
    if project.kind == "cmake":
        workbench.cmake_cuda(root, build)
        _run_programs(workbench, build, project.executables, workbench.cuda_env)
        return
    make = make_program()
    values = {"cuda": str(cuda_root(workbench.tools))}
    args = [arg.format(**values) for arg in project.cuda_make_args]
    env = workbench.cuda_env
    folder = root / project.make_dir
    commands = workbench.run("cuda-make-dry-run", [make, "-n", "-B", *args], cwd=folder, env=env).stdout
    assert "nvcc" in commands, "the original project does not build with nvcc"
    workbench.run("cuda-make", [make, _jobs(), *args], cwd=folder, env=env, timeout=BUILD_TIMEOUT)
    _run_programs(workbench, root, project.executables, env)


def _build_port(workbench: Workbench, project: Project, root: Path, scratch: Path,
                runtime: dict[str, str] | None = None) -> None:
    """Build the migrated tree with Debian's ROCm, check its device code, run its programs. ``runtime``: the
    variables that choose the HIP build of a dual tree (a CMake definition, a make argument)."""
    __tracebackhide__ = True
    if project.kind == "cmake":
        build = scratch / "build-rocm"
        workbench.cmake_rocm(root, build, runtime)
        files = build / "CMakeFiles"
        assert not list(files.rglob("CMakeCUDACompiler.cmake")), "the port still enables CUDA"
        assert list(files.rglob("CMakeHIPCompiler.cmake")), "the port does not enable HIP"
        _assert_offload_arch(build, project.with_device_code)
        _run_programs(workbench, build, project.executables, workbench.rocm_env)
        if project.ctest:
            ctest = workbench.tools.cmake.parent / "ctest"
            workbench.run("ctest", [ctest, "--output-on-failure"], cwd=build, env=workbench.rocm_env)
        return
    make = make_program()
    trap_dir = scratch / "nvcc-trap"
    record = nvcc_trap(trap_dir)
    env = workbench.rocm_env  # HIP_PLATFORM=amd: nvcc is on PATH
    env["PATH"] = os.pathsep.join([str(trap_dir), env.get("PATH", "")])
    # no ROCM_PATH: the migrated Makefile finds Debian's ROCm (hipcc in /usr/bin) itself
    args = [f"{name}={value}" for name, value in (runtime or {}).items()]
    folder = root / project.make_dir
    commands = workbench.run("rocm-make-dry-run", [make, "-n", "-B", *args], cwd=folder, env=env).stdout
    nvcc_lines = [line for line in commands.splitlines() if "nvcc" in line]
    assert not nvcc_lines, "the migrated build still calls nvcc:\n" + "\n".join(nvcc_lines)
    workbench.run("rocm-make", [make, _jobs(), *args], cwd=folder, env=env, timeout=BUILD_TIMEOUT)
    assert not record.exists(), f"nvcc ran during the migrated build:\n{record.read_text()}"
    _assert_offload_arch(root, project.with_device_code)
    _run_programs(workbench, root, project.executables, workbench.rocm_env)


# --- migration.json, read without assuming its key names ------------------------------------------


def _strings(node: Any) -> Iterator[str]:
    """Every string in a JSON value, dictionary keys included."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _collections(node: Any) -> Iterator[list[Any]]:
    """Every list in a JSON value, and every object's keys, each as a list of entries."""
    if isinstance(node, dict):
        yield list(node.keys())
        for value in node.values():
            yield from _collections(value)
    elif isinstance(node, list):
        yield node
        for item in node:
            yield from _collections(item)


def _relative(text: str, roots: tuple[Path, ...]) -> str:
    """A path from the report as a POSIX path relative to the migrated root, when it is one."""
    text = text.replace("\\", "/")
    if os.path.isabs(text):
        for root in roots:
            try:
                return Path(text).relative_to(root).as_posix()
            except ValueError:
                continue
        return text
    return text.removeprefix("./")


def _mentioned(entry: Any, rel: str, roots: tuple[Path, ...]) -> bool:
    return any(_relative(s, roots) == rel for s in _strings(entry))


def _assert_one_list_names(report: Any, paths: list[str], roots: tuple[Path, ...]) -> None:
    """Some single list (or object keyed by path) in the report names every one of ``paths``."""
    __tracebackhide__ = True
    for collection in _collections(report):
        if all(any(_mentioned(entry, rel, roots) for entry in collection) for rel in paths):
            return
    mentioned = sorted({_relative(s, roots) for s in _strings(report)})
    pytest.fail(
        "migration.json has no list naming every changed file\n"
        f"changed: {paths}\npaths found anywhere in the report: {mentioned}"
    )


def _check_reports(project: Project, source: Path, ported: Path) -> None:
    """MIGRATION.md and migration.json are in the output root and account for what changed."""
    __tracebackhide__ = True
    for name in REPORTS:
        assert (ported / name).is_file(), f"{name} missing from the migrated root"
    markdown = (ported / "MIGRATION.md").read_text()
    assert markdown.strip(), "MIGRATION.md is empty"
    text = (ported / "migration.json").read_text()
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        pytest.fail(f"migration.json is not JSON: {exc}")

    before, after = snapshot_tree(source), snapshot_tree(ported)
    missing = sorted(rel for rel in before if rel not in after)
    assert not missing, f"files of the original are missing from the migrated tree: {missing}"
    changed = sorted(
        rel for rel, entry in after.items()
        if entry[0] == "file" and rel not in REPORTS and before.get(rel) != entry
    )
    expected = sorted(project.build_files + project.sources)
    not_done = [rel for rel in expected if rel not in changed]
    assert not not_done, f"the migration left these files as they were: {not_done}"
    roots = tuple({source, ported, source.resolve(), ported.resolve()})
    _assert_one_list_names(report, changed, roots)

    for rel in project.unreferenced:
        assert before[rel] == after.get(rel), f"{rel} is referenced by no build, yet was changed"
        assert any(rel in s.replace("\\", "/") for s in _strings(report)), (
            f"migration.json does not list {rel} (unreferenced by any build file)"
        )
        assert Path(rel).name in markdown, f"MIGRATION.md does not mention the unreferenced {rel}"


# --- the projects, end to end ---------------------------------------------------------------------


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_migrated_project_builds_with_rocm(name: str, tmp_path: Path, workbench: Workbench) -> None:
    project = PROJECTS[name]

    # 1. The original, with nvcc, in a copy of its own.
    original = _copy_project(name, tmp_path / "cuda")
    _build_original(workbench, project, original, tmp_path / "build-cuda")

    # 2. Migrate a pristine copy into <tmp>/ported; the copy itself must not change.
    source = _copy_project(name, tmp_path / "source")
    before = snapshot_tree(source)
    ported = tmp_path / "ported"
    _migrate(workbench, source, "--out", ported, "--rename-sources", "keep")
    _assert_unchanged(before, source, "the migrated original")
    _check_reports(project, source, ported)
    _check_audit_gate(workbench, project, source, ported)

    # 3. A second migration of the migrated tree (a copy, before any build writes into it) changes nothing.
    again = tmp_path / "again"
    shutil.copytree(ported, again, symlinks=True)
    migrated = snapshot_tree(again)
    _migrate(workbench, again, "--in-place", "--force", "--rename-sources", "keep")
    _assert_unchanged(migrated, again, "a migrated tree migrated again")

    # 4. The migrated tree, with ROCm.
    _build_port(workbench, project, ported, tmp_path)


def _audit(workbench: Workbench, root: Path) -> tuple[int, list[dict[str, Any]]]:
    """`buildport audit --format json ROOT`: its exit code and findings."""
    result = subprocess.run([sys.executable, "-m", "buildport", "audit", "--no-cache", "--format", "json", str(root)],
                            cwd=REPO_ROOT, env=_migrate_env(workbench.tools), capture_output=True, text=True,
                            timeout=MIGRATE_TIMEOUT, check=False)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def _check_audit_gate(workbench: Workbench, project: Project, original: Path, ported: Path) -> None:
    """The audit gate fails on the original (its build files and its sources use CUDA) and, on the port, finds
    nothing buildport fixes: no CUDA left in a source, no build-file finding a rewrite would fix (the files no
    build references stay CUDA, and are reported)."""
    __tracebackhide__ = True
    code, findings = _audit(workbench, original)
    assert code == 1, "the audit gate passes on the unported project"
    left = {f["path"] for f in findings if f["rule"] == "cuda-api-left"}
    assert any(Path(path).resolve() == (original / rel).resolve() for path in left for rel in project.sources), (
        f"no CUDA left reported in the original's sources: {left}")
    code, findings = _audit(workbench, ported)
    unreferenced = {(ported / rel).resolve() for rel in project.unreferenced}  # left as they were, on purpose
    fixable = [f"{f['path']}:{f['line']}: {f['rule']}: {f['message']}" for f in findings
               if (f["fixable"] or f["rule"] in ("cuda-api-left", "hipify-unsupported"))
               and Path(f["path"]).resolve() not in unreferenced]
    assert not fixable, "the audit finds what the migration should have done:\n" + "\n".join(fixable)


def test_sources_only_cmake_evaluates_are_found_by_its_file_api(tmp_path: Path, workbench: Workbench) -> None:
    """CMake, configured with nvcc in a scratch copy, names the kernels a foreach() builds the names of; the
    reports say so. Without it (--no-cmake-configure) the static reading alone misses them."""
    kernels = ["kernels/jacobi_kernel.cu", "kernels/scale_kernel.cu"]
    source = _copy_project("cmake-computed-sources", tmp_path / "source")
    ported = tmp_path / "ported"
    _migrate(workbench, source, "--out", ported)
    found_by = json.loads((ported / "migration.json").read_text())["sources_found_by"]
    assert found_by["added_by_cmake"] == kernels
    [answer] = found_by["cmake_file_api"]
    assert answer["answered"] and answer["lists_file"] == "CMakeLists.txt" and answer["sources"] == 3
    markdown = (ported / "MIGRATION.md").read_text()
    assert "Named by CMake only" in markdown and all(f"- `{k}`" in markdown for k in kernels)
    assert all("hip" in (ported / k).read_text() for k in kernels)

    static = tmp_path / "static"
    _migrate(workbench, source, "--out", static, "--no-cmake-configure")
    found_by = json.loads((static / "migration.json").read_text())["sources_found_by"]
    assert found_by["cmake_file_api"] == [] and found_by["added_by_cmake"] == []
    assert all((static / k).read_text() == (source / k).read_text() for k in kernels)


def test_renamed_sources_build_and_are_reported(tmp_path: Path, workbench: Workbench) -> None:
    """--rename-sources hip: the .hip files build (the module's custom command included), and the reports
    list each one with its old name and hipify's statistics (they were left out of both)."""
    source = _copy_project("cmake-samples", tmp_path / "source")
    ported = tmp_path / "ported"
    _migrate(workbench, source, "--out", ported, "--rename-sources", "hip")
    renamed = ["Samples/mergeHost/scale", "Samples/moduleBuild/scale_kernel", "Samples/randomFill/randomFill",
               "Samples/vectorAdd/vectorAdd"]
    assert all((ported / f"{rel}.hip").is_file() and not (ported / f"{rel}.cu").exists() for rel in renamed)
    changed = {c["path"]: c for c in json.loads((ported / "migration.json").read_text())["changed"]}
    for rel in renamed:
        assert changed[f"{rel}.hip"]["renamed_from"] == f"{rel}.cu", rel
    assert changed["Samples/vectorAdd/vectorAdd.hip"]["hipify"]["converted"] > 0
    assert "`Samples/vectorAdd/vectorAdd.hip` (source), renamed from `Samples/vectorAdd/vectorAdd.cu` — hipify:" in (
        ported / "MIGRATION.md").read_text()
    build = tmp_path / "build-rocm"
    workbench.cmake_rocm(ported, build)
    _assert_offload_arch(build, PROJECTS["cmake-samples"].with_device_code)

def test_profile_debug_and_sanitizer_targets_run_rocms_tools(tmp_path: Path, workbench: Workbench) -> None:
    """The migrated Makefile's debug program compiles with -g -O0 (its build is the default target's, run by
    test_migrated_project_builds_with_rocm); its profile and gdb targets run rocprof and rocgdb as the tools
    table says, and the sanitizer, which has no ROCm equivalent, is left and reported in MIGRATION.md."""
    source = _copy_project("make-nvtx-ranges", tmp_path / "source")
    ported = tmp_path / "ported"
    _migrate(workbench, source, "--out", ported, "--rename-sources", "keep")
    env = workbench.rocm_env
    make = make_program()
    debug = workbench.run("rocm-make-debug", [make, "-n", "-B", "saxpy-debug"], cwd=ported, env=env).stdout
    assert " -g -O0" in debug and " -G" not in debug and "-lineinfo" not in debug and "-gline-tables-only" not in debug
    targets = workbench.run("rocm-make-tools", [make, "-n", "profile", "gdb", "memcheck"], cwd=ported, env=env).stdout
    lines = [line for line in targets.splitlines() if "saxpy" in line and "hipcc" not in line]
    assert lines == ["rocprof --stats --hip-trace -o saxpy-report.csv ./saxpy", "rocgdb --args ./saxpy-debug",
                     "compute-sanitizer --tool memcheck ./saxpy-debug"]
    report = (ported / "MIGRATION.md").read_text()
    assert "gpu-tool-unported" in report and "AddressSanitizer" in report


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_dual_build_builds_with_nvcc_and_with_rocm(name: str, tmp_path: Path, workbench: Workbench) -> None:
    """--keep-cuda: every source byte for byte the original's, only build files changed and the compatibility
    folder added; the tree builds with nvcc with GPU_RUNTIME left at its default and with ROCm with
    GPU_RUNTIME=HIP (nvcc a failing fake there); a second run changes nothing."""
    project = PROJECTS[name]
    source = _copy_project(name, tmp_path / "source")
    before = snapshot_tree(source)
    dual = tmp_path / "dual"
    # CMake is asked (a configure with nvcc) where only it names sources: the build test asks it of every project
    asked = () if project.configure_names_sources or project.kind != "cmake" else ("--no-cmake-configure",)
    _migrate(workbench, source, "--out", dual, "--keep-cuda", *asked)
    _assert_unchanged(before, source, "the migrated original")
    after = snapshot_tree(dual)
    changed = sorted(rel for rel, entry in before.items() if after.get(rel) != entry)
    added = sorted(rel for rel in after if rel not in before)
    assert not [rel for rel in changed if rel not in project.build_files and not rel.endswith(("CMakeLists.txt",
                                                                                                ".cmake"))], changed
    assert all(rel in changed for rel in project.build_files), f"build files left as they were: {changed}"
    assert all(rel in (*REPORTS, "hip-compat") or rel.startswith("hip-compat/") for rel in added), added
    assert "hip-compat/cuda_to_hip.h" in added
    report = json.loads((dual / "migration.json").read_text())
    assert report["keep_cuda"]["switch"] == "GPU_RUNTIME" and not [c for c in report["changed"] if c["kind"] == "source"]
    assert "GPU_RUNTIME=HIP" in (dual / "MIGRATION.md").read_text()
    named = sorted({r["path"] for r in report["remaining"] if r["rule"] == "dual-source-not-carried"})
    assert named == sorted(project.not_carried), named
    assert not [r for r in report["remaining"] if r["rule"] in ("dual-branch-unported", "hipify-unsupported")]
    # the audit reads the dual tree as its HIP build does: no CUDA left that the folder does not map
    _, findings = _audit(workbench, dual)
    unreferenced = {(dual / rel).resolve() for rel in project.unreferenced}
    left = [f"{f['path']}:{f['line']}: {f['rule']}" for f in findings
            if f["rule"] in ("cuda-api-left", "hipify-unsupported") and Path(f["path"]).resolve() not in unreferenced
            or f["fixable"] and f["kind"] != "source"]
    assert not left, left

    for_cuda, for_hip, again = (tmp_path / n for n in ("dual-cuda", "dual-hip", "dual-again"))
    for copy in (for_cuda, for_hip, again):
        shutil.copytree(dual, copy, symlinks=True)
    _build_original(workbench, project, for_cuda, tmp_path / "build-cuda")
    if project.not_carried:
        # the report is true: the HIP build stops at a compile error in the project's own code (a person
        # changes what the report names there for HIP), not at the build files or the compatibility folder
        with pytest.raises(CommandFailed) as failed:
            _build_port(workbench, project, for_hip, tmp_path, {"GPU_RUNTIME": "HIP"})
        log = re.search(r"\(full log: (.+)\)", str(failed.value))
        output = Path(log.group(1)).read_text() if log else str(failed.value)
        first = re.search(r"^(\S+?):\d+:\d+: error: ", output, re.M)
        assert first is not None, str(failed.value)[-2000:]
        where = (for_hip / project.make_dir / first.group(1)).resolve()  # make's are relative to its folder
        assert for_hip.resolve() in where.parents and "hip-compat" not in where.parts, first.group(0)
    else:
        _build_port(workbench, project, for_hip, tmp_path, {"GPU_RUNTIME": "HIP"})

    migrated = snapshot_tree(again)
    _migrate(workbench, again, "--in-place", "--force", "--keep-cuda", *asked)
    _assert_unchanged(migrated, again, "a dual tree migrated again")


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_dry_run_writes_nothing(name: str, tmp_path: Path, tools: Tools) -> None:
    area = tmp_path / "area"
    source = _copy_project(name, area)
    before = snapshot_tree(area)
    env = _migrate_env(tools)
    # the build tools are asked in a scratch copy: once is enough to show it (and each ask is a CMake configure)
    for mode in (["--out", area / "ported"], ["--in-place", "--force", "--no-cmake-configure", "--no-make-dry-run"]):
        result = run_buildport(
            "migrate", source, *mode, "--dry-run", "--offload-arch", OFFLOAD_ARCH, env=env,
            timeout=MIGRATE_TIMEOUT,
        )
        assert result.returncode == 0, (
            f"migrate {' '.join(map(str, mode))} --dry-run: exit code {result.returncode}\n{result.stderr}"
        )
        _assert_unchanged(before, area, f"the tree after `migrate {' '.join(map(str, mode))} --dry-run`")


# --- refusals -------------------------------------------------------------------------------------


def _env_without_hipify(empty: Path) -> dict[str, str]:
    """PATH without any directory holding a hipify engine; ROCM_PATH and HIP_PATH point at nothing."""
    env = dict(os.environ)
    kept = [
        d for d in env.get("PATH", "").split(os.pathsep)
        if d and not any(os.path.lexists(os.path.join(d, engine)) for engine in HIPIFY_ENGINES)
    ]
    env["PATH"] = os.pathsep.join(kept)
    empty.mkdir(parents=True, exist_ok=True)
    env["ROCM_PATH"] = str(empty)
    env["HIP_PATH"] = str(empty)
    env.pop("BUILDPORT_HIPIFY_PERL", None)
    for engine in HIPIFY_ENGINES:
        assert shutil.which(engine, path=env["PATH"]) is None
        fixed = Path("/opt/rocm/bin") / engine
        assert not fixed.exists(), f"{fixed} exists: this test cannot hide the hipify engine on this machine"
    return env


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_missing_hipify_engine_is_refused_before_any_write(name: str, tmp_path: Path) -> None:
    area = tmp_path / "area"
    source = _copy_project(name, area)
    env = _env_without_hipify(tmp_path / "empty-rocm")
    before = snapshot_tree(area)
    for mode in (["--out", area / "ported"], ["--in-place", "--force"]):
        result = run_buildport("migrate", source, *mode, "--offload-arch", OFFLOAD_ARCH, env=env)
        shown = " ".join(map(str, mode))
        assert result.returncode == 2, (
            f"migrate {shown} without hipify: exit code {result.returncode}\n{result.stdout}\n{result.stderr}"
        )
        assert "hipify" in result.stderr.lower(), f"the refusal does not name hipify:\n{result.stderr}"
        assert "Traceback" not in result.stderr, result.stderr
        _assert_unchanged(before, area, f"the tree after `migrate {shown}` without hipify")


_COLLISION_TREES = {
    "cmake": {
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.18)\n"
            "project(pair LANGUAGES CXX CUDA)\n"
            "find_package(CUDAToolkit REQUIRED)\n"
            "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
            "add_executable(pair a.cu a.cpp)\n"
            "target_link_libraries(pair PRIVATE CUDA::cudart)\n"
        ),
    },
    "make": {
        "Makefile": (
            "CUDA_PATH ?= /usr/local/cuda\n"
            "NVCC := $(CUDA_PATH)/bin/nvcc\n"
            "SRCS := a.cu a.cpp\n"
            "\n"
            "pair: $(SRCS)\n"
            "\t$(NVCC) -O2 -arch=sm_80 -o $@ $(SRCS)\n"
        ),
    },
}
_COLLISION_SOURCES = {
    "a.cu": (
        "#include <cuda_runtime.h>\n"
        "__global__ void fill(int* p) { p[threadIdx.x] = threadIdx.x; }\n"
        "int launch_fill() {\n"
        "  int* d = nullptr;\n"
        "  if (cudaMalloc(&d, 32 * sizeof(int)) != cudaSuccess) return 1;\n"
        "  fill<<<1, 32>>>(d);\n"
        "  cudaFree(d);\n"
        "  return 0;\n"
        "}\n"
    ),
    "a.cpp": (
        "#include <cstdio>\n"
        "#include <cuda_runtime.h>\n"
        "int launch_fill();\n"
        "int main() {\n"
        "  int n = 0;\n"
        "  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {\n"
        '    std::printf("no GPU available, skipping the run\\n");\n'
        "    return 0;\n"
        "  }\n"
        "  return launch_fill();\n"
        "}\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(_COLLISION_TREES))
def test_rename_collision_is_refused(kind: str, tmp_path: Path, tools: Tools) -> None:
    """a.cu and a.cpp both in the build: renaming to .hip would give two a.hip; nothing may be written."""
    area = tmp_path / "area"
    source = area / "pair"
    source.mkdir(parents=True)
    for rel, text in {**_COLLISION_TREES[kind], **_COLLISION_SOURCES}.items():
        (source / rel).write_text(text)
    env = _migrate_env(tools)
    before = snapshot_tree(area)
    for mode in (["--out", area / "ported"], ["--in-place", "--force"]):
        shown = " ".join(map(str, mode))
        result = run_buildport(
            "migrate", source, *mode, "--rename-sources", "hip", "--offload-arch", OFFLOAD_ARCH, env=env,
            timeout=MIGRATE_TIMEOUT,
        )
        assert result.returncode == 2, (
            f"migrate {shown} --rename-sources hip: exit code {result.returncode}\n{result.stderr}"
        )
        message = result.stderr
        assert "a.cu" in message and "a.cpp" in message, f"the refusal does not name both files:\n{message}"
        assert re.search(r"collid|collision|clash|conflict", message, re.IGNORECASE), (
            f"the refusal does not say the names collide:\n{message}"
        )
        assert "Traceback" not in message, message
        _assert_unchanged(before, area, f"the tree after a refused `migrate {shown}`")

    # Control: keeping the names, the same tree migrates.
    result = run_buildport(
        "migrate", source, "--out", area / "kept", "--rename-sources", "keep", "--offload-arch", OFFLOAD_ARCH,
        env=env, timeout=MIGRATE_TIMEOUT,
    )
    assert result.returncode == 0, (
        f"migrate --rename-sources keep: exit code {result.returncode}\n{result.stderr}"
    )
    assert (area / "kept" / "a.cu").is_file() and (area / "kept" / "a.cpp").is_file()


def _outside_and_linked_tree(base: Path) -> tuple[Path, Path]:
    """A CMake project whose vendor/ directory and linked.cu are symlinks to files outside it.

    Both links are referenced by the build, and their targets hold CUDA code that hipify would
    change: a migration that followed them would write outside the tree it was given.
    """
    outside = base / "outside"
    (outside / "vendor").mkdir(parents=True)
    (outside / "vendor" / "CMakeLists.txt").write_text(
        "add_library(helper STATIC helper.cu)\n"
        "target_include_directories(helper PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})\n"
        "target_link_libraries(helper PUBLIC CUDA::cudart)\n"
    )
    (outside / "vendor" / "helper.cuh").write_text(
        "#pragma once\n#include <cuda_runtime.h>\ncudaError_t helper_clear(float* d, int n);\n"
    )
    (outside / "vendor" / "helper.cu").write_text(
        '#include "helper.cuh"\n'
        "cudaError_t helper_clear(float* d, int n) { return cudaMemset(d, 0, n * sizeof(float)); }\n"
    )
    (outside / "kernel.cu").write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void twice(float* p, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) p[i] *= 2.0f;\n"
        "}\n"
        "cudaError_t launch_twice(float* p, int n) {\n"
        "  twice<<<(n + 255) / 256, 256>>>(p, n);\n"
        "  return cudaGetLastError();\n"
        "}\n"
    )
    tree = base / "tree"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(linked LANGUAGES CXX CUDA)\n"
        "find_package(CUDAToolkit REQUIRED)\n"
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
        "add_subdirectory(vendor)\n"
        "add_executable(app main.cu linked.cu)\n"
        "target_link_libraries(app PRIVATE helper CUDA::cudart)\n"
    )
    (tree / "main.cu").write_text(
        "#include <cstdio>\n"
        '#include "helper.cuh"\n'
        "cudaError_t launch_twice(float* p, int n);\n"
        "int main() {\n"
        "  int n = 0;\n"
        "  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {\n"
        '    std::printf("no GPU available, skipping the run\\n");\n'
        "    return 0;\n"
        "  }\n"
        "  float* d = nullptr;\n"
        "  cudaMalloc(&d, 256 * sizeof(float));\n"
        "  helper_clear(d, 256);\n"
        "  launch_twice(d, 256);\n"
        "  cudaFree(d);\n"
        "  return 0;\n"
        "}\n"
    )
    (tree / "vendor").symlink_to(outside / "vendor", target_is_directory=True)  # absolute
    (tree / "linked.cu").symlink_to(Path("..") / "outside" / "kernel.cu")  # relative
    return outside, tree


@pytest.mark.parametrize("mode", ["out", "in-place"])
def test_symlinks_out_of_the_tree_are_never_followed(mode: str, tmp_path: Path, tools: Tools) -> None:
    outside, tree = _outside_and_linked_tree(tmp_path)
    outside_before = snapshot_tree(outside)
    tree_before = snapshot_tree(tree)
    outside_contents = {entry[1] for entry in outside_before.values() if entry[0] == "file"}
    ported = tmp_path / "ported"
    args = ["--out", ported] if mode == "out" else ["--in-place", "--force"]

    result = run_buildport(
        "migrate", tree, *args, "--offload-arch", OFFLOAD_ARCH, env=_migrate_env(tools),
        timeout=MIGRATE_TIMEOUT,
    )
    # Refusing (2) or migrating around the links (0) are both acceptable; crashing is not.
    assert result.returncode in (0, 2), f"exit code {result.returncode}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    _assert_unchanged(outside_before, outside, "the directory outside the tree, reached through symlinks")

    result_root = ported if mode == "out" else tree
    after = snapshot_tree(result_root)
    for link in ("vendor", "linked.cu"):
        entry = after.get(link)
        assert entry is None or entry[0] == "link", (
            f"{link} (a symlink out of the tree) became a real {entry[0] if entry else '?'} in the result"
        )
        if mode == "in-place":
            assert entry == tree_before[link], f"the symlink {link} was replaced"
    copied = sorted(
        rel for rel, entry in after.items()
        if entry[0] == "file" and (entry[1] in outside_contents or rel.startswith("vendor/"))
    )
    assert not copied, f"files from outside the tree were copied into the result: {copied}"
    if mode == "out":
        _assert_unchanged(tree_before, tree, "the original tree")
