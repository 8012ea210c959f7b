"""The cache's file index: a warm run does not read files whose metadata are as recorded, and never
takes a changed file for an unchanged one.

The runs here are in-process (click's runner) so that the index's safety margin can be set to zero:
files written by a test are otherwise too recent to be recorded (see buildport.fileindex).
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from buildport import fileindex
from buildport.cli import main
from buildport.fileindex import FileIndex
from buildport.textio import InputError, SourceText, digest

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "fixtures" / "projects" / "cmake-legacy-findcuda"
MAKE_PROJECT = REPO / "fixtures" / "projects" / "make-suite-shared-config"


@pytest.fixture
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileindex, "MARGIN_NS", 0)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(PROJECT, root / "cmake")
    shutil.copytree(MAKE_PROJECT, root / "make")
    (root / "plain").mkdir()
    (root / "plain" / "CMakeLists.txt").write_text("add_executable(app main.cpp)\n")
    return root


def invoke(*args: str, cwd: Path) -> tuple[int, bytes, bytes]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


class Reads:
    """Counts files opened for reading below ``root`` while active."""

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

        monkeypatch.setattr(builtins, "open", counting_open)
        return self


def _runs(args: list[str], tree: Path, cache: Path) -> Iterator[tuple[int, bytes, bytes]]:
    while True:
        yield invoke(*args, "--cache-dir", str(cache), ".", cwd=tree)


COMMANDS = {
    "cmake-check": ["cmake", "--check", "-v"],
    "cmake-print": ["cmake"],
    "audit-json": ["audit", "--format", "json"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_warm_run_reads_only_what_it_must_and_prints_the_same(
    name: str, tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = COMMANDS[name]
    runs = _runs(args, tree, tmp_path / "cache")
    first = next(runs)
    assert (tmp_path / "cache" / fileindex.NAME).is_file()
    with monkeypatch.context() as patch:
        reads = Reads(tree)(patch)
        second = next(runs)
    assert second == first
    uncached = invoke(*args, "--no-cache", ".", cwd=tree)
    assert second == uncached
    if name == "cmake-print":  # every unchanged file's text is printed, so each is read, once
        assert len(reads.paths) == len(set(reads.paths)) > 0
    else:
        assert reads.paths == []


def test_a_file_changed_to_the_same_size_and_mtime_is_read_again(tree: Path, tmp_path: Path, no_margin: None) -> None:
    target = tree / "plain" / "CMakeLists.txt"
    runs = _runs(["cmake", "--check"], tree / "plain", tmp_path / "cache")
    assert next(runs)[0] == 0  # nothing to port
    before = target.stat()
    target.write_text("add_executable(app main.cu )\n")  # same length, now a CUDA source
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    code, _out, err = next(runs)
    assert code == 1 and b"would rewrite CMakeLists.txt" in err


def test_files_written_too_recently_are_not_recorded(tmp_path: Path) -> None:
    target = tmp_path / "CMakeLists.txt"
    target.write_text("project(x)\n")
    info = target.stat()
    index = FileIndex(tmp_path / "cache")  # default margin: the file was written just now
    index.record(info, "d" * 64)
    index.save()
    assert FileIndex(tmp_path / "cache").lookup(info) is None
    settled = FileIndex(tmp_path / "cache")
    settled.since = info.st_ctime_ns + 1
    settled.record(info, "d" * 64)
    settled.save()
    assert FileIndex(tmp_path / "cache").lookup(info) == "d" * 64
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime, but a new ctime
    assert FileIndex(tmp_path / "cache").lookup(target.stat()) is None


def test_a_vouched_file_that_no_longer_matches_is_an_error(tmp_path: Path) -> None:
    target = tmp_path / "CMakeLists.txt"
    target.write_bytes(b"project(x)\n")
    assert SourceText.vouched(str(target), digest(b"project(x)\n")).text == "project(x)\n"
    stale = SourceText.vouched(str(target), digest(b"project(y)\n"))
    with pytest.raises(InputError, match="changed while buildport was running"):
        stale.text


def test_a_file_changed_between_discovery_and_reading_is_reported(
    tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _runs(["cmake"], tree, tmp_path / "cache")
    next(runs)
    from buildport import runner

    real = runner._load

    def load_then_change(path: str, stdin: bytes | None, known: SourceText | None = None) -> Any:
        if path.endswith(os.path.join("plain", "CMakeLists.txt")):
            assert known is not None and not known.is_read  # vouched for by the index
            Path(tree / path).write_text("add_library(lib x.cpp)\n")
        return real(path, stdin, known)

    monkeypatch.setattr(runner, "_load", load_then_change)
    code, out, err = next(runs)
    assert code == 2
    assert b"plain/CMakeLists.txt: error: file changed while buildport was running" in err
    assert b"plain/CMakeLists.txt" not in out and b"cmake/CMakeLists.txt" in out  # neither old nor new text


def test_a_damaged_index_is_ignored_and_rewritten(tree: Path, tmp_path: Path, no_margin: None) -> None:
    runs = _runs(["cmake", "--check", "-v"], tree, tmp_path / "cache")
    first = next(runs)
    index = tmp_path / "cache" / fileindex.NAME
    for damage in (b"\x00garbage", b'{"format": 1, "files": []}', b'{"format": 1, "files": {"1:2": "x"}}'):
        index.write_bytes(damage)
        assert next(runs) == first
        assert json.loads(index.read_text())["files"]  # recorded again


def test_the_index_can_be_switched_off(tree: Path, tmp_path: Path, no_margin: None,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDPORT_FILE_INDEX", "0")
    first = next(_runs(["cmake", "--check"], tree, tmp_path / "cache"))
    assert not (tmp_path / "cache" / fileindex.NAME).exists()
    assert first[0] == 1


def test_the_index_keeps_the_newest_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileindex, "KEEP", 3)
    infos = []
    for i in range(5):
        path = tmp_path / f"f{i}"
        path.write_text(str(i))
        infos.append(path.stat())
    for info in infos:  # one run per file, oldest first
        index = FileIndex(tmp_path / "cache")
        index.since = max(i.st_ctime_ns for i in infos) + 1
        index.record(info, digest(b"x"))
        index.save()
    kept = FileIndex(tmp_path / "cache")
    assert [kept.lookup(info) is not None for info in infos] == [False, False, True, True, True]
