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
``define`` block, that the Lark parser with ``make_lark._Lines`` gives, or None
where the Lark parser would raise: the caller then runs Lark to get the
positioned error. Nothing about the language lives here.

One shortcut, proved from the grammar when the tables are built: when exactly
one terminal (the line break) can begin with ``\\n``, every state's lexer either
reads a ``\\n`` as that terminal or fails there. Each token's pattern is then
followed by an optional line break in the same regular expression, so a line
and the break after it take one match instead of two.

The tables are kept in the parser cache as data (:func:`cached_tables`) and
each state's alternation as its compiled program (:mod:`buildport.cache.compiled`):
a process that finds them there reads Makefiles without importing Lark. The
package ships them too (:data:`SHIPPED`), for a run whose cache has none yet.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from buildport.cache import compiled
from buildport.syntax.grammars import cached_json
from buildport.syntax import make_first
from buildport.syntax.make_first import parsed_can_begin_with
from buildport.syntax.make_tokens import PACK_AFTER, PackedTokens

if TYPE_CHECKING:  # Lark is imported only where tables are taken out of its parser
    from lark import Lark

#: Match one token at an offset (a compiled alternation's bound ``match``).
Matcher = Callable[[str, int], "re.Match[str] | None"]
#: A shift to a state, or a reduce: (nonterminal, number of symbols, record kind or "").
Action = Union[int, tuple[str, int, str]]
#: A token: its terminal name, start and end offset.
Token = tuple[str, int, int]
#: Rules whose children the parser callbacks keep together as one record.
_RECORDS = frozenset({"define", "nested_define"})
#: The terminals that begin those rules (checked against the grammar by :func:`tables`).
_OPENERS = frozenset({"DEFINE_KW", "BODY_DEFINE"})


#: Beyond this many remembered parser stacks (deeply nested defines), new ones are not kept.
_MAX_STACKS = 5000
#: The deepest nesting of define blocks the scan reads: its stacks are tuples copied at each step, so
#: a file of thousands of nested defines would cost time quadratic in their depth; Lark's parser reads it.
_DEEPEST = 64


class Config:
    """One parser stack, with what :func:`scan` needs at it: the top state's lexer, the remembered steps."""

    __slots__ = ("fused", "match", "stack", "steps")

    def __init__(self, stack: tuple[int, ...], match: Matcher | None) -> None:
        self.stack = stack
        self.match = match
        #: terminal name → (the stack after its reductions and shift, the records they close, opens one)
        self.steps: dict[str, Step] = {}
        #: terminal name → the same for that token and the line break right after it
        self.fused: dict[str, Fused] = {}


#: The effect of one token: the new stack, the records its reductions close, whether it opens one.
Step = tuple[Config, tuple[str, ...], bool]
#: The effect of a token and the line break after it: new stack, records closed before the
#: token, whether the token opens one, records closed before the line break.
Fused = tuple[Config, tuple[str, ...], bool, tuple[str, ...]]


@dataclass(frozen=True)
class Tables:
    """What :func:`scan` needs of a compiled Lark LALR parser."""

    #: Per parser state (an index): terminal or nonterminal name → action.
    actions: list[dict[str, Action]]
    #: Per parser state: the contextual lexer's matcher (or a function that compiles it,
    #: called the first time the state is met), or None if it accepts only the end.
    lexers: list[Matcher | Callable[[], Matcher] | None]
    start: int
    end: int
    #: The terminal that reads a line break, if it can be read along with the token before it.
    newline: str | None = None
    #: The parser stacks met so far, each once.
    configs: dict[tuple[int, ...], Config] = field(default_factory=dict)

    def lexer(self, state: int) -> Matcher | None:
        """The matcher of ``state``'s lexer, compiled on first use (a typical file meets few states)."""
        found = self.lexers[state]
        if isinstance(found, _Lazy):
            found = self.lexers[state] = found()
        return found  # type: ignore[return-value]  # not a _Lazy any more

    def config(self, stack: tuple[int, ...]) -> Config:
        """The one :class:`Config` of ``stack``."""
        found = self.configs.get(stack)
        if found is None:
            found = Config(stack, self.lexer(stack[-1]))
            if len(self.configs) < _MAX_STACKS:
                self.configs[stack] = found
        return found

    def _kept(self, config: Config) -> bool:
        return self.configs.get(config.stack) is config

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
        if self._kept(target) and self._kept(config):  # remember only steps between kept stacks
            config.steps[kind] = result
        return result

    def fused_step(self, config: Config, kind: str) -> Fused | None:
        """:meth:`step` for a token of ``kind`` and then a line break."""
        first = config.steps.get(kind) or self.step(config, kind)
        if first is None or self.newline is None:
            return None
        middle, records, opens = first
        second = middle.steps.get(self.newline) or self.step(middle, self.newline)
        if second is None:
            return None
        result = (second[0], records, opens, second[1])
        if self._kept(second[0]) and self._kept(config):
            config.fused[kind] = result
        return result


