"""Dual build files (``migrate --keep-cuda``): each change of the port a branch of the runtime switch.

The property every fixture must keep: read with ``GPU_RUNTIME=CUDA`` a dual file is the project's file, byte
for byte; read with ``GPU_RUNTIME=HIP`` it is the port (tests/support/dual.py resolves the branches). Then
the cases the branches cannot hold (a block command changed), the switch and the compatibility folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.dual import is_dual
from buildport.dual.cmake import dual_cmake
from buildport.dual.compat import Usage, compat_files
from buildport.dual.make import dual_make
from buildport.engine import port_cmake, port_make
from buildport.source.hipify_tables import HipifyTables
from buildport.syntax.cmake import parse_cmake
from buildport.syntax.make import parse_make
from buildport.textio import decode
from support.dual import projected

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CMAKE_CASES = sorted(p for p in (FIXTURES / "cmake").iterdir() if (p / "input.cmake").is_file())
MAKE_CASES = sorted(p for p in (FIXTURES / "make").iterdir() if (p / "input.mk").is_file())


def _read(path: Path) -> str:
    return decode(path.read_bytes(), str(path))


KINDS = {"cmake": ("input.cmake", port_cmake, dual_cmake, parse_cmake), "make": ("input.mk", port_make, dual_make, parse_make)}
CASES = [("cmake", case) for case in CMAKE_CASES] + [("make", case) for case in MAKE_CASES]


@pytest.mark.parametrize(("kind", "case"), CASES, ids=[f"{kind}/{case.name}" for kind, case in CASES])
def test_a_dual_file_reads_as_the_project_for_cuda_and_as_the_port_for_hip(kind: str, case: Path) -> None:
    name, port, dual, parse = KINDS[kind]
    old = _read(case / name)
    result = port(old, str(case / name))
    text, findings = dual(old, result.text, result.regions, "build-file")
    parse(text)
    assert projected(text, "CUDA", kind) == old
    if not findings:
        assert projected(text, "HIP", kind) == result.text
    assert is_dual(text, kind) == (result.text != old)
    if result.text == old:
        assert text == old
    elif kind == "make":
        assert text.index("GPU_RUNTIME ?= CUDA") < text.index("ifeq ($(GPU_RUNTIME),HIP)")  # the switch comes first


def test_every_fixture_gets_every_change_in_both_branches() -> None:
    """No change of any fixture's port is left for CUDA only (a block changed in part is wrapped whole)."""
    partial = []
    for case in CMAKE_CASES:
        old = _read(case / "input.cmake")
        result = port_cmake(old)
        if dual_cmake(old, result.text, result.regions, "x")[1]:
            partial.append(case.name)
    for case in MAKE_CASES:
        old = _read(case / "input.mk")
        result = port_make(old)
        if dual_make(old, result.text, result.regions, "x")[1]:
            partial.append(case.name)
    assert partial == []


def test_a_changed_condition_becomes_both_conditions() -> None:
    old = "if(CUDA_FOUND)\n  add_library(k k.cu)\nendif()\n"
    new = "if(hip_FOUND)\n  add_library(k k.cu)\nendif()\n"
    text, findings = dual_cmake(old, new, None, "CMakeLists.txt")
    assert not findings
    assert text.startswith('if((GPU_RUNTIME STREQUAL "HIP" AND (hip_FOUND)) OR (NOT GPU_RUNTIME STREQUAL "HIP" '
                           "AND (CUDA_FOUND)))\n")
    assert projected(text, "HIP") == new and projected(text, "CUDA") == old


def test_a_changed_loop_is_wrapped_whole() -> None:
    old = "set(A 1)\nforeach(lib cudart cublas)\n  message(${lib})\nendforeach()\nset(B 2)\n"
    new = "set(A 1)\nforeach(lib amdhip64 hipblas)\n  message(${lib})\nendforeach()\nset(B 2)\n"
    text, findings = dual_cmake(old, new, None, "CMakeLists.txt")
    assert not findings
    assert text.startswith('set(A 1)\nif(GPU_RUNTIME STREQUAL "HIP")\nforeach(lib amdhip64 hipblas)\n')
    assert text.endswith("endforeach()\nendif()\nset(B 2)\n")
    assert projected(text, "HIP") == new and projected(text, "CUDA") == old


