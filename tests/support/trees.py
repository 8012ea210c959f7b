"""Trees for the tests of the cache, the file index and the replay: a small CUDA CMake project and a suite of
Makefiles, and a way to count the files a run opens."""

from __future__ import annotations

import builtins
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "projects" / "cmake-legacy-findcuda"
MAKE_PROJECT = REPO / "fixtures" / "projects" / "make-suite-shared-config"


def make_tree(root: Path) -> Path:
    """A CUDA CMake project, a suite of Makefiles sharing an included file, and a plain CMake file."""
    shutil.copytree(PROJECT, root / "cmake")
    shutil.copytree(MAKE_PROJECT, root / "make")
    (root / "plain").mkdir()
    (root / "plain" / "CMakeLists.txt").write_text("add_executable(app main.cpp)\n")
    return root


class Reads:
    """Counts files opened for reading below ``root`` while active (by ``open`` or ``os.open``)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.paths: list[str] = []

    def __call__(self, monkeypatch: pytest.MonkeyPatch) -> "Reads":
        real_open = builtins.open

        def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and "r" in mode:
                path = os.path.abspath(os.fspath(file))
                if path.startswith(self.root):
                    self.paths.append(path)
            return real_open(file, mode, *args, **kwargs)

        real_os_open = os.open

        def counting_os_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> Any:
            path = os.path.abspath(os.fspath(file))
            if path.startswith(self.root) and flags & (os.O_WRONLY | os.O_RDWR) == 0:
                self.paths.append(path)
            return real_os_open(file, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", counting_open)
        monkeypatch.setattr(os, "open", counting_os_open)
        return self
