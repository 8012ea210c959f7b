"""The CMake grammar: lossless round trip, positioned errors, two parsers that agree."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.syntax.cmake import CMakeFile, parse_cmake, parse_cmake_lark
from buildport.syntax.errors import ParseError

ROUND_TRIP = [
    "",
    "\n",
    "project(x)",
    "project(x)\n",
    "\ufeffproject(bom)\n",
    "cmake_minimum_required(VERSION 3.18)\r\nproject(foo LANGUAGES CXX CUDA)\r\n",
    "a()\rb()\r",
    "a()\r\nb()\nc()\r",
    'set(A "a\\"b\n c" ${${x}} $ENV{HOME} $CACHE{Y})\n',
    "set(X [==[ ]] ]=] ]==] [[x]])\n",
    "#[[ bracket\n comment ]]\nfoo(a) #[[x]] # tail\n",
    "#" + "[" + "=" * 75 + "[ deep ]" + "=" * 75 + "]\n",
    "if((A OR (B AND C)) AND NOT D)\nendif()\n",
    "a()\nif(((((((A)))))) OR B)\n  b((((c))))\nendif()\n",  # nested deeper than the recognizer's regex
    'set(X -DX="a b" $(VAR) a[[b]] [=x [ = ==)\n',
    'string(REGEX MATCH "[[:space:]]" out "${in}")\n',
    'set(x "[[a]]b" [[c]]#[[d]]\n [[e]](f) [[g]])\n',
    "f(\\; a\\ b \\$ \\n)\n",
    'set(x "a\\\nb")\n',
    "foo (a #c\n b)\n",
    "\tfoo()\t# x\n  # only a comment",
    "$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>\n".join(["target_compile_options(t PRIVATE ", ")\n"]),
    "x($<IF:$<BOOL:$<TARGET_EXISTS:a>>,$<TARGET_FILE:a>,$<1:b>>)\n",
    "message(\"caf\u00e9 \u2603 \U0001F600\")\n",
    "message(STATUS \"Latin-1 \udce9 survives\")\n",
]


def _arguments_of_fresh_commands(text: str) -> list[list[tuple[str, str, int]]]:
    """The arguments of each command as a fresh parse gives them: before any other leaf is read."""
    return [[(a.type, a.value, a.start) for a in c.arguments()] for c in parse_cmake(text).commands()]


def _arguments_of(tree: CMakeFile) -> list[list[tuple[str, str, int]]]:
    return [[(a.type, a.value, a.start) for a in c.arguments()] for c in tree.commands()]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text: str) -> None:
    tree = parse_cmake(text)
    reference = parse_cmake_lark(text)
    assert str(tree) == text
    assert tree == reference
    assert _arguments_of_fresh_commands(text) == _arguments_of(reference)
    assert [c.identifier for c in parse_cmake(text).commands()] == [c.name.value.lower() for c in reference.commands()]
    assert parse_cmake(text, cut=True) == reference  # cut at once rather than when the commands are listed
    assert parse_cmake(text).cut_points() == parse_cmake(text, cut=True).cut_points()


def test_commands_and_arguments() -> None:
    tree = parse_cmake('Add_Executable(app "main.cu" [[x]] b)\n')
    (command,) = tree.commands()
    assert command.identifier == "add_executable"
    assert command.name.value == "Add_Executable"
    assert [a.value for a in command.arguments()] == ["app", '"main.cu"', "[[x]]", "b"]
    assert [a.type for a in command.arguments()] == ["UNQUOTED_ARG", "QUOTED_ARG", "BRACKET_ARG", "UNQUOTED_ARG"]


def test_positions_count_cr_and_crlf() -> None:
    text = "a()\rb()\r\nc()\n d()"
    tree = parse_cmake(text)
    assert [tree.position(c.start) for c in tree.commands()] == [(1, 1), (2, 1), (3, 1), (4, 2)]


ERRORS = [
    ("foo(a", 1, 1, "not closed"),
    ("ok()\nfoo(a\n\nbar(", 2, 1, "not closed"),
    ('set(x "abc)\n', 1, 7, "unterminated quoted argument"),
    ("set(x [[abc)\n", 1, 7, "unterminated bracket argument"),
    ("#[[ never closed\n", 1, 1, "unterminated bracket comment"),
    ("foo)\n", 1, 4, "')' closes nothing"),
    ("foo bar\n", 1, 5, "expected '('"),
    ("foo\n", 1, 4, "expected '('"),
    ("  )", 1, 3, "')' closes nothing"),
    ("foo(a))\n", 1, 7, "')' closes nothing"),
    ("a()\n\ufeffb()\n", 2, 1, "byte-order mark"),
    ("#[[ c ]] foo(a)\n", 1, 10, "expected a newline"),
    ("a() b()\n", 1, 5, "expected a newline"),
    ("#[[ c\n ]] foo(a)\n", 2, 5, "expected a newline"),
    ("a()\n  b() c()\n", 2, 7, "expected a newline"),
    ("\ufeff#[[c]]a()\n", 1, 8, "expected a newline"),
    ("a() b((((((x))))))\n", 1, 5, "expected a newline"),
    ("a((((((x)))))) b()\n", 1, 16, "expected a newline"),
    ("set(x [[a]]b)\n", 1, 12, "not separated"),
    ('set(x [[a]]"b")\n', 1, 12, "not separated"),
    ("set(x [=[a]=][[b]])\n", 1, 14, "not separated"),
    ("a()\nb(((((( [[x]]y ))))))\n", 2, 14, "not separated"),
]


@pytest.mark.parametrize("cut", [False, True])
@pytest.mark.parametrize("text,line,col,words", ERRORS)
def test_errors_have_positions(text: str, line: int, col: int, words: str, cut: bool) -> None:
    with pytest.raises(ParseError) as info:
        parse_cmake(text, "CMakeLists.txt", cut=cut)
    error = info.value
    assert (error.line, error.col) == (line, col)
    assert words in error.message
    shown = error.format()
    assert shown.startswith(f"CMakeLists.txt:{line}:{col}: error: ")
    assert shown.splitlines()[-1].endswith("^")


# --- generated inputs -----------------------------------------------------------------

_ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_unquoted = st.from_regex(r"[A-Za-z0-9_./${}<>:;,+*-]{1,10}", fullmatch=True).filter(
    lambda s: not s.startswith("[") and "#" not in s
)
_quoted = st.from_regex(r'"([^"\\]|\\[\s\S]){0,12}"', fullmatch=True)
_bracket = st.integers(0, 4).flatmap(
    lambda n: st.from_regex(r"[^\]]{0,10}", fullmatch=True).map(lambda b: f"[{'=' * n}[{b}]{'=' * n}]")
)
_space = st.sampled_from([" ", "\t", "  ", "\n", "\r\n", " # c\n", " #[[x]] "])


@st.composite
def _command(draw: st.DrawFn) -> str:
    args = draw(st.lists(st.one_of(_unquoted, _quoted, _bracket), max_size=6))
    seps = [draw(_space) for _ in args]
    body = "".join(f"{s}{a}" for s, a in zip(seps, args))
    if draw(st.booleans()) and args:
        body = f"{body} ({draw(_unquoted)} OR {draw(_quoted)})"
    return f"{draw(_ident)}{draw(st.sampled_from(['', ' ']))}({body})"


_file = st.lists(st.tuples(_command(), st.sampled_from(["\n", "\r\n", "\r", " # tail\n"])), max_size=8).map(
    lambda items: "".join(c + e for c, e in items)
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_file)
def test_generated_files_round_trip(text: str) -> None:
    tree = parse_cmake(text)
    reference = parse_cmake_lark(text)
    assert str(tree) == text
    assert tree == reference
    assert _arguments_of_fresh_commands(text) == _arguments_of(reference)


_gap = st.sampled_from(["", " ", "\t", "\n", "\r\n", "\r", " # c\n", " #[[x]] ", "#[[a\nb]]", "\n  ", "\n#[[x]]"])
_layout = st.lists(
    st.tuples(_gap, st.sampled_from(["a()", "b(x)", "c((((((y))))))", "d (z)"])), min_size=1, max_size=5
).map(lambda items: "".join(g + c for g, c in items))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(["", "\ufeff"]), _layout, _gap)
def test_command_placement_as_the_reference_parser_judges_it(bom: str, body: str, tail: str) -> None:
    """A command must start its line: the recognizer, which checks that itself for the commands it
    finds, rejects at the same place as the reference parser, which checks every command after parsing."""
    _judged_as_the_reference_judges_it(bom + body + tail)


_piece = st.sampled_from(["[[a]]", "[=[b]=]", '"q"', "u", "(", ")", " ", "\n", "#c\n", "#[[d]]", ""])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(_piece, max_size=8), st.booleans())
def test_bracket_arguments_followed_as_the_reference_parser_judges_it(pieces: list[str], deep: bool) -> None:
    """An argument right after a bracket argument is an error wherever it is, as in the reference parser."""
    body = "".join(pieces)
    _judged_as_the_reference_judges_it(f"a()\nf({'((((((' if deep else ''}{body}{'))))))' if deep else ''})\n")


def _judged_as_the_reference_judges_it(text: str) -> None:
    """The same tree as the reference parser's (cut at once or when listed), or the same error at the same place."""
    try:
        tree = parse_cmake(text)
    except ParseError as error:
        with pytest.raises(ParseError) as reference:
            parse_cmake_lark(text)
        assert (error.line, error.col, error.message) == (
            reference.value.line, reference.value.col, reference.value.message)
    else:
        assert parse_cmake(text, cut=True).cut_points() == tree.cut_points()
        assert str(tree) == text and tree == parse_cmake_lark(text)