def test_a_block_changed_in_part_is_wrapped_whole_with_the_changes_it_reaches() -> None:
    old = "if(USE_GPU)\n  set(X nvcc)\nelse()\n  set(X cc)\nendif()\nset(L cudart)\n"
    new = "if(USE_GPU)\n  set(X hipcc)\n  find_package(hip)\nelse()\n  set(X cc)\nendif()\nset(L amdhip64)\n"
    text, findings = dual_cmake(old, new, None, "CMakeLists.txt")
    assert not findings and projected(text, "HIP") == new and projected(text, "CUDA") == old


def test_a_change_no_block_can_hold_is_left_for_cuda_and_reported() -> None:
    old = "set(A cudart)\nset(B 1)\n"
    new = "if(X)\nset(A amdhip64)\nset(B 1)\n"  # a block the port opens and never closes: no branch holds it
    text, findings = dual_cmake(old, new, None, "CMakeLists.txt")
    assert [(f.rule, f.line) for f in findings] == [("dual-branch-unported", 1)]
    assert findings[0].suggestion.endswith("if(X)")
    assert projected(text, "CUDA") == old and projected(text, "HIP") == "set(A amdhip64)\nset(B 1)\n"


def test_a_changed_conditional_directive_is_wrapped_whole() -> None:
    old = "ifdef CUDA_PATH\nNVCC := nvcc\nelse\nNVCC := cc\nendif\n"
    new = "ifdef ROCM_PATH\nNVCC := nvcc\nelse\nNVCC := cc\nendif\n"
    text, findings = dual_make(old, new, None, "Makefile")
    assert not findings
    assert projected(text, "CUDA", "make") == old and projected(text, "HIP", "make") == new
    parse_make(text)


def test_cmake_switch_goes_before_project_and_the_folder_after_it() -> None:
    old = "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nadd_executable(a a.cu)\n"
    result = port_cmake(old)
    text, _ = dual_cmake(old, result.text, result.regions, "CMakeLists.txt", switch=True, compat="hip-compat")
    commands = [c.identifier for c in parse_cmake(text).commands()]
    assert commands[:2] == ["set", "set_property"]  # the cache variable and its choices, before anything reads it
    assert 'include_directories(BEFORE "${CMAKE_CURRENT_LIST_DIR}/hip-compat")' in text
    assert text.index("include_directories(BEFORE") > text.index("project(p LANGUAGES CXX HIP)")
    assert "$<$<COMPILE_LANGUAGE:C,CXX>:SHELL:-include cuda_to_hip.h>" in text
    assert "$<$<COMPILE_LANGUAGE:HIP>:SHELL:-include cuda_to_hip_runtime.h>" in text


def test_a_file_without_changes_stays_byte_for_byte() -> None:
    old = "project(p CXX)\nadd_executable(a a.cpp)\n"
    assert dual_cmake(old, old, [], "CMakeLists.txt") == (old, [])
    make = "all:\n\tcc -o a a.c\n"
    assert dual_make(make, make, [], "Makefile") == (make, [])


def test_crlf_files_get_crlf_branches() -> None:
    old = "SMS := 80\r\nNVCC := nvcc\r\n"
    new = "SMS := 80\r\nNVCC := hipcc\r\n"
    text, _ = dual_make(old, new, None, "Makefile")
    assert "\r\n" in text and "\n" not in text.replace("\r\n", "")


def _tables() -> HipifyTables:
    return HipifyTables({"cudaMalloc": "hipMalloc", "cudaStream_t": "hipStream_t", "cublasCreate": "hipblasCreate"},
                        {"cuda_runtime.h": "hip/hip_runtime.h", "cublas_v2.h": "hipblas.h", "cub/cub.cuh":
                         "hipcub/hipcub.hpp", "cuda.h": "hip/hip_runtime.h"},
                        frozenset({"cudaGraphInstantiateWithParams"}), "digest")


