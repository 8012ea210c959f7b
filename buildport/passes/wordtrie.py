"""One regex for a set of words, sharing their prefixes.

``re`` tries the alternatives of ``a|b|c`` one by one at every position; a trie
(``cu(?:blas|da|fft)``) fails after a character or two, which makes a search for
a hundred words several times faster. The pattern matches exactly what the
alternation of the words matches, longest word first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from buildport.textio import line_pieces


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


#: Characters :func:`lowercase` folds at once: a line longer than this is one piece.
_PIECE = 1 << 16


def lowercase(text: str) -> str:
    """``text.lower()``, made a piece at a time when ``text`` is long and not ASCII.

    For a text with a character past ASCII, ``str.lower`` first writes its result
    into a buffer of three 4-byte characters per character of the text (a character
    can become three), twelve times the size of a text of one byte a character:
    120 MB for a 10 MB Makefile with one ``©`` in a comment. Pieces of whole lines
    (:func:`lowercase_pieces`) need a buffer of a piece's size each, and give the
    same text.
    """
    if len(text) <= _PIECE or text.isascii():
        return text.lower()
    return "".join(piece for _, _, piece in lowercase_pieces(text))


def lowercase_pieces(text: str) -> Iterator[tuple[int, int, str]]:
    """``text`` lower-cased a piece of whole lines at a time: where each piece starts in ``text``, its
    length there and its lower case; one piece, the whole text, when it is short or ASCII.

    Each piece is lower-cased as it is within the whole text: the one rule of lower
    casing that reads a character's neighbours (a final ``Σ``) stops at a line
    break, which is neither a cased nor a case-ignorable character.
    """
    if len(text) <= _PIECE or text.isascii():
        yield 0, len(text), text.lower()
        return
    for start, end in line_pieces(text, _PIECE):
        yield start, end - start, text[start:end].lower()


class WordSearch:
    """A search of text for any of a set of words: one trie per first character, searched in turn.

    A trie of every word begins with a choice of characters, and ``re`` enters
    its matcher at each position that holds one of them; a trie whose words share
    their first character begins with that literal, which ``re`` skips to on its
    own. A few such searches, one after another, read text that holds none of the
    words about 2.5× faster than the one trie. What they find is what the one
    trie finds: no two tries can match at the same position (their words begin
    differently), so the leftmost match is the same, and the longest word there.
    """

    __slots__ = ("patterns",)

    def __init__(self, words: Iterable[str]) -> None:
        groups: dict[str, list[str]] = {}
        for word in sorted(set(words)):
            if "\n" in word:  # a piece of lines (see lowercase_pieces) holds every match whole
                raise ValueError(f"a word with a line break: {word!r}")
            if word:
                groups.setdefault(word[0], []).append(word)
        self.patterns = tuple(re.compile(trie_pattern(group)) for group in groups.values())

    def found_in(self, text: str) -> bool:
        """Whether any of the words occurs in ``text``."""
        return any(pattern.search(text) is not None for pattern in self.patterns)

    def found_in_any_case(self, text: str) -> bool:
        """Whether any of the words (lower case) occurs in ``text`` lower-cased, searched a piece at a
        time (:func:`lowercase_pieces`: no lower-cased copy of a whole large text is made)."""
        return any(self.found_in(piece) for _, _, piece in lowercase_pieces(text))

    def starts_in_any_case(self, text: str) -> list[int] | None:
        """Where the words (lower case) occur in ``text`` lower-cased, as offsets into ``text``, one
        piece at a time; None when a character's lower case is longer (the offsets would shift)."""
        starts: list[int] = []
        for at, size, piece in lowercase_pieces(text):
            if len(piece) != size:
                return None
            starts += [at + m.start() for m in self.finditer(piece)]
        return starts

    def cursor(self, text: str, pos: int = 0) -> "Cursor":
        """Searches of ``text`` from ``pos`` on, from positions that never move back: each trie reads it once."""
        return Cursor(self.patterns, text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """The matches one after another, as ``re.finditer`` of the one trie gives them."""
        cursor = self.cursor(text)
        m = cursor.search(0)
        while m is not None:
            yield m
            m = cursor.search(m.end())


class Cursor:
    """The leftmost match of any trie over one text, from positions in ascending order: each
    trie's next match is kept, and searched for again only once a position passes its start."""

    __slots__ = ("_patterns", "_text", "_next")

    def __init__(self, patterns: tuple[re.Pattern[str], ...], text: str, pos: int) -> None:
        self._patterns = patterns
        self._text = text
        self._next: list[re.Match[str] | None] = [pattern.search(text, pos) for pattern in patterns]

    def search(self, pos: int) -> re.Match[str] | None:
        """The leftmost match at or after ``pos`` (not less than any position asked before)."""
        best: re.Match[str] | None = None
        following = self._next
        for i, m in enumerate(following):
            if m is None:
                continue  # no match of this trie is left in the text
            if m.start() < pos:
                m = following[i] = self._patterns[i].search(self._text, pos)
                if m is None:
                    continue
            if best is None or m.start() < best.start():
                best = m
        return best
