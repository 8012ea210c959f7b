"""Files outside the project that its build uses: listed by migrate, never converted or copied.

A benchmark suite's program often takes a header or an include folder from a
sibling (HeCBench's ``floydwarshall2-cuda`` builds with ``-I../mis-cuda`` and
depends on ``../mis-cuda/graph.h``). Migrating the program alone leaves those
files as they are, and a copy made with ``--out`` finds them only where the same
relative path leads: the report says so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildport.cli import main
from buildport.source.references import SourceSet, add_headers, cmake_sources, make_sources

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

MAKEFILE = """\
CC = nvcc
CFLAGS := -std=c++17 -I../shared -I/usr/local/cuda/include -I../missing
main: main.o
\t$(CC) $(CFLAGS) main.o -o main
%.o: %.cu ../shared/graph.h util.h
\t$(CC) $(CFLAGS) -c $< -o $@
"""
MAIN = '#include "util.h"\n#include "../shared/common.h"\n#include "missing.h"\n__global__ void k() {}\nint main() {}\n'
CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(app LANGUAGES CXX CUDA)
include_directories(${CMAKE_CURRENT_SOURCE_DIR}/../shared /usr/local/cuda/include)
add_executable(app main.cu ../shared/extra.cu)
"""


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    """``suite/app`` (the project) beside ``suite/shared`` (what it takes from a sibling)."""
    app, shared = tmp_path / "suite" / "app", tmp_path / "suite" / "shared"
    app.mkdir(parents=True)
    shared.mkdir()
    (app / "Makefile").write_text(MAKEFILE)
    (app / "CMakeLists.txt").write_text(CMAKE)
    (app / "main.cu").write_text(MAIN)
    (app / "util.h").write_text("#pragma once\n")
    for name in ("graph.h", "common.h"):
        (shared / name).write_text("#pragma once\n#include <cuda_runtime.h>\n")
    (shared / "extra.cu").write_text("__global__ void extra() {}\n")
    return app


def _outside(found: SourceSet, root: Path) -> dict[str, tuple[str, int]]:
    return {str(path.relative_to(root.parent)): (named_in.name, line) for path, (named_in, line) in found.outside.items()}


def test_the_build_and_its_sources_name_files_outside_the_project(suite: Path) -> None:
    found = SourceSet()
    make_sources(suite / "Makefile", suite, found)
    cmake_sources(suite / "CMakeLists.txt", suite, found)
    add_headers(found, suite)
    assert _outside(found, suite) == {
        "shared": ("Makefile", 2),  # -I../shared (not /usr/local/cuda/include: installed, and not the missing one)
        "shared/graph.h": ("Makefile", 5),
        "shared/extra.cu": ("CMakeLists.txt", 4),
        "shared/common.h": ("main.cu", 2),  # the header the compiler takes
    }
    # the project's own files are its sources, and nothing outside it is
    assert {p.name for p in found.all} == {"main.cu", "util.h"}


def test_a_project_that_names_nothing_outside_lists_nothing(suite: Path) -> None:
    (suite / "Makefile").write_text("main: main.cu util.h\n\tnvcc -I/usr/local/cuda/include main.cu -o main\n")
    (suite / "main.cu").write_text('#include "util.h"\n#include <cuda_runtime.h>\n')
    found = SourceSet()
    make_sources(suite / "Makefile", suite, found)
    add_headers(found, suite)
    assert found.outside == {} and {p.name for p in found.all} == {"main.cu", "util.h"}


@pytest.mark.parametrize("mode", ["out", "in-place", "dry-run"])
def test_migrate_reports_what_it_leaves_outside(suite: Path, tmp_path: Path, mode: str) -> None:
    if shutil.which("hipify-perl") is None:
        pytest.fail("hipify-perl is needed (installed by .ci/setup.sh)")
    copy = tmp_path / "elsewhere" / "app-hip"
    args = {"out": ["--out", str(copy)], "in-place": ["--in-place"], "dry-run": ["--dry-run"]}[mode]
    done = CliRunner().invoke(main, ["migrate", str(suite), *args])
    assert done.exit_code == 0, done.output
    if mode == "dry-run":
        assert "outside, not done  ../shared/graph.h (named in Makefile:5)" in done.output
        return
    target = copy if mode == "out" else suite
    assert "4 outside paths left alone" in done.output
    report = json.loads((target / "migration.json").read_text())
    assert report["outside"] == [
        {"path": "../shared", "named_in": "CMakeLists.txt", "line": 3},  # the CMake files are read first
        {"path": "../shared/common.h", "named_in": "main.cu", "line": 2},
        {"path": "../shared/extra.cu", "named_in": "CMakeLists.txt", "line": 4},
        {"path": "../shared/graph.h", "named_in": "Makefile", "line": 5},
    ]
    assert "- `../shared/graph.h` (named in `Makefile:5`)" in (target / "MIGRATION.md").read_text()
    # neither converted nor copied: the sibling's files are as they were
    assert (suite.parent / "shared" / "graph.h").read_text() == "#pragma once\n#include <cuda_runtime.h>\n"
    assert not (tmp_path / "elsewhere" / "shared").exists()