def test_the_mapping_header_defines_exactly_the_names_the_sources_use() -> None:
    usage = Usage()
    usage.add('#include <cuda_runtime.h>\n#include "cublas_v2.h"\n#include <cub/cub.cuh>\n'
              "// cudaStream_t in a comment is no use\n"
              "#define CHECK(x) cudaMalloc(x)\nvoid f() { cudaGraphInstantiateWithParams(); register int r = 0; }\n")
    made = compat_files(usage, _tables())
    mapping = made.files["cuda_to_hip.h"]
    assert "#define cudaMalloc hipMalloc" in mapping and "cudaStream_t" not in mapping
    assert "cublasCreate" not in mapping
    assert '#pragma GCC diagnostic ignored "-Wregister"' in mapping  # C++17 refuses what nvcc accepts
    assert made.unsupported == ["cudaGraphInstantiateWithParams"]
    assert sorted(made.files) == ["cub/cub.cuh", "cublas_v2.h", "cuda_runtime.h", "cuda_to_hip.h",
                                  "cuda_to_hip_runtime.h"]
    assert "#include" not in mapping  # macros alone: the build includes it first in every source
    runtime = made.files["cuda_to_hip_runtime.h"]
    assert runtime.index("#include <hip/hip_runtime.h>") < runtime.index('#include "cuda_to_hip.h"')
    assert "#define __CUDA_RUNTIME_H__ 1" in runtime and "__CUDA_RUNTIME_H__" not in mapping
    assert '#include "../cuda_to_hip_runtime.h"' in made.files["cub/cub.cuh"]
    assert "namespace cub = hipcub;" in made.files["cub/cub.cuh"]
    assert "__has_include(<hipblas/hipblas.h>)" in made.files["cublas_v2.h"]
    assert all(text.startswith("// Written by buildport migrate --keep-cuda") for text in made.files.values())


def test_a_header_of_the_project_named_like_cudas_gets_no_file() -> None:
    usage = Usage()
    usage.add('#include "cuda.h"\n#include <cuda_runtime.h>\n')
    made = compat_files(usage, _tables(), own_headers=["src/cuda.h"])
    assert "cuda.h" not in made.files and "cuda_runtime.h" in made.files


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\n"
                                         "add_executable(app app.cu)\n")
    (root / "app.cu").write_text(
        "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n"
        "int main() {\n  float *x;\n  cudaMalloc(&x, 4);\n  k<< <1, 1 >> >(x);\n  cudaFree(x);\n  return 0;\n}\n")
    return root


def test_migrate_keep_cuda_leaves_the_sources_and_reports_what_a_header_cannot_carry(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    source = (project / "app.cu").read_bytes()
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--keep-cuda",
                                     "--no-cmake-configure"])
    assert done.exit_code == 0, done.output
    assert "sources left as they are, 1 build file made dual (GPU_RUNTIME=CUDA or HIP), 2 CUDA names mapped" in (
        done.output)
    assert (out / "app.cu").read_bytes() == source
    mapping = (out / "hip-compat" / "cuda_to_hip.h").read_text()
    assert "#define cudaMalloc hipMalloc" in mapping and "#define cudaFree   hipFree" in mapping
    assert (out / "hip-compat" / "cuda_runtime.h").is_file()
    lists = (out / "CMakeLists.txt").read_text()
    assert 'set(GPU_RUNTIME "CUDA" CACHE STRING' in lists and "project(p LANGUAGES CXX CUDA)" in lists
    assert projected(lists, "CUDA") == _read(project / "CMakeLists.txt")
    report = json.loads((out / "migration.json").read_text())
    assert report["keep_cuda"]["files"] == ["hip-compat/cuda_runtime.h", "hip-compat/cuda_to_hip.h",
                                            "hip-compat/cuda_to_hip_runtime.h"]
    assert report["keep_cuda"]["names_mapped"] == 2
    # the launch written with spaces (a normal migration closes it up): at the untouched file's line
    [left] = [r for r in report["remaining"] if r["rule"] == "dual-source-not-carried"]
    assert left["path"] == "app.cu" and "<<<" in left["message"]
    markdown = (out / "MIGRATION.md").read_text()
    assert "cmake -S . -B build-hip -DGPU_RUNTIME=HIP" in markdown and "# NVIDIA (CUDA), as before" in markdown

    again = CliRunner().invoke(main, ["migrate", str(out), "--in-place", "--force", "--keep-cuda",
                                      "--no-cmake-configure"])
    assert again.exit_code == 0 and "nothing to change" in again.output, again.output


