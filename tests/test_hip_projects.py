"""A CMake project that enables HIP itself: the files below its CMakeLists.txt are its own, left as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildport.audit import audit
from buildport.options import Options
from buildport.pipeline.port import port_files

ROOT = """\
cmake_minimum_required(VERSION 3.21)
project(lib LANGUAGES CXX)
option(LIB_BACKEND "CUDA or HIP" CUDA)
if(LIB_BACKEND STREQUAL "HIP")
  enable_language(HIP)
else()
  enable_language(CUDA)
endif()
add_subdirectory(src/cuda)
"""
CUDA_PART = """\
add_library(kernels kernels.cu)
target_link_libraries(kernels PUBLIC CUDA::cudart CUDA::cublas)
set_target_properties(kernels PROPERTIES CUDA_ARCHITECTURES 80)
"""


def tree(tmp_path: Path, root: str) -> tuple[Path, Path]:
    (tmp_path / "src" / "cuda").mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text(root)
    part = tmp_path / "src" / "cuda" / "CMakeLists.txt"
    part.write_text(CUDA_PART)
    return tmp_path / "CMakeLists.txt", part


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_files_of_a_project_that_builds_for_hip_are_left_as_they_are(tmp_path: Path, jobs: int) -> None:
    """stdgpu and faiss pick CUDA or HIP in their root; porting the CUDA backend's folder broke their CUDA build
    and duplicated the HIP one. The port and the audit say the same of it."""
    root, part = tree(tmp_path, ROOT)
    run = port_files([str(root), str(part)], Options(), kind="cmake", jobs=jobs)
    by_path = {o.path: o.result for o in run.outcomes}
    assert by_path[str(root)] is not None and [f.rule for f in by_path[str(root)].findings] == ["cmake-hip-present"]
    kept = by_path[str(part)]
    assert kept is not None and not kept.changed
    assert [(f.rule, f.severity.name) for f in kept.findings] == [("cmake-hip-present", "INFO")]
    assert str(root) in kept.findings[0].message
    audited = {a.path: a for a in audit([str(tmp_path)]).files}
    assert [f.rule for f in audited[str(part)].findings] == ["cmake-hip-present"]
    assert not audited[str(part)].fixable


def test_a_project_that_does_not_enable_hip_has_its_folders_ported(tmp_path: Path) -> None:
    root, part = tree(tmp_path, ROOT.replace("enable_language(HIP)", "message(STATUS hip)"))
    run = port_files([str(root), str(part)], Options(), kind="cmake")
    ported = {o.path: o.result for o in run.outcomes}[str(part)]
    assert ported is not None and ported.changed and "roc::hipblas" in ported.text


def test_migrate_converts_nothing_of_a_project_that_builds_for_hip(tmp_path: Path) -> None:
    """Its CUDA backend's sources are its CUDA build: converting them broke it, and its HIP build exists."""
    from click.testing import CliRunner

    from buildport.cli import main

    root = tmp_path / "lib"
    root.mkdir()
    top, part = tree(root, ROOT)
    kernel = "#include <cuda_runtime.h>\n__global__ void k() {}\nvoid run() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n"
    (part.parent / "kernels.cu").write_text(kernel)
    done = CliRunner().invoke(main, ["migrate", str(root), "--in-place", "--force"])
    assert done.exit_code == 0, done.output
    assert "builds for HIP already (CMakeLists.txt:5 enables the HIP language)" in done.output
    assert (part.parent / "kernels.cu").read_text() == kernel
    assert part.read_text() == CUDA_PART and top.read_text() == ROOT


def test_migrate_of_a_project_that_does_not_enable_hip_converts_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    root = tmp_path / "lib"
    root.mkdir()
    _top, part = tree(root, ROOT.replace("enable_language(HIP)", "message(STATUS hip)"))
    (part.parent / "kernels.cu").write_text("#include <cuda_runtime.h>\nvoid run() { cudaDeviceSynchronize(); }\n")
    done = CliRunner().invoke(main, ["migrate", str(root), "--in-place", "--force"])
    assert done.exit_code == 0, done.output
    assert "hipDeviceSynchronize" in (part.parent / "kernels.cu").read_text()
    assert "roc::hipblas" in part.read_text()
