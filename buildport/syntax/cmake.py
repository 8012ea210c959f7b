"""CMake text ⇄ concrete syntax tree, byte for byte.

``parse_cmake(text)`` returns a :class:`CMakeFile` whose ``str()`` is ``text``
again, for every input the grammar (``grammars/cmake.lark``) accepts. Leaves are
:class:`Leaf` objects (``type``, ``value``, ``start``); the only inner nodes are
:class:`Command` and :class:`ParenGroup`. Nothing is normalised: trivia (spaces,
newlines, comments) are leaves like any other.

The grammar is the definition of the language. Two parsers implement it: Lark's
LALR parser over the grammar (:func:`parse_cmake_lark`, the reference), and a
scanner built from the *same terminal regexes* taken out of the compiled grammar
(:func:`parse_cmake`, several times faster). Whenever the scanner meets input it
does not accept, Lark parses it and produces the error, so both agree on errors
by construction; the test suite checks that they build identical trees.

A file is checked by a regex of a run of whole commands (each at the start of
its line, with the trivia before it), one match for the whole file unless a
command nests deeper than the regex unrolls, and cut into commands only when a
pass first lists them: a file no rule can change is never cut at all.
"""

from __future__ import annotations

import gc
import itertools
import re
import sys
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator, NamedTuple, TypeVar, Union

from buildport.cache import compiled
from buildport.syntax.grammars import cached_terminals
from buildport.syntax.errors import ParseError
from buildport.textio import LineMap

#: Token types that carry no meaning: what LibCST/parso call trivia.
TRIVIA = frozenset({"SPACE", "NEWLINE", "LINE_COMMENT", "BRACKET_COMMENT", "BOM"})
#: Token types that are command arguments.
ARGUMENTS = frozenset({"QUOTED_ARG", "UNQUOTED_ARG", "BRACKET_ARG"})


class Leaf:
    """One token: its grammar terminal name, its exact text and its offset."""

    __slots__ = ("type", "value", "start")

    def __init__(self, type: str, value: str, start: int) -> None:
        self.type = type
        self.value = value
        self.start = start

    @property
    def end(self) -> int:
        return self.start + len(self.value)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Leaf({self.type}, {self.value!r}, {self.start})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Leaf)
            and self.type == other.type
            and self.value == other.value
            and self.start == other.start
        )

    def __hash__(self) -> int:
        return hash((self.type, self.start))


@dataclass(slots=True, eq=True)
class ParenGroup:
    """``( ... )`` nested inside a command's arguments, as in ``if((a) OR b)``."""

    lpar: Leaf
    items: list[Union[Leaf, "ParenGroup"]]
    rpar: Leaf

    def iter_leaves(self) -> Iterator[Leaf]:
        yield self.lpar
        yield from _walk(self.items)
        yield self.rpar


Item = Union[Leaf, ParenGroup]


def _walk(items: list[Item]) -> Iterator[Leaf]:
    """The leaves below ``items`` in order; iterative, so any nesting depth is fine."""
    stack: list[Iterator[Item]] = [iter(items)]
    closers: list[Leaf | None] = [None]
    while stack:
        for item in stack[-1]:
            if isinstance(item, Leaf):
                yield item
            else:
                yield item.lpar
                stack.append(iter(item.items))
                closers.append(item.rpar)
                break
        else:
            stack.pop()
            closer = closers.pop()
            if closer is not None:
                yield closer


