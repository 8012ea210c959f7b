"""One regex for a set of words, sharing their prefixes.

``re`` tries the alternatives of ``a|b|c`` one by one at every position; a trie
(``cu(?:blas|da|fft)``) fails after a character or two, which makes a search for
a hundred words several times faster. The pattern matches exactly what the
alternation of the words matches, longest word first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def trie_pattern(words: Iterable[str]) -> str:
    """A regex source matching any of ``words`` (non-empty), preferring the longest."""
    return _node(sorted(set(words)))


def _node(words: list[str]) -> str:
    ends_here = "" in words
    heads: dict[str, list[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(head) + _node(rests) for head, rests in sorted(heads.items())]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends_here:  # a word ends here and longer ones go on: the rest is optional (greedy)
        return f"(?:{body})?"
    return body


def bounded_trie(words: Iterable[str], not_after: str) -> str:
    """:func:`trie_pattern` for words that must not follow a character of the class ``not_after``
    (``[\\w]``: a whole word at its start), written to begin with the words' own characters.

    ``(?<![\\w])(?:cuda|nvcc)`` makes ``re`` test the look-behind at every position
    of the text; ``cuda(?<![\\w]cuda)|nvcc(?<![\\w]nvcc)`` lets it skip to the
    positions where a word can begin (to the shared prefix itself when all words
    have one) and look behind only there. Both match the same spans.
    """
    groups: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        if word:
            groups.setdefault(word[0], []).append(word)
    branches = []
    for group in groups.values():
        shared = group[0]
        for word in group[1:]:
            while not word.startswith(shared):
                shared = shared[:-1]
        lead = re.escape(shared)
        branches.append(f"{lead}(?<!{not_after}{lead}){_node([w[len(shared):] for w in group])}")
    return branches[0] if len(branches) == 1 else "|".join(branches)