def tables(parser: Lark, fuse: bool = True, eager: bool = False) -> Tables:
    """Take the action table and the per-state lexers out of a compiled parser.

    With ``fuse`` (and a grammar that allows it) a line break is read along
    with the token before it. A state's lexer is compiled the first time a file
    meets that state (most files meet few), unless ``eager``: then every one
    is compiled now and a parser that uses a feature this loop does not copy
    (lexer callbacks, a terminal set split over several regexes, an empty
    token) raises ``ValueError``. Met lazily, such a state rejects every token,
    so the caller falls back to Lark, which is right though slow.
    """
    from lark.parsers.lalr_analysis import Shift

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
    line_break, plain = _grammar_facts(parser)
    newline = line_break if fuse else None
    suffix = None
    if newline is not None:
        pattern = next(t for t in parser.terminals if t.name == newline).pattern.to_regexp()
        suffix = f"(?:(?=\\n)(?:{pattern}))?"
    plain = plain and not parser.lexer_conf.callbacks
    lexers: list[Matcher | Callable[[], Matcher] | None] = [None] * count
    shared: dict[tuple[str, ...], _Lazy] = {}
    for state, lexer in frontend.lexer.lexers.items():
        if not lexer.terminals:
            continue
        key = tuple(t.name for t in lexer.terminals)  # Lark's order; the scanner is not built yet
        if key not in shared:
            alternation = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()}){suffix or ''}" for t in lexer.terminals)
            shared[key] = _Lazy(alternation, lexer.g_regex_flags, None if plain else lexer)
        lexers[state] = shared[key]
        if eager:
            lexers[state] = shared[key](strict=True)
    return Tables(actions, lexers, table.start_states["start"], table.end_states["start"], newline)


def _reject_all(_text: str, _pos: int) -> None:
    """The matcher of a state this loop cannot read: every token is rejected, so Lark reads the file."""
    return None


def _grammar_facts(parser: Lark) -> tuple[str | None, bool]:
    """What :func:`tables` proves from the terminals: the line break that can be fused
    (:func:`_line_break`), and whether none of them makes Lark give its lexer a callback
    (both are kept with the tables, see :func:`cached_tables`)."""
    # Lark gives a lexer callbacks where a string terminal is also matched by a regex terminal of
    # the same priority; if no pair of the whole grammar is such, no state's subset is either.
    from lark.lexer import _create_unless

    unless = _create_unless(list(parser.terminals), parser.lexer_conf.g_regex_flags, re, False)[1]  # type: ignore[no-untyped-call]
    return _line_break(parser), not unless


@lru_cache(maxsize=1)
def tables_material(grammar: str) -> bytes:
    """What the tables of ``grammar`` are derived from, and kept (and shipped) under a hash of: the
    grammar and the code that derives them."""
    return grammar.encode("utf-8", "surrogatepass") + _deriving_code()


def _deriving_code() -> bytes:
    """The text of the modules that derive the tables (empty where it cannot be read): part of their key."""
    out = b""
    for name in (__file__, make_first.__file__):
        try:
            out += Path(name).read_bytes()
        except OSError:
            pass
    return out


def _line_break(parser: Lark) -> str | None:
    """The one terminal that can begin with ``\\n``, if only one can, and no pattern has groups."""
    from re import _parser as sre_parse

    flags = parser.lexer_conf.g_regex_flags
    parsed = {t.name: sre_parse.parse(t.pattern.to_regexp(), flags) for t in parser.terminals}  # once each
    if any(p.state.groups > 1 for p in parsed.values()):  # group 0 is the whole match
        return None
    starters = [name for name, p in parsed.items() if parsed_can_begin_with(p, "\n")]
    return starters[0] if len(starters) == 1 else None


