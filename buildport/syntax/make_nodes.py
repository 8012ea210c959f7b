"""The concrete syntax tree of a Makefile: one node per logical line.

A :class:`MakeFile` is a flat list of :class:`Line` nodes that tile the source
text exactly: each node covers its logical line (backslash continuations
included; a ``define`` block is one node) and the line break after it. Every
field that points into the text is a :class:`Span` of absolute offsets into
``MakeFile.source``, so a rewriter can replace one span and keep every other
byte. Conditionals are lines too (make nests them across rules, so a tree would
not fit); ``parse_make`` checks that they balance.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from buildport.syntax.make_words import Reference, Span, iter_references, iter_words
from buildport.textio import LineMap

L = TypeVar("L", bound="Line")


@dataclass(frozen=True, slots=True)
class Line:
    """One logical line: ``span`` is its text, ``eol`` the line break after it."""

    source: str = field(repr=False, compare=False)
    span: Span
    eol: Span

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        """The offset after the line break."""
        return self.eol.end

    @property
    def text(self) -> str:
        """The line as written, with its line break."""
        return self.source[self.span.start : self.eol.end]

    @property
    def content(self) -> str:
        """The line as written, without its line break."""
        return self.span.of(self.source)

    def text_of(self, span: Span | None) -> str:
        """The text of one of this node's spans ("" for None)."""
        return "" if span is None else span.of(self.source)

    def words(self, span: Span | None) -> list[Span]:
        """The words of one of this node's spans; see :func:`iter_words`."""
        return [] if span is None else list(iter_words(self.source, span.start, span.end))

    def references(self, span: Span | None = None) -> Iterator[Reference]:
        """The ``$(...)`` references in ``span`` (default: the whole line)."""
        span = self.span if span is None else span
        return iter_references(self.source, span.start, span.end)


@dataclass(frozen=True, slots=True)
class Blank(Line):
    """An empty line or one of only blanks."""


@dataclass(frozen=True, slots=True)
class Comment(Line):
    """A line that holds only a comment; ``comment`` starts at the ``#``."""

    comment: Span


@dataclass(frozen=True, slots=True)
class Assignment(Line):
    """``[targets:] [modifiers] NAME op value [# comment]``.

    ``targets`` is set for a target- or pattern-specific variable
    (``prog: CFLAGS += -O2``). ``value`` leaves out the blanks around it (make
    keeps trailing blanks in the value; a rewriter should too).
    """

    targets: Span | None
    colon: Span | None
    modifiers: tuple[Span, ...]
    name: Span
    op: Span
    value: Span
    comment: Span | None

    @property
    def variable(self) -> str:
        return self.name.of(self.source)

    @property
    def operator(self) -> str:
        """One of ``= := ::= :::= ?= += !=``."""
        return self.op.of(self.source)

    @property
    def value_text(self) -> str:
        return self.value.of(self.source)

    @property
    def modifier_names(self) -> list[str]:
        """``override``, ``export``, ``unexport``, ``private``, as written."""
        return [m.of(self.source) for m in self.modifiers]

    @property
    def is_target_specific(self) -> bool:
        return self.targets is not None


@dataclass(frozen=True, slots=True)
class Rule(Line):
    """``targets : [target-pattern :] prerequisites [| order-only] [; recipe] [# comment]``.

    ``colon`` is ``:``, ``::`` (double-colon rule); ``grouped`` tells ``&:``. For a
    static pattern rule (``$(OBJS): %.o: %.cu``) ``target_pattern`` is set and
    ``prerequisites`` holds the prerequisite patterns. ``recipe`` is the text
    after ``;``.
    """

    targets: Span
    colon: Span
    target_pattern: Span | None
    prerequisites: Span
    order_only: Span | None
    semicolon: Span | None
    recipe: Span | None
    comment: Span | None

    @property
    def double_colon(self) -> bool:
        return self.colon.of(self.source) == "::"

    @property
    def grouped(self) -> bool:
        """A grouped-targets rule, ``a b &: c``."""
        text = self.source[self.span.start : self.colon.start].rstrip(" \t")
        return text.endswith("&")

    @property
    def is_static_pattern(self) -> bool:
        return self.target_pattern is not None

    @property
    def target_words(self) -> list[Span]:
        words = self.words(self.targets)
        if self.grouped and words and words[-1].of(self.source).endswith("&"):
            last = words.pop()
            if last.end - last.start > 1:
                words.append(Span(last.start, last.end - 1))
        return words

    @property
    def prerequisite_words(self) -> list[Span]:
        return self.words(self.prerequisites)

    @property
    def order_only_words(self) -> list[Span]:
        return self.words(self.order_only)


