"""CUDA text a build-file rewrite leaves and no finding names (the ``build-*`` rules), the lines a
rewrite changes paired with the old ones, and the ``buildport: ignore`` suppressions."""

from __future__ import annotations

import bisect
import functools
import difflib
import re
from collections import Counter
from collections.abc import Mapping
from types import ModuleType
from typing import Iterator

from buildport.findings import Finding, Severity
from buildport.result import Result
from buildport.rules import build_rules
from buildport.rules.build_rules import CUDA_WORD, RESIDUE_PATTERNS
from buildport.rules.make import ROOT_VARIABLES
from buildport.report.linediff import line_blocks, lines, whole
from buildport.audit.collect import CMAKE, PYTHON


_MARKER = re.compile(r"#[^\S\n]*buildport:[^\S\n]*ignore(?:\[([^\]\r\n]*)\]|(?![\w\[-]))")


_ALL = "*"


_BRACKET = re.compile(r"\[(=*)\[")


#: message() arguments are prose: "this needs CUDA" is no dependency.
_MESSAGE = re.compile(r"(?im)^[ \t]*message[ \t]*\(")


def _make_quiet(text: str) -> bool:
    """Whether a Makefile's text holds no residue word (:func:`~buildport.prescan.may_have_residue`), from
    the search the make port already made of it (which looks for those words too)."""
    return _make_prescan().holds_no_word(text) or not _prescan().may_have_residue(text)


@functools.cache
def _prescan() -> ModuleType:
    """:mod:`buildport.prescan`, imported with the first build file audited, once."""
    import buildport.prescan

    return buildport.prescan


@functools.cache
def _make_prescan() -> ModuleType:
    """:mod:`buildport.passes.make_prescan`, imported with the first Makefile audited, once."""
    from buildport.passes import make_prescan

    return make_prescan


def line_changes(result: Result) -> dict[int, str | None]:
    """Changed original line number → the text the rewrite puts there ("" when the line goes).

    None: the line changes, but within a block of unequal size no new line is
    close enough to say which text replaces it.
    """
    original, text = result.original, result.text
    regions = result.regions if result.regions is not None else whole(original, text)
    changes: dict[int, str | None] = {}
    line, at = 0, 0  # lines of the original before offset ``at``
    for start, end, new_start, new_end in line_blocks(original, text, regions):
        line += original.count("\n", at, start)
        at = start
        old, new = lines(original[start:end]), lines(text[new_start:new_end])
        if old == new:
            continue
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "delete":
                changes.update((line + n, "") for n in range(i1 + 1, i2 + 1))
            elif tag == "replace":
                changes.update((line + n, new_line) for n, new_line in _pair(old, i1, i2, new, j1, j2))
    return changes


def _pair(old: list[str], i1: int, i2: int, new: list[str], j1: int, j2: int) -> Iterator[tuple[int, str | None]]:
    """Each changed old line → the most similar new line after the previous pick (None if none is close).

    "Most similar" is :meth:`difflib.SequenceMatcher.ratio`, the first of equals,
    at least 0.5. Two cheaper upper bounds of the ratio (from the lengths, then
    from the characters the lines share) rule candidates out, and the ratio is
    computed highest bound first until no candidate left can beat the best; the
    picks are the same as from every ratio.
    """
    if i2 - i1 == j2 - j1:
        for k in range(i2 - i1):
            yield i1 + k + 1, new[j1 + k].rstrip("\r\n")
        return
    picks: dict[int, int] = {}
    shared: dict[int, Counter[str]] = {}
    matchers: dict[int, difflib.SequenceMatcher[str]] = {}
    j = j1
    for i in range(i1, i2):
        a = old[i]
        chars = Counter(a)
        bounds: list[tuple[float, int]] = []  # (an upper bound of the ratio, candidate), each bound ≥ 0.5
        for k in range(j, j2):
            b = new[k]
            total = len(a) + len(b)
            if not total:
                bounds.append((1.0, k))
                continue
            if 2.0 * min(len(a), len(b)) / total < 0.5:
                continue
            if k not in shared:
                shared[k] = Counter(b)
            bound = 2.0 * sum((chars & shared[k]).values()) / total
            if bound >= 0.5:
                bounds.append((bound, k))
        bounds.sort(key=lambda c: (-c[0], c[1]))
        best, at = -1.0, -1
        for bound, k in bounds:  # highest bound first: stop once no candidate left can beat or tie the best
            if bound < best:
                break
            if bound == best and k > at:
                continue
            if k not in matchers:  # the new line's index is built once, whichever old line it is compared with
                matchers[k] = difflib.SequenceMatcher(None, "", new[k], autojunk=False)
            matchers[k].set_seq1(a)
            ratio = matchers[k].ratio()
            if ratio > best or (ratio == best and k < at):
                best, at = ratio, k
        if best >= 0.5:
            picks[i] = j = at
            j += 1
    for i in range(i1, i2):
        yield i + 1, new[picks[i]].rstrip("\r\n") if i in picks else None


