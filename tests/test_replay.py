"""Whole runs replayed (buildport.cache.replay): a run that writes nothing, over files that have not changed,
prints again exactly what it printed, without reading or porting a file; any change to what the run
looked at, or to its options, and it runs as usual.

The runs are in-process (click's runner) so that the file index's safety margin can be set to zero:
files written by a test are otherwise too recent to vouch for (see buildport.cache.fileindex).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from buildport import audit

from buildport.cache import fileindex

from buildport.cache import replay
from buildport.pipeline import port
from buildport.cli import main

from tests.support.trees import Reads, make_tree

Outcome = tuple[int, bytes, bytes, str]


@pytest.fixture
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileindex, "MARGIN_NS", 0)
    monkeypatch.delenv("BUILDPORT_REPLAY", raising=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = make_tree(tmp_path / "tree")
    (root / "broken").mkdir()
    (root / "broken" / "CMakeLists.txt").write_text("add_executable(x a.cu\n")
    (root / "bin").mkdir()
    (root / "bin" / "data.cmake").write_bytes(b"set(A 1)\x00\n")  # skipped as binary: a message on stderr
    return root


def invoke(*args: str, cwd: Path, stdin: bytes | None = None) -> Outcome:
    """Exit code, stdout, stderr and both as they were interleaved."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes, result.output


def memos(cache: Path) -> list[Path]:
    return sorted((cache / replay.FOLDER).glob("*.json"))