def test_migrate_keep_cuda_refuses_a_compatibility_folder_of_the_projects_own(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    (project / "hip-compat").mkdir()
    (project / "hip-compat" / "cuda_to_hip.h").write_text("// the project's own\n")
    done = CliRunner().invoke(main, ["migrate", str(project), "--in-place", "--force", "--keep-cuda",
                                     "--no-cmake-configure"])
    assert done.exit_code == 2 and "the project's own file" in done.output, done.output
    assert (project / "hip-compat" / "cuda_to_hip.h").read_text() == "// the project's own\n"
    assert "GPU_RUNTIME" not in (project / "CMakeLists.txt").read_text()


def test_keep_cuda_and_renamed_sources_are_refused_together(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(tmp_path / "o"), "--keep-cuda",
                                     "--rename-sources", "hip"])
    assert done.exit_code == 2 and "--keep-cuda" in done.output


def test_a_dry_run_shows_the_compatibility_folder_and_writes_nothing(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    before = sorted(p.name for p in project.rglob("*"))
    done = CliRunner().invoke(main, ["migrate", str(project), "--dry-run", "--keep-cuda", "--no-cmake-configure"])
    assert done.exit_code == 0, done.output
    assert "write (keep-cuda)  hip-compat/cuda_to_hip.h" in done.output
    assert "--- /dev/null\n+++ b/hip-compat/cuda_to_hip.h\n" in done.output
    assert '+if(GPU_RUNTIME STREQUAL "HIP")' in done.output
    assert sorted(p.name for p in project.rglob("*")) == before


def test_the_hip_view_keeps_every_line_where_it_was() -> None:
    from buildport.dual.view import hip_view

    old = _read(FIXTURES / "cmake" / "project-cuda-only" / "input.cmake")
    result = port_cmake(old)
    text, _ = dual_cmake(old, result.text, result.regions, "CMakeLists.txt", switch=True, compat="hip-compat")
    view = hip_view(text, "cmake")
    assert view.count("\n") == text.count("\n")
    assert "CUDA" not in view.replace("hip-compat", "") and "GPU_RUNTIME" not in view
    assert [line for line in view.splitlines() if line.strip() and "hip-compat" not in line
            and "cuda_to_hip" not in line] == [
        line for line in result.text.splitlines() if line.strip()]


def test_a_port_leaves_a_dual_file_as_it_is() -> None:
    old = _read(FIXTURES / "make" / "continuation-lines" / "input.mk")
    result = port_make(old)
    text, _ = dual_make(old, result.text, result.regions, "Makefile")
    again = port_make(text)
    assert again.text == text and not again.findings
    cmake_old = "project(p LANGUAGES CXX CUDA)\nadd_executable(a a.cu)\n"
    ported = port_cmake(cmake_old)
    dual, _ = dual_cmake(cmake_old, ported.text, ported.regions, "CMakeLists.txt", switch=True)
    assert port_cmake(dual).text == dual and not port_cmake(dual).findings


def test_the_audit_of_a_dual_tree_gates_on_what_the_hip_build_lacks(tmp_path: Path) -> None:
    """After --keep-cuda the audit reads each build file as the HIP build does and each source with the names
    the compatibility folder maps: the CUDA left on purpose is not reported, what the HIP build lacks is."""
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    (project / "app.cu").write_text("#include <cuda_runtime.h>\nint main() {\n  float *x;\n  cudaMalloc(&x, 4);\n"
                                     "  cudaFree(x);\n  return 0;\n}\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--keep-cuda",
                                     "--no-cmake-configure"])
    assert done.exit_code == 0, done.output

    def findings(root: Path) -> list[tuple[str, str]]:
        audited = CliRunner().invoke(main, ["audit", str(root), "--no-cache", "--format", "json"])
        return sorted((Path(f["path"]).relative_to(root).as_posix(), f["rule"])
                      for f in json.loads(audited.output)["findings"] if f["severity"] != "info")

    assert ("app.cu", "cuda-api-left") in findings(project)
    assert findings(out) == []
    # a CUDA name the folder does not map (written after the migration) is reported again
    (out / "app.cu").write_text((out / "app.cu").read_text().replace("cudaFree(x);", "cudaFree(x);\n  cudaDeviceReset();"))
    assert findings(out) == [("app.cu", "cuda-api-left")]