def test_a_command_nested_deeper_than_the_regex_is_checked_alone() -> None:
    """The runs of commands around it are still matched whole, and the file is cut only when listed."""
    text = "a()\nif(((((((A)))))) OR B)\n  b((((c))))\n  c(((((((d)))))))\nendif()\n"
    tree = parse_cmake(text)
    assert tree._cuts is None  # checked, not cut
    assert [c.identifier for c in tree.commands()] == ["a", "if", "b", "c", "endif"]
    assert tree == parse_cmake_lark(text) and str(tree) == text


def test_arguments_are_read_without_the_other_leaves() -> None:
    text = 'Set ( X a #[[c]] "q" # tail\n  [=[b]=] (c (d)) e)\n'
    (command,) = parse_cmake(text).commands()
    assert command.identifier == "set"
    assert [a.value for a in command.arguments()] == ["X", "a", '"q"', "[=[b]=]", "c", "d", "e"]
    assert command._parts is None  # the name, comments and parentheses were not scanned
    assert command.name.value == "Set" and str(command) == text[:-1]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list('ab ()"#[]=\\\n\r\t$<>{};:')), max_size=40))
def test_arbitrary_text_parses_or_raises_parse_error(text: str) -> None:
    try:
        tree = parse_cmake(text)
    except ParseError as error:
        assert error.line >= 1 and error.col >= 1
        with pytest.raises(ParseError):
            parse_cmake_lark(text)
    else:
        assert str(tree) == text
        assert tree == parse_cmake_lark(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="x\n\r ", max_size=20))
def test_line_starts_after_each_line_ending(text: str) -> None:
    import re

    from buildport.textio import line_starts

    assert line_starts(text) == [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="x\n\r ", max_size=40), st.integers(1, 6))
def test_line_starts_of_a_large_text_the_same(text: str, large: int) -> None:
    """Past a size, the starts are found a piece of lines at a time and kept in an array: the same
    offsets, whatever line break a piece ends on."""
    import re

    from buildport import textio

    before = textio._LARGE
    textio._LARGE = large
    try:
        starts = textio.line_starts(text)
    finally:
        textio._LARGE = before
    assert list(starts) == [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]
