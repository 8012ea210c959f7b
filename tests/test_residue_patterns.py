"""The residue patterns are written to start with the text they look for (fast in ``re``); they
match exactly what the plain forms, look-behind first, match. The plain forms are the oracle."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.rules.build_rules import _LIBRARY_NAMES, _ROOT_WORDS, RESIDUE_PATTERNS
from buildport.rules.paths import CUDA_ROOT_LITERAL
from buildport.passes.wordtrie import bounded_trie, trie_pattern

pytestmark = pytest.mark.slow  # property tests over many generated inputs

PLAIN = [
    ("build-cuda-path", re.compile(
        r"(?:(?<=-[LIR])|(?<=-rpath,)|(?<![\w./-]))(?:/usr/local/cuda(?:-\d+(?:\.\d+)*)?|/opt/cuda)"
        r"(?=$|/include\b|/lib64\b|/lib\b|/bin\b|/targets/|[\s\"';:,)}])")),
    ("build-cuda-path", re.compile(rf"(?<![\w])(?:{trie_pattern(_ROOT_WORDS)})(?![\w])")),
    ("build-nvcc", re.compile(r"(?<![\w.-])nvcc(?![\w.-])")),
    ("build-cuda-arch", re.compile(r"(?<![\w])(?:sm|compute|lto)_\d{2,3}[a-z]?(?![\w])")),
    ("build-cuda-library", re.compile(rf"(?<![\w])(?:-l|lib)(?:{_LIBRARY_NAMES})(?![\w-])|CUDA::\w+")),
]

PIECES = [
    "/usr/local/cuda", "/usr/local/cuda-12.4", "/opt/cuda", "/include", "/lib64", "/lib", "/bin", "/targets/",
    "/samples", "-L", "-I", "-R", "-rpath,", "-Wl,", "nvcc", "sm", "compute", "lto", "_80", "_90a", "_8", "_1234",
    "CUDA", "CUDA_PATH", "CUDA_HOME", "CUDAToolkit_ROOT", "CUDA::", "cudart", "cublas", "cufft_static", "-l", "lib",
    "x", "_", "1", ".", "-", "/", " ", "\n", '"', "'", ";", ":", ",", ")", "}", "(", "$", "{", "\u00e9",
]


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_each_pattern_matches_what_its_plain_form_matches(text: str) -> None:
    for (rule, fast), (_, plain) in zip(RESIDUE_PATTERNS, PLAIN):
        assert spans(fast, text) == spans(plain, text), rule
    assert spans(CUDA_ROOT_LITERAL, text) == spans(PLAIN[0][1], text)


def test_the_patterns_begin_with_what_they_look_for() -> None:
    assert CUDA_ROOT_LITERAL.pattern.startswith("/")
    for rule, pattern in RESIDUE_PATTERNS[1:-1]:
        assert not pattern.pattern.startswith("(?<"), rule


@settings(max_examples=500, deadline=None)
@given(st.sets(st.text(alphabet="ab_-.", min_size=1, max_size=4), min_size=1, max_size=6),
       st.text(alphabet="ab_-. x", max_size=30))
def test_bounded_trie_is_the_look_behind_first_alternation(words: set[str], text: str) -> None:
    fast = re.compile(f"(?:{bounded_trie(words, r'[a_]')})")
    plain = re.compile(f"(?<![a_])(?:{trie_pattern(words)})")
    assert spans(fast, text) == spans(plain, text)