@dataclass(frozen=True, slots=True)
class RecipeLine(Line):
    """A recipe line: the recipe prefix (a tab) and a shell command.

    ``orphan`` is true for a line that starts with the recipe prefix where no
    rule precedes it (GNU make rejects those, unless they sit in a conditional
    branch it skips).
    """

    prefix: Span
    command: Span
    orphan: bool

    @property
    def command_text(self) -> str:
        return self.command.of(self.source)


@dataclass(frozen=True, slots=True)
class Conditional(Line):
    """``ifeq``/``ifneq``/``ifdef``/``ifndef``/``else [if...]``/``endif``.

    For ``else ifeq (a,b)``, ``keyword`` is ``else`` and ``condition_keyword``
    is ``ifeq``. ``arguments`` is the condition, blanks stripped.
    """

    keyword: Span
    condition_keyword: Span | None
    arguments: Span
    comment: Span | None

    @property
    def directive(self) -> str:
        """The first keyword: ``ifeq``, ``else``, ``endif``, ..."""
        return self.keyword.of(self.source)

    @property
    def condition(self) -> str:
        """The keyword that states a condition (``ifeq`` also in ``else ifeq``), or ""."""
        if self.condition_keyword is not None:
            return self.condition_keyword.of(self.source)
        return "" if self.directive in ("else", "endif") else self.directive


@dataclass(frozen=True, slots=True)
class Define(Line):
    """``[modifiers] define NAME [op]`` ... ``endef``: one node for the block.

    ``body`` is the raw text between the two lines (make code only once a
    ``$(eval ...)`` expands it); nested ``define``s are part of it.
    """

    modifiers: tuple[Span, ...]
    keyword: Span
    name: Span
    op: Span | None
    comment: Span | None
    body: Span
    endef: Span

    @property
    def variable(self) -> str:
        return self.name.of(self.source)

    @property
    def operator(self) -> str:
        """The assignment operator; ``=`` when none is written."""
        return "=" if self.op is None else self.op.of(self.source)

    @property
    def body_text(self) -> str:
        return self.body.of(self.source)


@dataclass(frozen=True, slots=True)
class Include(Line):
    """``include``, ``-include`` or ``sinclude`` and a list of files."""

    keyword: Span
    files: Span
    comment: Span | None

    @property
    def optional(self) -> bool:
        """``-include``/``sinclude``: missing files are no error."""
        return self.keyword.of(self.source) != "include"

    @property
    def file_words(self) -> list[Span]:
        return self.words(self.files)


@dataclass(frozen=True, slots=True)
class Directive(Line):
    """``export``/``unexport`` (without an assignment), ``vpath``, ``undefine``, ``load``."""

    modifiers: tuple[Span, ...]
    keyword: Span
    arguments: Span
    comment: Span | None

    @property
    def directive(self) -> str:
        return self.keyword.of(self.source)


@dataclass(frozen=True, slots=True)
class Expansion(Line):
    """A line of only references, such as ``$(eval $(call T,x))`` or ``$(error a: b)``."""

    expansion: Span
    comment: Span | None


@dataclass(frozen=True, slots=True)
class Other(Line):
    """Anything else (GNU make reports most such lines as "missing separator")."""


#: Every kind of line :meth:`MakeFile.select` can select.
SELECTABLE: frozenset[type[Line]] = frozenset(
    {Assignment, Rule, RecipeLine, Conditional, Define, Include, Directive, Expansion, Other}
)
_UNSELECTED = (Blank, Comment)


_ASSIGNMENT_ONLY = frozenset({Assignment})


def _holding(
    entries: Sequence[tuple[type[Line], int, int, int]], starts: Sequence[int], offsets: list[int],
) -> Iterator[tuple[type[Line], int, int]]:  # fmt: skip
    """(class, start, first token) of each outline entry (in order) whose span holds one of
    ``offsets`` (ascending), each once; ``starts`` are the entries' starts."""
    last = -1
    for offset in offsets:
        i = bisect_right(starts, offset) - 1
        if i <= last:
            continue  # before the first line, or in a line already given
        cls, start, end, index = entries[i]
        if offset < end:
            last = i
            yield cls, start, index