CONFIG = "CUDA_CC := /usr/local/cuda/bin/nvcc\n"
BENCHMARK = ("include ../../common/make.config\nGPU_FLAGS := -O2 -G\n"
             "app: main.cu\n\t$(CUDA_CC) $(GPU_FLAGS) main.cu -o app\n")


def _benchmark_with_a_shared_config(tmp_path: Path) -> tuple[Path, Path]:
    """rodinia's layout: suite/cuda/app includes suite/common/make.config. Returns (common, app)."""
    if shutil.which("hipify-perl") is None:
        pytest.fail("hipify-perl is needed (installed by .ci/setup.sh)")
    common, app = tmp_path / "suite" / "common", tmp_path / "suite" / "cuda" / "app"
    common.mkdir(parents=True)
    app.mkdir(parents=True)
    (common / "make.config").write_text(CONFIG)
    (app / "Makefile").write_text(BENCHMARK)
    (app / "main.cu").write_text("__global__ void k() {}\nint main() {}\n")
    return common, app


def test_a_makefile_included_from_outside_is_read_for_its_facts_and_left_as_it_is(tmp_path: Path) -> None:
    """rodinia's benchmarks include ../../common/make.config: migrating one benchmark must not write it
    (it refused the whole migration), and what it defines still counts for the benchmark's Makefile."""
    common, app = _benchmark_with_a_shared_config(tmp_path)
    done = CliRunner().invoke(main, ["migrate", str(app), "--in-place"])
    assert done.exit_code == 0, done.output
    assert "1 outside path left alone" in done.output
    assert (common / "make.config").read_text() == CONFIG  # not the project's: not written
    # make.config makes CUDA_CC nvcc, so -G in the flags the recipe gives it is an nvcc flag
    assert "GPU_FLAGS := -O2 -g -O0\n" in (app / "Makefile").read_text()
    report = json.loads((app / "migration.json").read_text())
    assert report["outside"] == [{"path": "../../common/make.config", "named_in": "Makefile", "line": 1}]


def test_a_source_named_through_the_current_directory_is_found_from_a_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`buildport migrate samples` (a relative folder): ``${CMAKE_CURRENT_SOURCE_DIR}/k.cu`` was joined to
    the file's folder a second time, so the kernel a custom command compiles was reported as referenced
    by no build file and not hipified."""
    sample = tmp_path / "samples" / "module"
    sample.mkdir(parents=True)
    (sample / "CMakeLists.txt").write_text('set(KERNEL "${CMAKE_CURRENT_SOURCE_DIR}/kernel.cu")\n'
                                           'set(OTHER "${PROJECT_SOURCE_DIR}/module/other.cu")\n')
    (sample / "kernel.cu").write_text("__global__ void k() {}\n")
    (sample / "other.cu").write_text("__global__ void o() {}\n")
    monkeypatch.chdir(tmp_path)
    found = SourceSet()
    cmake_sources(Path("samples/module/CMakeLists.txt"), Path("samples"), found)
    assert {p.name for p in found.all} == {"kernel.cu", "other.cu"}


def test_a_copy_reads_the_makefile_its_original_includes_from_outside(tmp_path: Path) -> None:
    """With --out the copy's `include ../../common/make.config` leads nowhere; the Makefile is read where its
    original lies, so make.config still makes CUDA_CC nvcc (its -G was left as an nvcc flag before)."""
    common, app = _benchmark_with_a_shared_config(tmp_path)
    out = tmp_path / "elsewhere" / "app-hip"
    done = CliRunner().invoke(main, ["migrate", str(app), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "GPU_FLAGS := -O2 -g -O0\n" in (out / "Makefile").read_text()
    assert (app / "Makefile").read_text() == BENCHMARK and (common / "make.config").read_text() == CONFIG
    assert not (tmp_path / "elsewhere" / "common").exists()
