"""A reproducible tree of CUDA build files: CMake projects and GNU Makefiles.

``write_tree(root, n, seed)`` writes ``n`` CMake files and ``n`` Makefiles; the
same ``(n, seed)`` always gives the same bytes. The files mix what real CUDA
projects contain: languages and architectures, CUDA libraries, generator
expressions, nested conditions, comments, bracket arguments, CRLF endings;
Makefiles with nvcc variables, pattern rules, conditionals and ``define``.
"""

from __future__ import annotations

import random
from pathlib import Path

_LIBS = ["CUDA::cudart", "CUDA::cublas", "CUDA::cufft", "CUDA::curand", "CUDA::cusparse", "CUDA::nvToolsExt"]
_ARCHS = ["52", "60", "70", "75", "80", "86", "90"]
_FLAGS = ["--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr", "-Xcompiler=-fPIC", "--extended-lambda"]


def _name(rng: random.Random) -> str:
    return rng.choice(["kernel", "solver", "fft", "reduce", "scan", "gemm", "stencil"]) + str(rng.randrange(100))


def _cmake_target(rng: random.Random) -> str:
    name = _name(rng)
    sources = " ".join(f"src/{_name(rng)}.{rng.choice(['cu', 'cu', 'cpp', 'cuh'])}" for _ in range(rng.randrange(1, 7)))
    archs = ";".join(rng.sample(_ARCHS, rng.randrange(1, 4)))
    libs = " ".join(rng.sample(_LIBS, rng.randrange(1, 4)))
    flag = rng.choice(_FLAGS)
    return (
        f"# --- target {name} ---\n"
        f"add_{rng.choice(['library', 'executable'])}({name} {sources})\n"
        f"set_target_properties({name} PROPERTIES\n    CUDA_ARCHITECTURES \"{archs}\"\n"
        f"    CUDA_SEPARABLE_COMPILATION {rng.choice(['ON', 'OFF'])})\n"
        f"target_compile_options({name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:{flag}>)\n"
        f"target_link_libraries({name} PUBLIC {libs})  # CUDA libraries\n"
        f"if((CMAKE_BUILD_TYPE STREQUAL \"Debug\") AND NOT (WIN32 OR APPLE))\n"
        f"  target_compile_definitions({name} PRIVATE DEBUG_{name.upper()}=1 -DX=\"a b\")\n"
        f"endif()\n"
    )


def cmake_file(rng: random.Random) -> str:
    """One CMakeLists.txt-like file."""
    parts = [
        f"cmake_minimum_required(VERSION 3.{rng.randrange(10, 28)})\n",
        f"project({_name(rng)} LANGUAGES CXX CUDA)\n\n",
        "find_package(CUDAToolkit REQUIRED)\n",
        "set(CMAKE_CUDA_STANDARD 17)\nset(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} -Xcompiler -Wall\")\n",
        "#[[ Options are read from the cache;\n    see the README. ]]\n",
        f"option(USE_{_name(rng).upper()} \"Build it\" ON)\n",
    ]
    for _ in range(rng.randrange(2, 12)):
        parts.append(_cmake_target(rng))
    if rng.random() < 0.3:
        parts.append("function(add_cuda_test name)\n  add_executable(${name} ${ARGN})\n"
                     "  add_test(NAME ${name} COMMAND $<TARGET_FILE:${name}>)\nendfunction()\n")
    if rng.random() < 0.2:
        parts.append("set(MESSAGE [==[ a [[bracket]] argument ]==])\n")
    text = "".join(parts)
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def make_file(rng: random.Random) -> str:
    """One Makefile-like file."""
    objs = " ".join(f"{_name(rng)}.o" for _ in range(rng.randrange(2, 9)))
    arch = rng.choice(_ARCHS)
    parts = [
        "# Build with nvcc\n",
        "CUDA_PATH ?= /usr/local/cuda\nNVCC := $(CUDA_PATH)/bin/nvcc\n",
        f"NVCCFLAGS += -O3 -arch=sm_{arch} {rng.choice(_FLAGS)} \\\n    -gencode arch=compute_{arch},code=sm_{arch}\n",
        "LDFLAGS := -L$(CUDA_PATH)/lib64 -lcudart -lcublas\n",
        f"OBJS = {objs}\n\n",
        "ifeq ($(DEBUG),1)\n  NVCCFLAGS += -G -g\nelse\n  NVCCFLAGS += -lineinfo\nendif\n\n",
        "all: app\n\napp: $(OBJS)\n\t$(NVCC) $(NVCCFLAGS) -o $@ $^ $(LDFLAGS)\n\n",
        "%.o: %.cu\n\t$(NVCC) $(NVCCFLAGS) -c $< -o $@\n\n",
    ]
    if rng.random() < 0.3:
        parts.append("define run_test\n\t./$(1) --size $(2)\nendef\n\n")
    parts.append(".PHONY: clean\nclean:\n\trm -f app $(OBJS)\n")
    return "".join(parts)


def write_tree(root: Path, count: int, seed: int) -> None:
    """Write ``count`` CMake files and ``count`` Makefiles under ``root``."""
    rng = random.Random(seed)
    for i in range(count):
        folder = root / f"project{i // 10}" / f"part{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        name = "CMakeLists.txt" if rng.random() < 0.7 else f"{_name(rng)}.cmake"
        (folder / name).write_bytes(cmake_file(rng).encode())
        (folder / "Makefile").write_bytes(make_file(rng).encode())
