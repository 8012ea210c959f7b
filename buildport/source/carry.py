"""Findings of a source before its conversion, at their places in the converted text.

The source rules key on CUDA's names (``cudaMallocHost`` is pinned memory, ``cudaMemcpyAsync`` without a
stream runs on the null stream); once hipify has renamed them, a rule that knows only CUDA's name no longer
fires, and the finding a person needed is lost. ``migrate`` reads the original too and carries each of its
findings to the converted file: to the line the engine's rename left in its place, at the same token. A
finding is carried only from a line the engine changed (a line it left as it was has been read as it is
now, and a fix made after the engine, such as a warp ``*_sync`` call made the form the ROCm has, is not
undone), and not where the converted text has the same rule on that line already.
"""

from __future__ import annotations

import dataclasses
import difflib
import re

from buildport.findings import Finding

_TOKEN = re.compile(r"\w+|\S")


def carried(original: str, engine_text: str, final: str, before: list[Finding], after: list[Finding]
            ) -> list[Finding]:
    """The findings of ``before`` (read in ``original``) that ``after`` (read in ``final``) lacks, on lines the
    engine changed (``original`` → ``engine_text``), placed in ``final`` (``engine_text`` → ``final``)."""
    if not before or original == engine_text:
        return []
    old, mid, new = _lines(original), _lines(engine_text), _lines(final)
    renamed = _line_map(old, mid)
    fixed = _line_map(mid, new) if engine_text != final else {i: i for i in range(len(mid))}
    have = {(f.line, f.rule) for f in after}
    out: list[Finding] = []
    for finding in before:
        at = finding.line - 1
        there = renamed.get(at)
        if there is None or not _renamed_at(old[at], mid[there], finding.col):
            continue  # a token the engine left: the converted text was read as it is (and fixed after it)
        line = fixed.get(there)
        if line is None or (line + 1, finding.rule) in have:
            continue
        col = _same_token(old[at], new[line], finding.col)
        out.append(dataclasses.replace(finding, line=line + 1, col=col))
        have.add((line + 1, finding.rule))
    return out


def _lines(text: str) -> list[str]:
    """The lines as the findings count them (``\r\n``, ``\r`` or ``\n``; not str.splitlines' other breaks)."""
    return _BREAK.split(text)


_BREAK = re.compile(r"\r\n|\r|\n")


def _renamed_at(old: str, new: str, col: int) -> bool:
    """Whether the engine changed the token at ``col`` (1-based) of ``old`` in ``new`` (any change of the line
    where the tokens do not pair)."""
    paired = _paired(old, new, col)
    return old != new if paired is None else paired[0] != paired[1]


def _paired(old: str, new: str, col: int) -> tuple[str, str, int] | None:
    """The token at ``col`` of ``old``, the one in its place in ``new`` and that one's column, when both lines
    have as many tokens (names renamed one for one); None otherwise."""
    before, after = list(_TOKEN.finditer(old)), list(_TOKEN.finditer(new))
    if len(before) != len(after):
        return None
    at = next((i for i, m in enumerate(before) if m.start() == col - 1), None)
    return None if at is None else (before[at].group(), after[at].group(), after[at].start() + 1)


def _line_map(a: list[str], b: list[str]) -> dict[int, int]:
    """Each line of ``a`` that has a counterpart in ``b``: an equal line, or one of a run replaced by a run
    of as many lines (a rename within the line)."""
    where: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            where.update((i1 + k, j1 + k) for k in range(i2 - i1))
    return where


def _same_token(old: str, new: str, col: int) -> int:
    """The column in ``new`` of the token that stands at ``col`` (1-based) in ``old`` (see :func:`_paired`); else
    ``col`` itself, within the new line."""
    paired = _paired(old, new, col)
    if paired is not None:
        return paired[2]
    return min(col, len(new) + 1) if new else 1
