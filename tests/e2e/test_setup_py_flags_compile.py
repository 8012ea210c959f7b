"""End to end: the ``"nvcc"`` flags of a ported ``setup.py`` are accepted by hipcc on a real compile.

PyTorch itself is not installed: each fixture's setup.py runs with stand-ins for ``setuptools`` and
``torch.utils.cpp_extension`` that record what every ``CUDAExtension`` is given, so the list is exactly
the one PyTorch for ROCm would hand hipcc (conditions taken both ways where the file reads ``DEBUG``).
The list is given to hipcc as PyTorch gives it, with ``-fPIC`` and, where it names no target, the
``--offload-arch`` PyTorch adds for ``PYTORCH_ROCM_ARCH``. The original lists hipcc refuses.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conftest import rocm_env

if TYPE_CHECKING:
    from conftest import Tools

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "python"
CASES = ["cuda-extension-flags", "flags-in-module-lists"]

KERNEL = """#include <hip/hip_runtime.h>

constexpr float twice(float x) { return 2.0f * x; }  // a host constexpr called from device code

__global__ void __launch_bounds__(256) scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto f = [a] __device__ (float v) { return twice(a) * v; };
    if (i < n) x[i] = f(x[i]);
}
"""


def _nvcc_lists(setup: Path, debug: str) -> list[list[str]]:
    """The ``"nvcc"`` list of each ``CUDAExtension`` that ``setup`` makes, run with ``DEBUG=debug``."""
    made: list[list[str]] = []

    def extension(*args: Any, **kwargs: Any) -> None:
        made.append(list(kwargs.get("extra_compile_args", {}).get("nvcc", [])))

    cpp_extension = types.ModuleType("torch.utils.cpp_extension")
    cpp_extension.__dict__.update(CUDAExtension=extension, CppExtension=extension, BuildExtension=object,
                                  CUDA_HOME=None)
    utils = types.ModuleType("torch.utils")
    utils.__dict__["cpp_extension"] = cpp_extension
    torch = types.ModuleType("torch")
    torch.__dict__["utils"] = utils
    setuptools = types.ModuleType("setuptools")
    setuptools.__dict__.update(setup=lambda **kwargs: None, find_packages=lambda *a, **k: [])
    stand_ins = {"torch": torch, "torch.utils": utils, "torch.utils.cpp_extension": cpp_extension,
                 "setuptools": setuptools}
    saved = {name: sys.modules.get(name) for name in stand_ins}
    old_debug = os.environ.get("DEBUG")
    sys.modules.update(stand_ins)
    os.environ["DEBUG"] = debug
    try:
        namespace = runpy.run_path(str(setup))
        if not made and "get_extensions" in namespace:
            namespace["get_extensions"]()
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        if old_debug is None:
            os.environ.pop("DEBUG", None)
        else:
            os.environ["DEBUG"] = old_debug
    assert made, f"{setup}: no CUDAExtension made"
    return made


def _hipcc(tools: Tools, hip_root: Path, flags: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    source = out.with_suffix(".hip")
    source.write_text(KERNEL)
    targets = [] if any(f.startswith("--offload-arch") for f in flags) else ["--offload-arch=gfx90a"]
    command = [str(tools.hipcc), *flags, *targets, "-fPIC", "-x", "hip", "-c", str(source), "-o", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=rocm_env(hip_root))


@pytest.mark.parametrize("debug", ["0", "1"])
@pytest.mark.parametrize("case", CASES)
def test_ported_nvcc_flags_compile_with_hipcc(case: str, debug: str, tools: Tools, hip_root: Path,
                                              tmp_path: Path) -> None:
    for n, flags in enumerate(_nvcc_lists(FIXTURES / case / "expected.py", debug)):
        done = _hipcc(tools, hip_root, flags, tmp_path / f"ported{n}.o")
        assert done.returncode == 0, (flags, done.stderr)
        assert "unknown argument" not in done.stderr and "argument unused" not in done.stderr, done.stderr
        assert (tmp_path / f"ported{n}.o").stat().st_size > 0


@pytest.mark.parametrize("case", CASES)
def test_the_original_nvcc_flags_are_refused_by_hipcc(case: str, tools: Tools, hip_root: Path,
                                                      tmp_path: Path) -> None:
    [flags] = _nvcc_lists(FIXTURES / case / "input.py", "0")
    done = _hipcc(tools, hip_root, flags, tmp_path / "original.o")
    assert done.returncode != 0, "the fixture should hold flags hipcc refuses"
