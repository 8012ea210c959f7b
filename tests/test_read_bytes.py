"""``read_bytes``: a file's bytes whatever its size says, and the errors reading reports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from buildport.textio import InputError, read_bytes, read_source

SIZES = [0, 1, 4095, 65536, 65537, 3 * 1024 * 1024 + 7]


@pytest.mark.parametrize("size", SIZES)
def test_the_bytes_come_back_whole_with_or_without_a_size(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    target = tmp_path / "f"
    target.write_bytes(data)
    assert read_bytes(str(target)) == data
    assert read_bytes(str(target), size) == data


@pytest.mark.parametrize("stale", [0, 10, 70000])
def test_a_stale_size_still_reads_the_whole_file(tmp_path: Path, stale: int) -> None:
    data = b"x" * 5000 + b"end"
    target = tmp_path / "f"
    target.write_bytes(data)  # grown since a stat said 0 or 10 bytes, or shrunk from 70000
    assert read_bytes(str(target), stale) == data


def test_errors_are_reported_as_before(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_bytes(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        read_bytes(str(tmp_path / "missing"))
    with pytest.raises(InputError, match="is a directory"):
        read_source(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        read_source(tmp_path / "missing")


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"abc")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        read_bytes(str(target), 3)
        with pytest.raises(IsADirectoryError):
            read_bytes(str(tmp_path))
    assert len(os.listdir("/proc/self/fd")) == before
