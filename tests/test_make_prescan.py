"""The make pre-scan: every rule table row is searched for, and skipping lines changes no port."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.engine import Result, UnstableRewrite, port_make
from buildport.passes import make_prescan
from buildport.prescan import may_have_residue
from buildport.options import MakeFacts
from buildport.passes.make_facts import gather
from buildport.passes.make_prescan import FIXED, Names, Prescan, make_words, name_words
from buildport.prescan import disabled, skipping
from buildport.rules import flags as flag_rules
from buildport.rules import libraries as library_rules
from buildport.rules.make import (
    DIR_VARIABLES,
    FLAG_VARIABLE,
    FLAG_VARIABLES,
    NVCC_WORD,
    PLATFORM_HINTS,
    ROOT_VARIABLES,
)
from buildport.rules.paths import CUDA_ROOT_LITERAL
from buildport.rules.tools import TOOL_WORDS
from buildport.syntax.errors import ParseError
from buildport.syntax.make import parse_make
from buildport.textio import decode

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
MAKEFILES = sorted(
    p for folder in ("make", "projects") for p in (ROOT / folder).rglob("*")
    if p.is_file() and (p.name in ("Makefile", "makefile", "GNUmakefile") or p.suffix == ".mk")
)  # fmt: skip
IDS = [str(p.relative_to(ROOT)) for p in MAKEFILES]


def _hot_in(line: str, compiler_vars: tuple[str, ...] = ()) -> bool:
    text = "all:\n\t" + line + "\n"
    return Prescan(text, compiler_vars).hot(6, 6 + len(line))


# ---------------------------------------------------------------- every table row is searched for


@pytest.mark.parametrize(
    "word",
    sorted({*ROOT_VARIABLES, *DIR_VARIABLES, *flag_rules.UNAMBIGUOUS, *("-l" + n for n in library_rules.BY_LINK_NAME),
            *TOOL_WORDS}),
)
def test_every_table_row_makes_its_line_hot(word: str) -> None:
    assert _hot_in(f"echo x {word} y")
    assert _hot_in(f"{word}")
    assert word.lower() in [w.lower() for w in make_words()]


@pytest.mark.parametrize("word", FIXED)
def test_every_fixed_word_makes_its_line_hot(word: str) -> None:
    assert _hot_in(f"x{word.upper()}y") and _hot_in(word)


@pytest.mark.parametrize(
    "word",
    ["nvcc", "/usr/local/cuda/bin/nvcc", "$(CUDA_HOME)/bin/nvcc", "sm_80", "compute_90a", "lto_75",
     "/usr/local/cuda", "/usr/local/cuda-12.4/lib64", "/opt/cuda/include", "$(CUDA_PATH)", "${CUDA_DIR}",
     "$(addprefix -Xcompiler ,$(CCFLAGS))", "-I$(CUDA_INC_DIR)", "$(ROCM_PATH)/bin/hipcc", "-lcudart"],
)  # fmt: skip
def test_words_the_passes_match_by_pattern_are_hot(word: str) -> None:
    if "nvcc" in word:
        assert NVCC_WORD.match(word.replace("$(CUDA_HOME)", "x"))
    if word.startswith(("/usr", "/opt")):
        assert CUDA_ROOT_LITERAL.search(word)
    assert _hot_in(word)


def test_compiler_variable_references_are_hot() -> None:
    assert not _hot_in("$(CXX) -o a a.o")
    assert _hot_in("$(CXX) -o a a.o", ("CXX",)) and _hot_in("${CXX} -c a.cpp", ("CXX",))
    assert not _hot_in("$(CXXFLAGS) -o a", ("CXX",))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(["$(", "${", "(", "{", ")", "}", "CC", "CXX", "NVCC", " ", "x"]), max_size=14))
def test_references_are_found_where_one_pattern_of_either_bracket_finds_them(parts: list[str]) -> None:
    import re

    text = "".join(parts)
    names = frozenset({"CC", "NVCC"})
    either = re.compile(r"[({](?:CC|NVCC)[)}]")
    round_, curly = make_prescan._references(names)
    found = sorted([m.start() for m in round_.finditer(text)] + [m.start() for m in curly.finditer(text)])
    assert found == [m.start() for m in either.finditer(text)]


def test_a_plain_line_is_not_hot() -> None:
    assert not _hot_in("$(CC) -O2 -o prog main.o -lm")


def test_a_library_row_added_to_the_table_is_searched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _hot_in("-lmyvendor")
    row = library_rules.Library("myvendor", (), ("myvendor",), (), "", "", "mylib", "")
    monkeypatch.setitem(library_rules.BY_LINK_NAME, "myvendor", row)
    assert _hot_in("-lmyvendor")


def test_the_search_can_be_switched_off() -> None:
    assert skipping()
    with disabled():
        assert not skipping() and _hot_in("echo nothing")
    assert skipping()


# ---------------------------------------------------------------- skipping changes no port


def _outcome(text: str, path: str, facts: MakeFacts | None = None) -> tuple[object, ...]:
    try:
        result: Result = port_make(text, path, facts=facts)
    except (ParseError, UnstableRewrite) as err:
        return ("error", type(err).__name__, str(err))
    return ("ok", result.text, result.findings)


def same_with_and_without_skipping(text: str, path: str = "Makefile", facts: MakeFacts | None = None) -> None:
    skipped = _outcome(text, path, facts)
    with disabled():
        everything = _outcome(text, path, facts)
    assert skipped == everything


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_skipping_changes_nothing_on_fixtures(path: Path) -> None:
    same_with_and_without_skipping(decode(path.read_bytes(), str(path)), str(path))


@pytest.mark.parametrize("project", sorted(p for p in (ROOT / "projects").iterdir() if p.name.startswith("make-")))
def test_skipping_changes_nothing_with_a_projects_shared_facts(project: Path) -> None:
    paths = sorted(p for p in project.rglob("*") if p.name == "Makefile" or p.suffix == ".mk")
    texts = [decode(p.read_bytes(), str(p)) for p in paths]
    facts = MakeFacts()
    for text, path in zip(texts, paths):
        gather(parse_make(text, str(path)), facts)
    with disabled():
        unskipped = MakeFacts()
        for text, path in zip(texts, paths):
            gather(parse_make(text, str(path)), unskipped)
    assert facts == unskipped
    for text, path in zip(texts, paths):
        same_with_and_without_skipping(text, str(path), facts)


WORDS = st.sampled_from([
    "nvcc", "$(NVCC)", "${NVCC}", "-gencode", "arch=compute_80,code=sm_80", "-arch=sm_70", "-arch", "sm_80",
    "$(SMS)", "-lcudart", "-lcublas", "-lcuda", "-lm", "$(CUDA_PATH)", "/usr/local/cuda/lib64",
    "-I/usr/local/cuda/include", "-L$(CUDA_PATH)/lib64", "-Xcompiler", "-fopenmp", "-O2", "-G", "-x", "cu", "-std",
    "c++14", "-m", "64", "--use_fast_math", "$(addprefix -Xcompiler ,$(CCFLAGS))", "g++", "$(CXX)", "-o", "-c",
    "$(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm))", "foo.c", "bar.cu", "main.o", "$(OBJS)",
    "$(FLAGS)", "$(ALL_CCFLAGS)", "-I$(CUDA_INC_DIR)", "-I$(ROCM_PATH)/include", "$(ROCM_PATH)/bin/hipcc",
    "TARGET_ARCH", "$(EXEC)", "&&", ";", "-Xptxas", "-v", "findcudalib.mk", "aarch64", "$(eval X += -O2)",
])  # fmt: skip
NAMES = st.sampled_from([
    "NVCC", "CC", "CXX", "FLAGS", "CFLAGS", "NVCCFLAGS", "GENCODE_FLAGS", "SMS", "ARCH", "CUDA_PATH", "CUDA_HOME",
    "LIBS", "ALL_CCFLAGS", "HOST_COMPILER", "TARGET_ARCH", "HIPCC", "CUDA_INC_DIR", "OBJS", "MY_NVCC_OPTS",
    "CUFLAGS", "QNX_HOST", "sbsa_flags",
])  # fmt: skip
TEMPLATES = st.sampled_from([
    "{n} = {w}", "{n} := {w}", "{n} += {w}", "{n} ?= {w}", "prog: {w}\n\t{w}", "%.o: %.cu\n\t{w}", "\t{w}",
    "ifeq ({w},{w})\n{n} = {w}\nelse\n{n} += {w}\nendif", "# {w}", "$(foreach sm,$(SMS),$(eval {n} += {w}))",
    "include {w}", "define {n}\n{w}\nendef", "export {n} = {w}", "prog: {n} = {w}",
    "define {n}\n{w}\n\t{w}\n{n} += {w}\nendef", "vpath %.cu {w}", "unexport {n}",
])  # fmt: skip


@st.composite
def cuda_makefiles(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        template = draw(TEMPLATES)
        while "{w}" in template or "{n}" in template:
            template = template.replace("{n}", draw(NAMES), 1)
            template = template.replace("{w}", " ".join(draw(st.lists(WORDS, min_size=1, max_size=5))), 1)
        lines.append(template)
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(cuda_makefiles())
def test_skipping_changes_nothing_on_generated_makefiles(text: str) -> None:
    same_with_and_without_skipping(text)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(cuda_makefiles())
def test_skipping_changes_nothing_with_another_files_facts(text: str) -> None:
    """Variables another Makefile of the run makes compilers, architectures or flags: their
    assignments here are read for their names alone."""
    facts = MakeFacts({"NVCC", "CC"}, {"SMS", "ARCH"}, {"FLAGS", "LIBS", "CFLAGS"})
    same_with_and_without_skipping(text, "Makefile", facts)


def test_line_col_counts_like_the_line_start_table() -> None:
    for text in ("a\nbb\n\nccc", "a\r\nb\rc\n", "x"):
        makefile = parse_make(text)
        expected = []
        line, col = 1, 1
        i = 0
        while i <= len(text):
            expected.append((line, col))
            if i < len(text) and text[i] == "\n" or (text[i : i + 1] == "\r" and text[i + 1 : i + 2] != "\n"):
                line, col = line + 1, 1
            else:
                col += 1
            i += 1
        assert [makefile.line_col(o) for o in range(len(text) + 1)] == expected


# ---------------------------------------------------------------- variables the rules read for their name


def _name_hot(name: str) -> bool:
    text = f"x = 1\n{name} = y\n"
    return Names(text).hot(6, len(text) - 1)


@pytest.mark.parametrize("name", [*sorted(FLAG_VARIABLES), *sorted(ROOT_VARIABLES), "MY_NVCC_OPTS", "NVCC", "HOST_TARGET_OS",
                                  "FINDCUDALIB.MK", "IS_AARCH64", "QNX_HOST", "TEGRA_BUILD"])
def test_every_name_a_rule_reads_makes_its_assignment_name_hot(name: str) -> None:
    assert _name_hot(name)
    assert FLAG_VARIABLE.match(name) or PLATFORM_HINTS.search(name) or name in ROOT_VARIABLES


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.from_regex(FLAG_VARIABLE, fullmatch=True) | st.from_regex(PLATFORM_HINTS))
def test_any_name_the_patterns_match_is_found(name: str) -> None:
    """Whatever a name the flag or platform pattern matches looks like, the search finds it (or,
    for text it cannot search exactly, says every name may matter)."""
    name = name.replace("\n", "").replace("\r", "") or "X"
    text = f"{name} = 1\n"
    names = Names(text)
    assert names.hits is None or any(h < len(name) for h in names.hits)


def test_a_plain_name_is_not_name_hot_and_a_runs_own_names_are_read_by_name() -> None:
    from buildport.passes.make import MakeContext, _named_assignments

    assert not _name_hot("CFLAGS") and not _name_hot("PKG_VERSION")
    assert {w.lower() for w in FLAG_VARIABLES} <= {w.lower() for w in name_words()}
    text = "PKG_VERSION = 1\nCFLAGS = -Xcompiler -fopenmp\nLDFLAGS = -Xlinker -z\n"
    alone = MakeContext("Makefile", parse_make(text), ("gfx90a",), facts=MakeFacts())
    assert _named_assignments(alone) == []  # no name of the search in it
    run = MakeContext("Makefile", parse_make(text), ("gfx90a",), facts=MakeFacts({"NVCC"}, set(), {"CFLAGS"}))
    assert [variable for _, variable, _ in _named_assignments(run)] == ["PKG_VERSION", "CFLAGS", "LDFLAGS"]
    ported = port_make(text, "Makefile", facts=MakeFacts({"NVCC"}, set(), {"CFLAGS"}))
    assert ported.text == "PKG_VERSION = 1\nCFLAGS = -fopenmp\nLDFLAGS = -Xlinker -z\n"


def test_text_a_pattern_would_match_other_than_the_search_holds_no_name_offsets() -> None:
    assert Names("\u017fbsa = 1\n").hits is None  # re.I matches ſ to s: the names must be read
    assert Names("\u0130 = 1\n").hits is None  # lower-casing changes its length
    assert Names("\u00e9 = 1\n").hits == []  # other text beyond ASCII is searched as usual
    with disabled():
        assert Names("A = 1\n").hits is None


# ---------------------------------------------------------------- facts of a run: each file alone, then combined

_RULES = "all: app\napp: main.o\n\t$(CUDA_CC) $(GPU_FLAGS) -o app main.o\n"
_COMMON = "CUDA_CC := /usr/local/cuda/bin/nvcc\nGPU_FLAGS := $(ARCH_FLAGS) -O2\nARCH_FLAGS := -arch=sm_70\n"


@pytest.mark.parametrize("order", [("rules", "common"), ("common", "rules")])
def test_combined_facts_do_not_depend_on_the_order_of_the_files(order: tuple[str, str]) -> None:
    """A compiler variable set in common.mk launches nvcc in a Makefile read before it, too;
    its flag variables and what they are made of are flag variables of the run."""
    from buildport.passes.make_facts import combine, file_facts

    texts = {"rules": _RULES, "common": _COMMON}
    facts = MakeFacts()
    combine(facts, [file_facts(parse_make(texts[name])) for name in order])
    assert "CUDA_CC" in facts.compiler_vars
    assert {"GPU_FLAGS", "ARCH_FLAGS"} <= facts.flag_vars


def test_one_file_gathered_alone_gives_what_it_gave_before() -> None:
    """gather() on a single file: compilers, flags through the recipes, the variables flags are made of."""
    facts = MakeFacts()
    gather(parse_make(_COMMON + _RULES), facts)
    assert facts.compiler_vars == {"NVCC", "CUDA_CC"}
    assert facts.flag_vars == {"GPU_FLAGS", "ARCH_FLAGS"}
    assert not facts.host_links


# ---------------------------------------------------------------- the searches' shortcuts


def _raw_hits(text: str) -> tuple[list[int], list[int]]:
    links = frozenset(library_rules.BY_LINK_NAME)
    lowered = text.lower()
    return ([m.start() for m in make_prescan._static(links).finditer(lowered)],
            [m.start() for m in make_prescan._NAMES.finditer(lowered)])  # fmt: skip


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(cuda_makefiles() | st.text(alphabet="abcdefghijklmnopqrstuvwxyz_CUDANVG .-$()\n\t", max_size=60))
def test_a_quiet_text_is_one_neither_search_finds_a_word_in(text: str) -> None:
    static, names = _raw_hits(text)
    quiet = make_prescan.quiet(text, frozenset(library_rules.BY_LINK_NAME))
    assert quiet == (not static and not names and not may_have_residue(text))
    if quiet:
        assert Prescan(text).hits == [] and Names(text).hits == []
        assert make_prescan.hint_free(text) and PLATFORM_HINTS.search(text) is None
        assert not may_have_residue(text)  # what lets the audit skip its residue search
    with disabled():
        assert not make_prescan.hint_free(text)


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_quiet_agrees_with_both_searches_on_fixtures(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    static, names = _raw_hits(text)
    quiet = make_prescan.quiet(text, frozenset(library_rules.BY_LINK_NAME))
    assert quiet == (not static and not names and not may_have_residue(text))


def test_a_text_whose_case_folding_shifts_offsets_is_never_quiet() -> None:
    links = frozenset(library_rules.BY_LINK_NAME)
    assert not make_prescan.quiet("A = \u0130\n", links)  # İ lower-cases to two characters
    assert not make_prescan.quiet("A = \u017f\n", links)  # ſ, which a case-insensitive pattern reads as s
    assert make_prescan.quiet("A = 1\n", links)


def test_root_paths_looks_only_at_words_that_can_hold_a_root() -> None:
    from buildport.passes.make_facts import _LITERAL_MARK, _ROOT_MARK, root_paths

    assert all(_ROOT_MARK in name for name in ROOT_VARIABLES)
    for literal in ("/usr/local/cuda", "/usr/local/cuda-12.4", "/opt/cuda"):
        found = CUDA_ROOT_LITERAL.search("-I" + literal + "/include")
        assert found is not None and _LITERAL_MARK in found.group()
    for word in ("-I$(CUDA_PATH)/include", "-L/usr/local/cuda/lib64", "${CUDA_HOME}", "-O2", "$(CXX)", "-lm"):
        with disabled():
            expected = root_paths(word)
        assert root_paths(word) == expected


# ---------------------------------------------------------------- files no rule can touch


@pytest.mark.parametrize("text, facts", [
    # no word a rule looks for, yet a line changes or is reported: none of them may take the shortcut
    ("SMS := 70 80\n$(foreach sm,$(SMS),$(eval ARCHS += -arch=$(sm)))\n", None),  # an eval sets arch flags
    ("x.o: x.c\n", MakeFacts({"NVCC", "CC"})),  # make's built-in rule runs $(CC), nvcc in this run
    ("CFLAGS = -O2 -G\n", MakeFacts({"NVCC"}, set(), {"CFLAGS"})),  # -G in a flag variable of the run
    ("ARCH = 70\nX = $(ARCH)\n", MakeFacts({"NVCC"}, {"ARCH"})),  # an architecture variable of the run
])  # fmt: skip
def test_a_file_without_rule_words_is_still_ported_where_a_rule_can_fire(text: str, facts: MakeFacts | None) -> None:
    from buildport.passes.make import nothing_to_port

    assert make_prescan.quiet(text, frozenset(library_rules.BY_LINK_NAME))
    assert not nothing_to_port(text, facts or MakeFacts())
    result = port_make(text, "Makefile", facts=facts)
    assert result.changed or result.findings
    same_with_and_without_skipping(text, "Makefile", facts)


def test_a_file_no_rule_can_touch_is_parsed_and_left_alone() -> None:
    from buildport.passes.make import nothing_to_port

    text = "CC = gcc\nCFLAGS = -O2\nx.o: x.c\n\t$(CC) $(CFLAGS) -c x.c\ninclude rules.mk\n"
    assert nothing_to_port(text, MakeFacts())
    result = port_make(text, "Makefile")
    assert not result.changed and not result.findings and result.regions == []
    same_with_and_without_skipping(text)
    with pytest.raises(ParseError):
        port_make("ifeq (a,b)\nx = 1\n", "Makefile")  # bad input is still an error


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(NAMES, st.lists(WORDS | st.sampled_from(["-lm", "-I$(ROCM_PATH)/include", "-O3", "$(if $(D),-G,)", "-std=c++17"]),
                       max_size=6))
def test_an_inert_assignment_is_one_the_port_leaves_alone(name: str, words: list[str]) -> None:
    """What :func:`_inert` lets the port skip, the port that skips nothing leaves as it is, and
    reports nothing of, with the variable a flag variable of the run."""
    from buildport.passes.make import MakeContext, _inert

    text = f"{name} := {' '.join(words)}\n"
    facts = MakeFacts({"NVCC"}, set(), {name})
    ctx = MakeContext("Makefile", parse_make(text), ("gfx90a",), facts=facts)
    if _inert(ctx, name, " ".join(words)):
        with disabled():
            result = port_make(text, "Makefile", facts=facts)
        # (a platform-detecting name is reported by its own pass, whatever the value)
        assert result.text == text and [f.rule for f in result.findings if f.rule != "make-platform"] == []


def test_every_kind_of_line_the_port_reads_has_one_handler() -> None:
    from buildport.passes.make import HANDLERS
    from buildport.syntax.make_nodes import SELECTABLE

    assert set(HANDLERS) == set(SELECTABLE)
