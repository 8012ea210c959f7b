"""migrate names the C and C++ files that hold CUDA and that it did not convert."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from buildport.cli import main

MAKEFILE = "app: main.cu\n\tnvcc -o app main.cu\n"
KERNEL = '#include "used.h"\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n'


def test_c_and_cpp_files_with_cuda_that_nothing_converted_are_listed(tmp_path: Path) -> None:
    """gpusnek's mpconfigport.h (``#ifdef __CUDACC__``), included through a folder of one port among many: not
    converted, so its device functions were host functions for HIP. The report names it."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "main.cu").write_text(KERNEL)
    (tmp_path / "used.h").write_text("#ifdef __CUDACC__\n#define HD __host__ __device__\n#endif\n")
    config = tmp_path / "ports" / "gpu" / "config.h"
    config.parent.mkdir(parents=True)
    config.write_text("#ifdef __CUDACC__\n#define MAYBE __device__\n#else\n#define MAYBE\n#endif\n")
    (tmp_path / "ports" / "gpu" / "plain.h").write_text("int helper(void);\n")
    (tmp_path / "ports" / "hip" / "kernels.h").parent.mkdir(parents=True)
    (tmp_path / "ports" / "hip" / "kernels.h").write_text("__global__ void k(float* x);\n")  # HIP's as much
    done = CliRunner().invoke(main, ["migrate", str(tmp_path), "--in-place", "--force"])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "migration.json").read_text())
    # used.h was converted with main.cu; plain.h holds no CUDA, kernels.h no name only CUDA has
    assert report["cuda_left"] == ["ports/gpu/config.h"]
    assert "__HIPCC__" in (tmp_path / "used.h").read_text()
    text = (tmp_path / "MIGRATION.md").read_text()
    assert "## C and C++ files that hold CUDA (not converted)" in text and "- `ports/gpu/config.h`" in text


def test_the_projects_own_headers_put_back_are_counted_where_fixes_add_lines(tmp_path: Path) -> None:
    """ggml's common.cuh includes its own "vendors/cuda.h", which hipify renames; a fix adds lines to the file (a
    definition of __dp4a), and the include is put back all the same, and said."""
    (tmp_path / "Makefile").write_text("app: main.cu\n\tnvcc -o app main.cu\n")
    (tmp_path / "vendors").mkdir()
    (tmp_path / "vendors" / "cuda.h").write_text("#include <cuda_runtime.h>\n")
    (tmp_path / "main.cu").write_text('#include "vendors/cuda.h"\n__global__ void k(int *o, int a, int b) '
                                      "{ *o = __dp4a(a, b, 0); }\nint main() { cudaDeviceSynchronize(); }\n")
    done = CliRunner().invoke(main, ["migrate", str(tmp_path), "--in-place", "--force"])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "main.cu").read_text()
    assert '#include "vendors/cuda.h"' in text and "vendors/hip/" not in text and "__dp4a" in text
    report = json.loads((tmp_path / "migration.json").read_text())
    [change] = [c for c in report["changed"] if c["path"] == "main.cu"]
    assert change["fixes"].get("own_headers") == 1, change
