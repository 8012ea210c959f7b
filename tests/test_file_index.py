"""The cache's file index: a warm run does not read files whose metadata are as recorded, and never
takes a changed file for an unchanged one.

The runs here are in-process (click's runner) so that the index's safety margin can be set to zero:
files written by a test are otherwise too recent to be recorded (see buildport.cache.fileindex).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner

from buildport.cache import fileindex
from buildport.cli import main
from buildport.cache.fileindex import FileIndex
from buildport.textio import InputError, SourceText, digest
from tests.support.trees import Reads, make_tree

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileindex, "MARGIN_NS", 0)
    monkeypatch.setenv("BUILDPORT_REPLAY", "0")  # the runs here go file by file (tests/test_replay.py: whole runs)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "tree")


def invoke(*args: str, cwd: Path) -> tuple[int, bytes, bytes]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


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
    from buildport.pipeline import port

    real = port.unique_files

    def found_then_change(paths: Any, contents: dict[str, SourceText]) -> Any:
        for path in real(paths, contents):
            if path.endswith(os.path.join("plain", "CMakeLists.txt")):
                known = contents.get(path)
                assert known is not None and not known.is_read  # vouched for by the index
                Path(tree / path).write_text("add_library(lib x.cpp)\n")
            yield path

    monkeypatch.setattr(port, "unique_files", found_then_change)
    code, out, err = next(runs)
    assert code == 2
    assert b"plain/CMakeLists.txt: error: file changed while buildport was running" in err
    assert b"plain/CMakeLists.txt" not in out and b"cmake/CMakeLists.txt" in out  # neither old nor new text


def test_a_damaged_index_is_ignored_and_rewritten(tree: Path, tmp_path: Path, no_margin: None) -> None:
    runs = _runs(["cmake", "--check", "-v"], tree, tmp_path / "cache")
    first = next(runs)
    index = tmp_path / "cache" / fileindex.NAME
    for damage in ("\x00garbage", '{"format": 1, "files": {}}', f'{{"format": {fileindex.FORMAT}, "files": []}}',
                   f'{{"format": {fileindex.FORMAT}, "files": {{"1:2": 3}}, "listings": []}}',
                   f'{{"format": {fileindex.FORMAT}, "files": {{}}, "listings": {{"a": {{"1:2": [1, 2]}}}}}}'):
        index.write_text(damage)
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


# --- folder listings ---------------------------------------------------------------------------


class Listings:
    """Counts folders below ``root`` listed with os.scandir while active."""

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.folders: list[str] = []

    def __call__(self, monkeypatch: pytest.MonkeyPatch) -> "Listings":
        real_scandir = os.scandir

        def counting_scandir(path: Any = ".") -> Any:
            if os.path.abspath(os.fspath(path)).startswith(self.root):
                self.folders.append(os.fspath(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", counting_scandir)
        return self


@pytest.mark.parametrize("name", ["cmake-check", "audit-json"])
def test_a_warm_run_lists_no_folder_again(
    name: str, tree: Path, tmp_path: Path, no_margin: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _runs(COMMANDS[name], tree, tmp_path / "cache")
    first = next(runs)
    with monkeypatch.context() as patch:
        listed = Listings(tree)(patch)
        second = next(runs)
    assert second == first == invoke(*COMMANDS[name], "--no-cache", ".", cwd=tree)
    assert listed.folders == []


def _add_file(tree: Path) -> None:
    (tree / "plain" / "extra.cmake").write_text("enable_language(CUDA)\n")


def _add_folder(tree: Path) -> None:
    (tree / "plain" / "sub").mkdir()
    (tree / "plain" / "sub" / "CMakeLists.txt").write_text("find_package(CUDAToolkit)\n")


def _remove_file(tree: Path) -> None:
    (tree / "cmake" / "CMakeLists.txt").unlink()


def _hide_folder(tree: Path) -> None:
    (tree / "cmake").rename(tree / ".cmake")


def _make_build_tree(tree: Path) -> None:
    (tree / "cmake" / "CMakeCache.txt").write_text("# a configured build\n")


def _file_to_folder(tree: Path) -> None:
    (tree / "plain" / "CMakeLists.txt").unlink()
    (tree / "plain" / "CMakeLists.txt").mkdir()
    (tree / "plain" / "CMakeLists.txt" / "CMakeLists.txt").write_text("project(p CUDA)\n")


@pytest.mark.parametrize("change", [_add_file, _add_folder, _remove_file, _hide_folder, _make_build_tree,
                                    _file_to_folder])
def test_a_folder_whose_entries_changed_is_listed_again(
    change: Callable[[Path], None], tree: Path, tmp_path: Path, no_margin: None,
) -> None:
    args = ["cmake", "--check", "-v"]
    runs = _runs(args, tree, tmp_path / "cache")
    next(runs)
    time.sleep(0.05)  # past the file system clock's tick: the change gives the folder new times
    change(tree)
    assert next(runs) == invoke(*args, "--no-cache", ".", cwd=tree)


def test_listings_are_kept_by_predicate_and_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.pipeline.discovery import files_below, is_cmake_file, is_make_file

    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "CMakeLists.txt").write_text("project(a)\n")
    (tree / "a" / "Makefile").write_text("all:\n")

    def walk(wanted: Callable[[str], bool], code: str = "v1") -> tuple[list[str], list[str]]:
        index = FileIndex(tmp_path / "cache", code)
        index.since = time.time_ns() + 10**9  # everything here counts as settled
        with monkeypatch.context() as patch:
            listed = Listings(tree)(patch)
            found = [os.path.relpath(p, tree) for p in files_below(tree, wanted, None, {}, index)]
        index.save()
        return found, listed.folders

    assert walk(is_cmake_file) == (["a/CMakeLists.txt"], [str(tree), str(tree / "a")])
    assert walk(is_cmake_file) == (["a/CMakeLists.txt"], [])
    assert walk(is_make_file)[0] == ["a/Makefile"]  # another predicate: its own listings
    assert walk(is_make_file) == (["a/Makefile"], [])
    assert walk(lambda name: name == "Makefile")[1] != []  # no lasting name: never kept
    assert walk(lambda name: name == "Makefile")[1] != []
    assert walk(is_cmake_file, code="v2")[1] != []  # other code: listed again


def test_a_damaged_or_recent_listing_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    info = folder.stat()
    recent = FileIndex(tmp_path / "cache")  # default margin: the folder was made just now
    recent.record_listing("p", info, (False, [], ["CMakeLists.txt"], []))
    assert recent.listing("p", info) is None
    index = FileIndex(tmp_path / "cache")
    index.since = info.st_ctime_ns + 1
    index.record_listing("p", info, (True, ["a", "b c"], ["CMakeLists.txt", "x.cmake"], ["x.cmake"]))
    assert index.listing("p", info) == (True, ["a", "b c"], ["CMakeLists.txt", "x.cmake"], ["x.cmake"])
    assert index.listing("q", info) is None
    index.save()
    data = json.loads((tmp_path / "cache" / fileindex.NAME).read_text())
    [key] = data["listings"]["p"]
    for damage in ([1, "a", "b"], [1, "a", 2, ""], "x", None):
        data["listings"]["p"][key] = damage
        (tmp_path / "cache" / fileindex.NAME).write_text(json.dumps(data))
        assert FileIndex(tmp_path / "cache").listing("p", info) is None
    os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime, a new ctime
    assert index.listing("p", folder.stat()) is None


def test_a_folder_with_a_linked_build_tree_mark_is_not_recorded(tmp_path: Path) -> None:
    from buildport.pipeline.discovery import files_below, is_cmake_file

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text("project(a)\n")
    (tmp_path / "cache.txt").write_text("")
    (tree / "CMakeCache.txt").symlink_to(tmp_path / "cache.txt")  # its target can go without the folder changing
    index = FileIndex(tmp_path / "cache")
    index.since = time.time_ns() + 10**9
    assert list(files_below(tree, is_cmake_file, None, {}, index)) == [str(tree / "CMakeLists.txt")]
    assert index.listing("buildport.pipeline.discovery.is_cmake_file", tree.stat()) is None


def test_a_rewritten_file_or_folder_keeps_one_record(tree: Path, tmp_path: Path, no_margin: None) -> None:
    plain = tree / "plain"
    runs = _runs(["cmake", "--check"], plain, tmp_path / "cache")
    for i in range(3):
        next(runs)
        time.sleep(0.05)  # past the file system clock's tick
        (plain / "CMakeLists.txt").write_text(f"project(p{i})\n")  # the same inode, new times
        (plain / f"x{i}.cmake").write_text("")  # the folder's entries change too
    next(runs)
    data = json.loads((tmp_path / "cache" / fileindex.NAME).read_text())
    file_inode = f":{(plain / 'CMakeLists.txt').stat().st_ino}:"
    folder_inode = f":{plain.stat().st_ino}:"
    assert sum(file_inode in stamp for stamp in data["files"]) == 1
    [listings] = data["listings"].values()
    assert sum(folder_inode in stamp for stamp in listings) == 1
    assert len(data["files"]) == 4  # CMakeLists.txt and x0..x2.cmake
