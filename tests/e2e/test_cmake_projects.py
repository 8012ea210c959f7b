"""End to end: each CUDA CMake project under fixtures/projects builds with nvcc, and builds again
with Debian's ROCm after `buildport cmake` has ported its build files and hipify-perl its sources.

Each project is copied to a temporary directory; build directories sit beside the copy, not in it,
so the port only ever sees the project's own CMake files.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Workbench

pytestmark = pytest.mark.e2e

PROJECTS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
OFFLOAD_ARCH = "gfx90a"


@dataclass(frozen=True)
class Expected:
    """What a successful build of a project leaves in its build directory."""

    executables: tuple[str, ...]
    libraries: tuple[str, ...] = ()


EXPECTED = {
    "cmake-modern-rdc": Expected(executables=("simulate",), libraries=("libparticles.a",)),
    "cmake-legacy-findcuda": Expected(executables=("heat2d",), libraries=("libheat.a",)),
    "cmake-hiprand-hipsparse": Expected(executables=("random_walk", "spmv")),
    "cmake-optional-gpu": Expected(executables=("sumapp",), libraries=("libcore.a", "gpu/libgpusum.a")),
}

PROJECT_NAMES = sorted(p.name for p in PROJECTS_DIR.glob("cmake-*") if p.is_dir())


def test_every_cmake_project_has_expectations() -> None:
    assert PROJECT_NAMES == sorted(EXPECTED)


def _assert_artifacts(build: Path, expected: Expected) -> None:
    for name in expected.executables:
        exe = build / name
        assert exe.is_file(), f"{exe} was not built"
        assert exe.stat().st_mode & 0o111, f"{exe} is not executable"
    for name in expected.libraries:
        assert (build / name).is_file(), f"{build / name} was not built"


def _smoke_run(workbench: Workbench, build: Path, expected: Expected, env: dict[str, str]) -> None:
    """Each program must start and exit 0: it reports that there is no GPU, or runs on the one there is.

    This proves the link is complete and every shared library resolves at run time.
    """
    for name in expected.executables:
        workbench.run(f"run-{name}", [build / name], cwd=build, env=env, timeout=120)


def _assert_no_cuda_left(build: Path) -> None:
    """The ROCm configure must not have touched CUDA: nvcc is on PATH and would be picked up silently."""
    compiler_files = [p.name for p in (build / "CMakeFiles").rglob("CMakeCUDACompiler.cmake")]
    assert not compiler_files, "the ported project still enables the CUDA language"
    assert list((build / "CMakeFiles").rglob("CMakeHIPCompiler.cmake")), "the HIP language is not enabled"
    cache = (build / "CMakeCache.txt").read_text()
    for marker in ("CUDA_TOOLKIT_ROOT_DIR", "CUDAToolkit_", "CMAKE_CUDA_COMPILER"):
        assert marker not in cache, f"the ported project still looks for CUDA ({marker} in CMakeCache.txt)"


def _assert_offload_arch(build: Path, expected: Expected) -> None:
    for name in expected.executables:
        data = (build / name).read_bytes()
        assert f"amdgcn-amd-amdhsa--{OFFLOAD_ARCH}".encode() in data, (
            f"{name} carries no {OFFLOAD_ARCH} device code"
        )


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_cmake_project_builds_before_and_after_porting(
    name: str, tmp_path: Path, workbench: Workbench
) -> None:
    expected = EXPECTED[name]
    project = tmp_path / name
    shutil.copytree(PROJECTS_DIR / name, project)

    # 1. The original, with nvcc.
    cuda_build = tmp_path / "build-cuda"
    workbench.cmake_cuda(project, cuda_build)
    _assert_artifacts(cuda_build, expected)
    _smoke_run(workbench, cuda_build, expected, workbench.cuda_env)

    # 2. Port the build files, then the sources.
    workbench.buildport("cmake", project, "--in-place", "--offload-arch", OFFLOAD_ARCH)
    workbench.hipify(project)

    # 3. The port, with ROCm.
    rocm_build = tmp_path / "build-rocm"
    workbench.cmake_rocm(project, rocm_build)
    _assert_artifacts(rocm_build, expected)
    _assert_no_cuda_left(rocm_build)
    _assert_offload_arch(rocm_build, expected)
    _smoke_run(workbench, rocm_build, expected, workbench.rocm_env)


def test_hip_architectures_stay_overridable(tmp_path: Path, workbench: Workbench) -> None:
    """The ported target list is a default: -DCMAKE_HIP_ARCHITECTURES on the command line wins."""
    name = "cmake-legacy-findcuda"
    project = tmp_path / name
    shutil.copytree(PROJECTS_DIR / name, project)
    workbench.buildport("cmake", project, "--in-place", "--offload-arch", OFFLOAD_ARCH)
    workbench.hipify(project)

    build = tmp_path / "build-rocm"
    workbench.cmake_rocm(project, build, defines={"CMAKE_HIP_ARCHITECTURES": "gfx1030"})
    data = (build / "heat2d").read_bytes()
    assert b"amdgcn-amd-amdhsa--gfx1030" in data
    assert f"amdgcn-amd-amdhsa--{OFFLOAD_ARCH}".encode() not in data


def test_optional_gpu_backend_stays_optional(tmp_path: Path, workbench: Workbench) -> None:
    """-DWITH_GPU=OFF builds the CPU backend alone, before the port (no CUDA) and after it (no HIP): an
    optional CUDA find is an optional HIP find, in the branch it stood in."""
    name = "cmake-optional-gpu"
    project = tmp_path / name
    shutil.copytree(PROJECTS_DIR / name, project)
    off = {"WITH_GPU": "OFF"}
    workbench.cmake_cuda(project, tmp_path / "build-cuda-cpu", defines=off)
    workbench.buildport("cmake", project, "--in-place")
    workbench.hipify(project)
    build = tmp_path / "build-rocm-cpu"
    workbench.cmake_rocm(project, build, defines=off)
    assert not list((build / "CMakeFiles").rglob("CMakeHIPCompiler.cmake")), "HIP enabled with WITH_GPU=OFF"
    assert "hip_DIR" not in (build / "CMakeCache.txt").read_text(), "ROCm looked for with WITH_GPU=OFF"
    out = workbench.run("run-sumapp", [build / "sumapp"], cwd=build, env=workbench.rocm_env).stdout
    assert "cpu backend only" in out


def test_original_sources_really_need_relocatable_device_code(tmp_path: Path, workbench: Workbench) -> None:
    """Guards the rdc fixture: without separable compilation its device link must fail."""
    name = "cmake-modern-rdc"
    project = tmp_path / name
    shutil.copytree(PROJECTS_DIR / name, project)
    cmakelists = project / "CMakeLists.txt"
    text = cmakelists.read_text()
    assert "CUDA_SEPARABLE_COMPILATION ON" in text
    cmakelists.write_text(text.replace("CUDA_SEPARABLE_COMPILATION ON", "CUDA_SEPARABLE_COMPILATION OFF"))
    with pytest.raises(AssertionError, match="cuda-build"):
        workbench.cmake_cuda(project, tmp_path / "build-cuda")


def test_hipify_perl_translates_in_place(tmp_path: Path, workbench: Workbench) -> None:
    """The hipify step rewrites CUDA API names in place and leaves no backups behind."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n")
    (src / "plain.cpp").write_text("int g() { return 1; }\n")
    workbench.hipify(src)
    assert (src / "k.cu").read_text().count("hipFree(p)") == 1
    assert "#include <hip/hip_runtime.h>" in (src / "k.cu").read_text()
    assert (src / "plain.cpp").read_text() == "int g() { return 1; }\n"
    assert not list(src.rglob("*.prehip"))


def test_failed_step_names_itself(tmp_path: Path, workbench: Workbench) -> None:
    with pytest.raises(AssertionError, match="^probe: exit code 1"):
        workbench.run("probe", ["false"], cwd=tmp_path)
    with pytest.raises(AssertionError, match="^nap: timed out after 1 s"):
        workbench.run("nap", ["sleep", "60"], cwd=tmp_path, timeout=1)
