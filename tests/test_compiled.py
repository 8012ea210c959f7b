"""A pattern built from the program kept in the parser cache is the pattern ``re.compile`` gives.

``re.Pattern`` objects compare equal only when their text, flags and compiled
program are equal, so ``==`` here checks the program itself, not a few matches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from buildport.cache import compiled
from buildport.syntax import make, make_scan

PATTERNS = [
    (r"abc", 0),
    (r"(?P<word>[A-Za-z_]\w*)|(?P<space>[ \t]+)|(?P<other>.)", 0),
    (r"^\s*#.*$", re.MULTILINE),
    (r"cuda|nvcc|sm_\d+", re.IGNORECASE),
    (r"""(?x) ( \$\( [^)]* \) )  # an expansion
          | ( [^$]+ )""", 0),
    (r"(?<=[^\\])\"(?:[^\"\\]|\\.)*\"", re.DOTALL),
    (r"(a)(b)?(?(2)c|d)", 0),
    (r"[\u00e9\u4e2d]+é", 0),
]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(("text", "flags"), PATTERNS)
def test_derived_and_kept_patterns_equal_re_s(text: str, flags: int, _cache: Path) -> None:
    first = compiled.pattern(text, flags)
    [kept] = _cache.glob("re-*.json")
    second = compiled.pattern(text, flags)  # from the file
    assert first == second == re.compile(text, flags)
    assert second.groupindex == re.compile(text, flags).groupindex
    assert json.loads(kept.read_text())["code"]


def test_the_make_lexers_are_re_s_patterns(_cache: Path) -> None:
    tables = make_scan.tables(make._parser(make.TAB))  # this cache folder, not the one of an earlier test
    shared = {id(lazy): lazy for lazy in tables.lexers if lazy is not None}  # states share alternations
    assert len(shared) > 5
    for lazy in shared.values():
        text, flags = lazy.pattern, lazy.flags
        assert compiled.pattern(text, flags) == compiled.pattern(text, flags) == re.compile(text, flags)


def test_the_cmake_recognizers_are_re_s_patterns(_cache: Path) -> None:
    from buildport.syntax import cmake

    cmake._recognizers.cache_clear()  # built in this cache folder, not found in an earlier one
    try:
        recognizers = cmake._recognizers()
        assert recognizers is not None
        assert len(list(_cache.glob("re-*.json"))) == len(recognizers)
        for kept in recognizers:
            assert kept == re.compile(kept.pattern)
        cmake._recognizers.cache_clear()
        assert cmake._recognizers() == recognizers  # from the files
    finally:
        cmake._recognizers.cache_clear()


def test_flags_are_part_of_the_key(_cache: Path) -> None:
    assert compiled.pattern("a", re.IGNORECASE).match("A")
    assert compiled.pattern("a").match("A") is None
    assert len(list(_cache.glob("re-*.json"))) == 2


@pytest.mark.parametrize("damage", [
    "",
    "not json",
    "[]",
    '{"flags": 32}',
    '{"flags": 32, "code": [1, 2, 3], "groups": 0, "groupindex": {}, "indexgroup": [null]}',
    '{"flags": 32, "code": "x", "groups": 0, "groupindex": {}, "indexgroup": [null]}',
])
def test_a_damaged_program_is_derived_again(damage: str, _cache: Path) -> None:
    text = r"(?P<name>[a-z]+)=(?P<value>\d+)"
    compiled.pattern(text)
    [kept] = _cache.glob("re-*.json")
    kept.write_text(damage)
    assert compiled.pattern(text) == re.compile(text)  # _sre validates a program before using it
    assert compiled.pattern(text).match("ab=12").group("value") == "12"
    assert json.loads(kept.read_text())["groupindex"] == {"name": 1, "value": 2}  # replaced


def test_without_a_cache_it_is_re_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiled.pattern("x+y") == re.compile("x+y")
    assert not (tmp_path / "xdg").exists()


def test_an_unwritable_cache_still_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(blocked / "below"))  # a folder under a file
    assert compiled.pattern("x+y") == re.compile("x+y")


def test_an_invalid_pattern_raises_as_re_does() -> None:
    with pytest.raises(re.error):
        compiled.pattern("(unclosed")
