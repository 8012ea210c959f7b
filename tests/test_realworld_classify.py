"""The real-project runner's failure classes (benchmarks/realworld/classify.py) on compiler output."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks" / "realworld"))

from classify import COMPILE_RULES, CONFIGURE_RULES, classify  # noqa: E402


def _cause(output: str, converted: bool | None = True) -> str:
    return classify(output, COMPILE_RULES, converted=converted).cause


def test_a_rocm_library_is_a_whole_name() -> None:
    assert _cause("a.hip:1:10: fatal error: 'hipcub/hipcub.hpp' file not found") == "rocm-library"
    assert _cause("/usr/bin/ld: cannot find -lhipblas") == "rocm-library"
    # cub is a ROCm-less library name here, cublas is CUDA's: a CUDA library still linked
    assert _cause("/usr/bin/ld: cannot find -lcublas") == "build"


def test_a_cuda_name_is_an_api_name_not_any_word_starting_with_cu() -> None:
    assert _cause("a.hip:3:5: error: use of undeclared identifier 'cudaStreamAttrValue'") == "source"
    assert _cause("a.hip:3:5: error: unknown type name 'CUdeviceptr'") == "source"
    assert _cause("a.cpp:3:5: error: use of undeclared identifier 'cudaMalloc'", converted=False) == "build"
    # 'cursor' is the project's own name: the compiler refuses the code, no CUDA name is left
    refused = classify("a.hip:3:5: error: use of undeclared identifier 'cursor'", COMPILE_RULES, converted=True)
    assert refused.reason == "code the HIP compiler refuses"


def test_a_missing_rocm_package_at_configure() -> None:
    cmake = 'Could not find a package configuration file provided by "hipblas" with any of\n  hipblasConfig.cmake'
    assert classify(cmake, CONFIGURE_RULES).cause == "rocm-library"
    assert classify("Could NOT find HIPCUB (missing: X)", CONFIGURE_RULES).cause == "rocm-library"


def test_rocrand_header_in_c_is_rocms() -> None:
    output = "/usr/include/rocrand/rocrand.h:59:9: error: unknown type name ‘__half’"
    assert _cause(output, converted=False) == "rocm-library"


def test_thrust_missing_is_rocthrust_not_installed_converted_or_not() -> None:
    """rocThrust installs Thrust's own header names: a file that keeps them was converted right (GPUSPH)."""
    output = "src/cuda/buildneibs.cu:37:10: fatal error: 'thrust/sort.h' file not found"
    assert _cause(output, converted=False) == "rocm-library"
    assert _cause(output, converted=True) == "rocm-library"
    # CUB's names are hipCUB's after hipify: left in a file not converted, the file was not chosen
    assert _cause("a.cu:1:10: fatal error: 'cub/cub.cuh' file not found", converted=False) == "build"


def test_a_target_left_needing_cuda_at_configure_is_the_ports() -> None:
    """StringZilla's port left LINKER_LANGUAGE CUDA: CMake then wants CUDA's architectures for the target."""
    cmake = 'CMake Error in CMakeLists.txt:\n  CUDA_ARCHITECTURES is empty for target "stringzillas_cuda_static".\n'
    assert classify(cmake, CONFIGURE_RULES).cause == "build"


def test_a_missing_target_of_the_projects_own_dependency_is_the_environments() -> None:
    """StringZilla's forkunion submodule of another version defines no forkunion::header (its CUDA
    original stops the same way); a CUDA or ROCm target that nothing defines stays the port's."""
    theirs = ('CMake Error at CMakeLists.txt:563 (target_link_libraries):\n  Target "stringzillas_cpus_objects" '
              "links to:\n\n    forkunion::header\n\n  but the target was not found.  Possible reasons include:\n")
    assert classify(theirs, CONFIGURE_RULES).cause == "environment"
    for ours in ("CUDA::cublas", "hip::hipfoo"):
        assert classify(theirs.replace("forkunion::header", ours), CONFIGURE_RULES).cause == "build"
