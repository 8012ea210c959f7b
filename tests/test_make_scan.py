"""The make parser's fast path: a line break read with the token before it, lines built on first use."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.syntax import make
from buildport.syntax.errors import ParseError
from buildport.syntax.make import (
    Assignment,
    Blank,
    Comment,
    Conditional,
    Line,
    MakeFile,
    Other,
    RecipeLine,
    Rule,
    parse_make,
)
from buildport.syntax.make_build import (
    _OPERATOR_AT_END,
    _operator_start,
    build_lines,
    line_at,
    lines_at,
)
from buildport.syntax.make_first import can_begin_with
from buildport.syntax.make_nodes import SELECTABLE
from buildport.syntax.make_reader import Reader
from buildport.syntax import make_lark
from buildport.syntax.make_scan import Tables, scan, tables
from buildport.syntax.make_words import _BLANKS, skip_blanks
from buildport.textio import decode
from tests.support.makefiles import ALPHABET, IDS, MAKEFILES, makefile_texts

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
#: The files read with the default tab recipe prefix (the tables below are built for it).
TAB_MAKEFILES = [p for p in MAKEFILES if ".RECIPEPREFIX" not in p.read_text(encoding="utf-8", errors="replace")]
TAB_IDS = [str(p.relative_to(ROOT)) for p in TAB_MAKEFILES]


def _unfused() -> Tables:
    return tables(make._parser(make.TAB), fuse=False)


UNFUSED = _unfused()


# ---------------------------------------------------------------- which characters a pattern can begin with


@pytest.mark.parametrize(
    ("pattern", "char", "expected"),
    [
        (r"a*b", "b", True), (r"a*b", "a", True), (r"a*b", "c", False), (r"[^\n]", "\n", False),
        (r"[^\n]x", "y", True), (r"\r?\n", "\n", True), (r"\r?\n", "x", False), (r"(?:ab|c)+", "b", False),
        (r"(?:ab|c)+", "c", True), (r"(?=x)y", "y", True), (r"(?!\n)[ab]", "\n", False), (r"\s", "\n", True),
        (r"\S", "\n", True), (r"[a-z]", "\n", False), (r"[a-z]", "q", True), (r"x?", "\n", True), ("", "\n", True),
        (r"(?i)a", "A", True), (r"(?i:a)", "A", True), (r"(?P<n>a)(?P=n)", "a", True), (r"\Z", "\n", True),
    ],
)  # fmt: skip
def test_can_begin_with(pattern: str, char: str, expected: bool) -> None:
    assert can_begin_with(pattern, char) is expected


def test_only_the_line_break_begins_with_a_newline_in_the_make_grammar() -> None:
    parser = make._parser(make.TAB)
    starters = [t.name for t in parser.terminals if can_begin_with(t.pattern.to_regexp(), "\n")]
    assert starters == ["NEWLINE"]
    assert make._tables(make.TAB).newline == "NEWLINE"


# ---------------------------------------------------------------- lexers compiled when first met


def test_every_state_of_the_make_grammar_is_read_by_the_fast_loop() -> None:
    """Compiled all at once with checks: no lexer callbacks, no split or empty alternations.

    Both from one parser: Lark numbers the states in an order that follows the hash seed, so
    tables another process kept in the parser cache may number them differently (and be right)."""
    parser = make._parser(make.TAB)
    eager = tables(parser, eager=True)
    lazy = tables(parser)
    assert eager.actions == lazy.actions and len(eager.lexers) == len(lazy.lexers)
    for state, matcher in enumerate(eager.lexers):
        assert (matcher is None) == (lazy.lexers[state] is None)
        if matcher is not None:
            assert matcher.__self__.pattern == lazy.lexer(state).__self__.pattern  # type: ignore[union-attr]


#: A string terminal that a regex terminal of the same priority also matches: Lark gives the
#: lexer a callback (the keyword wins over the word), which the fast loop does not copy.
_KEYWORD_GRAMMAR = r"""
start: (KW | WORD | SP)*
KW: "if"
WORD: /[a-z]+/
SP: " "
"""


def test_a_grammar_with_lexer_callbacks_is_refused_eagerly_and_read_by_lark_lazily() -> None:
    from lark import Lark

    parser = Lark(_KEYWORD_GRAMMAR, parser="lalr", lexer="contextual")
    with pytest.raises(ValueError, match="callbacks"):
        tables(parser, fuse=False, eager=True)
    assert scan("if x", tables(parser, fuse=False)) is None  # the caller then parses with Lark


@pytest.mark.slow
def test_the_make_parser_is_loaded_from_the_parser_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.syntax.grammars import cached_lark

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BUILDPORT_PARSER_CACHE", raising=False)
    grammar = make.grammar_text("make")
    options = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False}
    built = cached_lark("make", grammar, make_lark._Lines(), options)
    files = list((tmp_path / "buildport" / "parsers").glob("*.lark"))
    assert len(files) == 1 and files[0].name.startswith("make-")
    assert not list((tmp_path / "buildport" / "parsers").glob(".tmp-*"))  # no temporary file left
    loaded = cached_lark("make", grammar, make_lark._Lines(), options)
    assert list((tmp_path / "buildport" / "parsers").glob("*.lark")) == files
    text = "all: a\n\tcc -o $@ $^\nifdef X\ny := 1\nendif\n"
    assert scan(text, tables(loaded)) == scan(text, tables(built)) is not None
    assert loaded.parse(text) == built.parse(text)
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", "0")
    assert scan(text, tables(cached_lark("make", grammar, make_lark._Lines(), options))) == scan(text, tables(built))
    assert list((tmp_path / "buildport" / "parsers").glob("*.lark")) == files  # built, and kept nowhere
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path / "elsewhere"))
    cached_lark("make", grammar, make_lark._Lines(), options)
    assert len(list((tmp_path / "elsewhere").glob("make-*.lark"))) == 1


def test_an_unwritable_parser_cache_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.syntax.grammars import cached_lark

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.delenv("BUILDPORT_PARSER_CACHE", raising=False)
    options = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False}
    parser = cached_lark("make", make.grammar_text("make"), make_lark._Lines(), options)
    assert scan("x := 1\n", tables(parser)) is not None


# ---------------------------------------------------------------- fused = unfused


def same_tokens(text: str) -> None:
    """Reading the line break along with the token before it changes nothing."""
    fused = scan(text, make._tables(make.TAB), make._CHECKED)
    plain = scan(text, UNFUSED, make._CHECKED)
    assert fused == plain


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_fused_scan_equals_plain_scan_on_fixtures(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    same_tokens(text)
    assert scan(text, make._tables(make.TAB)) is not None


@pytest.mark.parametrize(
    "text",
    ["", "\n", "a\n\n\nb", "a = b \\\n", "a = b \\\n\n", "a\r\nb\n", "define x\nendef\n\n", "x:\n\tc\n\n\n\td\n",
     "define a\n  define b\n  endef\nendef\nz\n", "ifeq (a,b)\nendif", "\ufeff\n", "a:;\n", "\t\n"],
)  # fmt: skip
def test_fused_scan_equals_plain_scan_on_edge_cases(text: str) -> None:
    same_tokens(text)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(makefile_texts())
def test_fused_scan_equals_plain_scan_on_generated_makefiles(text: str) -> None:
    same_tokens(text)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_fused_scan_equals_plain_scan_on_arbitrary_text(text: str) -> None:
    same_tokens(text)


# ---------------------------------------------------------------- lines built on first use


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_lazy_lines_equal_eagerly_built_lines(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    makefile = parse_make(text, str(path))
    assert not makefile.built
    assert str(makefile) == text and not makefile.built  # printing needs no nodes
    reader = makefile._reader
    assert isinstance(reader, Reader)
    children = reader.children  # what the parser read
    bom, eager = build_lines(text, children)
    assert makefile.bom == bom
    assert makefile.lines == eager and makefile.built
    assert str(makefile) == makefile.dump() == text
    # Building a chosen few lines gives the same nodes as building them all.
    firsts = [
        i for i, item in enumerate(children)
        if item[0] not in ("NEWLINE", "BOM") and (i == 0 or children[i - 1][0] in ("NEWLINE", "BOM"))
    ]  # fmt: skip
    chosen = lines_at(text, children, firsts)
    assert chosen == [line for line in eager if type(line).__name__ != "Blank" or line.span.start < line.span.end]


@pytest.mark.parametrize("path", TAB_MAKEFILES, ids=TAB_IDS)
def test_checked_lines_are_the_conditionals_and_others(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    scanned = scan(text, make._tables(make.TAB), make._CHECKED)
    assert scanned is not None
    children, checked = scanned
    expected = [line for line in build_lines(text, children)[1] if isinstance(line, (Conditional, Other))]
    assert lines_at(text, children, checked) == expected


class CountingReader:
    """A reader that counts how often it builds."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.builds = 0

    def build(self) -> list[Line]:
        self.builds += 1
        return list(self.lines)

    def outline(self) -> list[tuple[type[Line], int, int, int]]:
        raise AssertionError("not used here")

    def node(self, index: int) -> Line:
        raise AssertionError("not used here")


