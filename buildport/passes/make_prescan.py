"""Which lines of a Makefile a make rule can act on, from one pass over its text for the rules' words.

Every make rule changes or reports a word that a table in :mod:`buildport.rules`
names (a CUDA root or directory variable, an nvcc-only flag, a CUDA library's
link name) or one of a few fixed words (``cuda``, ``nvcc``, an architecture
name), or depends on a variable's *name* (a flag variable, a compiler
variable), which the passes check on the line itself. :class:`Prescan` finds
those words in a file's text, case folded, in one pass over it; a line none of them
falls in is not built, let alone ported. The words are read from the tables, so
a row added to a table (also from a project's ``buildport.toml``) widens the
search; ``tests/test_make_prescan.py`` checks that every row is found and that
ports are identical with the search switched off (:func:`buildport.prescan.disabled`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache

from buildport.prescan import SKIPPING, residue_words, trigger
from buildport.passes.wordtrie import WordSearch, lowercase_pieces
from buildport.rules import flags as flag_rules
from buildport.rules import libraries as library_rules
from buildport.rules.tools import TOOL_WORDS
from buildport.rules.make import (
    DIR_VARIABLES,
    FLAG_VARIABLE_INFIX,
    FLAG_VARIABLES,
    PLATFORM_WORDS,
    ROOT_VARIABLES,
)

#: Words the make passes look for that no table row spells out.
FIXED = (
    "cuda",  # CUDA roots (/usr/local/cuda, /opt/cuda, $(CUDA_PATH)) and -I$(CUDA_INC_DIR)-style includes
    "nvcc",  # the compiler word (rules.make.NVCC_WORD) and the *NVCC* flag variables
    "hipcc",  # a compiler variable that already names .../bin/hipcc
    "sm_", "compute_", "lto_",  # architecture names: what makes a variable an architecture list
    "hpc_sdk", "comm_libs", "math_libs",  # NVIDIA HPC SDK install paths (its MPI, its CUDA): ported or reported
)  # fmt: skip


def make_words() -> list[str]:
    """Every word a make rule can fire on, from the rule tables."""
    words = list(FIXED)
    words += ROOT_VARIABLES
    words += DIR_VARIABLES
    words += flag_rules.UNAMBIGUOUS  # nvcc-only spellings, -Xcompiler in $(addprefix ...) among them
    words += ("-l" + name for name in library_rules.BY_LINK_NAME)
    words += library_rules.BY_LINK_NAME  # bare, in a variable of library names: LIBRARIES = cudart curand
    words += TOOL_WORDS  # NVIDIA's profilers, debugger and sanitizers (rules.tools)
    return words


@lru_cache(maxsize=4)
def _static(link_names: frozenset[str]) -> WordSearch:
    """The search for :func:`make_words` (one per set of link names: a project may add library rows)."""
    return trigger(make_words())


@lru_cache(maxsize=64)
def _references(names: frozenset[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``$(NAME)`` or ``${NAME}`` of any of ``names``, as the passes match a compiler variable: one
    search from each opening bracket (a pattern that begins with a literal is searched much faster
    than one that begins with a choice of two)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    return re.compile(rf"\((?:{alternatives})[)}}]"), re.compile(rf"\{{(?:{alternatives})[)}}]")


@lru_cache(maxsize=4)
def _either(link_names: frozenset[str]) -> WordSearch:
    """One search for the words of :func:`make_words`, :func:`name_words` and the audit's
    :func:`~buildport.prescan.residue_words` together."""
    return trigger([*make_words(), *name_words(), *residue_words()])


@lru_cache(maxsize=8)
def quiet(text: str, link_names: frozenset[str]) -> bool:
    """Whether no word of :func:`make_words`, :func:`name_words` or the audit's residue words is in
    ``text``, as their searches read it: one search where most Makefiles would take three to find
    nothing."""
    if _folds_to_ascii(text):
        return False  # the searches report no offsets for such a text: let them say so
    search = _either(link_names)
    # a piece whose lower case is longer: the same (its offsets would shift)
    return not any(len(piece) != size or search.found_in(piece) for _, size, piece in lowercase_pieces(text))


def holds_no_word(text: str) -> bool:
    """:func:`quiet` with the library table's link names as they are now."""
    return quiet(text, frozenset(library_rules.BY_LINK_NAME))


