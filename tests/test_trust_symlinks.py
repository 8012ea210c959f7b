"""Symbolic links: nothing outside the project root is read as part of it or written.

Given a directory, discovery never follows a directory link out of it and skips
(with a message) a file link that points out of it; a link inside the root is
written through, and stays a link.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from buildport.pipeline.discovery import discover, expand_paths, is_cmake_file

ROOT = Path(__file__).resolve().parent.parent
CUDA = "project(p LANGUAGES CXX CUDA)\nadd_executable(app main.cu)\n"


def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A project root and, beside it, an outside folder it links to."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "CMakeLists.txt").write_text(CUDA)
    (outside / "secret.cmake").write_text(CUDA)
    (project / "CMakeLists.txt").write_text(CUDA)
    (project / "vendored").symlink_to(outside, target_is_directory=True)  # a directory link out of the root
    (project / "escape.cmake").symlink_to(outside / "secret.cmake")  # a file link out of the root
    (project / "real").mkdir()
    (project / "real" / "inner.cmake").write_text(CUDA)
    (project / "alias").symlink_to("real", target_is_directory=True)  # a directory link inside the root
    (project / "alias.cmake").symlink_to(Path("real") / "inner.cmake")  # a file link inside the root
    (project / "cmake").mkdir()
    (project / "cmake" / "common.txt").write_text(CUDA)
    (project / "cmake" / "linked.cmake").symlink_to("common.txt")  # the only way to reach common.txt
    return project, outside


def test_discovery_stays_inside_the_root(tmp_path: Path) -> None:
    project, _outside = layout(tmp_path)
    skipped: list[str] = []
    found = [p.relative_to(project).as_posix() for p in discover(project, is_cmake_file, skipped)]
    # directory links are not walked at all; the file link inside is dropped: its target is listed
    assert found == ["CMakeLists.txt", "real/inner.cmake", "cmake/linked.cmake"]
    assert skipped == [f"{project / 'escape.cmake'}: skipped: symbolic link to {tmp_path.resolve() / 'outside' / 'secret.cmake'}, "
                       f"outside {project.resolve()}"]
    assert expand_paths([str(project)], is_cmake_file) == [str(project / f) for f in found]


def test_in_place_never_writes_outside_the_root(tmp_path: Path) -> None:
    project, outside = layout(tmp_path)
    done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "-i", "-q", str(project)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "escape.cmake: skipped: symbolic link to" in done.stderr
    assert (outside / "CMakeLists.txt").read_text() == CUDA
    assert (outside / "secret.cmake").read_text() == CUDA
    assert (project / "escape.cmake").is_symlink() and (project / "vendored").is_symlink()
    assert "HIP" in (project / "CMakeLists.txt").read_text()
    # inside links stay links; their targets are ported once
    assert (project / "alias.cmake").is_symlink() and (project / "cmake" / "linked.cmake").is_symlink()
    assert "HIP" in (project / "real" / "inner.cmake").read_text()
    assert "HIP" in (project / "cmake" / "common.txt").read_text()
    assert list(project.rglob("*.buildport-tmp")) == []


def test_root_given_as_a_link_is_followed(tmp_path: Path) -> None:
    """The root itself may be a link (a checkout under /home -> /data); its files are inside."""
    project, _outside = layout(tmp_path)
    link = tmp_path / "link-to-project"
    link.symlink_to(project, target_is_directory=True)
    found = [p.name for p in discover(link, is_cmake_file)]
    assert "CMakeLists.txt" in found and "escape.cmake" not in found


def test_a_symbolic_link_loop_is_skipped_not_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").symlink_to("CMakeLists.txt")
    (tmp_path / "a.cmake").symlink_to("b.cmake")
    (tmp_path / "b.cmake").symlink_to("a.cmake")
    (tmp_path / "real.cmake").write_text(CUDA)
    for command in (["cmake", "--check"], ["audit"]):
        done = subprocess.run([sys.executable, "-m", "buildport", *command, "--no-cache", str(tmp_path)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert "internal error" not in done.stderr
        assert done.returncode in (0, 1), done.stderr
    done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "--check", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    loops = [line for line in done.stderr.splitlines() if line.endswith("skipped: a symbolic link loop")]
    assert len(loops) == 3 and done.returncode == 1, done.stderr