class Forbidden:
    """Fails the test if the run ports, audits or reads a file below ``root`` (a replay does none)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        def refuse(*_args: Any, **_kwargs: Any) -> Any:
            raise AssertionError("the run was not replayed")

        monkeypatch.setattr(port, "port_files", refuse)
        monkeypatch.setattr(audit, "audit", refuse)
        self.reads = Reads(root)(monkeypatch)


COMMANDS = {
    "cmake-check": ["cmake", "--check", "-v"],
    "cmake-diff": ["cmake", "--diff"],
    "cmake-print": ["cmake"],
    "make-check": ["make", "--check"],
    "make-print": ["make"],
    "audit-text": ["audit"],
    "audit-json": ["audit", "--format", "json"],
    "audit-sarif": ["audit", "--format", "sarif", "--select", "build-"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_run_over_an_unchanged_tree_is_replayed_byte_for_byte(
    name: str, tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = [*COMMANDS[name], "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    assert first[1] or first[2]
    # the streams as written (how they interleave depends on buffering, which the runs differ in)
    assert first[:3] == invoke(*COMMANDS[name], "--no-cache", ".", cwd=tree)[:3]
    assert len(memos(tmp_path / "cache")) == 1
    with monkeypatch.context() as patch:
        forbidden = Forbidden(patch, tree)
        assert invoke(*args, "-j", "2", cwd=tree) == first  # --jobs is no part of the key
        assert forbidden.reads.paths == []


def _edit_same_size(tree: Path) -> None:
    target = tree / "plain" / "CMakeLists.txt"
    before = target.stat()
    target.write_text("add_executable(app main.cu )\n")  # same length and times: a CUDA source now
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


CHANGES = {
    "a file edited to the same size and times": _edit_same_size,
    "a file added to a folder": lambda t: (t / "plain" / "extra.cmake").write_text("find_package(CUDA)\n"),
    "a folder added": lambda t: (t / "new").mkdir() or (t / "new" / "CMakeLists.txt").write_text(
        "enable_language(CUDA)\n"),
    "a file removed": lambda t: (t / "broken" / "CMakeLists.txt").unlink(),
    "a file renamed": lambda t: (t / "cmake" / "CMakeLists.txt").rename(t / "cmake" / "old.txt"),
    "a build tree marked": lambda t: (t / "cmake" / "CMakeCache.txt").write_text(""),
    "a binary file mended": lambda t: (t / "bin" / "data.cmake").write_bytes(b"set(CUDA_PATH 1)\n"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("command", [["cmake", "--check", "-v"], ["audit", "--format", "json"]])
def test_any_change_to_what_the_run_looked_at_runs_it_again(
    change: str, command: list[str], tree: Path, tmp_path: Path, no_margin: None,
) -> None:
    args = [*command, "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    assert memos(tmp_path / "cache")
    CHANGES[change](tree)
    expected = invoke(*command, "--no-cache", ".", cwd=tree)[:3]
    assert expected != first[:3]  # each change shows in the output
    assert invoke(*args, cwd=tree)[:3] == expected
    assert invoke(*args, cwd=tree)[:3] == expected  # and the new run is kept in its turn


def test_an_include_that_appears_outside_the_walk_runs_it_again(tmp_path: Path, no_margin: None) -> None:
    (tmp_path / "sub").mkdir()
    # -G is nvcc's only where $(CC) is nvcc, which the included file (outside the walk, never rewritten) says
    (tmp_path / "sub" / "Makefile").write_text("include ../outside.mk\nall:\n\t$(CC) -G -o x x.cu\n")
    args = ["make", "--check", "-v", "--cache-dir", str(tmp_path / "cache"), "sub"]
    first = invoke(*args, cwd=tmp_path)
    assert first[0] == 0 and memos(tmp_path / "cache")
    (tmp_path / "outside.mk").write_text("CC := nvcc\n")  # the folder walked does not change
    expected = invoke("make", "--check", "-v", "--no-cache", "sub", cwd=tmp_path)[:3]
    assert expected[0] == 1 and b"would rewrite" in expected[2]
    assert invoke(*args, cwd=tmp_path)[:3] == expected


def test_a_named_file_that_appears_runs_it_again(tmp_path: Path, no_margin: None) -> None:
    args = ["audit", "--cache-dir", str(tmp_path / "cache"), "CMakeLists.txt"]
    missing = invoke(*args, cwd=tmp_path)
    assert missing[0] == 2 and b"no such file" in missing[2]
    assert invoke(*args, cwd=tmp_path) == missing  # replayed: still missing
    (tmp_path / "CMakeLists.txt").write_text("find_package(CUDAToolkit REQUIRED)\n")
    found = invoke(*args, cwd=tmp_path)
    assert found[0] == 1 and b"cmake-find-package" in found[1]  # CUDA the port rewrites: fails the gate


def test_options_and_the_working_folder_are_part_of_the_key(tree: Path, tmp_path: Path, no_margin: None) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    gfx90a = invoke("cmake", "--offload-arch", "gfx90a", *cache, "cmake", cwd=tree)
    gfx1100 = invoke("cmake", "--offload-arch", "gfx1100", *cache, "cmake", cwd=tree)
    assert gfx90a != gfx1100 and b"gfx1100" in gfx1100[1]
    inside = invoke("cmake", "--offload-arch", "gfx1100", *cache, ".", cwd=tree / "cmake")
    assert inside[1] == gfx1100[1]  # one file: no "==> path <==" heading, the same text
    assert invoke("audit", "--select", "cmake-", *cache, ".", cwd=tree) != invoke("audit", *cache, ".", cwd=tree)
    assert len(memos(tmp_path / "cache")) == 5


def test_stdout_and_stderr_come_back_in_the_order_written(tree: Path, tmp_path: Path, no_margin: None) -> None:
    args = ["cmake", "-v", "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    assert first[1] and first[2]
    again = invoke(*args, cwd=tree)
    assert again[3] == first[3]


def test_recent_files_keep_no_memo(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUILDPORT_REPLAY", raising=False)
    args = ["cmake", "--check", "--cache-dir", str(tmp_path / "cache"), "."]
    assert invoke(*args, cwd=tree) == invoke(*args, cwd=tree)
    assert memos(tmp_path / "cache") == []  # the tree was written a moment ago


@pytest.mark.parametrize("case", ["in-place", "stdin", "debug", "no-cache", "no-index", "switched-off"])
def test_runs_that_keep_no_memo(
    case: str, tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    args = ["cmake", "--cache-dir", str(cache)]
    stdin = None
    if case == "in-place":
        args += ["--in-place", "."]
    elif case == "stdin":
        args += ["-"]
        stdin = b"find_package(CUDA)\n"
    elif case == "debug":
        args += ["--debug", "--check", "."]
    elif case == "no-cache":
        args += ["--no-cache", "--check", "."]
    elif case == "no-index":
        monkeypatch.setenv("BUILDPORT_FILE_INDEX", "0")
        args += ["--check", "."]
    else:
        monkeypatch.setenv("BUILDPORT_REPLAY", "0")
        args += ["--check", "."]
    invoke(*args, cwd=tree, stdin=stdin)
    assert memos(cache) == []


def test_a_damaged_memo_is_a_miss_and_is_kept_again(tree: Path, tmp_path: Path, no_margin: None) -> None:
    args = ["audit", "--format", "json", "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    (memo,) = memos(tmp_path / "cache")
    good = json.loads(memo.read_text(encoding="utf-8"))
    damaged = [b"{", b"[]", json.dumps({**good, "key": "other"}).encode(),
               json.dumps({**good, "trail": {"kinds": "f", "paths": "a\0b", "stamps": "1"}}).encode(),
               json.dumps({**good, "exit": "1"}).encode(), json.dumps({**good, "output": [[1, 2]]}).encode()]
    for data in damaged:
        memo.write_bytes(data)
        assert invoke(*args, cwd=tree) == first
        assert json.loads(memo.read_text(encoding="utf-8")) == good


def test_memos_are_bounded(tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "KEEP", 2)
    for arch in ("gfx90a", "gfx908", "gfx1100", "gfx942"):
        invoke("cmake", "--check", "--offload-arch", arch, "--cache-dir", str(tmp_path / "cache"), ".", cwd=tree)
    assert len(memos(tmp_path / "cache")) == 2


def test_a_large_output_keeps_no_memo(tree: Path, tmp_path: Path, no_margin: None,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "MAX_OUTPUT", 100)
    args = ["cmake", "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    assert len(first[1]) > 100 and memos(tmp_path / "cache") == []
    assert invoke(*args, cwd=tree) == first


def test_a_trail_checks_every_kind_of_entry(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    os.symlink("f", tmp_path / "link")
    trail = replay.Trail(since=2**63)
    trail.folder(str(tmp_path / "d"), os.stat(tmp_path / "d"))
    trail.file(str(tmp_path / "f"), os.lstat(tmp_path / "f"))
    trail.path(str(tmp_path / "link"))
    trail.path(str(tmp_path / "missing"))
    assert not trail.spoiled
    packed = replay.packed(trail.entries)
    assert replay.unchanged(packed)
    (tmp_path / "missing").write_text("")
    assert not replay.unchanged(packed)
    (tmp_path / "missing").unlink()
    assert replay.unchanged(packed)
    (tmp_path / "f").write_text("y")  # the link leads to it too
    assert not replay.unchanged(packed)
    assert not replay.Trail(since=0).spoiled
    recent = replay.Trail(since=0)
    recent.file(str(tmp_path / "f"), os.lstat(tmp_path / "f"))
    assert recent.spoiled


def test_a_memo_replayed_is_marked_used_so_that_pruning_keeps_it(tree: Path, tmp_path: Path, no_margin: None) -> None:
    args = ["cmake", "--check", "--cache-dir", str(tmp_path / "cache"), "."]
    first = invoke(*args, cwd=tree)
    (memo,) = memos(tmp_path / "cache")
    os.utime(memo, (1_000_000, 1_000_000))
    assert invoke(*args, cwd=tree) == first
    assert memo.stat().st_mtime > 1_000_000
