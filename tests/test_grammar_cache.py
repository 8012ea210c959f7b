"""What is derived from the grammars is kept in the parser cache, is what Lark derives, and lets a
CMake run whose files all parse go without importing Lark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildport import grammars
from buildport.syntax import cmake_lark

REPO = Path(__file__).resolve().parent.parent
REQUIRED = ("IDENT", "SPACE", "QUOTED_ARG")


def test_cached_terminals_are_lark_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    calls: list[int] = []

    def derive() -> dict[str, str]:
        calls.append(1)
        return cmake_lark.terminals()

    first = grammars.cached_terminals("cmake", derive, REQUIRED)
    [kept] = tmp_path.glob("cmake-terminals-*.json")
    second = grammars.cached_terminals("cmake", derive, REQUIRED)
    assert first == second == cmake_lark.terminals() == json.loads(kept.read_text())
    assert len(calls) == 1  # the second answer came from the file


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-json", "empty"])
def test_a_damaged_parser_cache_is_rebuilt_not_a_failure_of_every_later_run(tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"

    def run(kind: str, n: int, *cache_args: str) -> str:
        path = tmp_path / (f"x{n}.cmake" if kind == "cmake" else f"x{n}.mk")
        path.write_text(f"project(p{n} CUDA)\nadd_executable(a{n} a.cu)\n" if kind == "cmake"
                        else f"a{n}: a.cu\n\tnvcc -O{n} -o a{n} a.cu\n")
        done = subprocess.run([sys.executable, "-m", "buildport", kind, *(cache_args or ("--cache-dir", str(cache))),
                               str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    for kind in ("cmake", "make"):
        run(kind, 1)
    files = list((cache / "parsers").iterdir())
    assert files
    for f in files:
        data = f.read_bytes()
        f.write_bytes({"garbage": b"\x80not a cache\x00", "truncated": data[: len(data) // 2],
                       "other-json": b'{"x": [1, 2]}', "empty": b""}[damage])
    for n in (2, 3):  # the run after the damage, and the one after that
        for kind in ("cmake", "make"):
            assert run(kind, n) == run(kind, n, "--no-cache")
