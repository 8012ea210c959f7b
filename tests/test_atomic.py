"""``atomic.write_json``: cache files written whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from buildport.cache import atomic
from buildport.cache.atomic import write_json


def _read(path: Path) -> object:
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        return json.load(handle)


def test_written_replaced_and_no_temporary_file_left(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "f.json"
    assert write_json(target, {"a": [1, "é"]})
    assert _read(target) == {"a": [1, "é"]}
    assert write_json(target, ["new"])
    assert _read(target) == ["new"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.json"]


def test_a_name_that_is_not_utf8_comes_back(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.cmake")  # a lone surrogate stands for the byte
    assert write_json(tmp_path / "f.json", {name: "d"})
    assert _read(tmp_path / "f.json") == {name: "d"}


def test_what_cannot_be_written_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    assert write_json(target, {"old": 1})
    assert not write_json(target, {"\ud800": 1})  # a surrogate that stands for no byte
    with pytest.raises(TypeError):  # not JSON at all: a bug, not a cache that cannot be written
        write_json(target, {"x": object()})
    assert _read(target) == {"old": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert not write_json(blocker / "f.json", {})


def test_a_temporary_name_left_by_a_dead_writer_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import itertools

    monkeypatch.setattr(atomic, "_numbers", itertools.count())
    stale = tmp_path / f".tmp-{os.getpid()}-0.json"
    stale.write_text("left behind")
    assert write_json(tmp_path / "f.json", {"a": 1})
    assert _read(tmp_path / "f.json") == {"a": 1}
    assert stale.read_text() == "left behind"  # not written through, not removed (pruning drops old ones)
    assert sorted(p.name for p in tmp_path.iterdir()) == [stale.name, "f.json"]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "f.json").mkdir()  # a folder where the file would go: the rename fails
    assert not write_json(tmp_path / "f.json", {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_written_for_the_owner_alone(tmp_path: Path) -> None:
    assert write_json(tmp_path / "f.json", [1])
    assert (tmp_path / "f.json").stat().st_mode & 0o777 == 0o600
