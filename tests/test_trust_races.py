"""A folder or file replaced by a symbolic link between reading and writing is never written through.

Discovery judged the tree when it walked it; an attacker (or a careless script)
that swaps a folder for a link to elsewhere afterwards must not make
``--in-place`` write there. ``write_atomic`` checks where the path leads at
write time against the root, then opens the folders from the root down without
following links, so a swap after that check is refused too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildport import textio
from buildport.passes.base import Options
from buildport.pipeline.port import port_files
from buildport.pipeline.write import write_changes
from buildport.textio import InputError, read_source, write_atomic

ROOT = Path(__file__).resolve().parent.parent
CUDA = "project(p LANGUAGES CXX CUDA)\nadd_executable(app main.cu)\n"


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a CMake file in a sub-folder, and an outside folder holding the same text."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "sub").mkdir(parents=True)
    outside.mkdir()
    (project / "CMakeLists.txt").write_text(CUDA)
    (project / "sub" / "CMakeLists.txt").write_text(CUDA)
    (outside / "CMakeLists.txt").write_text(CUDA)
    return project, outside


def swap_for_link(folder: Path, target: Path) -> None:
    shutil.rmtree(folder)
    folder.symlink_to(target, target_is_directory=True)


def test_folder_swapped_for_a_link_after_reading_is_not_written(tmp_path: Path) -> None:
    project, outside = tree(tmp_path)
    run = port_files([str(project / "CMakeLists.txt"), str(project / "sub" / "CMakeLists.txt")], Options())
    swap_for_link(project / "sub", outside)  # same text there: the digest check alone would pass
    errors = write_changes(run, [str(project)])
    assert len(errors) == 1 and errors[0].startswith(f"{project / 'sub' / 'CMakeLists.txt'}: error: leads to ")
    assert f"outside {project.resolve()}; not written" in errors[0]
    assert (outside / "CMakeLists.txt").read_text() == CUDA
    assert "HIP" in (project / "CMakeLists.txt").read_text()


def test_file_swapped_for_a_link_after_reading_is_not_written(tmp_path: Path) -> None:
    project, outside = tree(tmp_path)
    inner = project / "sub" / "CMakeLists.txt"
    run = port_files([str(inner)], Options())
    inner.unlink()
    inner.symlink_to(outside / "CMakeLists.txt")
    errors = write_changes(run, [str(project)])
    assert len(errors) == 1 and "not written" in errors[0]
    assert (outside / "CMakeLists.txt").read_text() == CUDA
    assert inner.is_symlink()


def test_swap_after_the_check_is_refused_by_the_folder_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap lands between the check of where the path leads and the write: the folders are opened
    from the root down without following links, so the link is met and refused."""
    project, outside = tree(tmp_path)
    inner = project / "sub" / "CMakeLists.txt"
    source = read_source(inner)
    before = str(inner.resolve())
    swap_for_link(project / "sub", outside)
    real = os.path.realpath
    monkeypatch.setattr(textio.os.path, "realpath", lambda p: before if p == str(inner) else real(p))
    with pytest.raises(InputError, match="a symbolic link was put in its way during the run"):
        write_atomic(source, "new\n", project)
    assert (outside / "CMakeLists.txt").read_text() == CUDA
    assert [p.name for p in outside.iterdir()] == ["CMakeLists.txt"]  # no temporary file left there


def test_a_file_named_through_a_link_is_written_where_it_leads(tmp_path: Path) -> None:
    """Naming a link on the command line is the user's choice: its target is the file ported."""
    project, outside = tree(tmp_path)
    link = project / "theirs.cmake"
    link.symlink_to(outside / "CMakeLists.txt")
    done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "-i", "-q", str(link)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and "HIP" in (outside / "CMakeLists.txt").read_text()


def test_in_place_writes_inside_the_folder_named(tmp_path: Path) -> None:
    project, _outside = tree(tmp_path)
    done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "-i", "-q", str(project)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert all("HIP" in p.read_text() for p in project.rglob("CMakeLists.txt"))


def test_a_file_buildport_makes_is_not_written_through_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """Reports and renamed sources are new files: their folder is opened from the root without following
    links, and a link where the file itself goes is replaced, not followed."""
    from buildport.textio import write_new

    project, outside = tree(tmp_path)
    swap_for_link(project / "sub", outside)
    with pytest.raises(InputError, match="outside"):
        write_new(project / "sub" / "MIGRATION.md", "report\n", 0o644, project)
    assert not (outside / "MIGRATION.md").exists()
    (project / "MIGRATION.md").symlink_to(outside / "CMakeLists.txt")
    write_new(project / "MIGRATION.md", "report\n", 0o644, project)
    assert not (project / "MIGRATION.md").is_symlink() and (project / "MIGRATION.md").read_text() == "report\n"
    assert (outside / "CMakeLists.txt").read_text() == CUDA
    assert (project / "MIGRATION.md").stat().st_mode & 0o777 == 0o644