def left_behind(text: str, path: str, kind: str, result: Result) -> list[Finding]:
    """The findings of :func:`residue` that need a person (warnings): CUDA text the rewrite of ``text``
    (``result``) keeps and no finding of the engine names."""
    if not may_have_residue(text, kind) or left_alone(result):
        return []
    changes: Mapping[int, str | None] = _LazyChanges(result) if result.changed else {}
    found = residue(text, path, kind, result.findings, changes, Severity.WARNING)
    silenced = suppressions(text) if found else {}
    return [f for f in found if not f.fixable and not is_silenced(silenced, f)]


def may_have_residue(text: str, kind: str) -> bool:
    """Whether CUDA text may be in a build file's code (the prescans' answer: no means none is). A
    ``setup.py`` has no residue search: its engine's findings are all that is reported of it."""
    if kind == PYTHON:
        return False
    return _prescan().may_have_residue(text) if kind == CMAKE else not _make_quiet(text)


def left_alone(result: Result) -> bool:
    """A copy of CMake's CUDA module: CUDA by design, and left as it is (its text is no residue)."""
    return any(f.rule == "cmake-cuda-module" for f in result.findings)


class _LazyChanges(Mapping[int, "str | None"]):
    """:func:`line_changes` of a result, worked out when :func:`residue` first asks (most files have no hit)."""

    def __init__(self, result: Result) -> None:
        self._result = result
        self._changes: dict[int, str | None] | None = None

    def _all(self) -> dict[int, str | None]:
        if self._changes is None:
            self._changes = line_changes(self._result)
        return self._changes

    def __getitem__(self, line: int) -> str | None:
        return self._all()[line]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def residue(text: str, path: str, kind: str, reported: list[Finding], changes: Mapping[int, str | None],
            least: Severity = Severity.INFO) -> list[Finding]:
    """CUDA text in the code of a build file that no engine finding covers.

    A line with a finding that needs a human is covered whole. Text the rewrite
    removes is covered by any finding on its line, and is a fixable finding of its
    own on a line without one; text that survives the rewrite is reported unless a
    finding points at it.
    """
    human = {f.line for f in reported if not f.fixable}
    any_line = {f.line for f in reported}
    at = {(f.line, f.col) for f in reported}
    out: list[Finding] = []
    # the line of offset ``at_line`` and where it starts: the hits come in order, so the text is read once
    line, at_line, line_start = 1, 0, 0
    kept: dict[tuple[int, str], bool] = {}  # (line, token) → whether the token is in the line's new text
    own: set[str] | None = None  # root-named variables the file sets to folders of its own (read once asked)
    for rule, start, token in _residue_hits(code_only(text, kind)):
        if rule == "build-cuda-path" and kind == "make" and token in ROOT_VARIABLES:
            own = _own_roots(text) if own is None else own
            if token in own:
                continue  # the project's folder, which the port leaves as it is (and says so)
        newlines = text.count("\n", at_line, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", at_line, start) + 1
        at_line = start
        col = start - line_start + 1
        if line in human or (line, col) in at or build_rules.BY_ID[rule].severity < least:
            continue
        new = changes.get(line, text)
        survives = line not in changes
        if not survives and new is not None:
            found = kept.get((line, token))
            if found is None:
                found = kept[(line, token)] = token in new
            survives = found
        if not survives and line in any_line:
            continue
        info = build_rules.BY_ID[rule]
        if survives:
            severity = info.severity
            message = f"{info.title} `{token}`; `buildport {kind}` leaves it as it is"
            out.append(Finding(path, line, col, rule, severity, message, "port it by hand"))
        else:
            message = f"{info.title} `{token}`; `buildport {kind}` rewrites this line"
            out.append(Finding(path, line, col, rule, Severity.INFO, message, fixable=True,
                               replacement=new or ""))
    return out


def _own_roots(text: str) -> set[str]:
    """The variables named like a CUDA root that the Makefile ``text`` sets to a folder of the project each
    time it sets them, as the port reads them (:func:`buildport.passes.make_facts.own_roots`)."""
    from buildport.passes.make_facts import own_roots
    from buildport.syntax.make import parse_make

    return own_roots(parse_make(text))


def _residue_hits(code: str) -> Iterator[tuple[str, int, str]]:
    """Each pattern's matches, in the order of :data:`RESIDUE_PATTERNS`, where no earlier match
    claimed their text; yielded in the order of the text."""
    # claimed stretches are disjoint, so sorted by start they are sorted by end too: the only
    # one that can overlap [start, end) is the last one starting before end. Those of one
    # pattern come in order and are added once the pattern is done (merged, not inserted one
    # by one: a file of many hits would move the list's tail at each)
    claimed: list[tuple[int, int]] = []
    hits: list[tuple[int, str, str]] = []
    for rule, pattern in RESIDUE_PATTERNS:
        spans = _cuda_names(code) if rule == "build-cuda-name" else (m.span() for m in pattern.finditer(code))
        kept: list[tuple[int, int]] = []
        for start, end in spans:
            i = bisect.bisect_left(claimed, (end,))
            if i and claimed[i - 1][1] > start:
                continue
            if kept and kept[-1][1] > start:
                continue  # (a pattern's own matches do not overlap; kept for certainty)
            kept.append((start, end))
            hits.append((start, rule, code[start:end]))
        if kept:
            claimed = sorted(claimed + kept)  # two sorted runs: merged in linear time
    for start, rule, token in sorted(hits):
        yield rule, start, token


_NAME_SEED = re.compile(r"CUDA|(?i:cuda_)")


_WORD_REST = re.compile(r"\w*")


_NAME_HEAD = re.compile(r"[A-Za-z_]")
#: What follows a word that is part of a path: a folder separator, or a file's extension.
_FILE_PART = re.compile(r"/|\.[A-Za-z]\w*(?![\w$({])")


def _cuda_names(code: str) -> Iterator[tuple[int, int]]:
    """The spans the name pattern ``[A-Za-z_]\\w*`` matches that :func:`_cuda_name` keeps, in order.

    Rather than every word of the file, only words around a ``CUDA`` or ``cuda_``
    are looked at: a run of word characters holds one match of the pattern, from
    its first ASCII letter or underscore to the run's end.
    """
    last_end = -1
    for seed in _NAME_SEED.finditer(code):
        if seed.start() < last_end:
            continue  # inside the word already looked at
        run = seed.start()
        while run > 0 and (code[run - 1].isalnum() or code[run - 1] == "_"):
            run -= 1
        head = _NAME_HEAD.search(code, run, seed.start() + 1)
        assert head is not None  # the seed itself starts with a letter
        start = head.start()
        end = _WORD_REST.match(code, seed.start()).end()  # type: ignore[union-attr]
        last_end = end
        if _cuda_name(code, start, end):
            yield start, end


def _cuda_name(code: str, start: int, end: int) -> bool:
    """An upper-case CUDA/NVCC name, or a ``cuda_*`` command call (not a lower-case target name); never a
    part of a path (``detail/CUDAScatter.cuh``, ``src/CUDA/``, ``CUDAKernels.cu``: the project's own files)."""
    word = code[start:end]
    if start and code[start - 1] == "/" or _FILE_PART.match(code, end):
        return False
    if CUDA_WORD.search(word):
        return True
    return word.lower().startswith("cuda_") and code[end:end + 64].lstrip(" \t").startswith("(")


def code_only(text: str, kind: str) -> str:
    """``text`` with its comments blanked out (newlines kept), so offsets still match.

    CMake: ``#`` outside a quoted argument starts a line comment, ``#[[``/``#[=[``
    a bracket comment; a message()'s arguments are prose. make: an unescaped ``#`` starts a comment
    to the line end; the text of ``$(info ...)``, ``$(warning ...)`` and ``$(error ...)`` is prose.
    """
    if kind != CMAKE:
        prose = [m.span() for m in _MAKE_COMMENT.finditer(text) if m.group(1) is None]
        if "$" in text:
            prose += [_make_message(text, m) for m in _MAKE_MESSAGE.finditer(text)]
            prose.sort()
        return _blanked(text, prose)
    spans: list[tuple[int, int]] = []
    i = 0
    search = _CMAKE_SPECIAL.search
    while (m := search(text, i)) is not None:  # every other character is passed over as it is
        c = text[m.start()]
        if c == "[":
            spans.append((m.start(), _bracket_end(text, m.start())))
            i = spans[-1][1]
        elif c == "#":
            spans.append((m.start(), _comment_end(text, m.start())))
            i = spans[-1][1]
        else:  # a quoted argument or an escape, passed over whole
            i = m.end()
    messages = [(m.end(), _close_paren(text, m.end())) for m in _MESSAGE.finditer(text)]
    return _blanked(text, sorted(spans + messages) if messages else spans)


#: What :func:`code_only` stops at outside a quoted argument: a quoted argument (to its closing quote,
#: escapes passed over; to the end if unclosed), an escape, a bracket's opening, a ``#``.
_CMAKE_SPECIAL = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*\\?"?|\\[\s\S]?|\[=*\[|#')


#: make: a function that prints its text, ``$(info ...)``, ``${warning ...}``, ``$(error ...)`` (group 1: the bracket).
_MAKE_MESSAGE = re.compile(r"\$([({])(?:info|warning|error)[ \t]")


def _make_message(text: str, m: re.Match[str]) -> tuple[int, int]:
    """The text of a make function that prints it (``m``: its head, :data:`_MAKE_MESSAGE`): to the bracket
    that closes it, as make nests references (:func:`~buildport.syntax.make_words.skip_reference`), or to
    the end of its logical line if none does."""
    from buildport.syntax.make_words import skip_reference

    line_end = m.end()
    while (line_end := text.find("\n", line_end)) > 0 and text[line_end - 1] == "\\":
        line_end += 1  # a continued line
    if line_end < 0:
        line_end = len(text)
    end = skip_reference(text, m.start(), line_end)
    closer = ")" if m.group(1) == "(" else "}"
    return m.end(), end - 1 if text[end - 1 : end] == closer else end


#: make: an escaped character (group 1), or a comment to the line's end.
_MAKE_COMMENT = re.compile(r"(\\[\s\S]?)|#[^\n]*")


_NOT_NEWLINES = re.compile(r"[^\r\n]+")


def _spaces(m: re.Match[str]) -> str:
    return " " * (m.end() - m.start())


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character but newlines in ``spans`` (sorted by start) made a space."""
    if not spans:
        return text
    pieces: list[str] = []
    at = 0  # what is before ``at`` is in ``pieces``
    for start, end in spans:
        start = max(start, at)  # spans may overlap: a comment inside a message()
        if start < end:
            gap = text[start:end]
            blank = " " * len(gap) if "\n" not in gap and "\r" not in gap else _NOT_NEWLINES.sub(_spaces, gap)
            pieces += (text[at:start], blank)
            at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _bracket_end(text: str, start: int) -> int:
    m = _BRACKET.match(text, start)
    assert m is not None
    close = text.find(f"]{m.group(1)}]", m.end())
    return len(text) if close < 0 else close + len(m.group(1)) + 2


def _close_paren(text: str, start: int) -> int:
    """The offset of the ``)`` closing a command whose arguments start at ``start``."""
    depth, quoted = 1, False
    for m in _PAREN_SPECIAL.finditer(text, start):
        c = m.group()
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "()":
            depth += 1 if c == "(" else -1
            if depth == 0:
                return m.start()
    return len(text)


#: What :func:`_close_paren` looks at: a backslash and the character it escapes, a quote, a parenthesis.
_PAREN_SPECIAL = re.compile(r'\\[\s\S]?|["()]')


def _comment_end(text: str, start: int) -> int:
    """The end of the CMake comment whose ``#`` is at ``start``: a bracket comment's, or the line's."""
    if _BRACKET.match(text, start + 1):
        return _bracket_end(text, start + 1)
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def suppressions(text: str) -> dict[int, set[str]]:
    """Line → rule ids silenced by ``# buildport: ignore[...]`` markers on that line (``*``: all)."""
    silenced: dict[int, set[str]] = {}
    number, at = 1, 0  # the line number at offset ``at``
    for marker in _MARKER.finditer(text):  # a marker stays on its line: its blanks are not newlines
        number += text.count("\n", at, marker.start())
        at = marker.start()
        rules = silenced.setdefault(number, set())
        if marker.group(1) is None:
            rules.add(_ALL)
        else:
            rules.update(part.strip() for part in marker.group(1).split(",") if part.strip())
    return silenced


def is_silenced(silenced: dict[int, set[str]], finding: Finding) -> bool:
    for line in (finding.line, finding.line - 1):
        rules = silenced.get(line)
        if rules and (_ALL in rules or finding.rule in rules):
            return True
    return False
