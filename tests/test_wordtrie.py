"""A trie regex matches exactly what the plain alternation of its words matches."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.passes import wordtrie
from buildport.passes.wordtrie import WordSearch, lowercase, lowercase_pieces, trie_pattern

WORDS = st.lists(st.text(alphabet="abc.-", min_size=1, max_size=4), min_size=1, max_size=6)
TEXT = st.text(alphabet="abcx.-", max_size=14)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(WORDS, TEXT)
def test_same_matches_as_the_longest_first_alternation(words: list[str], text: str) -> None:
    plain = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    trie = trie_pattern(words)
    for wrap in ("{}", r"(?<![a-c])(?:{})(?![a-c])"):
        expected = [m.span() for m in re.finditer(wrap.format(plain), text)]
        assert [m.span() for m in re.finditer(wrap.format(trie), text)] == expected


def test_shared_prefixes_are_written_once() -> None:
    assert trie_pattern(["cublas", "cufft", "cuda"]) == "cu(?:blas|da|fft)"
    assert trie_pattern(["CUDA_PATH", "CUDA_PATH_V12"]) == "CUDA_PATH(?:_V12)?"


@settings(max_examples=400, derandomize=True, deadline=None)
@given(WORDS, TEXT, st.lists(st.integers(0, 15), max_size=5))
def test_one_trie_per_first_character_finds_what_one_trie_finds(words: list[str], text: str, starts: list[int]) -> None:
    one = re.compile(trie_pattern(words))
    split = WordSearch(words)
    assert split.found_in(text) == (one.search(text) is not None)
    assert [m.span() for m in split.finditer(text)] == [m.span() for m in one.finditer(text)]
    cursor = split.cursor(text, min(starts, default=0))
    for pos in sorted(starts):
        expected = one.search(text, pos)
        found = cursor.search(pos)
        assert (found and found.span()) == (expected and expected.span())


def test_the_tries_begin_with_a_literal() -> None:
    split = WordSearch(["cuda", "cublas", "nvcc", "-xcompiler", "--ptx"])
    assert [p.pattern for p in split.patterns] == [r"\-(?:\-ptx|xcompiler)", "cu(?:blas|da)", "nvcc"]



#: Characters whose lower case depends on their neighbours (a final sigma), changes length (İ),
#: is case-ignorable (a combining mark, an apostrophe, a colon) or is neither cased nor ignorable.
FOLDING = st.text(alphabet="AaΣσςİ\u0301':. \n\r\tÉ©x", max_size=60)


@settings(max_examples=600, derandomize=True, deadline=None)
@given(FOLDING, st.integers(1, 12))
def test_lowercase_in_pieces_is_str_lower(text: str, piece: int) -> None:
    """Pieces of whole lines are lower-cased as the whole text is, whatever sits at their ends."""
    before = wordtrie._PIECE
    wordtrie._PIECE = piece
    try:
        assert lowercase(text) == text.lower()
    finally:
        wordtrie._PIECE = before


def test_lowercase_of_a_long_text_past_ascii() -> None:
    line = "ΑΣ Σ:Σ\u0301 İ CUDA_PATH ©\n"
    text = line * (2 * wordtrie._PIECE // len(line) + 3)
    assert lowercase(text) == text.lower()
    assert lowercase("NVCC" * wordtrie._PIECE) == "nvcc" * wordtrie._PIECE  # ASCII: folded at once


@settings(max_examples=600, derandomize=True, deadline=None)
@given(st.text(alphabet="AaΣσİ\u0301 \nBCc©x", max_size=60), st.integers(1, 12),
       st.lists(st.text(alphabet="abcσ ", min_size=1, max_size=3), min_size=1, max_size=4))  # fmt: skip
def test_searches_a_piece_at_a_time_find_what_one_search_finds(text: str, piece: int, words: list[str]) -> None:
    """Searched a piece of lines at a time, the lower-cased text holds the same words at the same
    offsets as when lower-cased whole (no offsets when a lower case is longer: İ)."""
    search = WordSearch(words)
    lowered = text.lower()
    before = wordtrie._PIECE
    wordtrie._PIECE = piece
    try:
        pieces = list(lowercase_pieces(text))
        assert "".join(p for _, _, p in pieces) == lowered
        assert [at for at, _, _ in pieces] == [sum(size for _, size, _ in pieces[:i]) for i in range(len(pieces))]
        assert sum(size for _, size, _ in pieces) == len(text)
        assert all(text[at : at + size].lower() == p for at, size, p in pieces)
        assert search.found_in_any_case(text) == search.found_in(lowered)
        expected = [m.start() for m in search.finditer(lowered)] if len(lowered) == len(text) else None
        assert search.starts_in_any_case(text) == expected
    finally:
        wordtrie._PIECE = before


def test_a_word_with_a_line_break_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError):
        WordSearch(["cuda\nnvcc"])