class Command:
    """One command invocation: ``name`` [space] ``(`` items ``)``.

    The fast parser creates commands *lazily*: it has already checked the whole
    invocation against the grammar and knows its span, and it scans the leaves
    the first time one of ``name``, ``space``, ``lpar``, ``items`` or ``rpar`` is
    read. ``start``, ``end`` and ``str()`` need no leaves.
    """

    __slots__ = ("_parts", "_text", "start", "end", "_arguments", "identifier")

    #: Where the invocation starts (its name) and ends (after its ``)``) in the file's text.
    start: int
    end: int
    #: The command name, lower-cased (CMake command names ignore case).
    identifier: str

    def __init__(self, name: Leaf, space: Leaf | None, lpar: Leaf, items: list[Item], rpar: Leaf) -> None:
        self._parts: tuple[Leaf, Leaf | None, Leaf, list[Item], Leaf] | None = (name, space, lpar, items, rpar)
        self._text = ""
        self.start = name.start
        self.end = rpar.start + 1
        self._arguments: list[Leaf] | None = None
        self.identifier = name.value.lower()

    @classmethod
    def lazy(cls, text: str, start: int, end: int) -> "Command":
        """A command known to span ``text[start:end]``; its leaves are scanned on first use."""
        command = cls.__new__(cls)
        command._parts = None
        command._text = text
        command.start = start
        command.end = end
        command._arguments = None
        # the name runs up to the blanks, if any, and the "(" that follow it
        command.identifier = text[start : text.index("(", start)].rstrip(" \t").lower()
        return command

    def _load(self) -> tuple[Leaf, Leaf | None, Leaf, list[Item], Leaf]:
        if self._parts is None:
            *parts, arguments = _without_gc(_scan_command, self._text, self.start, self.end)
            self._parts = tuple(parts)  # type: ignore[assignment]
            if self._arguments is None:
                self._arguments = arguments
        assert self._parts is not None
        return self._parts

    @property
    def name(self) -> Leaf:
        return (self._parts or self._load())[0]

    @property
    def space(self) -> Leaf | None:
        return (self._parts or self._load())[1]

    @property
    def lpar(self) -> Leaf:
        return (self._parts or self._load())[2]

    @property
    def items(self) -> list[Item]:
        return (self._parts or self._load())[3]

    @property
    def rpar(self) -> Leaf:
        return (self._parts or self._load())[4]

    def iter_leaves(self) -> Iterator[Leaf]:
        name, space, lpar, items, rpar = self._parts or self._load()
        yield name
        if space is not None:
            yield space
        yield lpar
        yield from _walk(items)
        yield rpar

    def arguments(self) -> list[Leaf]:
        """The argument leaves in order, nested parentheses flattened away.

        Computed once: trees are never changed after parsing (passes record edits
        instead), and every pass asks. Callers must not change the list.
        """
        if self._arguments is None:
            if self._parts is None:  # only the arguments: the other leaves may never be needed
                self._arguments = _without_gc(_scan_arguments_only, self._text, self.start, self.end)
            else:
                self._arguments = [t for t in self.iter_leaves() if t.type in ARGUMENTS]
        return self._arguments

    def __str__(self) -> str:
        if self._parts is None:
            return self._text[self.start : self.end]
        return "".join(leaf.value for leaf in self.iter_leaves())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Command):
            return NotImplemented
        return (self._parts or self._load()) == (other._parts or other._load())

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        name, space, lpar, items, rpar = self._parts or self._load()
        return f"Command(name={name!r}, space={space!r}, lpar={lpar!r}, items={items!r}, rpar={rpar!r})"