def _line_start(line: Line) -> int:
    return line.span.start


class LineReader(Protocol):
    """Builds a :class:`MakeFile`'s lines on demand (``buildport.syntax.make_reader.Reader``)."""

    def build(self) -> list[Line]: ...

    def outline(self) -> Sequence[tuple[type[Line], int, int, int]]: ...

    def iter_outline(self) -> Iterator[tuple[type[Line], int, int, int]]: ...

    def node(self, index: int) -> Line: ...

    def variables(self) -> dict[int, tuple[int, str, Span]]: ...

    def variable(self, start: int) -> tuple[int, str, Span]: ...

    def starts(self) -> Sequence[int]: ...


#: How many positions :meth:`MakeFile.line_col` finds by counting before it indexes the lines.
_COUNTED_LOOKUPS = 8


class MakeFile:
    """A parsed Makefile: ``str(makefile)`` is the source again, byte for byte.

    ``lines`` may be built on first use: ``parse_make`` passes a ``reader``
    that makes the line nodes from what the parser read, and keeps only that
    until someone asks for the lines. Until then ``str()`` is the source itself
    (the lines would tile it exactly), and :meth:`select` builds only the lines
    a pass asks for.
    """

    __slots__ = ("_lines", "_reader", "_positions", "_counted", "bom", "path", "source")

    def __init__(
        self, source: str, path: str, bom: str, lines: list[Line] | None = None, reader: LineReader | None = None,
    ) -> None:  # fmt: skip
        if (lines is None) == (reader is None):
            raise TypeError("MakeFile needs either lines or a reader that builds them")
        self.source = source
        self.path = path
        self.bom = bom
        self._lines = lines
        self._reader = reader
        self._positions: LineMap | None = None
        self._counted = 0  # lookups answered by counting, before the line index is built

    @property
    def lines(self) -> list[Line]:
        """The line nodes, in order; they tile the source after the byte-order mark."""
        if self._lines is None:
            assert self._reader is not None
            self._lines = self._reader.build()
        return self._lines

    @lines.setter
    def lines(self, lines: list[Line]) -> None:
        self._lines = lines

    @property
    def built(self) -> bool:
        """Whether the list of line nodes exists yet."""
        return self._lines is not None

    def select(
        self, classes: Collection[type[Line]], keep: Callable[[type[Line], int, int], bool] | None = None,
    ) -> Iterator[Line]:  # fmt: skip
        """In order, the lines of ``classes`` for which ``keep(cls, start, end)`` holds (if given).

        ``cls`` is the line's node class and ``[start, end)`` its span, known
        before the node is built: only the lines kept are built. (Blank and
        comment lines are never selected.)
        """
        if self._lines is not None or self._reader is None:
            for line in self.lines:
                cls = type(line)
                if cls in classes and cls not in _UNSELECTED and (keep is None or keep(cls, *line.span)):
                    yield line
            return
        reader = self._reader
        for cls, start, end, index in reader.outline():
            if cls in classes and (keep is None or keep(cls, start, end)):
                yield reader.node(index)

    def lines_at(self, offsets: list[int] | None, classes: Collection[type[Line]]) -> Iterator[Line]:
        """In order, each line of ``classes`` whose span holds one of ``offsets`` (ascending; None:
        every line of ``classes``). Only those lines are built; blank and comment lines never come."""
        if offsets is None:
            yield from self.select(classes)
            return
        if not offsets:
            return  # without reading the outline
        built = self._lines is not None or self._reader is None
        entries: Sequence[tuple[type[Line], int, int, int]]
        starts: Sequence[int]
        if built:
            entries = [(type(line), *line.span, i) for i, line in enumerate(self.lines)]
            starts = [entry[1] for entry in entries]
        else:
            assert self._reader is not None
            entries, starts = self._reader.outline(), self._reader.starts()
        for cls, _, index in _holding(entries, starts, offsets):
            if cls in classes and cls not in _UNSELECTED:
                yield self.lines[index] if built else self._reader.node(index)  # type: ignore[union-attr]

    def assignments_at(self, offsets: list[int] | None) -> list[tuple[int, str, Span]]:
        """Where each assignment line that holds one of ``offsets`` (ascending; None: every one)
        starts, the variable it sets and its value, in order: what the nodes :meth:`lines_at` gives
        say, without them."""
        if offsets is None:
            return [(start, variable, value) for start, (_, variable, value) in self.variables().items()]
        if self._lines is not None or self._reader is None:
            return [(line.start, line.variable, line.value)  # type: ignore[attr-defined]
                    for line in self.lines_at(offsets, _ASSIGNMENT_ONLY)]  # fmt: skip
        reader = self._reader
        if not offsets:
            return []
        found: list[tuple[int, str, Span]] = []
        for cls, start, _ in _holding(reader.outline(), reader.starts(), offsets):
            if cls is Assignment:
                _, variable, value = reader.variable(start)
                found.append((start, variable, value))
        return found

    def recipe_lines(self, rule: Line) -> list[RecipeLine]:
        """The recipe lines that follow ``rule`` (a line of this file): as make reads a recipe, every
        line that starts with the recipe prefix up to the first other line, with blank, comment and
        conditional lines among them. Builds only those lines."""
        if self._lines is not None or self._reader is None:
            lines = self.lines
            out: list[RecipeLine] = []
            for line in lines[bisect_right(lines, rule.start, key=_line_start) :]:
                if isinstance(line, RecipeLine):
                    out.append(line)
                elif not isinstance(line, (Conditional, Blank, Comment)):
                    break
            return out
        reader = self._reader
        entries = reader.outline()
        found: list[RecipeLine] = []
        for i in range(bisect_right(reader.starts(), rule.start), len(entries)):
            cls, _, _, index = entries[i]
            if cls is RecipeLine:
                found.append(reader.node(index))  # type: ignore[arg-type]
            elif cls is not Conditional:
                break
        return found

    def variables(self) -> dict[int, tuple[int, str, Span]]:
        """Each assignment line's start → where its text ends, the variable it sets, its value.

        In line order; builds no line.
        """
        if self._lines is not None or self._reader is None:
            return {
                line.span.start: (line.span.end, line.variable, line.value)
                for line in self.lines if isinstance(line, Assignment)
            }  # fmt: skip
        return self._reader.variables()

    def variable(self, start: int) -> tuple[int, str, Span]:
        """:meth:`variables` of the one assignment line that starts at ``start``; reads no other line."""
        if self._lines is not None or self._reader is None:
            return self.variables()[start]
        return self._reader.variable(start)

    def spans(self, cls: type[Line]) -> list[tuple[int, int]]:
        """Where each line of class ``cls`` starts and ends, in order; builds no line."""
        if self._lines is not None or self._reader is None:
            return [(line.span.start, line.span.end) for line in self.lines if type(line) is cls]
        return [(start, end) for c, start, end, _ in self._reader.outline() if c is cls]

    def iter_spans(self, cls: type[Line]) -> Iterator[tuple[int, int]]:
        """:meth:`spans` one after another; keeps no outline it did not have (for a single reading)."""
        if self._lines is not None or self._reader is None:
            yield from self.spans(cls)
            return
        for c, start, end, _ in self._reader.iter_outline():
            if c is cls:
                yield start, end

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MakeFile):
            return NotImplemented
        return (self.source, self.path, self.bom, self.lines) == (other.source, other.path, other.bom, other.lines)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MakeFile(path={self.path!r}, bom={self.bom!r}, lines={self.lines!r})"

    def dump(self) -> str:
        """The text, rebuilt from the lines."""
        return self.bom + "".join(line.text for line in self.lines)

    def __str__(self) -> str:
        return self.source if self._lines is None else self.dump()

    def __iter__(self) -> Iterator[Line]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)

    def nodes(self, kind: type[L]) -> list[L]:
        """The lines of one kind, in order."""
        return [line for line in self.lines if isinstance(line, kind)]

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset``, counted like :func:`position_of`."""
        source = self.source
        if self._positions is None:
            if "\r" not in source and self._counted < _COUNTED_LOOKUPS:
                # a few lookups in a file with only \n breaks: count, do not index (each count reads the
                # text up to the offset, so a file with many findings gets the index after all)
                self._counted += 1
                line_start = source.rfind("\n", 0, offset) + 1
                return source.count("\n", 0, offset) + 1, offset - line_start + 1
            self._positions = LineMap(source)
        return self._positions.position(offset)