def test_makefile_built_from_lines_or_a_reader() -> None:
    eager = parse_make("a = 1\nall:\n\techo\n")
    copy = MakeFile(eager.source, eager.path, eager.bom, lines=list(eager.lines))
    assert copy.built and copy == eager and str(copy) == eager.source
    reader = CountingReader(eager.lines)
    lazy = MakeFile(eager.source, eager.path, eager.bom, reader=reader)
    assert not lazy.built and str(lazy) == eager.source and reader.builds == 0
    assert len(lazy) == 3 and lazy.lines == eager.lines and lazy.nodes(Conditional) == []
    assert reader.builds == 1  # built once
    lazy.lines = lazy.lines[:1]
    assert str(lazy) == "a = 1\n"
    with pytest.raises(TypeError):
        MakeFile("", "p", "")


# ---------------------------------------------------------------- only the lines a pass asks for


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_selected_lines_equal_the_built_lines(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    expected = [line for line in parse_make(text).lines if not isinstance(line, (Blank, Comment))]
    lazy = parse_make(text)
    assert list(lazy.select(SELECTABLE)) == expected and not lazy.built
    # the outline knows each line's class and span before it is built
    seen: list[tuple[type[Line], int, int]] = []

    def every_other(cls: type[Line], start: int, end: int) -> bool:
        seen.append((cls, start, end))
        return len(seen) % 2 == 1

    assert list(parse_make(text).select(SELECTABLE, every_other)) == expected[::2]
    assert seen == [(type(line), line.span.start, line.span.end) for line in expected]
    # once the lines exist, select filters them
    built = parse_make(text)
    assert built.lines is not None and built.built
    seen.clear()
    assert list(built.select(SELECTABLE, every_other)) == expected[::2]


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_variables_without_nodes_equal_the_nodes_variables(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    lazy, built = parse_make(text), parse_make(text)
    built.lines
    assert lazy.variables() == built.variables() and not lazy.built
    expected = {line.start: (line.span.end, line.variable, line.value) for line in built.lines if isinstance(line, Assignment)}
    assert built.variables() == expected and list(lazy.variables()) == list(expected)  # in line order


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_one_variable_and_the_spans_of_a_class_without_nodes(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    lazy, built = parse_make(text), parse_make(text)
    built.lines
    expected = built.variables()
    # backwards, so no assignment is read in line order by accident
    assert {start: lazy.variable(start) for start in reversed(list(expected))} == expected and not lazy.built
    assert {start: built.variable(start) for start in expected} == expected
    for cls in SELECTABLE:
        spans = [(line.span.start, line.span.end) for line in built.lines if type(line) is cls]
        assert lazy.spans(cls) == spans == built.spans(cls)
    assert not lazy.built


def _lines_holding(makefile: MakeFile, offsets: list[int], classes: frozenset[type[Line]]) -> list[Line]:
    return [line for line in makefile.lines if type(line) in classes and type(line) not in (Blank, Comment)
            and any(line.span.start <= o < line.span.end for o in offsets)]  # fmt: skip


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_the_lines_that_hold_given_offsets(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    rng = random.Random(path.name)
    every = sorted({0, len(text), *(rng.randrange(len(text) + 1) for _ in range(40))})
    some_classes = frozenset({Assignment, Rule, Conditional})
    for offsets in (every, every[::3], [], list(range(len(text) + 1))):
        for classes in (SELECTABLE, some_classes):
            expected = _lines_holding(parse_make(text), offsets, classes)
            lazy = parse_make(text)
            assert list(lazy.lines_at(offsets, classes)) == expected and not lazy.built
            built = parse_make(text)
            built.lines
            assert list(built.lines_at(offsets, classes)) == expected
    assert list(parse_make(text).lines_at(None, some_classes)) == list(parse_make(text).select(some_classes))


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_the_assignments_that_hold_given_offsets_without_nodes(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    rng = random.Random(path.name)
    every = sorted({0, len(text), *(rng.randrange(len(text) + 1) for _ in range(40))})
    for offsets in (every, every[::3], [], list(range(len(text) + 1)), None):
        expected = [(line.start, line.variable, line.value)
                    for line in parse_make(text).lines_at(offsets, frozenset({Assignment}))
                    if isinstance(line, Assignment)]  # fmt: skip
        lazy = parse_make(text)
        assert lazy.assignments_at(offsets) == expected and not lazy.built
        built = parse_make(text)
        built.lines
        assert built.assignments_at(offsets) == expected


def _recipe_after(lines: list[Line], i: int) -> list[Line]:
    """What make reads as the recipe of the rule ``lines[i]``, from the whole list."""
    out = []
    for line in lines[i + 1 :]:
        if isinstance(line, RecipeLine):
            out.append(line)
        elif not isinstance(line, (Blank, Comment, Conditional)):
            break
    return out


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_the_recipe_lines_of_a_rule(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    lines = parse_make(text).lines
    lazy, built = parse_make(text), parse_make(text)
    built.lines
    for i, line in enumerate(lines):
        if isinstance(line, Rule):
            expected = _recipe_after(lines, i)
            assert lazy.recipe_lines(line) == expected == built.recipe_lines(line)
    assert not lazy.built


def test_a_recipe_goes_on_through_comments_blanks_and_conditionals() -> None:
    text = "a: b\n# c\n\n\tone\nifdef X\n\ttwo\nendif\n\tthree\nX = 1\n\tfour\nc: d\n"
    makefile = parse_make(text)
    rule = next(iter(makefile.select(frozenset({Rule}))))
    assert [line.command_text for line in makefile.recipe_lines(rule)] == ["one", "two", "three"]
    last = list(makefile.select(frozenset({Rule})))[-1]
    assert makefile.recipe_lines(last) == []


def test_an_offset_in_a_comment_or_a_line_break_selects_no_line() -> None:
    text = "A = 1\n# B = 2\n\nC = 3 # c\n"
    makefile = parse_make(text)
    at = text.index
    assert list(makefile.lines_at([at("\n"), at("#"), at("\n\n") + 1], SELECTABLE)) == []
    assert [line.variable for line in makefile.lines_at([at("1"), at("# c")], SELECTABLE)] == ["A", "C"]


@pytest.mark.parametrize("text", [
    "A = 1\n", "A=1\n", "A\t:= 1\n", "export A = 1\n", "override  export A += 1\n", "private A ?= 1\n",
    "A \\\n  = 1\n", "prog: A = 1\n", "prog: export B := 2\n", "\tA = 1\nB = 2\n", "define = 1\n", "export = 1\n",
    "A ::= 1\n", "A :::= 1\n", "A != echo 1\n", "A=\n", "A = 1 \\\n 2\n", "A = 1\r\n",
])  # fmt: skip
def test_variables_without_nodes_on_tricky_names(text: str) -> None:
    lazy, built = parse_make(text), parse_make(text)
    built.lines
    assert lazy.variables() == built.variables()


def _node_facts(line: Conditional) -> tuple[str, bool, bool, int]:
    return line.directive, make._valid_condition(line), line.condition_keyword is None, line.keyword.start - line.start


@pytest.mark.parametrize("path", TAB_MAKEFILES, ids=TAB_IDS)
def test_conditional_facts_from_tokens_equal_the_nodes(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    scanned = scan(text, make._tables(make.TAB), make._CHECKED)
    assert scanned is not None
    children, checked = scanned
    for index in checked:
        if children[index][0] == "CONDITIONAL":
            line = line_at(text, children, index)
            assert isinstance(line, Conditional)
            assert make.conditional_facts(text, children[index]) == _node_facts(line)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(makefile_texts())
def test_conditional_facts_from_tokens_equal_the_nodes_on_generated_makefiles(text: str) -> None:
    scanned = scan(text, make._tables(make.TAB), make._CHECKED)
    if scanned is None:
        return
    children, checked = scanned
    for index in checked:
        if children[index][0] == "CONDITIONAL":
            line = line_at(text, children, index)
            assert isinstance(line, Conditional)
            assert make.conditional_facts(text, children[index]) == _node_facts(line)


def test_select_builds_only_what_it_keeps() -> None:
    makefile = parse_make("# c\nA = 1\n\nall: x\n\techo\nifeq (a,b)\nendif\ndefine D\nx\nendef\n")
    reader = makefile._reader
    assert isinstance(reader, Reader)
    assert not reader._nodes  # checking the conditionals built none for good
    rules = list(makefile.select({Rule}))
    assert [line.text for line in rules] == ["all: x\n"] and len(reader._nodes) == 1
    kinds = [cls.__name__ for cls, _, _, _ in reader.outline()]
    assert kinds == ["Assignment", "Rule", "RecipeLine", "Conditional", "Conditional", "Define"]
    assert not makefile.built


def test_errors_are_raised_while_parsing_not_when_lines_are_built() -> None:
    with pytest.raises(ParseError) as err:
        parse_make("ifeq (a,b)\nx = 1\n")
    assert err.value.message == "missing 'endif'"
    with pytest.raises(ParseError):
        parse_make("define x\n  ifeq\n")
    assert not parse_make("define x\n  endif\n  else\nendef\n").built


# ---------------------------------------------------------------- shortcuts equal the regexes they stand for


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text(alphabet=" \t\\\r\nab$(", max_size=10), st.integers(0, 12), st.integers(0, 12))
def test_skip_blanks_equals_its_regex(text: str, start: int, end: int) -> None:
    assert skip_blanks(text, start, end) == _BLANKS.match(text, start, end).end()  # type: ignore[union-attr]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text(alphabet="ab:?+!= ", max_size=6), st.sampled_from([":::=", "::=", ":=", "?=", "+=", "!=", "="]),
       st.integers(0, 3))  # fmt: skip
def test_operator_start_equals_its_regex(body: str, op: str, start: int) -> None:
    text = "xyz" + body + op
    found = _OPERATOR_AT_END.search(text, max(start, len(text) - 4), len(text))
    assert found is not None and found.start() == _operator_start(text, start, len(text))


# ---------------------------------------------------------------- the tables kept as data

_SAMPLES = [
    "CC := nvcc\nall: a\n\t$(CC) -o a a.cu\n",
    "ifdef X\ny := 1\nelse\ny := 2\nendif\n",
    "define BODY\n  echo $(1)\nendef\n$(foreach s,$(SMS),$(eval F += -gencode arch=compute_$(s)))\n",
    "include a.mk\n-include b.mk\nexport X ?= 1\noverride Y += 2\nvpath %.c src\n",
    "a: b | c ; cmd\n\techo \\\n  more\n# comment \\\n  continued\n",
    "X = $(subst a,b,$(patsubst %.c,%.o,$(wildcard *.c)))\r\ntarget: ; @:\r\n",
]


@pytest.mark.slow
def test_tables_from_data_are_the_tables_lark_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from buildport.syntax.make_scan import table_data, tables_from_data

    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    made = tables(make._parser(make.TAB))
    data = table_data(made)
    assert data is not None
    loaded = tables_from_data(json.loads(json.dumps(data)))  # through JSON, as the cache keeps it
    assert loaded.actions == made.actions
    assert (loaded.start, loaded.end, loaded.newline) == (made.start, made.end, made.newline) == (
        made.start, made.end, "NEWLINE")
    for state, lexer in enumerate(made.lexers):
        other = loaded.lexers[state]
        assert (lexer is None) == (other is None)
        if lexer is not None:
            assert (other.pattern, other.flags) == (lexer.pattern, lexer.flags)  # type: ignore[union-attr]
    fixtures = sorted(Path(__file__).parent.parent.glob("fixtures/make/*/input.mk"))
    assert len(fixtures) > 10
    for text in _SAMPLES + [p.read_text(encoding="utf-8", errors="surrogateescape") for p in fixtures]:
        assert scan(text, loaded) == scan(text, made) == scan(text, tables(make._parser(make.TAB)))


def test_a_grammar_that_needs_lark_s_lexer_is_not_kept_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lark import Lark

    from buildport.syntax.make_scan import cached_tables, table_data

    parser = Lark(_KEYWORD_GRAMMAR, parser="lalr", lexer="contextual")
    assert table_data(tables(parser, fuse=False)) is None
    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    made = cached_tables(_KEYWORD_GRAMMAR, lambda: parser)
    assert scan("if x", made) is None  # read by Lark, as before
    assert list(tmp_path.glob("make-tables-*.json")) == []  # nothing written to be read back and refused


@pytest.mark.parametrize("damage", ["", "{}", '{"actions": [], "lexers": [0], "patterns": [], "start": 0, "end": 1, "newline": null}'])
def test_damaged_tables_are_derived_again(damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.syntax.make_scan import cached_tables

    monkeypatch.setenv("BUILDPORT_PARSER_CACHE", str(tmp_path))
    first = cached_tables(make._grammar(make.TAB), lambda: make._parser(make.TAB))
    [kept] = tmp_path.glob("make-tables-*.json")
    kept.write_text(damage)
    again = cached_tables(make._grammar(make.TAB), lambda: make._parser(make.TAB))
    assert again.actions == first.actions and [scan(t, again) for t in _SAMPLES] == [scan(t, first) for t in _SAMPLES]
    assert kept.read_text() != damage  # replaced