class CMakeFile:
    """A parsed CMake file: top-level leaves and commands, in order.

    From the fast parser, ``items`` is built on first use from the command
    spans the parser recorded; printing does not need it.
    """

    __slots__ = ("_items", "text", "_lines", "_cuts", "_commands")

    def __init__(self, items: list[Union[Leaf, Command]], text: str) -> None:
        self._items: list[Union[Leaf, Command]] | None = items
        self.text = text
        self._lines: LineMap | None = None  # made on the first position asked
        #: Where the recognizer cuts the file (see :meth:`lazy`); None until first needed; [] for a
        #: tree built leaf by leaf.
        self._cuts: list[int] | None = []
        self._commands: list[Command] | None = None

    @classmethod
    def lazy(cls, text: str, cuts: list[int] | None = None) -> "CMakeFile":
        """A file the recognizer accepted, cut at ``cuts``: ``0``, the end of a BOM, then each
        command's start and end, ``len(text)``; None: cut command by command when first needed."""
        tree = cls.__new__(cls)
        tree._items = None
        tree.text = text
        tree._lines = None
        tree._cuts = cuts
        tree._commands = None
        return tree

    def _cut(self) -> list[int]:
        """The cut points of a recognized file, found on first use."""
        cuts = self._cuts
        if cuts is None:
            recognized = _without_gc(_recognize, self.text)
            assert recognized is not None, "what _checked accepts, command by command accepts too"
            cuts = self._cuts = recognized[0]
        return cuts

    @property
    def items(self) -> list[Union[Leaf, Command]]:
        if self._items is None:
            self._items = _without_gc(_build_items, self.text, self._cut(), self._commands)
        return self._items

    def __str__(self) -> str:
        if self._items is None:  # recognized: the pieces between the cut points are the text's consecutive slices
            return self.text
        return "".join([str(item) for item in self._items])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CMakeFile):
            return NotImplemented
        return self.text == other.text and self.items == other.items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CMakeFile(items={self.items!r}, text={self.text!r})"

    def iter_leaves(self) -> Iterator[Leaf]:
        for item in self.items:
            if isinstance(item, Leaf):
                yield item
            else:
                yield from item.iter_leaves()

    def commands(self) -> list[Command]:
        """The top-level commands in order (computed once; callers must not change the list)."""
        if self._commands is None:
            if self._items is None:  # straight from the cut points: no trivia leaves are built
                text, cuts = self.text, self._cut()
                self._commands = [Command.lazy(text, cuts[i], cuts[i + 1]) for i in range(2, len(cuts) - 1, 2)]
            else:
                self._commands = [item for item in self._items if isinstance(item, Command)]
        return self._commands

    def cut_points(self) -> list[int] | None:
        """Where the recognizer cut the file (see :meth:`lazy`), or None for a tree built leaf by leaf."""
        return None if self._cuts == [] else self._cut()

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset; ``\\r\\n``, ``\\n`` and ``\\r`` end lines."""
        if self._lines is None:
            self._lines = LineMap(self.text)
        return self._lines.position(offset)


_T = TypeVar("_T")


def _without_gc(build: Callable[..., _T], *args: object) -> _T:
    """Run ``build`` with the collector off: it only allocates, and collections while
    a large tree grows make the cost quadratic."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return build(*args)
    finally:
        if enabled:
            gc.enable()




# --- the reference parser: Lark over the grammar (buildport.syntax.cmake_lark) ---------


def parse_cmake_lark(text: str, path: str = "<input>") -> CMakeFile:
    """Parse with Lark's LALR parser over the grammar (the reference parser)."""
    from buildport.syntax.cmake_lark import parse_cmake_lark as parse

    return parse(text, path)


# --- the fast parser: the grammar's own terminals, scanned with `re` ------------------

_TOP_LEVEL = ("BOM", "IDENT", "SPACE", "NEWLINE", "BRACKET_COMMENT", "LINE_COMMENT")
_IN_ARGUMENTS = (
    "BRACKET_COMMENT", "BRACKET_ARG", "LINE_COMMENT", "QUOTED_ARG", "UNQUOTED_ARG",
    "SPACE", "NEWLINE", "LPAR", "RPAR",
)
#: The same terminals, most frequent first. Every terminal allowed inside the
#: arguments begins with a character (or, for '#' and '[', two) that no other
#: one can begin with, so at most one alternative can match at any offset and
#: their order changes speed only, never the result.
_ARGUMENT_ORDER = ("SPACE", "UNQUOTED_ARG", "NEWLINE", "QUOTED_ARG", "LINE_COMMENT", "BRACKET_ARG", "BRACKET_COMMENT")
_TRIVIA_ORDER = ("SPACE", "NEWLINE", "LINE_COMMENT", "BRACKET_COMMENT")
#: The trivia that can stand on a line before its line break.
_LINE_TRIVIA_ORDER = ("SPACE", "LINE_COMMENT", "BRACKET_COMMENT")
#: The first character of each token that is no argument (blanks, line breaks, comments, parentheses).
_NOT_AN_ARGUMENT = r"[ \t\r\n()#]"
#: Parentheses nested deeper than this inside one command are checked token by token (that command only).
_NESTING = 3
_GROUP_NAME = re.compile(r"\(\?P([<=])([A-Za-z_]\w*)")


@lru_cache(maxsize=1)
def _terminals() -> dict[str, str]:
    """The grammar's terminals as regexes: what Lark's lexer uses, kept in the parser cache so that
    a run whose files all parse never imports Lark (see :func:`buildport.syntax.grammars.cached_terminals`)."""
    return cached_terminals("cmake", _terminals_from_lark, _TOP_LEVEL + _IN_ARGUMENTS)


def _terminals_from_lark() -> dict[str, str]:
    from buildport.syntax.cmake_lark import terminals

    return terminals()


