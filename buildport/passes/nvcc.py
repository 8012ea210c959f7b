"""Translate a sequence of nvcc command-line words into hipcc/clang words.

Shared by the CMake and make rewrites; the mapping itself is the table in
:mod:`buildport.rules.flags`. The input is a list of words as they stand in the
build file (a word may be a make reference such as ``$(ARCH)``); the result says,
for each word, whether it stays, is replaced, or goes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from buildport.rules.flags import BY_NAME, UNAMBIGUOUS, Flag

#: ``sm_80``, ``compute_90a``, ``80``: what an architecture value names.
_ARCH_NUMBER = re.compile(r"(?:sm|compute|lto)_(\d+[a-z]?)|^(\d{2,3}[a-z]?)$")


@dataclass(slots=True)
class Translation:
    """Per input word: ``None`` (unchanged) or its replacement words (``[]`` drops it)."""

    words: list[list[str] | None]
    notes: list[tuple[int, str, str]] = field(default_factory=list)  # (word index, rule, message)
    architectures: list[str] = field(default_factory=list)  # the NVIDIA ones seen

    @property
    def changed(self) -> bool:
        return any(w is not None for w in self.words)


def split_flag(word: str) -> tuple[Flag | None, str | None]:
    """The table row a word starts and its ``=value`` if attached."""
    flag = BY_NAME.get(word)
    if flag is not None:
        return flag, None
    name, eq, value = word.partition("=")
    if eq:
        flag = BY_NAME.get(name)
        if flag is not None and flag.action in ("value", "arch", "xcompiler", "xlinker"):
            return flag, value
    return None, None


def is_nvcc_only(word: str) -> bool:
    """True for a spelling no other compiler uses (``--use_fast_math``, ``-Xcompiler``...)."""
    name = word.partition("=")[0]
    return name in UNAMBIGUOUS


def arch_numbers(value: str) -> list[str]:
    """``arch=compute_80,code=[sm_80,compute_80]`` → ``['80']`` (deduplicated, in order)."""
    seen: list[str] = []
    for part in re.split(r"[,=\[\];\s]+", value):
        m = _ARCH_NUMBER.search(part)
        if m:
            number = m.group(1) or m.group(2)
            if number not in seen:
                seen.append(number)
    return seen


def translate(
    words: list[str], arch_words: list[str], arch_for: Callable[[str], list[str] | None] | None = None,
    clang: bool = False,
) -> Translation:
    """Map nvcc words to HIP words.

    ``arch_words`` replace the first architecture flag; later ones are dropped,
    so a list of ``-gencode`` pairs becomes one target list. ``arch_for(value)``
    may choose other words for the first flag from its value (a make variable
    that names the architectures stays the user's knob). ``clang``: the words go
    to clang itself, not to hipcc (see ``Flag.clang_to``).
    """
    out: list[list[str] | None] = [None] * len(words)
    result = Translation(out)
    arch_done = False
    i = 0
    while i < len(words):
        flag, value = split_flag(words[i])
        if flag is None:
            i += 1
            continue
        span = 1
        if flag.known_values_only:
            candidate = value if value is not None else (words[i + 1] if i + 1 < len(words) else "")
            if candidate not in flag.values:
                i += 1
                continue
        if flag.action in ("value", "arch", "xcompiler", "xlinker") and value is None:
            if i + 1 >= len(words):
                result.notes.append((i, "nvcc-flag", f"`{words[i]}` expects a value and has none"))
                i += 1
                continue
            value = words[i + 1]
            span = 2
        replacement = _apply(flag, value, words[i], result, i, clang)
        if flag.void_with and any(word in flag.void_with or split_flag(word)[0] in _named(flag.void_with)
                                  for word in words):
            replacement = []  # -G -lineinfo: -g -O0 alone; -g -lineinfo: -g alone
        if flag.action == "arch":
            result.architectures.extend(n for n in arch_numbers(value or "") if n not in result.architectures)
            chosen = arch_for(value or "") if arch_for is not None else None
            replacement = [] if arch_done else (chosen if chosen is not None else list(arch_words))
            arch_done = True
        if replacement is not None and replacement != words[i : i + span]:
            out[i] = replacement
            for j in range(i + 1, i + span):
                out[j] = []
        i += span
    return result


def _named(names: tuple[str, ...]) -> list[Flag]:
    """The rows of ``names`` (a project's rows among them)."""
    return [BY_NAME[name] for name in names if name in BY_NAME]


#: The head of a make expression that joins words with commas for nvcc: ``$(subst $(space),$(comma),X)``.
_COMMA_JOINED = re.compile(r"^\$([({])subst\s+\$[({](?i:space)[)}],\s*\$[({](?i:comma)[)}],")


def _comma_joined(word: str) -> str | None:
    """X, where ``word`` is exactly ``$(subst $(space),$(comma),X)``."""
    m = _COMMA_JOINED.match(word)
    if m is None:
        return None
    depth = 0
    for i, char in enumerate(word):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
            if depth == 0:
                return word[m.end() : i] if i == len(word) - 1 else None
    return None


def _host_words(value: str) -> list[str]:
    """``-Xcompiler``'s comma- or blank-separated options; a comma or blank inside a variable reference or a
    make function (``$(filter-out -std=%,$(CXXFLAGS))``) separates nothing."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for i, char in enumerate(value):
        if char in "({" and i > 0 and (value[i - 1] == "$" or depth):
            depth += 1
        elif char in ")}" and depth:
            depth -= 1
        elif depth == 0 and (char == "," or char.isspace()):
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part for part in parts if part]


def _apply(flag: Flag, value: str | None, word: str, result: Translation, index: int,
           clang: bool = False) -> list[str] | None:
    if flag.action == "map":
        return list(flag.clang_to if clang and flag.clang_to is not None else flag.to)
    if flag.action == "value":
        assert value is not None
        if value in flag.values:
            return list(flag.values[value])
        if "*" in flag.values:
            return [w.replace("{value}", value) for w in flag.values["*"]]
        result.notes.append((index, "nvcc-flag", f"`{word} {value}`: value not known to buildport; left as is"))
        return None
    if flag.action == "xcompiler":
        assert value is not None
        if "\\" in value:
            return [value]  # escaped quotes around the host options: keep them whole
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        # $(subst $(space),$(comma),X): the words of X, which clang takes as they are
        host = [_comma_joined(part) or part for part in _host_words(value)]
        if any(is_nvcc_only(part) for part in host) or translate(host, [], clang=clang).changed:
            # an nvcc option given to the host compiler (-Xcompiler -G) is the build's own error; made a flag of
            # clang's, a second run would read it as nvcc's and translate it again
            message = f"`{word} {value}`: an nvcc option given to the host compiler; left as is"
            result.notes.append((index, "nvcc-flag", message))
            return None
        return host
    if flag.action == "xlinker":
        assert value is not None
        return [f"-Wl,{value}"]
    if flag.action == "report":
        result.notes.append((index, "nvcc-phase", f"`{word}`: {flag.note}"))
        return None
    return None  # arch: decided by the caller
