"""What is derived from the grammars is kept in the parser cache, is what Lark derives, and lets a
CMake run whose files all parse go without importing Lark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildport.syntax import grammars
from buildport.syntax import cmake_lark

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

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


@pytest.mark.parametrize("damage", ["", "not json", "[]", '{"IDENT": 1}', '{"SPACE": " "}'])
def test_a_damaged_or_incomplete_file_is_derived_again(
    damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    grammars.cached_terminals("cmake", cmake_lark.terminals, REQUIRED)
    [kept] = tmp_path.glob("cmake-terminals-*.json")
    kept.write_text(damage)
    assert grammars.cached_terminals("cmake", cmake_lark.terminals, REQUIRED) == cmake_lark.terminals()
    assert json.loads(kept.read_text()) == cmake_lark.terminals()  # replaced


def test_without_a_cache_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert grammars.cached_terminals("cmake", cmake_lark.terminals, REQUIRED) == cmake_lark.terminals()
    assert list(tmp_path.rglob("*")) == []


CODE = """
import sys
from buildport.engine import port_cmake
from buildport.syntax.errors import ParseError
port_cmake("project(p CUDA)\\nadd_executable(a a.cu)\\n", "CMakeLists.txt")
print("lark" in sys.modules)
try:
    port_cmake('message("unclosed\\n', "bad.cmake")
except ParseError as exc:
    print(exc.line, exc.col, "lark" in sys.modules)
"""


MAKE_CODE = """
import sys
from buildport.syntax.errors import ParseError
from buildport.syntax.make import parse_make
print(str(parse_make("CC := nvcc\\nall:\\n\\t$(CC) -o a a.cu\\n", "Makefile")).count("nvcc"), "lark" in sys.modules)
try:
    parse_make("define X\\n  body\\n", "bad.mk")
except ParseError as exc:
    print(exc.line, exc.col, "lark" in sys.modules)
"""


def _printed(code: str, cache: Path) -> list[str]:
    """What ``code`` prints in a fresh process with ``cache`` as the parser cache."""
    env = dict(os.environ, BUILDPORT_PARSER_CACHE=str(cache))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=env)
    return done.stdout.splitlines()


def test_a_cmake_run_imports_lark_only_to_derive_the_terminals_or_report_an_error(tmp_path: Path) -> None:
    assert _printed(CODE, tmp_path) == ["True", "1 9 True"]  # the first run derives the terminals with Lark
    assert _printed(CODE, tmp_path) == ["False", "1 9 True"]  # later runs read them; Lark still words the error


def test_a_make_run_imports_lark_only_to_word_an_error(tmp_path: Path) -> None:
    assert _printed(MAKE_CODE, tmp_path) == ["1 False", "1 1 True"]  # the first run takes the shipped tables
    assert _printed(MAKE_CODE, tmp_path) == ["1 False", "1 1 True"]  # later runs read them from the cache
    assert _printed(MAKE_CODE, Path("0")) == ["1 False", "1 1 True"]  # and a run without a cache from the package


def _tab_material() -> bytes:
    from buildport.syntax import make, make_scan

    return make_scan.tables_material(make._grammar(make.TAB))


def test_the_shipped_make_tables_are_those_of_the_grammar_and_code_at_hand() -> None:
    from buildport.syntax import make_scan

    assert make_scan.shipped_tables(_tab_material()) is not None, (
        "grammars/make.lark or the code deriving its tables changed: "
        "run `python -m buildport.syntax.make_scan` to write buildport/syntax/make_tables.json again"
    )


def test_the_shipped_make_tables_read_as_tables_derived_now() -> None:
    """Every fixture Makefile and a few edge cases give the same tokens, or the same refusal."""
    from buildport.syntax import make, make_scan
    from tests.support.makefiles import MAKEFILES

    shipped = make_scan.shipped_tables(_tab_material())
    assert shipped is not None
    fresh, kept = make_scan.tables(make._parser(make.TAB)), make_scan.tables_from_data(shipped)
    texts = [path.read_text(encoding="utf-8", errors="surrogateescape") for path in MAKEFILES]
    texts += ["", "a:\n\tb\n", "define X\n  body\n", "ifeq (a,b)\nx = 1\nelse\nendif\n", "a: b | c ; d\n"]
    for text in texts:
        assert make_scan.scan(text, kept, make._CHECKED) == make_scan.scan(text, fresh, make._CHECKED)


def test_shipped_make_tables_of_another_grammar_are_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from buildport.syntax import make, make_scan

    shipped = json.loads(make_scan.SHIPPED.read_text(encoding="utf-8"))
    stale = tmp_path / "make_tables.json"
    stale.write_text(json.dumps({**shipped, "material": "0" * 64}), encoding="utf-8")
    monkeypatch.setattr(make_scan, "SHIPPED", stale)
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", "0")
    built: list[int] = []
    tables = make_scan.cached_tables(make._grammar(make.TAB), lambda: built.append(1) or make._parser(make.TAB))
    assert built == [1] and tables.newline == "NEWLINE"  # derived from Lark's parser
    monkeypatch.setattr(make_scan, "SHIPPED", tmp_path / "missing.json")
    make_scan.cached_tables(make._grammar(make.TAB), lambda: built.append(2) or make._parser(make.TAB))
    assert built == [1, 2]


def test_make_scan_facts_are_what_the_grammar_proves_and_are_kept_with_the_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from buildport.syntax import make, make_scan

    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    parser = make._parser(make.TAB)
    assert make_scan._grammar_facts(parser) == (make_scan._line_break(parser), True) == ("NEWLINE", True)
    assert make_scan.tables(parser).newline == "NEWLINE"
    make_scan.cached_tables(make._grammar(make.TAB), lambda: parser)
    [kept] = tmp_path.glob("make-tables-*.json")
    assert json.loads(kept.read_text())["newline"] == "NEWLINE"
    assert make_scan.cached_tables(make._grammar(make.TAB), lambda: parser).newline == "NEWLINE"  # read back


def test_make_tables_depend_on_the_grammar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.syntax import make, make_scan

    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    for prefix in (make.TAB, " "):  # another recipe prefix: other terminals
        make_scan.cached_tables(make._grammar(prefix), lambda: make._parser(prefix))
    assert len(list(tmp_path.glob("make-tables-*.json"))) == 2


def test_the_cmake_reference_parser_is_kept_and_words_errors_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from buildport.syntax.errors import ParseError

    def error(text: str) -> tuple[int, int, str]:
        cmake_lark._lark.cache_clear()
        with pytest.raises(ParseError) as info:
            cmake_lark.parse_cmake_lark(text, "bad.cmake")
        return info.value.line, info.value.col, str(info.value)

    bad = ['message("unclosed\n', "f(a b\n", "f(a) g\n", "x(]=]\n", "#[[ open\n"]
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", "0")
    expected = [error(text) for text in bad]
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    assert [error(text) for text in bad] == expected  # the tables built, and kept
    assert [f.name.startswith("cmake-") for f in tmp_path.glob("*.lark")] == [True]
    assert [error(text) for text in bad] == expected  # loaded from the file
    good = "project(p)\nif(A)\n  f(\"x\" [[y]] # c\n  )\nendif()\n"
    assert str(cmake_lark.parse_cmake_lark(good)) == good
    cmake_lark._lark.cache_clear()


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