@lru_cache(maxsize=1)
def _scanners() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Two alternations of the grammar's terminals, one per lexer context."""
    patterns = _terminals()

    def alternation(names: tuple[str, ...]) -> re.Pattern[str]:
        return re.compile("|".join(f"(?P<{name}>{patterns[name]})" for name in names))

    return alternation(_TOP_LEVEL), alternation(_IN_ARGUMENTS)


class _Recognizers(NamedTuple):
    #: The file's first commands, with the trivia before each (after a byte-order mark).
    head: re.Pattern[str]
    #: Later commands, with the trivia before each.
    run: re.Pattern[str]
    #: The first command with the trivia before it (group 1).
    first: re.Pattern[str]
    #: Any later command with the trivia before it (group 1).
    command: re.Pattern[str]
    #: Trivia, as at the end of a file.
    trivia: re.Pattern[str]


@lru_cache(maxsize=1)
def _recognizers() -> _Recognizers | None:
    """Whole commands (with the trivia before them), and trailing trivia, as single regexes.

    Built from the grammar's terminal regexes: ``command: IDENT SPACE? LPAR
    _arg_item* RPAR`` with ``paren_group`` unrolled ``_NESTING`` deep. Each token is
    an atomic group and each repetition possessive, so the regex can neither
    backtrack into a shorter token nor split one differently from the lexer: it
    accepts exactly what the lexer-plus-parser accepts, up to that depth.
    Atomic groups need Python 3.11; older versions use the token scanner only.

    The trivia before a command is read as lines, each ending with a line break,
    and then the blanks that indent the command: so a command the regex finds
    also meets :func:`check_layout`'s rule that it starts a line. ``first`` is the
    same for the file's first command, which may have nothing before it. ``head``
    and ``run`` match as many commands at once as follow each other, and check
    too that no argument follows a bracket argument without a blank between.
    """
    if sys.version_info < (3, 11):
        return None
    patterns = _terminals()
    copies = itertools.count()

    def one_of(names: tuple[str, ...], separated: bool = False) -> str:
        # Group names must be unique in a regex: give each copy its own suffix.
        k = next(copies)
        renamed = [_GROUP_NAME.sub(lambda m: f"(?P{m[1]}{m[2]}_{k}", patterns[n]) for n in names]
        if separated:  # what follows a bracket argument begins no argument (see check_layout)
            # (atomic first: the lazy body of a bracket argument must not stretch to meet the look-ahead)
            renamed = [f"(?>{r})(?={_NOT_AN_ARGUMENT})" if n == "BRACKET_ARG" else r for n, r in zip(names, renamed)]
        return "(?>" + "|".join(renamed) + ")"

    def command(separated: bool = False) -> str:
        group = r"\((?:" + one_of(_ARGUMENT_ORDER, separated) + r")*+\)"
        for _ in range(_NESTING - 1):
            group = r"\((?:" + one_of(_ARGUMENT_ORDER, separated) + "|" + group + r")*+\)"
        return f"(?>{patterns['IDENT']})(?:{patterns['SPACE']})?{group}"

    def trivia() -> str:
        return "(?:" + one_of(_TRIVIA_ORDER) + ")*+"

    def before(first: bool) -> str:
        """The trivia before a command: whole lines (at least one, but before the first), then blanks."""
        lines = "(?:(?:" + one_of(_LINE_TRIVIA_ORDER) + f")*+(?:{patterns['NEWLINE']}))"
        return lines + ("*+" if first else "++") + f"(?:{patterns['SPACE']})?+"

    run = f"(?:{before(False)}{command(separated=True)})*+"
    return _Recognizers(  # kept compiled in the parser cache: compiling them costs a process ~10 ms
        compiled.pattern(f"(?:{before(True)}{command(separated=True)}{run})?+"),
        compiled.pattern(run),
        compiled.pattern(f"({before(True)}){command()}"),
        compiled.pattern(f"({before(False)}){command()}"),
        compiled.pattern(trivia()),
    )


class _Rejected(Exception):
    """The scanner met input outside the language; Lark will say why."""


