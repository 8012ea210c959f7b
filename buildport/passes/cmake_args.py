"""Inside CMake arguments: words, ``${}`` references and generator expressions.

The grammar keeps a whole argument as one token; what is inside is parsed here,
lazily, only for the arguments a pass looks at.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterator

from buildport.passes.nvcc import Translation, translate

_REF = re.compile(r"\$(?P<kind>ENV|CACHE)?\{(?P<name>[A-Za-z0-9_./+-]+)\}")


def inner(text: str) -> tuple[str, str, str]:
    """Split an argument's text into (opening quote, content, closing quote)."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return '"', text[1:-1], '"'
    return "", text, ""


def value_of(text: str) -> str:
    """The argument's value with quotes removed and no escapes or references evaluated."""
    return inner(text)[1]


def rename_refs(text: str, rename: Callable[[str, str], str | None]) -> str:
    """Rewrite ``${NAME}``/``$ENV{NAME}``/``$CACHE{NAME}``; ``rename(kind, name)`` returns
    the whole new reference text or ``None`` to keep it."""

    def sub(m: re.Match[str]) -> str:
        new = rename(m.group("kind") or "", m.group("name"))
        return m.group(0) if new is None else new

    return _REF.sub(sub, text)


def refs(text: str) -> Iterator[tuple[str, str, int]]:
    """(kind, name, offset) of each innermost literal reference."""
    for m in _REF.finditer(text):
        yield m.group("kind") or "", m.group("name"), m.start()


def word_spans(content: str, separators: str) -> list[tuple[int, int]]:
    """Spans of the words of ``content``, split at any of ``separators`` outside ``$<...>``
    and outside ``${...}``; a backslash escapes the next character."""
    if "\\" not in content and "$" not in content:  # nothing nests or escapes: plain runs of non-separators
        return [m.span() for m in _plain_words(separators).finditer(content)]
    return scanned_word_spans(content, separators)


def scanned_word_spans(content: str, separators: str) -> list[tuple[int, int]]:
    """:func:`word_spans` read character by character, whatever the content (the general path)."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = -1
    i = 0
    n = len(content)
    while i < n:
        ch = content[i]
        if ch == "\\":
            if start < 0:
                start = i
            i += 2
            continue
        if ch == "$" and i + 1 < n and content[i + 1] in "<{":
            depth += 1
            if start < 0:
                start = i
            i += 2
            continue
        if depth and ch in ">}":
            depth -= 1
        elif depth == 0 and ch in separators:
            if start >= 0:
                spans.append((start, i))
                start = -1
            i += 1
            continue
        if start < 0:
            start = i
        i += 1
    if start >= 0:
        spans.append((start, n))
    return spans


@lru_cache(maxsize=16)
def _plain_words(separators: str) -> re.Pattern[str]:
    return re.compile(f"[^{re.escape(separators)}]+")


def split_genex(word: str) -> tuple[str, str, str] | None:
    """``$<cond:body>`` → (``$<cond:``, body, ``>``); ``SHELL:a b`` → (``SHELL:``, ``a b``, "")."""
    if word.startswith("SHELL:"):
        return "SHELL:", word[6:], ""
    if not (word.startswith("$<") and word.endswith(">")):
        return None
    depth = 0
    for i in range(2, len(word) - 1):
        if word.startswith("$<", i):
            depth += 1
        elif word[i] == ">" and depth:
            depth -= 1
        elif word[i] == ":" and depth == 0:
            return word[: i + 1], word[i + 1 : -1], ">"
    return None


#: Generator expressions nested deeper than this are left as they are (no real file comes close).
MAX_GENEX_DEPTH = 32


def translate_flag_words(
    words: list[str], arch_words: list[str], depth: int = 0
) -> tuple[list[str | None], Translation]:
    """nvcc → HIP over a list of words that may hold generator expressions.

    Returns the new text of each word (``None``: unchanged, ``""``: removed) and the
    outer translation (for notes and the architectures seen).
    """
    plain: list[str] = []
    nested: dict[int, str | None] = {}
    for i, word in enumerate(words):
        parts = split_genex(word) if depth < MAX_GENEX_DEPTH else None
        if parts is None:
            plain.append(word)
            continue
        plain.append("")  # opaque to the outer translation
        head, body, tail = parts
        separator = " " if head == "SHELL:" else ";"
        nested[i] = _translate_body(head, body, tail, separator, arch_words, depth + 1)
    outer = translate(plain, arch_words, clang=True)  # CMake's HIP compiler is clang itself
    result: list[str | None] = []
    for i, word in enumerate(words):
        if i in nested:
            result.append(nested[i])
        elif outer.words[i] is None:
            result.append(None)
        else:
            result.append(" ".join(outer.words[i] or []))
    return result, outer


def _translate_body(
    head: str, body: str, tail: str, separator: str, arch_words: list[str], depth: int
) -> str | None:
    spans = word_spans(body, " \t;" if separator == " " else ";")
    inner_words = [body[a:b] for a, b in spans]
    new_words, _ = translate_flag_words(inner_words, arch_words, depth)
    if all(w is None for w in new_words):
        return None
    kept: list[str] = []
    for old, new in zip(inner_words, new_words):
        text = old if new is None else new
        if text:
            kept.append(text.replace(" ", separator) if separator == ";" else text)
    if not kept:
        return ""
    return head + separator.join(kept) + tail
