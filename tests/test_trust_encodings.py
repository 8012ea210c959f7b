"""Encodings and line endings survive ``buildport cmake --in-place`` byte for byte.

Each case is run through the real command line in a subprocess. A file with no
CUDA in it must come back identical; a CUDA file must come back exactly as the
engine ports it, with its BOM, its foreign bytes and each line's own ending.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from buildport.engine import port_cmake
from buildport.textio import decode, encode

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

ROOT = Path(__file__).resolve().parent.parent

CUDA_LINES = [
    b"cmake_minimum_required(VERSION 3.18)",
    b"project(demo LANGUAGES CXX CUDA)",
    b"# Auteur : Fran\xc3\xa7ois \xe2\x98\x83",
    b"find_package(CUDAToolkit REQUIRED)",
    b"add_executable(demo main.cu)",
    b"target_link_libraries(demo PRIVATE CUDA::cublas)",
]
PLAIN_LINES = [b"cmake_minimum_required(VERSION 3.10)", b"project(plain CXX)", b"# caf\xc3\xa9", b"add_executable(p main.cpp)"]
BOM = b"\xef\xbb\xbf"
LATIN1 = b"# Copyright J\xfcrgen M\xfcller \xa9 \xe9t\xe9"


def join(lines: list[bytes], ends: list[bytes], final: bool = True) -> bytes:
    out = b"".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    return out if final else out[: -len(ends[(len(lines) - 1) % len(ends)])]


CASES = {
    "utf8-lf": join(CUDA_LINES, [b"\n"]),
    "utf8-bom-lf": BOM + join(CUDA_LINES, [b"\n"]),
    "utf8-bom-crlf": BOM + join(CUDA_LINES, [b"\r\n"]),
    "crlf": join(CUDA_LINES, [b"\r\n"]),
    "cr-only": join(CUDA_LINES, [b"\r"]),
    "mixed-endings": join(CUDA_LINES, [b"\r\n", b"\n", b"\r"]),
    "latin1": join([CUDA_LINES[0], LATIN1, *CUDA_LINES[1:]], [b"\n"]),
    "latin1-crlf-no-final-newline": join([LATIN1, *CUDA_LINES], [b"\r\n"], final=False),
    "invalid-utf8-in-string": join([*CUDA_LINES, b'message(STATUS "\xff\xfe\xc3(")'], [b"\n"]),
}


def run_in_place(path: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "buildport", "cmake", "--in-place", "-q", str(path)],
        capture_output=True, timeout=120, cwd=ROOT,
    )


@pytest.mark.parametrize("name", CASES)
def test_cuda_file_keeps_its_bytes(tmp_path: Path, name: str) -> None:
    data = CASES[name]
    path = tmp_path / "CMakeLists.txt"
    path.write_bytes(data)
    done = run_in_place(path)
    assert done.returncode == 0, done.stderr
    out = path.read_bytes()
    expected = encode(port_cmake(decode(data), str(path)).text)
    assert out == expected
    assert b"project(demo LANGUAGES CXX HIP)" in out
    assert out.startswith(BOM) == data.startswith(BOM)
    for kept in (b"add_executable(demo main.cu)", LATIN1, CUDA_LINES[2], b'"\xff\xfe\xc3("'):
        assert (kept in data) == (kept in out)
    styles = set(re.findall(rb"\r\n|\n|\r", data))
    if len(styles) == 1:  # new lines take the file's one line ending
        assert set(re.findall(rb"\r\n|\n|\r", out)) == styles


@pytest.mark.parametrize("name", CASES)
def test_plain_file_is_untouched(tmp_path: Path, name: str) -> None:
    """The same encodings and endings in a file with no CUDA: not a byte moves."""
    data = CASES[name]
    plain = data.replace(b"CUDA::cublas", b"Threads::Threads").replace(b"CXX CUDA", b"CXX")
    plain = plain.replace(b"find_package(CUDAToolkit REQUIRED)", b"find_package(Threads)").replace(b"main.cu)", b"main.cpp)")
    path = tmp_path / "plain.cmake"
    path.write_bytes(plain)
    before = path.stat()
    done = run_in_place(path)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == plain
    assert path.stat().st_mtime_ns == before.st_mtime_ns, "an unchanged file is not rewritten"


def test_binary_file_named_explicitly_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    data = b"project(x CUDA)\n\x00\x01\x02"
    path.write_bytes(data)
    done = run_in_place(path)
    assert done.returncode == 2
    assert f"{path}:2:1: error: binary file".encode() in done.stderr
    assert b"Traceback" not in done.stderr
    assert path.read_bytes() == data


def test_binary_file_in_a_directory_is_skipped_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_bytes(b"project(x LANGUAGES CXX CUDA)\n")
    binary = tmp_path / "blob.cmake"
    binary.write_bytes(b"\x7fELF\x00\x00")
    done = run_in_place(tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{binary}: skipped: binary file".encode() in done.stderr
    assert binary.read_bytes() == b"\x7fELF\x00\x00"
    assert b"HIP" in (tmp_path / "CMakeLists.txt").read_bytes()


def test_directory_named_like_a_build_file(tmp_path: Path) -> None:
    odd = tmp_path / "CMakeLists.txt"
    odd.mkdir()
    (odd / "CMakeLists.txt").write_bytes(b"project(inner LANGUAGES CUDA)\n")
    named = run_in_place(odd)  # named explicitly: a directory called CMakeLists.txt is an error
    assert named.returncode == 2
    assert f"{odd}: error: is a directory".encode() in named.stderr
    assert b"Traceback" not in named.stderr
    (tmp_path / "x.cmake").mkdir()  # below a directory: looked into, never read as a file
    walked = run_in_place(tmp_path)
    assert walked.returncode == 0, walked.stderr
