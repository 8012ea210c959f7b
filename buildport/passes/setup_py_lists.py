"""A Python list literal with some string elements replaced, its layout kept (LibCST nodes).

What :mod:`buildport.passes.setup_py` writes into a ``setup.py``: each element a word becomes, in the
quotes of the string it replaces; commas, comments and line breaks where they were.
"""

from __future__ import annotations

import libcst as cst


def elements(old: list[cst.BaseElement], new: list[list[str] | None]) -> list[cst.BaseElement]:
    """The list's new elements: each kept element as it is, each replaced one as its new strings, in its
    quotes. A word that becomes several keeps its comma (and the comment after it) on the last of them.
    A word removed gives its comma to the element before it where that one's does not end its line (the
    line break after ``-Xcompiler -fPIC,`` stays); a removed last element is :func:`closed`'s."""
    out: list[cst.BaseElement] = []
    for element, words in zip(old, new):
        if words is None:
            out.append(element)
            continue
        assert isinstance(element, cst.Element) and isinstance(element.value, cst.SimpleString)
        if not words:
            if out and not _ends_line(out[-1].comma):
                out[-1] = out[-1].with_changes(comma=element.comma)
            continue
        for k, word in enumerate(words):
            comma = element.comma if k == len(words) - 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            out.append(element.with_changes(value=string(word, element.value), comma=comma))
    return out


def closed(node: cst.List, items: list[cst.BaseElement], tail_removed: bool) -> cst.List:
    """``node`` with its new elements, ``items``. Where its last element went (``tail_removed``) and the one that is
    last now ends its line (its comma, a comment, a line break), that comment stays, followed by the
    indentation the closing bracket had, and the list keeps or lacks its trailing comma as before."""
    if not (tail_removed and items and _ends_line(items[-1].comma)):
        return node.with_changes(elements=items)
    kept, removed = items[-1].comma, node.elements[-1].comma
    assert isinstance(kept, cst.Comma) and isinstance(kept.whitespace_after, cst.ParenthesizedWhitespace)
    if isinstance(removed, cst.Comma) and isinstance(removed.whitespace_after, cst.ParenthesizedWhitespace):
        closing = removed.whitespace_after
        after = kept.whitespace_after.with_changes(empty_lines=closing.empty_lines, indent=closing.indent,
                                                   last_line=closing.last_line)
        items[-1] = items[-1].with_changes(comma=kept.with_changes(whitespace_after=after))
        return node.with_changes(elements=items)
    moved = kept.whitespace_after
    bracket = node.rbracket.whitespace_before
    if isinstance(bracket, cst.ParenthesizedWhitespace):
        moved = moved.with_changes(indent=bracket.indent, last_line=bracket.last_line)
    comma = kept.with_changes(whitespace_after=cst.SimpleWhitespace("")) if isinstance(removed, cst.Comma) \
        else cst.MaybeSentinel.DEFAULT
    items[-1] = items[-1].with_changes(comma=comma)
    return node.with_changes(elements=items, rbracket=node.rbracket.with_changes(whitespace_before=moved))


def _ends_line(comma: cst.Comma | cst.MaybeSentinel) -> bool:
    return isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def string(word: str, like: cst.SimpleString) -> cst.SimpleString:
    """``word`` as a string literal in the prefix and quotes of ``like`` (escaped, without ``r``, where the
    word holds a backslash or that quote)."""
    quote, prefix = like.quote, like.prefix
    if "r" in prefix.lower() and ("\\" in word or quote[0] in word):
        prefix = prefix.replace("r", "").replace("R", "")
    if "r" not in prefix.lower():
        word = word.replace("\\", "\\\\").replace(quote[0], "\\" + quote[0])
    return cst.SimpleString(f"{prefix}{quote}{word}{quote}")