def parse_cmake(text: str, path: str = "<input>", *, cut: bool = False) -> CMakeFile:
    """Parse CMake source; :class:`ParseError` with a position when it is not CMake.

    A file is checked whole and cut into commands when they are first listed;
    ``cut`` cuts it at once, for a caller that will list them (the text is then read once).
    """
    enabled = gc.isenabled()
    gc.disable()
    unplaced: list[int] | None = None
    recognizers = None if cut else _recognizers()
    try:
        if recognizers is not None and _checked(text, recognizers):
            return CMakeFile.lazy(text)  # checked, its layout too: cut when first asked
        elif (recognized := _recognize(text)) is not None:
            cuts, unplaced = recognized
            tree = CMakeFile.lazy(text, cuts)
        else:
            tree = CMakeFile(_scan(text), text)
    except _Rejected:
        tree = None
    finally:
        if enabled:
            gc.enable()
    if tree is None:
        return parse_cmake_lark(text, path)  # raises the positioned error
    check_layout(tree, path, unplaced)
    return tree


_GLUED = re.compile(r"\]=*\][^\s()#]")


#: The error of a command that does not start a line.
_ONE_PER_LINE = "expected a newline before this command (one command per line)"


def check_layout(tree: CMakeFile, path: str = "<input>", unplaced: list[int] | None = None) -> None:
    """What CMake rejects while reading, though every token is valid.

    A command stands at the start of its line (only blanks before it), and an
    argument after a bracket argument is separated from it by whitespace.
    ``unplaced``: for a tree the recognizer cut, the indices into its cut points of
    the commands whose place it did not check itself (see :func:`_recognize`);
    None, every command's.
    """
    if tree._items is None:  # recognized: look between the cut points, without building leaves
        cuts = tree._cut()
        for i in range(2, len(cuts) - 1, 2) if unplaced is None else unplaced:
            if not _starts_its_line(tree.text, cuts[i - 1], cuts[i], first=i == 2):
                raise ParseError.at(tree.text, cuts[i], _ONE_PER_LINE, path)
        items: list[Union[Leaf, Command]] = []
    else:
        items = tree.items
    for i, item in enumerate(items):
        if not isinstance(item, Command):
            continue
        j = i - 1
        while j >= 0 and isinstance(items[j], Leaf) and items[j].type == "SPACE":  # type: ignore[union-attr]
            j -= 1
        if j >= 0 and not (isinstance(items[j], Leaf) and items[j].type in ("NEWLINE", "BOM")):  # type: ignore[union-attr]
            raise ParseError.at(tree.text, item.start, _ONE_PER_LINE, path)
    glued = [m.start() for m in _GLUED.finditer(tree.text)]
    if not glued:
        return
    if tree._items is None:  # command k spans cuts[2k]..cuts[2k+1]; an odd count ends with the trailing cut
        cuts = tree._cut()
        spans = list(zip(cuts[2 : len(cuts) - len(cuts) % 2 : 2], cuts[3::2]))
    else:
        spans = [(c.start, c.end) for c in tree.commands()]
    starts = [start for start, _ in spans]
    suspects = {i for at in glued if (i := bisect_right(starts, at) - 1) >= 0 and at < spans[i][1]}
    for i in sorted(suspects):  # only the commands where ']]' meets a character: their leaves say more
        leaves = list(Command.lazy(tree.text, *spans[i]).iter_leaves())
        for left, right in zip(leaves, leaves[1:]):
            if left.type == "BRACKET_ARG" and right.type in ARGUMENTS:
                raise ParseError.at(tree.text, right.start,
                                    "argument not separated from the preceding bracket argument by whitespace", path)


def _starts_its_line(text: str, after: int, start: int, first: bool) -> bool:
    """Whether the command at ``start``, with trivia from ``after`` before it, starts its line: only
    blanks between it and a line break, or nothing at all before the file's ``first`` command."""
    before = text[after:start].rstrip(" \t")
    return before.endswith(("\n", "\r")) or (first and not before)


def _checked(text: str, recognizers: _Recognizers) -> bool:
    """Whether ``text`` is CMake that :func:`check_layout` accepts; False may also mean "not known
    here" (:func:`_recognize` and :func:`check_layout` then say more).

    Runs of commands are matched whole; a command nested deeper than the regex
    unrolls, between them, is checked token by token.
    """
    pos = 1 if text.startswith("\ufeff") else 0
    end = recognizers.head.match(text, pos).end()  # type: ignore[union-attr]  # it matches ""
    first = end == pos  # no command yet
    n = len(text)
    while True:
        start = recognizers.trivia.match(text, end).end()  # type: ignore[union-attr]
        if start == n:
            return True
        if not _starts_its_line(text, end, start, first):
            return False  # not at the start of its line, or not a command
        close = _deep_command_end(text, start)
        if close is None or _GLUED.search(text, start, close):
            return False
        first = False
        end = recognizers.run.match(text, close).end()  # type: ignore[union-attr]


