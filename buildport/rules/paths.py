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

#: Sub-paths under a CUDA root → under a ROCm root.
SUBPATHS: dict[str, str] = {
    "/lib64": "/lib",
    "/lib/x64": "/lib",
    "/targets/x86_64-linux/lib": "/lib",
    "/targets/x86_64-linux/include": "/include",
    "/bin/nvcc": "/bin/hipcc",
}
