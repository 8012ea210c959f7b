"""The source half of ``buildport audit``: CUDA sources in, findings out.

:func:`scan_source` tokenizes a C, C++ or CUDA text (:mod:`buildport.source.lex`),
runs the matchers (:mod:`buildport.source.match`) over its code and over the body
of every preprocessor directive, reports included NVIDIA library headers, and
turns hits into :class:`~buildport.findings.Finding` objects carrying the rule's
severity and explanation from :mod:`buildport.rules.source_rules`.

A comment ``// buildport: ignore[rule-id, ...]`` (or ``/* ... */``) silences the
named rules on its own line and on the next; ``// buildport: ignore`` silences
every rule there. Sources are hipify's to rewrite, so no finding is fixable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from buildport.findings import Finding
from buildport.rules.source_rules import (
    BY_ID, CUDA_HEADER, CUDA_IDENTIFIER, CUDA_SOURCE_PATTERNS, CUDA_SOURCE_WORDS, DEVICE_KEYWORDS, LIBRARY_HEADERS, RULES,
    SourceRule,
)
from buildport.source.lex import HEADER, INCLUDE_NAMES as _INCLUDES, Lexed, TokenList, lex
from buildport.source.match import Hit, interesting, match
from buildport.source.seq import Seq
from buildport.textio import LineMap
from buildport.passes.wordtrie import WordSearch

__all__ = ["RULES", "SourceRule", "is_cuda_source", "scan_cuda_source", "scan_source", "silenced_at", "suppressions"]

CUDA_EXTENSIONS = frozenset((".cu", ".cuh"))
C_FAMILY_EXTENSIONS = frozenset((".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp"))
_NOT_CODE = frozenset(("error", "warning", "pragma", "line", "ident", "sccs"))
_MARKER = re.compile(r"buildport:\s*ignore(?:\[([^\]\r\n]*)\]|(?![\w\[-]))")
ALL = "*"


def is_cuda_source(path: str, text: str) -> bool:
    """True for ``.cu``/``.cuh`` files, and for C/C++ files that include a CUDA header, use CUDA API or hold
    device code (``__device__``, ``__global__``, ...).

    Comments and string literals do not count: a C++ file that merely mentions
    ``cudaMalloc`` in a comment is not a CUDA source.
    """
    return _cuda_source(path, text)[0]


def scan_cuda_source(path: str, text: str, left: Callable[[str, str, Lexed], list[Finding]] | None = None
                     ) -> list[Finding] | None:
    """:func:`scan_source` of a CUDA source (see :func:`is_cuda_source`), None for any other file;
    a C/C++ file that had to be read to tell is read once for both. ``left``: more findings of the same
    lexed text (the audit's CUDA left, :func:`buildport.source.left.cuda_left`)."""
    cuda, lexed = _cuda_source(path, text)
    if not cuda:
        return None
    if lexed is None:
        lexed = lex(text)
    findings = scan_source(text, path, lexed)
    if left is not None:
        # a name a source rule explains already (a warp *_sync intrinsic) is not reported twice
        explained = {(f.line, f.col) for f in findings}
        more = [f for f in left(text, path, lexed) if f.fixable or (f.line, f.col) not in explained]
        findings = sorted([*findings, *more], key=Finding.sort_key)
    return findings


def _cuda_source(path: str, text: str) -> tuple[bool, Lexed | None]:
    """:func:`is_cuda_source`, and ``text`` lexed if telling needed it."""
    extension = os.path.splitext(path)[1].lower()
    if extension in CUDA_EXTENSIONS:
        return True, None
    if extension not in C_FAMILY_EXTENSIONS:
        return False, None
    if not hinted(text):
        return False, None  # none of the words below can be in it
    if "<<<" not in text and _MAY_NAME_API.search(text) is None and _MAY_INCLUDE.search(text) is None \
            and _MAY_KEYWORD.search(text) is None:
        return False, None  # no token, nor header name, that the checks below accept can be in it
    lexed = lex(text)
    return lexed_as_cuda(lexed), lexed


#: Where a token :data:`CUDA_IDENTIFIER` matches whole can be: every token is a piece of the text, and
#: an identifier never follows an ASCII letter, digit, ``_`` or ``$`` (the piece before it would have
#: taken it) nor is followed by a word character or ``$``.
_MAY_NAME_API = re.compile(rf"(?<![A-Za-z0-9_$])(?:{CUDA_IDENTIFIER.pattern})(?![\w$])")
#: Where a device-code keyword (:data:`DEVICE_KEYWORDS`) can be a token.
_MAY_KEYWORD = re.compile(r"(?<![A-Za-z0-9_$])__(?:global|device|shared|constant)__(?![\w$])")
#: Where an included header name :data:`CUDA_HEADER` matches can be: right after ``<`` or ``"`` and blanks
#: (not up to a closing one: an unclosed ``"cuda.hx`` is read as the name ``cuda.h``).
_MAY_INCLUDE = re.compile(rf"[<\"]\s*(?:{CUDA_HEADER.pattern})")
#: The words as searches that each begin with a literal (see :class:`~buildport.passes.wordtrie.WordSearch`):
#: one alternation of them all reads C++ code ~2.5× slower.
_HINT_WORDS = WordSearch(CUDA_SOURCE_WORDS)
_HINT_PATTERNS = tuple(map(re.compile, CUDA_SOURCE_PATTERNS))


def hinted(text: str) -> bool:
    """Whether ``text`` holds a word of ``CUDA_SOURCE_WORDS`` or a match of ``CUDA_SOURCE_PATTERNS``."""
    return _HINT_WORDS.found_in(text) or any(pattern.search(text) is not None for pattern in _HINT_PATTERNS)


def lexed_as_cuda(lexed: Lexed) -> bool:
    """Whether lexed C/C++ includes a CUDA header, launches a kernel, names CUDA API or holds device code."""
    for directive in lexed.directives:
        body = directive.tokens
        if directive.name in _INCLUDES and body.kinds[:1] == [HEADER]:
            if CUDA_HEADER.fullmatch(body.texts[0][1:-1].strip()):
                return True
    if "<<<" in lexed.code.texts:
        return True
    words = set(lexed.code.texts).union(*(d.tokens.texts for d in lexed.directives if d.name not in _INCLUDES))
    return not DEVICE_KEYWORDS.isdisjoint(lexed.code.texts) or any(CUDA_IDENTIFIER.fullmatch(word) for word in words)


def scan_source(text: str, path: str, lexed: Lexed | None = None) -> list[Finding]:
    """Findings of every source rule in ``text``, sorted by line and column.

    ``path`` is only copied into the findings; ``lexed``, ``text`` already lexed.
    Linear in the size of the text; never raises on any input.
    """
    if lexed is None:
        lexed = lex(text)
    hits = _hits(lexed)
    if not hits:
        return []
    lines = LineMap(text)
    silenced = suppressions(lexed.comments, lines)
    findings: dict[tuple[int, str], Finding] = {}
    seen_once: set[tuple[str, str]] = set()
    for hit in sorted(hits, key=lambda h: h.offset):
        line, col = lines.position(hit.offset)
        if silenced_at(silenced, line, hit.rule) or (hit.offset, hit.rule) in findings:
            continue
        if hit.once:
            if (hit.rule, hit.once) in seen_once:
                continue
            seen_once.add((hit.rule, hit.once))
        findings[(hit.offset, hit.rule)] = _finding(path, line, col, hit, BY_ID[hit.rule])
    return sorted(findings.values(), key=Finding.sort_key)


def suppressions(comments: TokenList, lines: LineMap) -> dict[int, set[str]]:
    """Line -> rule ids silenced by ``buildport: ignore`` markers on that line (``*``: all)."""
    silenced: dict[int, set[str]] = {}
    for text, start in zip(comments.texts, comments.starts):
        for marker in _MARKER.finditer(text):
            line = lines.line(start + marker.start())
            rules = silenced.setdefault(line, set())
            if marker.group(1) is None:
                rules.add(ALL)
            else:
                rules.update(part.strip() for part in marker.group(1).split(",") if part.strip())
    return silenced


def silenced_at(silenced: dict[int, set[str]], line: int, rule: str) -> bool:
    """Whether a marker of ``silenced`` (:func:`suppressions`) silences ``rule`` on ``line``."""
    for marked in (line, line - 1):
        rules = silenced.get(marked)
        if rules and (ALL in rules or rule in rules):
            return True
    return False


def _hits(lexed: Lexed) -> list[Hit]:
    hits = match(Seq(lexed.code))
    defined: frozenset[str] | None = None
    for directive in lexed.directives:
        if directive.name in _INCLUDES:
            hits.extend(_include_hits(directive.tokens))
        elif directive.name not in _NOT_CODE and any(map(interesting, directive.tokens.texts)):
            if defined is None:
                defined = lexed.defined()
            hits.extend(match(Seq(directive.tokens, directive.name), defined))
    return hits


def _include_hits(tokens: TokenList) -> list[Hit]:
    if tokens.kinds[:1] != [HEADER]:
        return []
    header = tokens.texts[0]
    for pattern, rule, library in LIBRARY_HEADERS:
        if pattern.fullmatch(header):
            return [Hit(tokens.starts[0], rule, f"`#include {header}` uses {library}")]
    return []


def _finding(path: str, line: int, col: int, hit: Hit, rule: SourceRule) -> Finding:
    return Finding(
        path=path,
        line=line,
        col=col,
        rule=rule.id,
        severity=rule.severity,
        message=f"{hit.detail}. {rule.rationale}",
        suggestion=rule.suggestion,
        fixable=False,
    )