def hint_free(text: str) -> bool:
    """Whether no name word (:func:`name_words`, the platform hints among them) can be in ``text``:
    :func:`holds_no_word`, and never inside :func:`buildport.prescan.disabled`."""
    return not SKIPPING.off and holds_no_word(text)


def _folds_to_ascii(text: str) -> bool:
    """Whether a character of ``text`` is one a case-insensitive ``re`` matches to an ASCII letter: a
    search of its lower case would miss a name such a pattern finds."""
    return not text.isascii() and _FOLDED.search(text) is not None


@lru_cache(maxsize=8)
def _static_hits(text: str, link_names: frozenset[str]) -> list[int] | None:
    """Where :func:`make_words` occur in ``text`` (one search per text, shared by the passes)."""
    if quiet(text, link_names):
        return []
    return _static(link_names).starts_in_any_case(text)  # None if a character's lower case is longer


def may_hold_rule_words(text: str) -> bool:
    """False when no word of :func:`make_words` is in ``text``: read alone, the file then says
    nothing the make rules use (its compiler, architecture and flag variables all need one)."""
    if SKIPPING.off:
        return True
    hits = _static_hits(text, frozenset(library_rules.BY_LINK_NAME))
    return hits is None or bool(hits)


class Prescan:
    """Where in one Makefile's text a rule might fire: the offsets of the words it looks for.

    ``compiler_vars`` adds references to those variables (``$(NVCC)`` runs nvcc).
    """

    __slots__ = ("hits",)

    def __init__(self, text: str, compiler_vars: Iterable[str] = ()) -> None:
        self.hits: list[int] | None = None  # None: everything may matter
        if SKIPPING.off:
            return
        hits = _static_hits(text, frozenset(library_rules.BY_LINK_NAME))
        names = frozenset(compiler_vars)
        if hits is not None and names:
            round_, curly = _references(names)
            hits = sorted(hits + [m.start() for m in round_.finditer(text)] + [m.start() for m in curly.finditer(text)])
        self.hits = hits

    def hot(self, start: int, end: int) -> bool:
        """Whether a word a rule looks for starts in ``[start, end)``."""
        hits = self.hits
        if hits is None:
            return True
        i = bisect_left(hits, start)
        return i < len(hits) and hits[i] < end


def name_words() -> list[str]:
    """Words, one of which (any case) is in the name of every variable a make rule acts on for its
    name alone, whatever the value: a flag variable (any name with NVCC in it), a CUDA root, a
    platform-detecting one. A run's own compiler, architecture and flag variables come on top."""
    return [*FLAG_VARIABLES, FLAG_VARIABLE_INFIX, *ROOT_VARIABLES, *PLATFORM_WORDS]


_NAMES = trigger(name_words())
#: Non-ASCII letters that a case-insensitive ``re`` matches to ASCII ones (İ, ı, ſ, K).
_FOLDED = re.compile("[\u0130\u0131\u017f\u212a]")


class Names(Prescan):
    """Where in a Makefile's text a variable name a rule acts on might be, of those that hold a
    word of :func:`name_words`. An assignment line none of them falls in sets a variable no rule
    reads for its name, unless it is one of the run's own compiler, architecture and flag
    variables (the passes tell those by name: see ``buildport.passes.make``)."""

    __slots__ = ()

    def __init__(self, text: str) -> None:
        self.hits = None
        if SKIPPING.off:
            return
        if holds_no_word(text):
            self.hits = []
        elif not _folds_to_ascii(text):  # else a name might match a pattern in a way the search does not
            self.hits = _NAMES.starts_in_any_case(text)  # None if the offsets would shift
