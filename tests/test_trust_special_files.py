"""Named pipes, devices and huge files: refused with a message, never waited on or read into memory.

A FIFO named ``CMakeLists.txt`` or ``Makefile`` used to hang every command forever
(opening it waits for a writer), and ``buildport cmake /dev/zero`` read until memory
ran out. Only regular files up to :data:`buildport.textio.MAX_FILE_BYTES` are read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildport.textio import MAX_FILE_BYTES, InputError, read_source

ROOT = Path(__file__).resolve().parent.parent
CUDA = "project(p LANGUAGES CXX CUDA)\nadd_executable(app main.cu)\n"
TIMEOUT = 60  # a hang is a failure, not a stuck test run


def buildport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "buildport", *args, "--no-cache"] if args[0] != "migrate"
                          else [sys.executable, "-m", "buildport", *args],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)


@pytest.fixture
def piped(tmp_path: Path) -> Path:
    """A project with a real CMake file and a Makefile, and named pipes under the build files' names."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "real.cmake").write_text(CUDA)
    (project / "Makefile").write_text("app: app.cu\n\tnvcc -o app app.cu\n")
    (project / "main.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    os.mkfifo(project / "CMakeLists.txt")
    os.mkfifo(project / "sub" / "Makefile")
    return project


def test_cmake_skips_a_named_pipe_in_a_tree(piped: Path) -> None:
    done = buildport("cmake", "--check", str(piped))
    assert done.returncode == 1, done.stderr  # real.cmake would change; the pipe is not waited on
    assert f"{piped / 'CMakeLists.txt'}: skipped: not a regular file (a named pipe): not read" in done.stderr


def test_make_skips_a_named_pipe_in_a_tree(piped: Path) -> None:
    done = buildport("make", "--check", str(piped))
    assert done.returncode == 1, done.stderr
    assert f"{piped / 'sub' / 'Makefile'}: skipped: not a regular file (a named pipe): not read" in done.stderr


def test_audit_reports_a_named_pipe_as_not_audited(piped: Path) -> None:
    done = buildport("audit", str(piped))
    assert done.returncode == 2
    assert f"{piped / 'CMakeLists.txt'}: error: not a regular file (a named pipe): not read" in done.stderr
    assert "real.cmake" in done.stdout


def test_migrate_out_leaves_a_named_pipe_behind_and_says_so(piped: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    tool = tmp_path / "hipify-perl"  # an engine that gives each file back as it is
    tool.write_text('#!/bin/sh\nfor a; do f=$a; done\ncat "$f"\n')
    tool.chmod(0o755)
    done = buildport("migrate", str(piped), "--out", str(out), "--hipify", str(tool))
    report = (out / "MIGRATION.md").read_text() if (out / "MIGRATION.md").exists() else ""
    assert "internal error" not in done.stderr
    assert "`CMakeLists.txt`: not copied: a named pipe" in report, done.stderr
    assert not (out / "CMakeLists.txt").exists() and (out / "real.cmake").is_file()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_named_is_an_error(device: str) -> None:
    done = buildport("cmake", device)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"{device}: error: not a regular file (a character device): not read")


def test_a_named_pipe_named_is_an_error(piped: Path) -> None:
    with pytest.raises(InputError, match=r"not a regular file \(a named pipe\): not read"):
        read_source(piped / "CMakeLists.txt")


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.cmake"
    with open(big, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    done = buildport("cmake", str(big))
    assert done.returncode == 2
    assert f"{big}: error: larger than {MAX_FILE_BYTES >> 20} MiB" in done.stderr
    skipped = buildport("cmake", "--check", str(tmp_path))
    assert f"{big}: skipped: larger than" in skipped.stderr


def test_a_folder_that_cannot_be_read_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Skipped, as before, but said (as root, a mode of 000 does not stop reading: the refusal is made)."""
    from buildport.pipeline.discovery import discover, is_cmake_file

    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "CMakeLists.txt").write_text(CUDA)
    (tmp_path / "CMakeLists.txt").write_text(CUDA)
    real = os.scandir

    def scandir(path: str = ".") -> object:
        if str(path).endswith("closed"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    skipped: list[str] = []
    assert [p.name for p in discover(tmp_path, is_cmake_file, skipped)] == ["CMakeLists.txt"]
    assert skipped == [f"{tmp_path / 'closed'}: skipped: the folder cannot be read (Permission denied)"]
