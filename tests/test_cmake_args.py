"""Argument text helpers: the shortcuts taken on plain text give what the full scans give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.passes.cmake_args import scanned_word_spans, word_spans
from buildport.passes.cmake_text import _open_genex

#: Characters that matter to the scans, and a few that do not.
TEXT = st.text(alphabet=" \t;\\$<>{}:ab-", max_size=40)


def reference_open_genex(text: str) -> bool:
    depth, i = 0, 0
    while i < len(text):
        if text.startswith("$<", i):
            depth += 1
            i += 2
            continue
        if text[i] == ">" and depth:
            depth -= 1
        i += 1
    return depth > 0


@settings(max_examples=600, deadline=None)
@given(TEXT, st.sampled_from([" \t", ";", " \t;"]))
def test_word_spans_equal_the_character_scan(content: str, separators: str) -> None:
    assert word_spans(content, separators) == scanned_word_spans(content, separators)


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_open_genex_equals_the_character_scan(text: str) -> None:
    assert _open_genex(text) is reference_open_genex(text)


def test_plain_words() -> None:
    assert word_spans("-O2  -g;x", " ;") == [(0, 3), (5, 7), (8, 9)]
    assert word_spans("", " ") == []


_HEAD_WORDS = st.sampled_from([
    "X", "${reg}", "ENV{PATH}", "CMAKE_${lang}_FLAGS", "a.b", "APPEND", "-O2", '"q"', "a;b", "$(V)", "[[b]]",
    "a\\ b", "#c", "${a}${b}", "x=1", "$", "{", "}",
])


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.sampled_from(["set", "list", "SET"]), st.sampled_from(["", " "]), st.lists(_HEAD_WORDS, min_size=1, max_size=4),
       st.sampled_from([" ", "\t", "\n  "]))
def test_a_plain_head_reads_as_the_arguments_do(name: str, space: str, words: list[str], gap: str) -> None:
    """What the fact gathering reads from a set()/list() head without splitting the command."""
    from buildport.passes.base import _PLAIN_HEAD
    from buildport.syntax.cmake import parse_cmake
    from buildport.syntax.errors import ParseError

    text = f"{name}{space}({gap.join(words)})\n"
    try:
        (command,) = parse_cmake(text).commands()
    except ParseError:
        return
    m = _PLAIN_HEAD.match(text, command.start, command.end)
    if m is None:
        return
    values = [a.value for a in command.arguments()]
    assert m.group(1) == values[0]
    if m.group(2) is not None:
        assert m.group(2) == values[1]
