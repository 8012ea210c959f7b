"""Makefile names: CUDA variables, compilers and what replaces them.

The flag and library tables are shared with CMake (:mod:`buildport.rules.flags`,
:mod:`buildport.rules.libraries`); this table holds what is make-specific.
"""

from __future__ import annotations

import re

from buildport.rules.paths import ROCM_DEFAULT

#: Variables that name a CUDA install root; all become ROCM_PATH.
ROOT_VARIABLES: frozenset[str] = frozenset({
    "CUDA_PATH", "CUDA_HOME", "CUDA_DIR", "CUDA_INSTALL_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR",
    "CUDA_TOOLKIT_PATH", "CUDA_TOOLKIT_DIR", "CUDATOOLKIT_HOME", "CUDA_PREFIX", "CUDAROOT", "CUDA_BASE",
})

#: Variables that name CUDA's library or include directory → the ROCm path they become.
DIR_VARIABLES: dict[str, str] = {
    "CUDA_LIB_DIR": "$(ROCM_PATH)/lib",
    "CUDA_LIB_PATH": "$(ROCM_PATH)/lib",
    "CUDA_LIBDIR": "$(ROCM_PATH)/lib",
    "CUDA_INC_DIR": "$(ROCM_PATH)/include",
    "CUDA_INC_PATH": "$(ROCM_PATH)/include",
    "CUDA_INCLUDE_DIR": "$(ROCM_PATH)/include",
    "CUDA_INCDIR": "$(ROCM_PATH)/include",
    "CUDA_BIN_PATH": "$(ROCM_PATH)/bin",
}

#: Variables that conventionally hold nvcc flags, besides any upper-case name with NVCC in it.
FLAG_VARIABLES: tuple[str, ...] = (
    "NVCC_FLAGS", "NVCCFLAGS", "NVCC_OPTS", "NVCCOPTS", "NVOPTS", "NV_FLAGS", "NVFLAGS", "CUDA_FLAGS",
    "CUDAFLAGS", "CU_FLAGS", "CUFLAGS", "CUDA_NVCC_FLAGS", "GENCODE", "GENCODE_FLAGS", "ARCH_FLAGS",
    "CUDA_ARCH_FLAGS", "GPU_ARCH_FLAGS", "ALL_CCFLAGS", "NVCC_ARCH", "CUDA_ARCH", "SM_FLAGS",
)  # fmt: skip
FLAG_VARIABLE_INFIX = "NVCC"
FLAG_VARIABLE = re.compile(rf"^(?:{'|'.join(FLAG_VARIABLES)}|[A-Z_]*{FLAG_VARIABLE_INFIX}[A-Z_]*)$")

#: Words that start nvcc.
NVCC_WORD = re.compile(r"^(?:nvcc|[^\s]*/nvcc)$")

#: Words that start hipcc: what a ported recipe runs.
HIPCC_WORD = re.compile(r"^(?:hipcc|[^\s]*/hipcc|\$[({]HIPCC[)}])$")

#: Host compilers and linkers: a recipe that links with one of these needs libamdhip64 by name.
HOST_LINKERS = re.compile(r"^(?:\$[({](?:CXX|CC|LD|LINK|LINKER|HOST_COMPILER)[)}]|g\+\+|gcc|c\+\+|cc|clang\+\+|clang|ld)$")

#: What defines the HIP toolchain in a ported Makefile; each line only where the file uses it.
PRELUDE: tuple[tuple[str, str], ...] = (
    ("ROCM_PATH", f"ROCM_PATH ?= {ROCM_DEFAULT}"),
    ("HIPCC", "HIPCC ?= $(ROCM_PATH)/bin/hipcc"),
    ("HIP_OFFLOAD_ARCH", "HIP_OFFLOAD_ARCH ?= {arch}"),
    ("HIP_ARCH_FLAGS", "HIP_ARCH_FLAGS = $(addprefix --offload-arch=,$(HIP_OFFLOAD_ARCH))"),
)

#: Words (any case) of lines that detect NVIDIA platforms or find CUDA libraries: kept, and reported.
PLATFORM_WORDS: tuple[str, ...] = (
    "findcudalib.mk", "TARGET_ARCH", "TARGET_OS", "aarch64", "armv7l", "ppc64le", "sbsa", "QNX", "tegra",
)  # fmt: skip
PLATFORM_HINTS = re.compile("|".join(re.escape(w) for w in PLATFORM_WORDS), re.I)
