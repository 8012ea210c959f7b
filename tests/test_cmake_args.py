"""Argument text helpers: the shortcuts taken on plain text give what the full scans give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.cmake_args import scanned_word_spans, word_spans
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
