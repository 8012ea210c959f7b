"""The one error type every parser raises for input it cannot read."""

from __future__ import annotations


class ParseError(Exception):
    """Input that is not valid in the language being parsed.

    Carries a 1-based ``line`` and ``col`` and, when known, the offending source
    line, so that the command line can print ``path:line:col: error: message``
    followed by the line and a caret.
    """

    def __init__(self, message: str, line: int, col: int, source_line: str = "", path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.source_line = source_line
        self.path = path

    @classmethod
    def at(cls, text: str, offset: int, message: str, path: str = "") -> "ParseError":
        """The error ``message`` at ``offset`` of ``text``, with its line and column (:func:`position_of`)."""
        line, col, source_line = position_of(text, offset)
        return cls(message, line, col, source_line, path)

    def with_path(self, path: str) -> "ParseError":
        return ParseError(self.message, self.line, self.col, self.source_line, path)

    def format(self) -> str:
        where = f"{self.path or '<input>'}:{self.line}:{self.col}"
        text = f"{where}: error: {self.message}"
        if self.source_line:
            shown = self.source_line.rstrip("\r\n").expandtabs(1)
            text += f"\n    {shown}\n    {' ' * (self.col - 1)}^"
        return text

    def __str__(self) -> str:
        return self.format()


def position_of(text: str, offset: int) -> tuple[int, int, str]:
    """1-based (line, col) of ``offset`` in ``text`` and that line's text.

    Any of ``\\r\\n``, ``\\n`` and a lone ``\\r`` ends a line.
    """
    line = 1
    start = 0
    i = 0
    while i < offset:
        ch = text[i]
        if ch == "\n" or (ch == "\r" and (i + 1 >= len(text) or text[i + 1] != "\n")):
            line += 1
            start = i + 1
        i += 1
    end = start
    while end < len(text) and text[end] not in "\r\n":
        end += 1
    return line, offset - start + 1, text[start:end]
