"""Fidelity: the syntax fixtures, and (where a mirror of it is here) CMake's own source tree.

``fixtures/cmake-syntax/`` holds small cases rewritten by hand from what a run
of ``scripts/roundtrip_corpus.py`` over real trees turned up:

- ``*.cmake``: valid, with no CUDA: each parses, prints back byte for byte (both
  parsers agree) and comes out of ``port_cmake`` unchanged;
- ``invalid/*.cmake``: rejected, at the ``line:col`` and with the words in the
  ``.error`` file beside it;
- ``cmake-rejects/*.cmake``: files whose tokens are valid but that CMake refuses (rejected too);
- ``port-identity/*.cmake``: files the rewrite must leave alone (or, ``*.cuda.cmake``,
  must port without an internal error).
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from buildport.engine import port_cmake
from buildport.syntax.cmake import parse_cmake, parse_cmake_lark
from buildport.syntax.errors import ParseError
from buildport.textio import InputError, decode, encode

ROOT = Path(__file__).resolve().parent.parent
SYNTAX = ROOT / "fixtures" / "cmake-syntax"
CMAKE_MIRROR = Path("/work/.mirror/Kitware+CMake/repo")


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("roundtrip_corpus", ROOT / "scripts" / "roundtrip_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def names(folder: Path, pattern: str = "*.cmake") -> list[str]:
    return sorted(p.name for p in folder.glob(pattern))


@pytest.mark.parametrize("name", names(SYNTAX))
def test_valid_fixture_round_trips(name: str) -> None:
    data = (SYNTAX / name).read_bytes()
    text = decode(data, name)
    tree = parse_cmake(text, name)
    assert encode(str(tree)) == data
    assert tree == parse_cmake_lark(text, name)
    assert port_cmake(text, name).text == text, "no CUDA here: the rewrite must not touch it"


def expectation(path: Path) -> tuple[str, str]:
    where, words = (path.parent / (path.name + ".error")).read_text().strip().split(": ", 1)
    return where, words


@pytest.mark.parametrize("name", names(SYNTAX / "invalid"))
def test_invalid_fixture_is_rejected_with_a_position(name: str) -> None:
    path = SYNTAX / "invalid" / name
    where, words = expectation(path)
    with pytest.raises((ParseError, InputError)) as info:
        parse_cmake(decode(path.read_bytes(), name), name)
    error = info.value
    assert f"{error.line}:{error.col}" == where
    assert words in error.message
    assert str(error).startswith(f"{name}:{where}: error: ")


#: CMake rejects these when it reads the file, though every token is valid.
@pytest.mark.parametrize("name", names(SYNTAX / "cmake-rejects"))
def test_what_cmake_rejects_is_rejected(name: str) -> None:
    path = SYNTAX / "cmake-rejects" / name
    where, words = expectation(path)
    with pytest.raises(ParseError) as info:
        parse_cmake(decode(path.read_bytes(), name), name)
    assert f"{info.value.line}:{info.value.col}" == where and words in info.value.message.lower()


#: Reported engine bugs, each reduced from a file of CMake's own tree.
PORT_BUGS: dict[str, str] = {}  # reduced engine bugs still open (none)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(reason=PORT_BUGS[n], strict=True)) if n in PORT_BUGS else n
     for n in names(SYNTAX / "port-identity")],
)
def test_port_identity(name: str) -> None:
    text = decode((SYNTAX / "port-identity" / name).read_bytes(), name)
    result = port_cmake(text, name)
    if not name.endswith(".cuda.cmake"):
        assert result.text == text


def test_script_prints_counts_and_positions(tmp_path: Path) -> None:
    (tmp_path / "ok.cmake").write_bytes((SYNTAX / "bracket-crlf.cmake").read_bytes())
    (tmp_path / "bad.cmake").write_bytes(b'set(a "b)\n')
    (tmp_path / "blob.cmake").write_bytes(b"\x00")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "roundtrip_corpus.py"), str(tmp_path),
                           "--kind", "cmake"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"rejected: {tmp_path / 'bad.cmake'}:1:7: unterminated quoted argument" in done.stdout
    assert ("cmake: read 2 (0.0 MB), parsed 1, identical after print 1, rejected with a position 1, "
            "failures 0, skipped 1 (binary)") in done.stdout


# --- CMake's own source tree --------------------------------------------------------------------

#: Files of CMake's tree that are not CMake: configure_file templates, expected-output regexes,
#: a C header, and the deliberately broken files of the syntax tests.
NOT_CMAKE = {
    "Modules/FindCUDA/run_nvcc.cmake", "Tests/RunCMake/CommandLine/E_sleep-no-args-stderr.cmake",
    "Utilities/cmcurl/CMake/curl-config.in.cmake", "Utilities/cmexpat/expat_config.h.cmake",
    "Tests/RunCMake/include/malformedInclude.cmake",
    *(f"Tests/RunCMake/Syntax/{n}.cmake" for n in (
        "CommandEOF", "CommandError0", "CommandError2", "OneCharacter", "UnterminatedBracket0",
        "UnterminatedBracket1", "UnterminatedBracketComment", "UnterminatedCall1", "UnterminatedCall2",
        "UnterminatedString", "BracketNoSpace0", "CommandError1", "BracketComment4")),
}

#: What ``port_cmake`` does wrong on the tree today (reported; see PORT_BUGS for reduced cases).
KNOWN_PORT_PROBLEMS: set[str] = set()


@pytest.fixture(scope="module")
def cmake_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """CMake's tree at the mirror's HEAD, extracted to a temporary folder, and the script's tally of it."""
    if not (CMAKE_MIRROR / "HEAD").exists():
        pytest.skip(f"no mirror of CMake at {CMAKE_MIRROR}")
    archive = subprocess.run(["git", "-C", str(CMAKE_MIRROR), "archive", "HEAD"], capture_output=True, check=True,
                             timeout=300).stdout
    target = tmp_path_factory.mktemp("cmake-src")
    script = load_script()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and script.is_cmake(Path(m.name).name)]
        if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4
            tar.extractall(target, members=members, filter="data")
        else:
            tar.extractall(target, members=members)
    tally = script.Tally("cmake")
    for path in script.walk(target, script.is_cmake):
        script.check_file(path, parse_cmake, tally, True)
    return target, tally


def relative(lines: list[str], root: Path) -> set[str]:
    return {line.split(":", 1)[0].removeprefix(f"{root}/") for line in lines}


def test_cmake_tree_round_trips(cmake_tree: tuple[Path, Any]) -> None:
    root, tally = cmake_tree
    assert tally.read > 10_000
    parse_failures = [f for f in tally.failures if "port_cmake" not in f]
    assert parse_failures == []
    assert tally.parsed == tally.identical == tally.read - len(tally.rejected)
    assert relative(tally.rejected, root) == NOT_CMAKE


def test_cmake_tree_without_cuda_is_left_alone(cmake_tree: tuple[Path, Any]) -> None:
    """No new problem: every exception and every changed no-CUDA file is a known, reported one."""
    root, tally = cmake_tree
    problems = relative(tally.port_changed_no_cuda, root) | relative(
        [f for f in tally.failures if "port_cmake" in f], root)
    assert problems - KNOWN_PORT_PROBLEMS == set()


def test_cmake_tree_has_no_port_problems(cmake_tree: tuple[Path, Any]) -> None:
    _root, tally = cmake_tree
    assert tally.port_changed_no_cuda == [] and tally.failures == []
