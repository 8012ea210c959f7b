"""End to end: CUDA sources that no fixture project can hold, converted by hipify-perl and fixed by
``buildport.source.fix``, compile with Debian's ROCm.

Here are the constructs the nvcc on this machine (CUDA 13) no longer compiles, so that a project whose
original builds with it cannot show them; each file under ``fixtures/sources/`` is compiled with nvcc
to prove exactly that (the real projects that use it build with CUDA 12 and before).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from buildport.source.hipify import installed_hip_version, run_engine
from buildport.source.fix import port_source
from conftest import rocm_env

if TYPE_CHECKING:
    from conftest import Tools

pytestmark = pytest.mark.e2e

SOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "sources"


@pytest.mark.parametrize("name", sorted(p.name for p in SOURCES.glob("*.cu")))
def test_a_source_cuda_13_refuses_compiles_for_hip_after_the_fixes(name: str, tools: Tools, hip_root: Path,
                                                                   tmp_path: Path) -> None:
    original = SOURCES / name
    expected = (SOURCES / name).with_suffix(".nvcc-error").read_text().strip()
    nvcc = subprocess.run([str(tools.nvcc), "-c", str(original), "-o", str(tmp_path / "cuda.o")],
                          capture_output=True, text=True, timeout=300)
    assert nvcc.returncode != 0 and expected in nvcc.stderr, nvcc.stderr
    converted = run_engine(tools.hipify_perl, original, [], data=original.read_bytes())
    assert converted.text is not None, converted.error
    fixed, counts = port_source(converted.text, name, installed_hip_version())
    assert counts, "no fix was made"
    hip_file = tmp_path / name.replace(".cu", ".hip")
    hip_file.write_text(fixed)
    done = subprocess.run([str(tools.hipcc), "--offload-arch=gfx90a", "-c", str(hip_file), "-o",
                           str(tmp_path / "hip.o")], capture_output=True, text=True, timeout=600,
                          env=rocm_env(hip_root))
    assert done.returncode == 0, done.stderr + "\n" + fixed
