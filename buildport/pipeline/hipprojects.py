"""CMake projects that build for HIP already: the files below such a project's CMakeLists.txt are its own.

A project whose CMakeLists.txt enables the HIP language itself (stdgpu's
``STDGPU_BACKEND``, faiss's ``FAISS_ENABLE_ROCM``, LightGBM's ``USE_ROCM``) is left
as it is by the port (``cmake-hip-present``), and so must be every file it reads
from the folders below it: their CUDA branches are its CUDA build, which porting
them would break while its ROCm build already exists. The port and the audit ask
the same question here, so that both say the same of each file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from buildport.findings import Finding, Severity
from buildport.rules.cmake import HIP_ENABLED

RULE = "cmake-hip-present"


def hip_roots(files: Iterable[tuple[str, list[Finding]]]) -> dict[str, str]:
    """Folder → the CMakeLists.txt in it that the port left as it is because it enables the HIP language itself
    (its finding says :data:`~buildport.rules.cmake.HIP_ENABLED`), among ``files`` (path, findings)."""
    return {os.path.dirname(os.path.abspath(path)): path for path, findings in files
            if os.path.basename(path) == "CMakeLists.txt"
            and any(f.rule == RULE and f.message.startswith(HIP_ENABLED) for f in findings)}


def project_of(path: str, roots: dict[str, str]) -> str | None:
    """The CMakeLists.txt of :func:`hip_roots` whose folder holds ``path`` (another file than itself)."""
    if not roots:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        root = roots.get(folder)
        if root is not None and os.path.abspath(root) != os.path.abspath(path):
            return root
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def left_for_the_project(path: str, root: str) -> Finding:
    """What is said of a file below such a project, left as it is (its CMakeLists.txt carries the warning)."""
    return Finding(path, 1, 1, RULE, Severity.INFO,
                   f"the project of {root} builds for HIP already (it enables the HIP language); this file is "
                   "part of it and left as it is",
                   "build with the project's own ROCm option rather than porting its CUDA build")
