"""The fast path of the make parser: the grammar's own lexer and parse table, driven by a small loop.

Lark's LALR parser for ``grammars/make.lark`` is the reference. Most of its
time goes into general machinery (token objects with line counting, callbacks,
interactive-parser state) that this grammar does not need. :func:`scan` reads
the same text with the same pieces taken from the compiled Lark parser:

* for each parser state, the contextual lexer's regular expression: the
  terminals that state accepts, in Lark's priority order, joined into one
  alternation (so the first alternative that matches wins, as in Lark);
* the LALR action table (shift, or reduce by a rule of some length).

It gives the same flat run of tokens, with one ``(kind, children)`` record per
``define`` block, that the Lark parser with ``make._Lines`` gives, or None
where the Lark parser would raise: the caller then runs Lark to get the
positioned error. Nothing about the language lives here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from lark import Lark
from lark.parsers.lalr_analysis import Shift

#: Match one token at an offset (a compiled alternation's bound ``match``).
Matcher = Callable[[str, int], "re.Match[str] | None"]
#: A shift to a state, or a reduce: (nonterminal, number of symbols, record kind or "").
Action = Union[int, tuple[str, int, str]]
#: Rules whose children the parser callbacks keep together as one record.
_RECORDS = frozenset({"define", "nested_define"})
#: The terminals that begin those rules (checked against the grammar by :func:`tables`).
_OPENERS = frozenset({"DEFINE_KW", "BODY_DEFINE"})


class Tok:
    """A token of the fast path: its terminal name and where it lies in the text."""

    __slots__ = ("end_pos", "start_pos", "type")

    def __init__(self, type: str, start_pos: int, end_pos: int) -> None:
        self.type = type
        self.start_pos = start_pos
        self.end_pos = end_pos

    def __repr__(self) -> str:
        return f"Tok({self.type!r}, {self.start_pos}, {self.end_pos})"


#: Beyond this many remembered parser stacks (deeply nested defines), new ones are not kept.
_MAX_STACKS = 5000


class Config:
    """One parser stack, with what :func:`scan` needs at it: the top state's lexer, the remembered steps."""

    __slots__ = ("match", "steps", "stack")

    def __init__(self, stack: tuple[int, ...], match: Matcher | None) -> None:
        self.stack = stack
        self.match = match
        #: terminal name → (the stack after its reductions and shift, the records they close, opens one)
        self.steps: dict[str, Step] = {}


#: The effect of one token: the new stack, the records its reductions close, whether it opens one.
Step = tuple[Config, tuple[str, ...], bool]


@dataclass(frozen=True)
class Tables:
    """What :func:`scan` needs of a compiled Lark LALR parser."""

    #: Per parser state (an index): terminal or nonterminal name → action.
    actions: list[dict[str, Action]]
    #: Per parser state: the contextual lexer's matcher, or None if it accepts only the end.
    lexers: list[Matcher | None]
    start: int
    end: int
    #: The parser stacks met so far, each once.
    configs: dict[tuple[int, ...], Config] = field(default_factory=dict)

    def config(self, stack: tuple[int, ...]) -> Config:
        """The one :class:`Config` of ``stack``."""
        found = self.configs.get(stack)
        if found is None:
            found = Config(stack, self.lexers[stack[-1]])
            if len(self.configs) < _MAX_STACKS:
                self.configs[stack] = found
        return found

    def step(self, config: Config, kind: str) -> Step | None:
        """What the parser does with a token of ``kind`` at ``config``; None if it rejects it.

        For ``$END`` the stack is the final one, after the accepting reduction.
        """
        states = list(config.stack)
        records: list[str] = []
        actions = self.actions
        while True:
            action = actions[states[-1]].get(kind)
            if action is None:
                return None
            if type(action) is int:
                if kind == "$END":
                    return None
                states.append(action)
                break
            origin, size, record = action  # type: ignore[misc]
            if size:
                del states[-size:]
            if record:
                records.append(record)
            goto = actions[states[-1]][origin]
            assert type(goto) is int
            states.append(goto)
            if kind == "$END" and goto == self.end:
                break
        target = self.config(tuple(states))
        result = (target, tuple(records), kind in _OPENERS)
        if self.configs.get(target.stack) is target:  # remember only steps between kept stacks
            config.steps[kind] = result
        return result


def tables(parser: Lark) -> Tables:
    """Take the action table and the per-state lexers out of a compiled parser.

    Raises ``ValueError`` when the parser uses a feature this loop does not
    copy (lexer callbacks, a terminal set split over several regexes).
    """
    frontend: Any = parser.parser
    table = frontend.parser.parser.parse_table
    count = max(table.states) + 1
    actions: list[dict[str, Action]] = [{} for _ in range(count)]
    for state, row in table.states.items():
        actions[state] = {}
        for name, (action, arg) in row.items():
            if action is Shift:
                actions[state][name] = arg
            else:
                kind = arg.origin.name if arg.origin.name in _RECORDS else ""
                if kind and (not arg.expansion or arg.expansion[0].name not in _OPENERS):
                    raise ValueError(f"a {kind} must begin with one of {sorted(_OPENERS)}")
                actions[state][name] = (str(arg.origin.name), len(arg.expansion), kind)
    lexers: list[Matcher | None] = [None] * count
    for state, lexer in frontend.lexer.lexers.items():
        scanner = lexer.scanner
        if lexer.callback or len(scanner._mres) > 1 or any(m.match("") for m in scanner._mres):
            raise ValueError("lexer callbacks, split terminal sets or empty tokens are not supported")
        lexers[state] = scanner._mres[0].match if scanner._mres else None
    return Tables(actions, lexers, table.start_states["start"], table.end_states["start"])


def scan(text: str, tables: Tables) -> list[Any] | None:
    """The tokens and define records of ``text``, as the Lark parser gives them; None if it rejects.

    The LALR stack of this grammar stays shallow (its lines are left-recursive
    lists), so a whole stack is a small tuple and the reductions a token causes
    depend on nothing else: they are computed once per (stack, token kind)
    and remembered in the stack's :class:`Config`.
    """
    config = tables.config((tables.start,))
    out: list[Any] = []
    opened: list[int] = []  # where each open define block starts in `out`
    append = out.append
    pos, n = 0, len(text)
    while pos < n:
        match = config.match
        m = None if match is None else match(text, pos)
        if m is None:
            return None
        kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
        end = m.end()
        if end == pos:  # an empty token would never advance; Lark decides what it means
            return None
        step = config.steps.get(kind) or tables.step(config, kind)
        if step is None:
            return None
        config, records, opens = step
        if records:
            _close(out, opened, records)
        if opens:
            opened.append(len(out))
        append(Tok(kind, pos, end))
        pos = end
    step = config.steps.get("$END") or tables.step(config, "$END")
    if step is None:
        return None
    _close(out, opened, step[1])
    return out


def _close(out: list[Any], opened: list[int], records: tuple[str, ...]) -> None:
    """Gather the tokens of each closed define block into one record."""
    for record in records:
        begin = opened.pop()
        children = out[begin:]
        del out[begin:]
        out.append((record, children))
