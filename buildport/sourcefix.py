"""What migrate changes in a source after hipify: the tests of CUDA header macros ROCm has a name for.

hipify renames ``#include <cuda_runtime.h>`` but leaves ``#ifdef __CUDA_RUNTIME_H__``,
which no HIP header defines: the code it guards (cuda-samples' ``findCudaDevice``)
is compiled out. Where ROCm's header has a macro of its own
(:data:`~buildport.rules.source_rules.CUDA_HEADER_MACROS`), the test is turned into
a test of that one; version macros (``CUDART_VERSION``), which have no
counterpart, are left to the ``cuda-header-macro`` finding. Only the names in
``#if``/``#ifdef``/``#ifndef``/``#elif`` lines change, and not in a file that
defines the macro itself.
"""

from __future__ import annotations

from buildport.rules.source_rules import CUDA_HEADER_MACROS
from buildport.sourcelex import IDENT, lex

_CONDITIONALS = frozenset(("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"))
_NAMED = tuple(name for name, instead in CUDA_HEADER_MACROS.items() if instead)


def port_header_tests(text: str) -> tuple[str, int]:
    """``text`` with each test of a CUDA header macro that ROCm names turned into a test of ROCm's
    macro, and how many were."""
    if not any(name in text for name in _NAMED):
        return text, 0
    lexed = lex(text)
    defined = {d.tokens.texts[0] for d in lexed.directives if d.name == "define" and d.tokens.texts}
    edits: list[tuple[int, str, str]] = []
    for directive in lexed.directives:
        if directive.name not in _CONDITIONALS:
            continue
        tokens = directive.tokens
        for kind, word, start in zip(tokens.kinds, tokens.texts, tokens.starts):
            instead = CUDA_HEADER_MACROS.get(word) if kind == IDENT else None
            if instead and word not in defined:
                edits.append((start, word, instead))
    if not edits:
        return text, 0
    pieces: list[str] = []
    at = 0
    for start, word, instead in edits:
        pieces += [text[at:start], instead]
        at = start + len(word)
    pieces.append(text[at:])
    return "".join(pieces), len(edits)