def test_a_setup_py_is_left_as_it_is_and_reported(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    setup = ("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "setup(name='ext', ext_modules=[CUDAExtension('ext', ['ext.cu'], extra_compile_args={'nvcc': "
             "['-O3', '--use_fast_math']})], cmdclass={'build_ext': BuildExtension})\n")
    (project / "setup.py").write_text(setup)
    (project / "ext.cu").write_text("__global__ void k() {}\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--keep-cuda",
                                     "--no-cmake-configure"])
    assert done.exit_code == 0, done.output
    assert (out / "setup.py").read_text() == setup
    remaining = json.loads((out / "migration.json").read_text())["remaining"]
    assert [(r["path"], r["rule"]) for r in remaining if r["rule"] == "dual-branch-unported"] == [
        ("setup.py", "dual-branch-unported")]


def test_a_warm_audit_sees_the_compatibility_folder_change(tmp_path: Path) -> None:
    """The audit's cache and its replayed runs depend on the folder too: a name taken out of the mapping
    header is CUDA left again at once."""
    import json
    import os
    import subprocess
    import sys

    from click.testing import CliRunner

    from buildport.cli import main

    project = _project(tmp_path / "proj")
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--keep-cuda",
                                     "--no-cmake-configure"]).exit_code == 0
    cache = tmp_path / "cache"

    def rules() -> list[str]:  # as a user runs it: a process of its own, whose whole run a later one may replay
        done = subprocess.run([sys.executable, "-m", "buildport", "audit", str(out / "app.cu"), "--cache-dir",
                               str(cache), "--format", "json"], capture_output=True, text=True, check=False,
                              env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)})
        return sorted(f["rule"] for f in json.loads(done.stdout)["findings"] if f["severity"] != "info")

    assert "cuda-api-left" not in rules() and "cuda-api-left" not in rules()  # cold, then warm
    mapping = out / "hip-compat" / "cuda_to_hip.h"
    mapping.write_text(mapping.read_text().replace("#define cudaMalloc hipMalloc\n", ""))
    assert "cuda-api-left" in rules()


def test_the_top_project_declares_the_switch_where_only_a_module_it_includes_changed(tmp_path: Path) -> None:
    """The port changes only cmake/UseCUDA.cmake (legacy FindCUDA in a helper): the project's CMakeLists.txt one
    folder down, which includes it, still declares the switch and puts the folder on the include path."""
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    root = tmp_path / "repo"
    (root / "app" / "cmake").mkdir(parents=True)
    (root / "app" / "src").mkdir()
    (root / "app" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX)\ninclude(cmake/UseCUDA.cmake)\n"
        "add_subdirectory(src)\n")
    (root / "app" / "cmake" / "UseCUDA.cmake").write_text("find_package(CUDA REQUIRED)\n")
    (root / "app" / "src" / "CMakeLists.txt").write_text("cuda_add_executable(app main.cu)\n")
    (root / "app" / "src" / "main.cu").write_text("int main() { cudaDeviceSynchronize(); return 0; }\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(root), "--out", str(out), "--keep-cuda", "--no-cmake-configure"])
    assert done.exit_code == 0, done.output
    top = (out / "app" / "CMakeLists.txt").read_text()
    assert port_cmake((root / "app" / "CMakeLists.txt").read_text()).changed is False  # the port leaves it
    assert top.startswith('cmake_minimum_required(VERSION 3.18)\nset(GPU_RUNTIME "CUDA" CACHE STRING')
    assert 'include_directories(BEFORE "${CMAKE_CURRENT_LIST_DIR}/../hip-compat")' in top
    assert projected(top, "CUDA") == (root / "app" / "CMakeLists.txt").read_text()
    changed = [c["path"] for c in json.loads((out / "migration.json").read_text())["changed"]]
    assert "app/CMakeLists.txt" in changed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), min_size=0, max_size=12), st.integers(0, 60),
       st.integers(0, 60), st.none() | st.integers(0, 70))
def test_statements_are_found_by_offset_as_a_scan_of_all_finds_them(gaps: list[int], low: int, span: int,
                                                                    where: int | None) -> None:
    """The binary search of the statements a region touches gives what a scan of every statement gives."""
    from buildport.dual.groups import _Units

    units, at = [], 0
    for gap in gaps:  # statements in order, none overlapping, some touching
        start = at + gap % 3
        units.append((start, start + 1 + gap))
        at = start + 1 + gap
    high = low + span
    found = _Units(units)
    expected = [u for u in units if u[0] < high and u[1] > low or (where is not None and u[0] <= where < u[1])]
    assert found.touching(low, high, where) == expected
    assert found.inside(low) == any(s < low < e for s, e in units)
    if where is not None:
        assert found.inside(where) == any(s < where < e for s, e in units)
