"""What a dual build (``migrate --keep-cuda``) writes: the switch, its branches, the compatibility folder.

The CUDA branch of every changed statement is the project's own text, byte for byte; the HIP branch is
what a normal port writes. Everything here is text a reader can check against a build file.
"""

from __future__ import annotations

#: The variable that picks the GPU runtime (ROCm's own examples call it so), its values, its default.
RUNTIME_VARIABLE = "GPU_RUNTIME"
RUNTIMES = ("CUDA", "HIP")
DEFAULT_RUNTIME = "CUDA"

#: The folder of headers the HIP build reads first (at the migrated tree's root), and the header in it
#: that maps the CUDA names the project uses to HIP's.
COMPAT_FOLDER = "hip-compat"
MAPPING_HEADER = "cuda_to_hip.h"
#: The header the HIP build includes in every HIP source, as nvcc includes cuda_runtime.h: HIP's runtime, the
#: names, and what needs HIP's declarations (the mapping header alone includes nothing: every C/C++ source of
#: a CMake build gets it first).
RUNTIME_MAPPING = "cuda_to_hip_runtime.h"
#: The first line of every file buildport writes into the folder: a folder without it is the project's.
COMPAT_MARK = "// Written by buildport migrate --keep-cuda"

# --- CMake -------------------------------------------------------------------------------------------

CMAKE_IS_HIP = f'{RUNTIME_VARIABLE} STREQUAL "HIP"'
CMAKE_IF_HIP = f"if({CMAKE_IS_HIP})"
CMAKE_IF_CUDA = f"if(NOT {CMAKE_IS_HIP})"
#: Before the first project(): the cache variable, its choices for cmake-gui, and the check of its value.
CMAKE_SWITCH = (
    f'set({RUNTIME_VARIABLE} "{DEFAULT_RUNTIME}" CACHE STRING "GPU runtime to build for: CUDA or HIP")',
    f"set_property(CACHE {RUNTIME_VARIABLE} PROPERTY STRINGS CUDA HIP)",
    f'if(NOT {RUNTIME_VARIABLE} MATCHES "^(CUDA|HIP)$")',
    f'  message(FATAL_ERROR "{RUNTIME_VARIABLE} must be CUDA or HIP, not \'${{{RUNTIME_VARIABLE}}}\'")',
    "endif()",
)
#: After project(): the compatibility folder first on the include path, its mapping header in every HIP
#: source ({folder}: the folder, relative to the file's directory).
CMAKE_COMPAT = (
    CMAKE_IF_HIP,
    '  include_directories(BEFORE "${{CMAKE_CURRENT_LIST_DIR}}/{folder}")',
    f'  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:SHELL:-include {MAPPING_HEADER}>"',
    f'                      "$<$<COMPILE_LANGUAGE:HIP>:SHELL:-include {RUNTIME_MAPPING}>")',
    "endif()",
)
#: Commands that open, continue and close blocks: a branch must hold whole blocks.
CMAKE_OPENERS = frozenset({"if", "foreach", "while", "function", "macro", "block"})
CMAKE_MIDDLES = frozenset({"elseif", "else"})
CMAKE_CLOSERS = frozenset({"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"})
#: Block commands whose arguments are a condition: the two conditions are joined into one.
CMAKE_CONDITIONS = frozenset({"if", "elseif", "while"})
#: Block commands whose arguments CMake ignores (kept as the project wrote them).
CMAKE_IGNORED_ARGUMENTS = frozenset({"else", "endif", "endforeach", "endwhile", "endfunction", "endmacro",
                                     "endblock"})

# --- GNU make ----------------------------------------------------------------------------------------

MAKE_IF_HIP = f"ifeq ($({RUNTIME_VARIABLE}),HIP)"
MAKE_IF_CUDA = f"ifneq ($({RUNTIME_VARIABLE}),HIP)"
#: At the top of each changed Makefile: the switch (a command-line or environment value wins) and its check.
MAKE_SWITCH = (
    f"{RUNTIME_VARIABLE} ?= {DEFAULT_RUNTIME}",
    f"ifeq ($(filter CUDA HIP,$({RUNTIME_VARIABLE})),)",
    f"$(error {RUNTIME_VARIABLE} must be CUDA or HIP, not '$({RUNTIME_VARIABLE})')",
    "endif",
)
#: After the switch: the compatibility folder on every compiler's include path (CPATH reaches hipcc and
#: the host compilers alike, after their -I folders); {folder}: relative to the Makefile's directory.
MAKE_COMPAT = (
    MAKE_IF_HIP,
    "HIP_COMPAT_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))){folder})",
    "export CPATH := $(HIP_COMPAT_DIR)$(if $(CPATH),:$(CPATH))",
    "endif",
)
MAKE_OPENERS = frozenset({"ifeq", "ifneq", "ifdef", "ifndef"})

# --- the compatibility folder ------------------------------------------------------------------------

#: The macros CUDA's headers define (include guards), by header: the folder's header of that name defines them
#: too, for code that tests them (``#ifdef __CUDA_RUNTIME_H__``). nvcc includes cuda_runtime.h in every CUDA
#: source, so the mapping header, included in every HIP source, defines the runtime's.
HEADER_GUARDS = {
    "cuda_runtime.h": ("__CUDA_RUNTIME_H__", "__CUDA_RUNTIME_API_H__", "__DRIVER_TYPES_H__"),
    "cuda_runtime_api.h": ("__CUDA_RUNTIME_API_H__", "__DRIVER_TYPES_H__"),
    "driver_types.h": ("__DRIVER_TYPES_H__",),
    "cuda.h": ("__cuda_cuda_h__",),
    "cuda_fp16.h": ("__CUDA_FP16_H__",),
    "cuComplex.h": ("CU_COMPLEX_H_",),
    "curand.h": ("CURAND_H_",),
    "cusparse.h": ("CUSPARSE_H_",),
    "cusparse_v2.h": ("CUSPARSE_H_",),
    "cublas_v2.h": ("CUBLAS_V2_H_", "CUBLAS_API_H_"),
    "cublas.h": ("CUBLAS_H_", "CUBLAS_API_H_"),
    "cublas_api.h": ("CUBLAS_API_H_",),
    "cufft.h": ("_CUFFT_H_",),
}
RUNTIME_GUARDS = HEADER_GUARDS["cuda_runtime.h"]
#: HIP's version below which it lacks the warp ``*_sync`` functions (ROCm 6.2), as HIP_VERSION spells it.
WARP_SYNC_HIP_VERSION = 60200000
