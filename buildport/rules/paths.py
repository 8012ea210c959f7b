"""CUDA install locations and the ROCm ones that replace them.

ROCm installs under ``/opt/rocm`` by default; ``ROCM_PATH`` (and ``HIP_PATH`` for
the HIP part) name another root. The default is used only when nothing is set.
"""

from __future__ import annotations

import re

ROCM_DEFAULT = "/opt/rocm"

#: A Makefile's ROCm root when ROCM_PATH is not set: /opt/rocm where it exists, else the root of the hipcc on
#: PATH (Debian's and Ubuntu's packages put it in /usr/bin, and have no /opt/rocm), else /opt/rocm. Plain make
#: functions, no shell: the variable is expanded wherever it is used.
ROCM_DEFAULT_MAKE = (
    f"$(or $(wildcard {ROCM_DEFAULT}),$(patsubst %/bin/hipcc,%,"
    f"$(firstword $(filter %/bin/hipcc,$(wildcard $(addsuffix /hipcc,$(subst :, ,$(PATH))))))),{ROCM_DEFAULT})"
)

#: Environment variables that name a CUDA root.
CUDA_ENV_VARS: tuple[str, ...] = (
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDA_DIR", "CUDA_INSTALL_PATH",
    "CUDAToolkit_ROOT", "CUDA_BIN_PATH",
)

#: A literal CUDA install root: /usr/local/cuda, /usr/local/cuda-12.4, /opt/cuda.
CUDA_ROOT_LITERAL = re.compile(
    # "/" first, then what may stand before it: re then skips to each "/" instead of looking behind everywhere
    r"/(?:(?<=-[LIR]/)|(?<=-rpath,/)|(?<![\w./-]/))(?:usr/local/cuda(?:-\d+(?:\.\d+)*)?|opt/cuda)"
    # only the root itself and the parts ROCm has too; /usr/local/cuda/samples stays, to be reported
    r"(?=$|/include\b|/lib64\b|/lib\b|/bin\b|/targets/|[\s\"';:,)}])"
)

#: The platforms a CUDA toolkit keeps under ``targets/`` (``targets/sbsa-linux/lib`` on Arm servers): ROCm has one
#: ``include`` and one ``lib`` for its platform.
CUDA_TARGET_PLATFORMS = ("x86_64-linux", "sbsa-linux", "aarch64-linux", "ppc64le-linux")

#: Sub-paths under a CUDA root → under a ROCm root.
SUBPATHS: dict[str, str] = {
    "/lib64": "/lib",
    "/lib/x64": "/lib",
    **{f"/targets/{platform}/lib": "/lib" for platform in CUDA_TARGET_PLATFORMS},
    **{f"/targets/{platform}/include": "/include" for platform in CUDA_TARGET_PLATFORMS},
    "/bin/nvcc": "/bin/hipcc",
}

#: NVIDIA's HPC SDK (``/opt/nvidia/hpc_sdk/<platform>/<version>``) carries its own CUDA, math libraries and MPI
#: (an Open MPI, or HPC-X, which is one), none of which a ROCm machine has. Its root, literal or through a variable
#: (``$(NVHPC_SDK)``, in a Makefile that names the SDK).
NVHPC_ROOT = r"(?:/opt/nvidia/hpc_sdk/[^/\s]+/[^/\s]+|\$[({]\w+[)}])"
#: The root of the Open MPI on the machine, from the include folder its ``mpicc`` names first (empty without one).
SYSTEM_MPI_ROOT_MAKE = "$(patsubst %/include,%,$(firstword $(shell mpicc --showme:incdirs 2>/dev/null)))"
#: What a path into the SDK becomes (a flag before it, -I/-L, stays): its MPI's programs those on PATH, its MPI's
#: root the system's Open MPI, its CUDA and math libraries ROCm's root (with the sub-paths of SUBPATHS).
NVHPC_PATHS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^(-[IL])?{NVHPC_ROOT}/comm_libs/(?:[^\s]*/)?bin/([\w.+-]+)$"), r"\1\2"),
    (re.compile(rf"^(-[IL])?{NVHPC_ROOT}/comm_libs/(?:[^\s]*/)?(?:mpi|openmpi|hpcx)[^/\s]*(?:/ompi)?/?((?:/[^\s]*)?)$"),
     r"\1" + SYSTEM_MPI_ROOT_MAKE.replace("\\", "\\\\") + r"\2"),
    (re.compile(rf"^(-[IL])?{NVHPC_ROOT}/(?:cuda|math_libs)(?:/\d+(?:\.\d+)*)?(?=/|$)"), r"\1$(ROCM_PATH)"),
)
