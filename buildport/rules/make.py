"""Makefile names: CUDA variables, compilers and what replaces them.

The flag and library tables are shared with CMake (:mod:`buildport.rules.flags`,
:mod:`buildport.rules.libraries`); this table holds what is make-specific.
"""

from __future__ import annotations

import re

from buildport.rules.paths import ROCM_DEFAULT_MAKE

#: Variables that name a CUDA install root; all become ROCM_PATH.
ROOT_VARIABLES: frozenset[str] = frozenset({
    "CUDA_PATH", "CUDA_HOME", "CUDA_DIR", "CUDA_INSTALL_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR",
    "CUDA_TOOLKIT_PATH", "CUDA_TOOLKIT_DIR", "CUDATOOLKIT_HOME", "CUDA_PREFIX", "CUDAROOT", "CUDA_BASE",
    "CUDAPATH", "CUDAHOME", "CUDADIR", "CUDA_INSTALL_DIR",
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

#: Words that start nvcc: its name, a path to it, or where the shell finds it (``$(shell which nvcc 2>/dev/null)``,
#: ``command -v``, ``type -p``: empty where it is not installed, a test the Makefile may then make).
LOCATED_NVCC = r"\$[({]shell\s+(?:which|command\s+-v|type\s+-p)\s+nvcc(?:\s+2>\s*(?:/dev/null|&1|nul))?\s*[)}]"
NVCC_WORD = re.compile(rf"^(?:nvcc|[^\s]*/nvcc|{LOCATED_NVCC})$")
NVCC_LOCATED = re.compile(rf"^{LOCATED_NVCC}$")

#: What a port writes for nvcc found by the shell: hipcc found the same way, empty where it is not installed.
LOCATED_HIPCC = "$(if $(shell command -v $(firstword $(HIPCC)) 2>/dev/null),$(HIPCC))"
#: What a port writes for nvcc: ``$(HIPCC)``, or :data:`LOCATED_HIPCC`. A variable that holds one runs the
#: compiler as the nvcc it held did, in a second run as in the first.
PORTED_NVCC = re.compile(rf"^(?:\$[({{]HIPCC[)}}]|{re.escape(LOCATED_HIPCC)})$")

#: Words that start hipcc: what a ported recipe runs.
HIPCC_WORD = re.compile(rf"^(?:hipcc|[^\s]*/hipcc|\$[({{]HIPCC[)}}]|{re.escape(LOCATED_HIPCC)})$")

#: Host compilers and linkers: a recipe that links with one of these needs libamdhip64 by name.
#: (also the program a variable's value starts with: ``COMPILE = $(MPICC) $(CFLAGS)`` with ``MPICC = mpicc``;
#: MPI's compiler wrappers and the Intel and versioned GNU compilers are host compilers too)
HOST_LINKERS = re.compile(
    r"^(?:\$[({](?:CXX|CC|LD|LINK|LINKER|HOST_COMPILER)[)}]|(?:\S*/)?(?:(?:g\+\+|gcc|clang\+\+|clang)(?:-\d+)?|c\+\+|cc|"
    r"ld|mpicc|mpicxx|mpic\+\+|mpiCC|mpiicc|mpiicpc|mpiicpx|icc|icpc|icx|icpx))$"
)

#: The ROCm root a ported Makefile assigns where it assigned CUDA's.
ROCM_ROOT_LINE = f"ROCM_PATH ?= {ROCM_DEFAULT_MAKE}"

#: What defines the HIP toolchain in a ported Makefile; each line only where the file uses it. ``{arch}``: the
#: targets the user chose; without a choice, HIP_OFFLOAD_ARCH is :data:`buildport.rules.arch.MAKE_KNOWN_TARGETS`.
#: The C++ dialect nvcc compiles by default (rules.cmake.NVCC_DEFAULT_STANDARD, with GNU extensions as g++'s
#: default has them): given to hipcc first, which before ROCm 6 adds -std=c++11 itself (hipcc.pl, ROCm 5.2).
HIPCC_DEFAULT_STANDARD = "-std=gnu++17"
#: What nvcc includes in every .cu file by itself (hipify adds the include only to the files it changes), given to
#: hipcc unless the rule's first prerequisite is a C or C++ file, which nvcc compiles as host code without it (a
#: .cpp that defines its own uchar4 clashed with HIP's, HeCBench boxfilter). Read where hipcc runs (``$<``); a
#: variable that copies HIPCC with := gets it always.
HIPCC_RUNTIME_INCLUDE = "$(if $(filter %.c %.cc %.cpp %.cxx %.C,$<),,-include hip/hip_runtime.h)"

#: nvcc's separate device link (``nvcc -dlink a.o b.o -o dlink.o``, the program then linked by a host compiler
#: with ``dlink.o``): clang links device code only where it links a program (``--hip-link``; hipcc adds
#: ``-lgcc_s``, which a relocatable link cannot take, and with a library ``--cuda-device-only`` links a program
#: too, ROCm 5.2). So the port links one from the same objects, host symbols left unresolved, to
#: ``OUT.hiplink``, and ``hip_device_object`` makes ``OUT`` of its device code: the ``.hip_fatbin`` section
#: under each ``__hip_fatbin`` name clang gave it, defined weak (a link by hipcc with ``--hip-link`` that
#: also lists the object keeps its own).
DEVICE_LINK_FLAGS = "-fgpu-rdc --hip-link -Wl,--unresolved-symbols=ignore-all -Wl,-z,noexecstack"
DEVICE_LINK_SUFFIX = ".hiplink"
DEVICE_OBJECT = (
    f"objcopy -O binary -j .hip_fatbin $(1){DEVICE_LINK_SUFFIX} $(1).hipfb"
    " && { printf '\\t.section .hip_fatbin,\"a\",@progbits\\n\\t.p2align 12\\n'"
    f" && nm -g --defined-only $(1){DEVICE_LINK_SUFFIX}"
    " | sed -n 's/^.* [Rr] \\(__hip_fatbin[A-Za-z0-9_]*\\)$$/\\t.weak \\1\\n\\1:/p'"
    " && printf '\\t.incbin \"%s\"\\n\\t.section .note.GNU-stack,\"\",@progbits\\n' $(1).hipfb; }"
    f" | $(AS) -o $(1) && rm -f $(1){DEVICE_LINK_SUFFIX} $(1).hipfb"
)

PRELUDE: tuple[tuple[str, str], ...] = (
    ("ROCM_PATH", ROCM_ROOT_LINE),
    ("HIPCC", "HIPCC ?= $(ROCM_PATH)/bin/hipcc"),
    ("HIP_OFFLOAD_ARCH", "HIP_OFFLOAD_ARCH ?= {arch}"),
    ("HIP_ARCH_FLAGS", "HIP_ARCH_FLAGS = $(addprefix --offload-arch=,$(HIP_OFFLOAD_ARCH))"),
    ("HIP_DEVICE_LINK", f"HIP_DEVICE_LINK = {DEVICE_LINK_FLAGS}"),
    ("hip_device_object", f"hip_device_object = {DEVICE_OBJECT}"),
)

#: Words (any case) of lines that detect NVIDIA platforms or find CUDA libraries: kept, and reported.
PLATFORM_WORDS: tuple[str, ...] = (
    "findcudalib.mk", "TARGET_ARCH", "TARGET_OS", "aarch64", "armv7l", "ppc64le", "sbsa", "QNX", "tegra",
)  # fmt: skip
PLATFORM_HINTS = re.compile("|".join(re.escape(w) for w in PLATFORM_WORDS), re.I)