class _Lazy:
    """A state's alternation, compiled when first needed: the terminals in Lark's order, each
    followed by an optional line break when fused. States that share a terminal set share one.

    ``lexer``: Lark's lexer for the state, where the grammar has lexer callbacks
    somewhere (see :func:`tables`); its scanner is then built first to see
    whether this loop can read the state. None for a grammar proved plain.
    """

    def __init__(self, pattern: str, flags: int, lexer: Any = None) -> None:
        self.pattern = pattern
        self.flags = flags
        self.lexer = lexer
        self.matcher: Matcher | None = None

    def __call__(self, strict: bool = False) -> Matcher:
        if self.matcher is None:
            lexer = self.lexer
            supported = True
            matcher: Matcher = _reject_all
            if lexer is not None:
                scanner = lexer.scanner
                supported = not lexer.callback and len(scanner._mres) == 1
            if supported:
                matcher = compiled.pattern(self.pattern, self.flags).match  # kept compiled across runs
                supported = matcher("", 0) is None
            if not supported:
                if strict:
                    raise ValueError("lexer callbacks, split terminal sets or empty tokens are not supported")
                matcher = _reject_all
            self.matcher = matcher
        return self.matcher


# --- the tables as data, kept in the parser cache -----------------------------------


def cached_tables(grammar: str, parser: Callable[[], Lark]) -> Tables:
    """:func:`tables` of the parser of ``grammar`` (``parser()`` builds it), kept in the parser cache
    as data: a process that finds them there imports no Lark. Tables of a grammar that is not
    plain (lexer callbacks) are not kept."""
    built: list[Tables] = []
    material = tables_material(grammar)

    def derive() -> dict[str, Any] | None:
        shipped = shipped_tables(material)
        if shipped is not None:
            return shipped
        built.append(tables(parser()))
        return table_data(built[0])

    data = cached_json("make-tables", material, derive, _valid_data)
    if built:
        return built[0]
    assert data is not None  # read back: _valid_data accepts no other
    return tables_from_data(data)


#: The tables of ``grammars/make.lark`` as shipped with the package, with a hash of the grammar and
#: of the code that derived them: a run whose parser cache holds no tables (a fresh machine, a CI
#: job, ``--no-cache``) takes them from here instead of building Lark's parser (0.65 s). Written by
#: ``python -m buildport.syntax.make_scan`` after a change to the grammar or to this module; a test
#: fails until then, and meanwhile the tables are derived as before.
SHIPPED = Path(__file__).with_name("make_tables.json")


def shipped_tables(material: bytes) -> dict[str, Any] | None:
    """The tables in :data:`SHIPPED`, if they were derived from ``material`` (grammar and code)."""
    try:
        found = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("material") != hashlib.sha256(material).hexdigest():
        return None
    data = found.get("tables")
    return data if _valid_data(data) else None


def write_shipped(target: Path = SHIPPED) -> None:
    """Derive the tables of the make grammar (with a recipe prefix of a tab) and write them to ``target``."""
    from buildport.syntax.make import TAB, _grammar, _parser

    data = table_data(tables(_parser(TAB)))
    if data is None:
        raise SystemExit("the make grammar's tables cannot be kept as data")
    shipped = {"material": hashlib.sha256(tables_material(_grammar(TAB))).hexdigest(), "tables": data}
    target.write_text(json.dumps(shipped, separators=(",", ":")) + "\n", encoding="utf-8")


def table_data(made: Tables) -> dict[str, Any] | None:
    """What ``made`` (fresh from :func:`tables`) holds, as JSON values; None if a state needs Lark's
    lexer to tell whether this loop can read it."""
    lazies: dict[int, _Lazy] = {}
    for lexer in made.lexers:
        if lexer is not None:
            if not isinstance(lexer, _Lazy) or lexer.lexer is not None:
                return None
            lazies.setdefault(id(lexer), lexer)
    number = {key: i for i, key in enumerate(lazies)}
    return {
        "actions": made.actions,
        "lexers": [None if lexer is None else number[id(lexer)] for lexer in made.lexers],
        "patterns": [[lazy.pattern, int(lazy.flags)] for lazy in lazies.values()],
        "start": made.start,
        "end": made.end,
        "newline": made.newline,
    }


def tables_from_data(data: dict[str, Any]) -> Tables:
    """The :class:`Tables` :func:`table_data` describes, each state's lexer compiled when first met."""
    shared = [_Lazy(pattern, flags) for pattern, flags in data["patterns"]]
    actions: list[dict[str, Action]] = [
        {name: action if type(action) is int else tuple(action) for name, action in row.items()}
        for row in data["actions"]
    ]
    lexers: list[Matcher | Callable[[], Matcher] | None] = [
        None if index is None else shared[index] for index in data["lexers"]
    ]
    return Tables(actions, lexers, data["start"], data["end"], data["newline"])


