"""The GNU make parser: lossless round trip, line classification, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.syntax.errors import ParseError
from buildport.syntax.make import (
    Assignment,
    Blank,
    Conditional,
    Define,
    Expansion,
    Include,
    Line,
    MakeFile,
    RecipeLine,
    Rule,
    Span,
    iter_references,
    iter_words,
    parse_make,
    parse_make_lark,
)  # fmt: skip
from buildport.textio import decode
from tests.support.makefiles import makefile_texts

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "make-syntax"
FIXTURE_FILES = sorted(p for p in FIXTURES.iterdir() if p.is_file())
READ_ERRORS = (
    "missing 'endef', unterminated 'define'",
    "extraneous 'endif'",
    "extraneous 'else'",
    "extraneous 'endef'",
    "only one 'else' per conditional",
    "missing 'endif'",
    "invalid syntax in conditional",
)


def kinds(text: str) -> list[str]:
    return [type(line).__name__ for line in parse_make(text)]


def only(text: str, kind: type[Line]) -> Line:
    lines = [line for line in parse_make(text) if not isinstance(line, Blank)]
    assert len(lines) == 1 and isinstance(lines[0], kind), lines
    return lines[0]


def check_invariants(makefile: MakeFile) -> None:
    """Lines tile the text; every span of a line lies inside it."""
    text = makefile.source
    pos = len(makefile.bom)
    for line in makefile.lines:
        assert line.start == pos and line.span.end <= line.eol.start == line.span.end
        pos = line.end
        for name in getattr(line, "__dataclass_fields__", {}):
            value = getattr(line, name)
            spans = value if isinstance(value, tuple) and not isinstance(value, Span) else (value,)
            for span in spans:
                if isinstance(span, Span) and name not in ("span", "eol"):
                    assert line.span.start <= span.start <= span.end <= line.span.end, (name, line)
    assert pos == len(text)
    assert str(makefile) == text


# ---------------------------------------------------------------- round trip


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_fixture_round_trip(path: Path) -> None:
    data = path.read_bytes()
    text = decode(data, str(path))
    makefile = parse_make(text, str(path))
    check_invariants(makefile)
    assert str(makefile).encode("utf-8", "surrogateescape") == data


def test_fixture_encodings_survive() -> None:
    crlf = (FIXTURES / "crlf.mk").read_bytes()
    assert crlf.count(b"\r\n") == crlf.count(b"\n") > 5
    latin1 = (FIXTURES / "latin1.mk").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        latin1.decode("utf-8")
    bom = parse_make(decode((FIXTURES / "bom-no-final-newline.mk").read_bytes()))
    assert bom.bom == "\ufeff" and bom.lines[-1].eol == Span(len(bom.source), len(bom.source))


@pytest.mark.parametrize("text", ["", "\n", "\r\n", "\n\n", "x", "\t", "all:", "# c", "\ufeff", "\\", "$("])
def test_tiny_inputs(text: str) -> None:
    check_invariants(parse_make(text))


# ---------------------------------------------------------------- classification


def test_reference_line_with_colon_is_not_a_rule() -> None:
    for text in ["$(error a: b)\n", "$(eval x: y)\n", "  $(foreach d,$(D),$(info $(d): ok)) # c\n", "${info a:b}"]:
        assert isinstance(only(text, Expansion), Expansion)
    assert kinds("$(TARGETS): deps\n") == ["Rule"]
    assert kinds("$(A) $(B) x\n") == ["Other"]


def test_target_specific_assignment() -> None:
    node = only("prog: CFLAGS += -O2\n", Assignment)
    assert isinstance(node, Assignment) and node.is_target_specific
    assert (node.text_of(node.targets), node.variable, node.operator, node.value_text) == ("prog", "CFLAGS", "+=", "-O2")
    node = only("%.o: override private NVCCFLAGS := -G # dbg\n", Assignment)
    assert isinstance(node, Assignment)
    assert node.modifier_names == ["override", "private"] and node.text_of(node.comment) == "# dbg"
    assert kinds("prog: a b = c\n") == ["Rule"]  # second word is no operator: prerequisites


def test_tab_indented_conditionals() -> None:
    # Before any rule a tab is just indentation; after a rule GNU make hands a
    # tab-indented line to the shell, even `ifeq` (checked with GNU make 4.3).
    text = "\tifdef D\nX=1\n\tendif\nall:\n\tifeq ($(X),1)\n\techo\nifeq ($(X),1)\n\techo 1\nendif\n\techo 2\n"
    assert kinds(text) == [
        "Conditional", "Assignment", "Conditional", "Rule", "RecipeLine", "RecipeLine",
        "Conditional", "RecipeLine", "Conditional", "RecipeLine",
    ]  # fmt: skip
    assert not any(line.orphan for line in parse_make(text).nodes(RecipeLine))


def test_rule_context_ends_with_an_assignment() -> None:
    makefile = parse_make("all:\n\techo a\n\n# c\nX = 1\n\techo b\n")
    recipes = makefile.nodes(RecipeLine)
    assert [r.orphan for r in recipes] == [False, True]
    assert kinds("prog: X = 1\n\techo\n")[-1] == "RecipeLine" and parse_make("p: X=1\n\te\n").nodes(RecipeLine)[0].orphan


def test_hash_that_is_not_a_comment() -> None:
    node = only("COUNT := $(shell grep -c '#' x) # real\n", Assignment)
    assert isinstance(node, Assignment)
    assert node.value_text == "$(shell grep -c '#' x)" and node.text_of(node.comment) == "# real"
    node = only("H = a\\#b\n", Assignment)
    assert isinstance(node, Assignment) and node.value_text == "a\\#b" and node.comment is None
    recipe = parse_make("all:\n\techo '#' # to the shell\n").lines[1]
    assert isinstance(recipe, RecipeLine) and recipe.command_text == "echo '#' # to the shell"
    rule = only("quick: ; echo # not a comment\n", Rule)
    assert isinstance(rule, Rule) and rule.text_of(rule.recipe) == "echo # not a comment" and rule.comment is None
    rule = only("a: b # c ; d\n", Rule)
    assert isinstance(rule, Rule) and rule.text_of(rule.comment) == "# c ; d" and rule.recipe is None
    assert kinds("# a comment \\\n  that goes on\nX=1\n") == ["Comment", "Assignment"]


def test_rule_parts() -> None:
    rule = only("$(OBJS): %.o: %.cu | $(OUT) # c\n", Rule)
    assert isinstance(rule, Rule) and rule.is_static_pattern and not rule.double_colon
    assert [rule.text_of(s) for s in (rule.targets, rule.target_pattern, rule.prerequisites, rule.order_only)] == [
        "$(OBJS)", "%.o", "%.cu", "$(OUT)",
    ]  # fmt: skip
    rule = only("log:: a.txt b.txt\n", Rule)
    assert isinstance(rule, Rule) and rule.double_colon
    assert [rule.text_of(w) for w in rule.prerequisite_words] == ["a.txt", "b.txt"]
    rule = only("p.c p.h &: p.y\n", Rule)
    assert isinstance(rule, Rule) and rule.grouped and [rule.text_of(w) for w in rule.target_words] == ["p.c", "p.h"]
    rule = only("x\\:y: $(addprefix -I ,$(DIRS)) z\n", Rule)
    assert isinstance(rule, Rule) and rule.text_of(rule.targets) == "x\\:y"
    assert [rule.text_of(w) for w in rule.prerequisite_words] == ["$(addprefix -I ,$(DIRS))", "z"]


def test_every_operator_and_modifier() -> None:
    for op in ["=", ":=", "::=", ":::=", "?=", "+=", "!="]:
        for text in [f"V {op} x\n", f"V{op}x\n", f"export override V{op}  x  \n"]:
            node = only(text, Assignment)
            assert isinstance(node, Assignment) and (node.variable, node.operator, node.value_text) == ("V", op, "x")
    assert kinds("ifeq = 1\ndefine := 2\nexport = 3\noverride := 4\n") == ["Assignment"] * 4
    assert kinds("export A B\nunexport C\nexport\nvpath %.cu src\nundefine X\noverride undefine Y\n") == ["Directive"] * 6
    assert kinds("ifeq(a,b)\n") == ["Other"]  # make needs a blank after the keyword


def test_define_blocks() -> None:
    text = "define T =\n$(1): x\n\t$$(CC) -o $$@\n  define inner\n  endef\n\tendef\nendef # done\nX = 1\n"
    makefile = parse_make(text)
    define = makefile.lines[0]
    assert isinstance(define, Define) and kinds(text) == ["Define", "Assignment"]
    assert (define.variable, define.operator) == ("T", "=")
    assert define.body_text == "$(1): x\n\t$$(CC) -o $$@\n  define inner\n  endef\n\tendef\n"
    assert define.text_of(define.endef) == "endef"
    define = only("override define NAME :=\nbody\nendef\n", Define)
    assert isinstance(define, Define) and define.operator == ":=" and [m for m in map(define.text_of, define.modifiers)] == ["override"]
    assert kinds("define X\nendef# not an endef\nendef\n") == ["Define"]


def test_conditionals() -> None:
    makefile = parse_make("ifeq ($(A),1) # c\nelse ifneq (,$(B))\nelse\nendif\n")
    conds = makefile.nodes(Conditional)
    assert [c.directive for c in conds] == ["ifeq", "else", "else", "endif"]
    assert [c.condition for c in conds] == ["ifeq", "ifneq", "", ""]
    assert [c.text_of(c.arguments) for c in conds] == ["($(A),1)", "(,$(B))", "", ""]


def test_include_forms() -> None:
    makefile = parse_make("include ../common.mk\n-include $(DEPS)\nsinclude a.mk b.mk\n")
    includes = makefile.nodes(Include)
    assert [i.optional for i in includes] == [False, True, True]
    assert [includes[2].text_of(w) for w in includes[2].file_words] == ["a.mk", "b.mk"]


def test_line_endings_bom_and_last_line() -> None:
    makefile = parse_make("\ufeffA = 1\r\nall:\n\techo\r\n\techo done")
    assert makefile.bom == "\ufeff" and kinds("\ufeffA = 1\n") == ["Assignment"]
    assert [line.text_of(line.eol) for line in makefile] == ["\r\n", "\n", "\r\n", ""]
    assert isinstance(makefile.lines[-1], RecipeLine)
    assert parse_make("A = x \\").lines[0].text == "A = x \\"


def test_recipe_prefix() -> None:
    text = ".RECIPEPREFIX = >\nall:\n> echo hi\n\tX = 1\n"
    assert kinds(text) == ["Assignment", "Rule", "RecipeLine", "Assignment"]


def test_continuations() -> None:
    node = only("SRCS = a.cu \\\n       b.cu \\\r\n\tc.cu\n", Assignment)
    assert isinstance(node, Assignment)
    assert [node.text_of(w) for w in node.words(node.value)] == ["a.cu", "b.cu", "c.cu"]
    assert kinds("A = x\\\\\nB = y\n") == ["Assignment", "Assignment"]  # even backslashes: no continuation


def test_rewrite_one_span_keeps_every_other_byte() -> None:
    text = "CC = nvcc  # compiler\r\nall:\n\t$(CC) -o x x.cu\n"
    makefile = parse_make(text)
    node = makefile.lines[0]
    assert isinstance(node, Assignment)
    new = text[: node.value.start] + "hipcc" + text[node.value.end :]
    assert new == "CC = hipcc  # compiler\r\nall:\n\t$(CC) -o x x.cu\n"
    assert isinstance(parse_make(new).lines[0], Assignment)


# ---------------------------------------------------------------- words and references


def test_iter_references() -> None:
    text = "$(foreach sm,$(SMS),$(eval G += -gencode arch=compute_$(sm),code=sm_$(sm))) $(addprefix -Xcompiler ,$(CCFLAGS))"
    refs = list(iter_references(text))
    assert [(r.depth, r.kind, r.name_text) for r in refs] == [
        (0, "function", "foreach"), (1, "variable", "SMS"), (1, "function", "eval"),
        (2, "variable", "sm"), (2, "variable", "sm"), (0, "function", "addprefix"), (1, "variable", "CCFLAGS"),
    ]  # fmt: skip
    assert refs[0].arg_texts == ["sm", "$(SMS)", "$(eval G += -gencode arch=compute_$(sm),code=sm_$(sm))"]
    assert refs[5].arg_texts == ["-Xcompiler ", "$(CCFLAGS)"]
    (error,) = iter_references("$(error a, b: c)")
    assert error.arg_texts == ["a, b: c"]
    subst, auto, brace = iter_references("$(SRCS:.cu=.o) $@ $$x ${CUDA_PATH}")
    assert (subst.kind, subst.name_text, subst.arg_texts) == ("substitution", "SRCS", [".cu", ".o"])
    assert (auto.name_text, brace.name_text, brace.open) == ("@", "CUDA_PATH", "{")
    (open_ref,) = iter_references("$(shell echo (x)")
    assert not open_ref.closed and open_ref.text == "$(shell echo (x)"
    assert [r.name_text for r in iter_references("$(a $(b)) $(c)", nested=False)] == ["a $(b)", "c"]


def test_iter_words() -> None:
    text = "  -I$(CUDA_PATH)/include $(addprefix -L ,$(LIBS)) \\\n  a\\ b  "
    assert [w.of(text) for w in iter_words(text)] == ["-I$(CUDA_PATH)/include", "$(addprefix -L ,$(LIBS))", "a\\ b"]


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ("A = 1\n  define X\nbody\n", "missing 'endef', unterminated 'define'", 2, 3),
        ("define X\ndefine Y\nendef\n", "missing 'endef', unterminated 'define'", 1, 1),
        ("define X", "missing 'endef', unterminated 'define'", 1, 1),
        ("all:\n\techo\n  endif\n", "extraneous 'endif'", 3, 3),
        ("else\n", "extraneous 'else'", 1, 1),
        ("ifdef A\nelse\nelse ifdef B\nendif\n", "only one 'else' per conditional", 3, 1),
        ("X = 1\nifdef A\n ifdef B\n endif\n", "missing 'endif'", 2, 1),
        ("x\nendef\n", "extraneous 'endef'", 2, 1),
        ("ifeq\nendif\n", "invalid syntax in conditional", 1, 1),
    ],
)
def test_parse_errors(text: str, message: str, line: int, col: int) -> None:
    with pytest.raises(ParseError) as info:
        parse_make(text, "Makefile")
    err = info.value
    assert (err.message, err.line, err.col, err.path) == (message, line, col, "Makefile")
    assert err.source_line == text.splitlines()[line - 1]


# ---------------------------------------------------------------- properties

def round_trip_or_error(text: str) -> None:
    try:
        makefile = parse_make(text)
    except ParseError as err:
        assert err.message in READ_ERRORS, err.format()
        assert 1 <= err.line and 1 <= err.col
        return
    check_invariants(makefile)
    for line in makefile:
        list(line.references())
        list(iter_words(text, line.span.start, line.span.end))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(makefile_texts())
def test_generated_makefiles_round_trip_or_raise_parse_error(text: str) -> None:
    round_trip_or_error(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\r\n\\$(){}#:;=|%@<?+!&,'\"abdefilnx\ufeff\xe9", max_size=80))
def test_arbitrary_text_round_trips_or_raises_parse_error(text: str) -> None:
    round_trip_or_error(text)


@settings(max_examples=200, deadline=None)
@given(makefile_texts())
def test_texts_without_directives_always_parse(text: str) -> None:
    # Only conditionals and define/endef can make a file unreadable.
    for word in ("ifeq", "ifdef", "ifneq", "else", "endif", "define", "endef"):
        text = text.replace(word, "word")
    check_invariants(parse_make(text))


# ---------------------------------------------------------------- fast path = Lark reference

MAKE_CASES = Path(__file__).resolve().parent.parent / "fixtures" / "make"
DIFFERENTIAL_FILES = FIXTURE_FILES + sorted(
    p for p in MAKE_CASES.glob("*/*.mk") if p.name in ("input.mk", "expected.mk")
)


def same_as_reference(text: str) -> None:
    """The fast path and the Lark parser give equal lines, or the same error at the same place."""
    outcomes = []
    for parse in (parse_make, parse_make_lark):
        try:
            makefile = parse(text)
        except ParseError as err:
            outcomes.append(("error", err.message, err.line, err.col))
        else:
            assert str(makefile) == text
            outcomes.append(("tree", makefile.bom, makefile.lines))
    assert outcomes[0] == outcomes[1]


DIFFERENTIAL_IDS = [str(p.relative_to(FIXTURES.parent)) for p in DIFFERENTIAL_FILES]


@pytest.mark.parametrize("path", DIFFERENTIAL_FILES, ids=DIFFERENTIAL_IDS)
def test_fast_path_matches_lark_on_fixtures(path: Path) -> None:
    same_as_reference(decode(path.read_bytes(), str(path)))


@pytest.mark.parametrize(
    "text",
    ["", "\ufeff", "\ufeffa = b", "define x\n", "define x\ndefine y\nendef\n", "endef\n", "\tx\n",
     "a:\n\tx\n\n# c\n\tifeq (a,b)\n", "ifeq (a,b)\nelse\nelse\nendif\n", "define a\n  define b\n  endef\nendef",
     "define a\n  define b\n  endef", ".RECIPEPREFIX = >\na:\n> cmd\n", "$(", "a:\\\n b;c\r\n"],
)  # fmt: skip
def test_fast_path_matches_lark_on_edge_cases(text: str) -> None:
    same_as_reference(text)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(makefile_texts())
def test_fast_path_matches_lark_on_generated_makefiles(text: str) -> None:
    same_as_reference(text)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=" \t\r\n\\$(){}#:;=|%@<?+!&,'\"abdefilnx\ufeff\xe9", max_size=80))
def test_fast_path_matches_lark_on_arbitrary_text(text: str) -> None:
    same_as_reference(text)


def test_fast_path_matches_lark_on_deeply_nested_defines() -> None:
    # More parser stacks than the fast path remembers: it still reads them, uncached.
    depth = 2000
    text = "define a\n" + "define b\n" * depth + "endef\n" * depth + "endef\nx = 1\n"
    same_as_reference(text)
    same_as_reference("a = b\n" + text + "all: x\n\tcc\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_col_counts_then_indexes_and_agrees_with_position_of(newline: str) -> None:
    from buildport.syntax.errors import position_of

    text = newline.join(f"V{i} := {'x' * (i % 7)}" for i in range(200)) + newline
    tree = parse_make(text)
    for offset in list(range(0, len(text), 37)) + [len(text) - 1, 0]:  # far more lookups than are counted
        line, col, _source = position_of(text, offset)
        assert tree.line_col(offset) == (line, col), offset


def test_edits_apply_in_one_pass_and_keep_every_other_byte() -> None:
    from buildport.passes.text_edits import TextEdits

    text = "".join(f"{i:04d}|" for i in range(2000))
    spans = {(i * 5, i * 5 + 4): f"<{i}>" for i in range(0, 2000, 3)}
    spans[(5, 5)] = "^"  # an insertion
    edits = TextEdits()
    for (start, end), new in spans.items():
        edits.replace(start, end, new)
    expected = list(text)
    for (start, end), new in sorted(spans.items(), reverse=True):
        expected[start:end] = list(new)
    new_text, found = edits.applied(text)
    assert new_text == "".join(expected)
    assert len(found) == len(spans) and found[:2] == [(0, 4, 0, 3), (5, 5, 4, 5)]  # each edit its region
    assert all(new_text[n0:n1] != text[o0:o1] for o0, o1, n0, n1 in found)
    touching = TextEdits()
    touching.replace(0, 2, "ab")
    touching.remove(2, 4)
    touching.remove(3, 6)  # two removals that overlap (words that shared a blank) are one
    assert touching.applied("0123456789") == ("ab6789", [(0, 6, 0, 2)])
