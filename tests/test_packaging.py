"""What the project ships: an sdist that holds everything its own tests read, and pre-commit hooks whose
commands and file patterns are the tool's."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Tracked at the top level, and not for the sdist: the repository's and its CI's own files.
NOT_SHIPPED = {".ci", ".gitattributes", ".gitignore", "pyproject.toml"}  # (pyproject.toml: always in an sdist)


def _tracked_top_level() -> set[str] | None:
    """The top-level entries git tracks; None outside a git checkout (an unpacked sdist)."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {line.split("/", 1)[0] for line in listed.splitlines() if line} or None


def test_the_sdist_holds_every_part_of_the_project() -> None:
    include = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["sdist"]
                  ["include"])
    tracked = _tracked_top_level()
    if tracked is not None:
        assert tracked - NOT_SHIPPED == include
    assert all((REPO / name).exists() for name in include)  # in an unpacked sdist too: everything is there


def _hooks() -> list[dict[str, str]]:
    hooks: list[dict[str, str]] = []
    for line in (REPO / ".pre-commit-hooks.yaml").read_text().splitlines():  # a flat list of flat maps
        if line.startswith("- "):
            hooks.append({})
            line = line[2:]
        key, _, value = line.strip().partition(": ")
        hooks[-1][key] = value.strip("'")
    return hooks


@pytest.mark.parametrize(("hook", "matched", "unmatched"), [
    ("buildport-cmake", ["CMakeLists.txt", "cmake/gpu.cmake"], ["Makefile", "src/a.cu", "CMakeLists.txt.in"]),
    ("buildport-make", ["Makefile", "sub/GNUmakefile", "common.mk"], ["CMakeLists.txt", "Makefile.am"]),
    ("buildport-audit", ["CMakeLists.txt", "a/k.cu", "b.mk", "setup.py"], ["README.md", "build.py"]),
    ("buildport-python", ["setup.py", "ext/setup.py"], ["mysetup.py", "setup.py.in", "CMakeLists.txt"]),
])
def test_the_hooks_run_the_tool_on_its_files(hook: str, matched: list[str], unmatched: list[str]) -> None:
    row = next(h for h in _hooks() if h["id"] == hook)
    command = row["entry"].split()
    assert command[0] == "buildport" and command[1] == hook.removeprefix("buildport-")
    if hook != "buildport-audit":
        assert "--in-place" in command
    pattern = re.compile(row["files"])
    assert all(pattern.search(name) for name in matched)
    assert not any(pattern.search(name) for name in unmatched)