def _valid_data(found: object) -> bool:
    if not isinstance(found, dict):
        return False
    try:
        patterns, actions, lexers = found["patterns"], found["actions"], found["lexers"]
        return (
            isinstance(found["start"], int) and isinstance(found["end"], int)
            and (found["newline"] is None or isinstance(found["newline"], str))
            and isinstance(actions, list) and isinstance(lexers, list) and len(actions) == len(lexers)
            and all(isinstance(row, dict) for row in actions)
            and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)
                    for p in patterns)
            and all(i is None or (isinstance(i, int) and 0 <= i < len(patterns)) for i in lexers)
        )  # fmt: skip
    except (KeyError, TypeError):
        return False


def scan(text: str, tables: Tables, watch: frozenset[str] = frozenset()) -> tuple[Sequence[Any], list[int]] | None:
    """The tokens and define records of ``text``, as the Lark parser gives them; None if it rejects.

    Tokens are ``(kind, start, end)`` tuples; a define record is ``(kind, children)``;
    past :data:`~buildport.syntax.make_tokens.PACK_AFTER` of them, they are kept in a
    :class:`~buildport.syntax.make_tokens.PackedTokens`, which reads as their list.
    Also returns where the tokens of a kind in ``watch`` are, among those outside
    any record. The LALR stack of this grammar stays shallow (its lines are
    left-recursive lists), so a whole stack is a small tuple and the reductions
    a token causes depend on nothing else: they are computed once per (stack,
    token kind) and remembered in the stack's :class:`Config`.
    """
    config = tables.config((tables.start,))
    newline = tables.newline
    out: list[Any] = []
    marks: list[int] = []
    opened: list[int] = []  # where each open define block starts in `out`
    append = out.append
    packed: PackedTokens | None = None  # the tokens before `out`, once there are many (see make_tokens)
    base = 0  # how many: the index in the whole run of out[0]
    closed = False  # whether `out` holds a define record
    pack_at = PACK_AFTER  # how many tokens `out` holds when it is packed (local: read once a line)
    pos, n = 0, len(text)
    while pos < n:
        match = config.match
        m = None if match is None else match(text, pos)
        if m is None:
            return None
        kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
        end = m.end()
        token_end = m.end(kind)
        if token_end == pos:  # an empty token would never advance; Lark decides what it means
            return None
        if token_end == end:
            step = config.steps.get(kind) or tables.step(config, kind)
            if step is None:
                return None
            config, records, opens = step
            if records:
                _close(out, opened, records)
                closed = True
            if opens:
                opened.append(len(out))
                if len(opened) > _DEEPEST:
                    return None  # each step copies the stack: Lark's own parser is linear in the depth
            elif kind in watch and not opened:
                marks.append(base + len(out))
            append((kind, pos, end))
        else:
            fused = config.fused.get(kind) or tables.fused_step(config, kind)
            if fused is None:
                return None
            config, records, opens, after = fused
            if records:
                _close(out, opened, records)
                closed = True
            if opens:
                opened.append(len(out))
                if len(opened) > _DEEPEST:
                    return None
            elif kind in watch and not opened:
                marks.append(base + len(out))
            append((kind, pos, token_end))
            if after:
                _close(out, opened, after)
                closed = True
            append((newline, token_end, end))
        if len(out) >= pack_at and not opened and (token_end != end or kind == newline):
            # a large file, at a line's end: its tokens go into flat arrays
            packed = _packed(packed, out, closed)
            base += len(out)
            out = []
            append = out.append
            closed = False
        pos = end
    step = config.steps.get("$END") or tables.step(config, "$END")
    if step is None:
        return None
    _close(out, opened, step[1])
    if packed is not None:
        return _packed(packed, out, closed or bool(step[1])), marks
    return out, marks


def _packed(packed: PackedTokens | None, out: list[Any], records: bool) -> PackedTokens:
    """``packed`` (made if None) with the tokens of ``out`` added (``records``: some are define records)."""
    if packed is None:
        packed = PackedTokens()
    packed.pack(out, records)
    return packed


def _close(out: list[Any], opened: list[int], records: tuple[str, ...]) -> None:
    """Gather the tokens of each closed define block into one record."""
    for record in records:
        begin = opened.pop()
        children = out[begin:]
        del out[begin:]
        out.append((record, children))


if __name__ == "__main__":
    write_shipped()
