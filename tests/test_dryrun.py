"""make's dry run as a second source of the sources a Makefile compiles (buildport.migrate.dryrun)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buildport.migrate.dryrun import dry_runs, read_commands

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@needs_make
def test_sources_make_computes_are_named(tmp_path: Path) -> None:
    """A computed source list (a $(foreach) of wildcards) no static reading expands; dependency files the
    Makefile generates are made in the scratch copy, never in the project."""
    _tree(tmp_path, {
        "Makefile": "DIRS := solver io\nSRCS := $(foreach d,$(DIRS),$(wildcard $(d)/*.cu)) main.cpp\n"
                    "OBJS := $(patsubst %.cu,%.o,$(patsubst %.cpp,%.o,$(SRCS)))\n"
                    "NVCC_VERSION := $(shell nvcc --version | grep -o 'release [0-9.]*')\n"
                    "app: $(OBJS)\n\tnvcc -o $@ $^\n%.o: %.cu\n\tnvcc -Iinclude -c $< -o $@\n"
                    "%.o: %.cpp\n\tg++ -c $< -o $@\n-include deps.d\ndeps.d:\n\techo > $@\n",
        "solver/cg.cu": "", "io/read.cu": "", "main.cpp": "", "unused/old.cu": "", "include/x.h": "",
    })  # fmt: skip
    before = _snapshot(tmp_path)
    (run,) = dry_runs(tmp_path, [tmp_path / "Makefile"])
    assert run.ok, run.why
    assert {str(p.relative_to(tmp_path)) for p in run.sources} == {"solver/cg.cu", "io/read.cu", "main.cpp"}
    assert run.include_dirs == {(tmp_path / "include").resolve()}
    assert _snapshot(tmp_path) == before


@needs_make
def test_a_makefile_make_refuses_is_no_answer(tmp_path: Path) -> None:
    _tree(tmp_path, {"Makefile": "$(error this build needs CUDA_HOME)\n"})
    (run,) = dry_runs(tmp_path, [tmp_path / "Makefile"])
    assert not run.ok and "CUDA_HOME" in run.why


def test_recursive_makes_and_cd_are_followed(tmp_path: Path) -> None:
    _tree(tmp_path, {"lib/a.cu": "", "app/b.cpp": "", "tools/c.c": ""})
    output = (f"make: Entering directory '{tmp_path}'\n"
              f"make -C lib\nmake[1]: Entering directory '{tmp_path / 'lib'}'\n"
              "nvcc -c a.cu -o a.o\n"
              f"make[1]: Leaving directory '{tmp_path / 'lib'}'\n"
              "cd app && g++ -I../lib -c b.cpp\ncd tools; gcc -c c.c missing.c\n")
    found = read_commands(output, tmp_path)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.sources} == {"lib/a.cu", "app/b.cpp", "tools/c.c"}
    assert found.include_dirs == {(tmp_path / "lib").resolve()}


def test_continued_commands_and_subshells_are_read_in_their_folder(tmp_path: Path) -> None:
    _tree(tmp_path, {"sub/a.cu": "", "a.cu": "", "other/b.cu": ""})
    output = "cd sub && \\\n\tnvcc -c a.cu\n(cd other && nvcc -c b.cu)\n"
    found = read_commands(output, tmp_path)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.sources} == {"sub/a.cu", "other/b.cu"}


@needs_make
def test_special_files_and_links_out_of_the_project_are_not_copied(tmp_path: Path) -> None:
    import os

    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    _tree(project, {"Makefile": "all: k.o\nk.o: k.cu\n\tnvcc -c k.cu -o k.o\n", "k.cu": ""})
    os.mkfifo(project / "pipe")
    (project / "build").symlink_to(outside, target_is_directory=True)
    (run,) = dry_runs(project, [project / "Makefile"])
    assert run.ok and {p.name for p in run.sources} == {"k.cu"}
