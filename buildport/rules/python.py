"""PyTorch extension builds (``setup.py``): the names the port and the audit look for.

Facts: ``torch.utils.cpp_extension`` (PyTorch 2.x): on ROCm, ``CUDAExtension`` and
``BuildExtension`` hipify the sources at build time and pass ``extra_compile_args["nvcc"]``
to hipcc; ``CUDA_HOME`` is ``None`` there (``ROCM_HOME`` is set); the GPU targets come from
``PYTORCH_ROCM_ARCH``, else from those PyTorch was built for, and are added only when the
``"nvcc"`` list names no ``--offload-arch``.
"""

from __future__ import annotations

#: The module whose use marks a file as a PyTorch extension build.
EXTENSION_MODULE = "torch.utils.cpp_extension"
#: The word a text must hold to be ported at all (the search before the file is parsed).
MARKER = "cpp_extension"
#: The build files of this kind, by name.
SETUP_NAMES = frozenset({"setup.py"})
#: The classes whose ``extra_compile_args["nvcc"]`` go to nvcc (hipcc on ROCm) and whose ``libraries`` are linked.
EXTENSION_CLASSES = frozenset({"CUDAExtension"})
#: Functions that build an extension when called (JIT): their ``extra_cuda_cflags`` go to nvcc.
JIT_FUNCTIONS = frozenset({"load", "load_inline"})
#: Base classes that make a class a custom build step.
BUILD_EXT = frozenset({"BuildExtension", "build_ext"})
#: Environment variables that hold NVIDIA architectures.
ARCH_VARIABLES = frozenset({"TORCH_CUDA_ARCH_LIST"})
#: Calls that ask the GPU or PyTorch for NVIDIA architectures.
ARCH_CALLS = frozenset({"get_device_capability", "get_arch_list"})
#: Names and variables of the CUDA install root.
CUDA_ROOTS = frozenset({"CUDA_HOME", "CUDA_PATH"})
#: What PyTorch reads for the targets on ROCm (said in the findings).
ROCM_ARCH_NOTE = "on ROCm, PyTorch takes the targets from PYTORCH_ROCM_ARCH, else those it was built for"
