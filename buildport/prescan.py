"""Which files can hold nothing to port: a search for the rules' words, before any pass runs; and the
one switch that turns every skip off, for CMake and make alike (:func:`disabled`).

Every CMake rule fires on a word that one of the tables in :mod:`buildport.rules`
names (a CUDA variable, command, property, library, package, path, nvcc flag) or
on a ``.cu`` source. :func:`cmake_trigger` matches any of those words, case
folded; a file it does not match is parsed (so bad input is still an error) but
no pass is run over it. The words are read from the tables themselves, so a row
added to a table widens the search; ``tests/test_prescan.py`` checks that every
row is found and that no fixture the passes change is skipped.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from buildport.rules import cmake as cmake_rules
from buildport.rules.flags import UNAMBIGUOUS
from buildport.rules import libraries as library_rules
from buildport.rules.paths import CUDA_ENV_VARS
from buildport.rules.tools import TOOL_WORDS
from buildport.passes.wordtrie import WordSearch, lowercase

#: Words the passes look for that no table row spells out.
_FIXED = (
    "cuda",  # the language, CUDA::, CMAKE_CUDA_*, $<COMPILE_LANGUAGE:CUDA>, /usr/local/cuda
    "nvidia",  # the NVIDIA compiler id
    "nvcc",
    "thrust", "cub", "cccl", "cudnn", "nccl",  # find_package names of the CUDA libraries
)


def cmake_words() -> list[str]:
    """Every word a CMake rule can fire on, from the rule tables."""
    words: list[str] = list(_FIXED)
    words += cmake_rules.CUDA_SUFFIXES
    for table in (
        cmake_rules.VARIABLES, cmake_rules.LEGACY_SWITCHES, cmake_rules.REPORTED_VARIABLES,
        cmake_rules.PROPERTIES, cmake_rules.LEGACY_COMMANDS, cmake_rules.LEGACY_LINK_HELPERS,
        cmake_rules.MANUAL_COMMANDS, cmake_rules.LEGACY_OBJECT_COMMANDS, cmake_rules.LEGACY_LOOKUPS,
        cmake_rules.GENEX_RENAMES, cmake_rules.COMPILER_IDS,
        cmake_rules.FLAG_VARIABLES,
    ):  # fmt: skip
        words += table
    words += (library.name for library in library_rules.LIBRARIES)
    # the lookup tables, which also hold the rows a project adds in buildport.toml
    words += (*library_rules.BY_TARGET, *library_rules.BY_LINK_NAME, *library_rules.BY_LEGACY_VAR)
    words += CUDA_ENV_VARS
    words += UNAMBIGUOUS
    words += TOOL_WORDS  # NVIDIA's profilers, debugger and sanitizers (rules.tools)
    return words


def trigger(words: Iterable[str]) -> WordSearch:
    """A search of lower-cased text for any of ``words``.

    A word that contains another is left out, and the rest are merged into
    tries (``cu(?:b|da|fft…)``), one per first character (see
    :class:`~buildport.passes.wordtrie.WordSearch`), which ``re`` runs several times
    faster than a flat, case-insensitive alternation.
    """
    folded = sorted({w.lower() for w in words if w}, key=len)
    kept: list[str] = []
    for word in folded:
        if not any(k in word for k in kept):
            kept.append(word)
    return WordSearch(kept)


_trigger: WordSearch | None = None


def cmake_trigger() -> WordSearch:
    """Matches, in lower-cased text, wherever a CMake pass might change or report something."""
    global _trigger
    if _trigger is None:
        _trigger = trigger(cmake_words())
    return _trigger


def tables_changed() -> None:
    """Rows were added to the tables (a project's buildport.toml): build the searches again."""
    global _trigger, _residue, _residue_only_words, _beyond_flags
    _trigger = _residue = _residue_only_words = _beyond_flags = None


_beyond_flags: WordSearch | None = None


def names_cuda_beyond_flags(text: str) -> bool:
    """Whether ``text`` holds a word a CMake rule fires on that is no nvcc-only flag's spelling: the
    CUDA language, a ``.cu`` source, a CUDA package, variable, command or library. Where the only
    such words are flags (``-Xcompiler``), nothing says that nvcc reads them. A rule, never
    switched off (:func:`disabled`)."""
    global _beyond_flags
    if _beyond_flags is None:
        _beyond_flags = trigger(w for w in cmake_words() if w not in UNAMBIGUOUS)
    return _beyond_flags.found_in_any_case(text)


_residue: WordSearch | None = None


def may_have_residue(text: str) -> bool:
    """False when no pattern of ``build_rules.RESIDUE_PATTERNS`` can match in ``text``.

    Each of them needs ``cuda`` (paths, root variables, ``CUDA::``, CUDA names),
    ``nvcc``, an architecture (``sm_``, ``compute_``, ``lto_``) or a CUDA library's
    link name; the search looks for those, case folded.
    """
    global _residue
    if _residue is None:
        _residue = trigger(residue_words())
    return _residue.found_in_any_case(text)


def residue_words() -> list[str]:
    """What :func:`may_have_residue` looks for."""
    return ["cuda", "nvcc", "sm_", "compute_", "lto_", *library_rules.BY_LINK_NAME]


def may_need_cmake_audit(text: str) -> bool:
    """False when neither a CMake rule nor a residue pattern can fire in ``text``: one search
    for the rules' words, then plain substring tests for the residue words it does not match."""
    if SKIPPING.off:
        return True
    lowered = lowercase(text)
    if cmake_trigger().found_in(lowered):
        return True
    return any(word in lowered for word in _residue_only())


_residue_only_words: list[str] | None = None


def _residue_only() -> list[str]:
    """The residue words that hold no word of the CMake rules (``sm_``, ``compute_``, ``lto_``)."""
    global _residue_only_words
    if _residue_only_words is None:
        found_in = cmake_trigger().found_in
        _residue_only_words = [w.lower() for w in residue_words() if not found_in(w.lower())]
    return _residue_only_words


def may_need_cmake_port(text: str, start: int = 0, end: int | None = None) -> bool:
    """False when no CMake rule can fire anywhere in ``text[start:end]``."""
    return SKIPPING.off or has_cmake_trigger(text[start:end])


def spans_with_trigger(text: str, starts: list[int], ends: list[int]) -> list[bool]:
    """For each span ``text[starts[i]:ends[i]]`` (in order, none overlapping): may a CMake rule fire in it?

    The same answer as :func:`may_need_cmake_port` span by span, from searches of
    the whole text that each begin where a span does: after a match, the next
    search begins at the next span, so the text between spans (comments) is read
    only up to its first match. A match that begins in a span and reaches past
    its end says nothing about the span alone, which is then searched alone.
    """
    if SKIPPING.off:
        return [True] * len(starts)
    lowered = lowercase(text)
    if len(lowered) != len(text):  # a character whose lower case is longer: the offsets differ
        return [has_cmake_trigger(text[start:end]) for start, end in zip(starts, ends)]
    found = [False] * len(starts)
    if not starts:
        return found
    search = cmake_trigger().cursor(lowered, starts[0]).search
    m = search(starts[0])
    while m is not None:
        at, end = m.span()
        i = bisect_right(starts, at) - 1  # the span it begins in, or the last one before it
        if at < ends[i]:
            found[i] = end <= ends[i] or has_cmake_trigger(text[starts[i] : ends[i]])
        if i + 1 == len(starts):
            break
        m = search(starts[i + 1])
    return found


def has_cmake_trigger(text: str) -> bool:
    """The search itself, never switched off (for rules that depend on it, not only skip work)."""
    return cmake_trigger().found_in_any_case(text)


class _Switch:
    """Whether the searches may skip work (files, commands, lines): one for every language."""

    __slots__ = ("off",)

    def __init__(self) -> None:
        self.off = False


#: The switch itself, read where a skip is decided (``SKIPPING.off``: a search says "may fire" everywhere).
SKIPPING = _Switch()


def skipping() -> bool:
    """Whether files, commands and lines may be skipped (false inside :func:`disabled`)."""
    return not SKIPPING.off


@contextmanager
def disabled() -> Iterator[None]:
    """Run every pass over everything, CMake and make alike, as if each file, command and line held a
    word a rule looks for: to check that skipping changes nothing (``tests/test_prescan.py``,
    ``tests/test_make_prescan.py``, ``benchmarks/differential.py --port``)."""
    before, SKIPPING.off = SKIPPING.off, True
    try:
        yield
    finally:
        SKIPPING.off = before
