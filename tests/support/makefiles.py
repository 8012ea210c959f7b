"""Makefiles for the tests: the fixture Makefiles, and a hypothesis strategy that writes Makefile-like text
from the constructs the grammar has (assignments, rules, conditionals, defines, continuations, odd line ends)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

#: Every Makefile and .mk file of the fixtures.
MAKEFILES = sorted(
    p for folder in ("make", "make-syntax", "projects") for p in (FIXTURES / folder).rglob("*")
    if p.is_file() and (p.name in ("Makefile", "makefile", "GNUmakefile") or p.suffix == ".mk")
)  # fmt: skip
IDS = [str(p.relative_to(FIXTURES)) for p in MAKEFILES]
#: The characters of Makefile syntax, for random text.
ALPHABET = " \t\r\n\\$(){}#:;=|%@<?+!&,'\"abdefilnx\ufeff\xe9"

WORDS = st.sampled_from(
    ["CC", "nvcc", "$(CC)", "${X}", "$(foreach s,$(SMS),-gencode $(s))", "$(shell echo '#')", "$@", "$$x",
     "a.o", "%.o", "%.cu", "-O2", "\\#", "\\", "\\\\", "#c", ":", "::", "=", ":=", "+=", "?=", "!=", ";", "|",
     "&:", "(", ")", "$(", "${", "}", "é", "\r", "export", "override", "define", "endef", "ifeq", "else",
     "endif", "include", "vpath", "\ufeff", ",", "'", '"']
)  # fmt: skip
BLANKS = st.sampled_from(["", " ", "  ", "\t", " \\\n ", "\\\r\n"])
LINE_STARTS = st.sampled_from(["", "", "\t", " ", "  ", "\t\t"])
TEMPLATES = st.sampled_from(
    ["{w} = {w}", "{w}: {w} {w}", "{w}: {w} = {w}", "{w}: %.o: {w} | {w}", "{w} ; {w}", "ifeq ({w},{w})",
     "ifdef {w}", "else", "else ifneq ({w},)", "endif", "define {w} =", "endef", "include {w}", "# {w}",
     "$(eval {w})", "{w}", "export {w} := {w}", ".RECIPEPREFIX = >", "> {w}"]
)  # fmt: skip
NEWLINES = st.sampled_from(["\n", "\n", "\r\n", "\\\n", ""])


@st.composite
def makefile_texts(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        template = draw(TEMPLATES)
        while "{w}" in template:
            words = draw(st.lists(WORDS, min_size=0, max_size=3))
            template = template.replace("{w}", draw(BLANKS).join(words), 1)
        lines.append(draw(LINE_STARTS) + template + draw(BLANKS) + draw(NEWLINES))
    return "".join(lines)
