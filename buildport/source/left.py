"""CUDA left in a source, as the audit reports it: the names the conversion engine converts (counted per
file, as ``hipexamine`` counts them) and, one by one, the names it has no HIP name for.

The names come from the installed hipify-perl's own tables (:mod:`buildport.source.hipify_tables`); without
one, from CUDA's name patterns (:data:`~buildport.rules.source_rules.CUDA_IDENTIFIER`,
:data:`~buildport.rules.source_rules.CUDA_HEADER`), and nothing is called unconvertible. Only code and
preprocessor lines count, never comments or strings; a name the file ``#define``s itself, and a quoted
include of the project's own header named like CUDA's (``"cuda.h"`` beside the file), are not CUDA's.
"""

from __future__ import annotations

import os
from collections import Counter

from buildport.findings import Finding
from buildport.source.hipify_tables import HipifyTables
from buildport.rules.source_rules import BY_ID, CUDA_HEADER, CUDA_IDENTIFIER
from buildport.source.lex import HEADER, IDENT, INCLUDE_NAMES, Lexed, TokenList
from buildport.source.scan import silenced_at, suppressions
from buildport.textio import LineMap

LEFT = "cuda-api-left"
UNSUPPORTED = "hipify-unsupported"
_SHOWN = 8  # names a finding lists before "and N more"


def cuda_left(text: str, path: str, lexed: Lexed, tables: HipifyTables | None) -> list[Finding]:
    """The findings of CUDA left in ``text`` (of the file ``path``): one ``cuda-api-left`` for the names the
    engine converts, at the first, and a ``hipify-unsupported`` at each name it cannot convert (a
    ``buildport: ignore`` marker silences them as any other)."""
    defined = lexed.defined()
    counts: Counter[str] = Counter()
    first: int | None = None
    unsupported: list[tuple[int, str]] = []
    streams: list[TokenList] = [lexed.code]
    for directive in lexed.directives:
        tokens = directive.tokens
        if directive.name not in INCLUDE_NAMES:
            # a #define's own name is the file's, not a use of CUDA's
            streams.append(_after_name(tokens) if directive.name == "define" else tokens)
        elif tokens.kinds[:1] == [HEADER] and _cuda_header(tokens.texts[0], path, tables):
            counts[tokens.texts[0]] += 1
            first = tokens.starts[0] if first is None else min(first, tokens.starts[0])
    for tokens in streams:
        for kind, word, start in zip(tokens.kinds, tokens.texts, tokens.starts):
            if kind != IDENT or word in defined:
                continue
            if tables.converts(word) if tables is not None else CUDA_IDENTIFIER.fullmatch(word) is not None:
                counts[word] += 1
                first = start if first is None else min(first, start)
            elif tables is not None and word in tables.unsupported:
                unsupported.append((start, word))
    if first is None and not unsupported:
        return []
    lines = LineMap(text)
    silenced = suppressions(lexed.comments, lines)
    findings: list[Finding] = []
    if first is not None:
        line, col = lines.position(first)
        if not silenced_at(silenced, line, LEFT):
            findings.append(_left(path, line, col, counts, tables))
    rule = BY_ID[UNSUPPORTED]
    for start, word in unsupported:
        line, col = lines.position(start)
        if not silenced_at(silenced, line, UNSUPPORTED):
            engine = "hipify-perl" if tables is not None else "the conversion engine"
            findings.append(Finding(path, line, col, UNSUPPORTED, rule.severity,
                                    f"`{word}`: {engine} has no HIP name for it in this ROCm; a conversion leaves "
                                    "it, and the file will not compile against HIP", rule.suggestion))
    return findings


def _after_name(tokens: TokenList) -> TokenList:
    return TokenList(tokens.kinds[1:], tokens.texts[1:], tokens.starts[1:])


def _cuda_header(header: str, path: str, tables: HipifyTables | None) -> bool:
    """Whether ``#include <header>`` (delimiters kept) names a CUDA header the engine converts, and not a
    header of the project's own beside the file."""
    name = header[1:-1].strip()
    known = name in tables.headers if tables is not None else CUDA_HEADER.fullmatch(name) is not None
    if not known:
        return False
    return not (header.startswith('"') and os.path.isfile(os.path.join(os.path.dirname(path), name)))


def _left(path: str, line: int, col: int, counts: Counter[str], tables: HipifyTables | None) -> Finding:
    rule = BY_ID[LEFT]
    total = sum(counts.values())
    shown = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.most_common(_SHOWN))
    more = f" and {len(counts) - _SHOWN} more" if len(counts) > _SHOWN else ""
    names = f"{len(counts)} CUDA name{'s' if len(counts) > 1 else ''}"
    uses = f"{total} use{'s' if total > 1 else ''}"
    by = " hipify-perl converts" if tables is not None else ""
    return Finding(path, line, col, LEFT, rule.severity, f"{uses} of {names}{by} left in this file: {shown}{more}",
                   rule.suggestion, fixable=True)