def _recognize(text: str) -> tuple[list[int], list[int]] | None:
    """Check ``text`` command by command: the cut points of :meth:`CMakeFile.lazy`, and the
    indices into them of the commands whose place on their line is still to check; or None.

    None means "use the token scanner": an older Python, or input that is not
    CMake at all (the scanner and then Lark say where). A command whose
    parentheses nest deeper than the regex unrolls, or that does not start a
    line, is found token by token, that command only, and its place is left to
    :func:`check_layout`.
    """
    recognizers = _recognizers()
    if recognizers is None:
        return None
    pos = 1 if text.startswith("\ufeff") else 0
    cuts = [0, pos]
    unplaced: list[int] = []
    append = cuts.append
    m = recognizers.first.match(text, pos)
    if m is not None:
        append(m.end(1))
        pos = m.end()
        append(pos)
    match = recognizers.command.match
    n = len(text)
    while True:
        m = match(text, pos)
        if m is not None:
            append(m.end(1))
            pos = m.end()
            append(pos)
            continue
        # trailing trivia, a command nested deeper than the regex unrolls, or an error
        start = recognizers.trivia.match(text, pos).end()  # type: ignore[union-attr]  # it matches ""
        if start == n:
            break
        end = _deep_command_end(text, start)
        if end is None:
            return None
        unplaced.append(len(cuts))
        append(start)
        append(end)
        pos = end
    if cuts[-1] != n:
        append(n)
    return cuts, unplaced


def _deep_command_end(text: str, pos: int) -> int | None:
    """Where the command at ``pos`` ends, token by token at any depth; None if there is none."""
    top, inner = _scanners()
    m = top.match(text, pos)
    if m is None or m.lastgroup != "IDENT":
        return None
    pos = m.end()
    m = top.match(text, pos)
    if m is not None and m.lastgroup == "SPACE":
        pos = m.end()
    if not text.startswith("(", pos):
        return None
    depth = 0
    n = len(text)
    while pos < n:
        m = inner.match(text, pos)
        if m is None:
            return None
        pos = m.end()
        kind = m.lastgroup
        if kind == "LPAR":
            depth += 1
        elif kind == "RPAR":
            depth -= 1
            if depth == 0:
                return pos
    return None


def _build_items(text: str, cuts: list[int], commands: list[Command] | None = None) -> list[Union[Leaf, Command]]:
    """The top-level items of a recognized file: trivia leaves and lazy commands (``commands``,
    when :meth:`CMakeFile.commands` made them first)."""
    items: list[Union[Leaf, Command]] = []
    append = items.append
    if cuts[1]:
        append(Leaf("BOM", "\ufeff", 0))
    made = iter(commands) if commands is not None else None
    for i in range(1, len(cuts) - 1):
        start, end = cuts[i], cuts[i + 1]
        if i % 2 == 0:
            append(next(made) if made is not None else Command.lazy(text, start, end))
        else:  # trivia only, already checked
            items.extend(trivia_leaves(text, start, end))
    return items


def trivia_leaves(text: str, start: int, end: int) -> list[Leaf]:
    """The leaves of ``text[start:end]``, which the recognizer found to be trivia between commands."""
    if end - start == 1 and text[start] == "\n":  # the usual gap: one line break
        return [Leaf("NEWLINE", "\n", start)]
    top, _ = _scanners()
    return [Leaf(m.lastgroup, m.group(), m.start()) for m in top.finditer(text, start, end)]  # type: ignore[arg-type]


def _scan_command(
    text: str, start: int, end: int
) -> tuple[Leaf, Leaf | None, Leaf, list[Item], Leaf, list[Leaf]]:
    """The leaves of a command that the recognizer found at ``text[start:end]``, and its arguments in order."""
    top, inner = _scanners()
    m = top.match(text, start)
    assert m is not None and m.lastgroup == "IDENT"
    name = Leaf("IDENT", m.group(), start)
    pos = m.end()
    space = None
    if text[pos] != "(":
        space = Leaf("SPACE", text[pos : text.index("(", pos)], pos)
        pos += len(space.value)
    stack: list[tuple[Leaf, list[Item]]] = [(Leaf("LPAR", "(", pos), [])]
    items = stack[0][1]
    add = items.append
    arguments: list[Leaf] = []
    # The recognizer accepted this span, so the tokens are contiguous and end with ')'.
    for m in inner.finditer(text, pos + 1, end):
        kind = m.lastgroup
        if kind == "LPAR":
            stack.append((Leaf("LPAR", "(", m.start()), []))
            add = stack[-1][1].append
        elif kind == "RPAR":
            lpar, inside = stack.pop()
            rpar = Leaf("RPAR", ")", m.start())
            if not stack:
                return name, space, lpar, inside, rpar, arguments
            add = stack[-1][1].append
            add(ParenGroup(lpar, inside, rpar))
        else:
            leaf = Leaf(kind, m.group(), m.start())  # type: ignore[arg-type]
            add(leaf)
            if kind in ARGUMENTS:
                arguments.append(leaf)
    raise AssertionError("a recognized command ends with ')'")


@lru_cache(maxsize=1)
def _arguments_regex() -> re.Pattern[str]:
    """One argument with the trivia and parentheses before it, or the trivia at the end.

    The terminals begin with distinct characters (see ``_ARGUMENT_ORDER``), so
    skipping the others first splits the text as the token scanner does. The
    argument is optional so that each match starts where the last one ended.
    """
    patterns = _terminals()
    skipped = "|".join(patterns[name] for name in ("SPACE", "NEWLINE", "LINE_COMMENT", "BRACKET_COMMENT", "LPAR", "RPAR"))
    argument = "|".join(f"(?P<{name}>{patterns[name]})" for name in ("UNQUOTED_ARG", "QUOTED_ARG", "BRACKET_ARG"))
    return re.compile(f"(?:{skipped})*+(?:{argument})?")


def _scan_arguments_only(text: str, start: int, end: int) -> list[Leaf]:
    """The argument leaves of a command the recognizer found at ``text[start:end]``, in order."""
    arguments: list[Leaf] = []
    append = arguments.append
    for m in _arguments_regex().finditer(text, text.index("(", start) + 1, end):
        kind = m.lastgroup
        if kind in ARGUMENTS:
            append(Leaf(kind, m.group(kind), m.start(kind)))
    return arguments


def _scan(text: str) -> list[Union[Leaf, Command]]:
    top, inner = _scanners()
    items: list[Union[Leaf, Command]] = []
    append = items.append
    pos, n = 0, len(text)
    while pos < n:
        m = top.match(text, pos)
        if m is None:
            raise _Rejected
        kind = m.lastgroup
        assert kind is not None
        if kind != "IDENT":
            if kind == "BOM" and pos:
                raise _Rejected  # a BOM only opens a file
            append(Leaf(kind, m.group(), pos))
            pos = m.end()
            continue
        name = Leaf(kind, m.group(), pos)
        pos = m.end()
        space = None
        m = top.match(text, pos)
        if m is not None and m.lastgroup == "SPACE":
            space = Leaf("SPACE", m.group(), pos)
            pos = m.end()
        if not text.startswith("(", pos):
            raise _Rejected
        command, pos = _scan_arguments(text, pos, inner, name, space)
        append(command)
    return items


def _scan_arguments(
    text: str, pos: int, inner: re.Pattern[str], name: Leaf, space: Leaf | None
) -> tuple[Command, int]:
    """From the '(' after a command name to its matching ')'."""
    stack: list[tuple[Leaf, list[Item]]] = [(Leaf("LPAR", "(", pos), [])]
    pos += 1
    n = len(text)
    while pos < n:
        m = inner.match(text, pos)
        if m is None:
            raise _Rejected
        kind = m.lastgroup
        assert kind is not None
        leaf = Leaf(kind, m.group(), pos)
        pos = m.end()
        if kind == "LPAR":
            stack.append((leaf, []))
        elif kind == "RPAR":
            lpar, items = stack.pop()
            if not stack:
                return Command(name, space, lpar, items, leaf), pos
            stack[-1][1].append(ParenGroup(lpar, items, leaf))
        else:
            stack[-1][1].append(leaf)
    raise _Rejected
