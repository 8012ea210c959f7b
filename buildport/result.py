"""What porting one file gives, and what a run is told about each file: kept apart from the
engine so that a run answered from the cache never imports the parsers and passes."""

from __future__ import annotations

from buildport.findings import Finding
from buildport.textio import SourceText


#: Where a rewrite differs from the original: ``(start, end)`` in the original text
#: and ``(start, end)`` of what replaced it in the new text, in order, none
#: overlapping; the text between two regions is the same in both.
Region = tuple[int, int, int, int]


class UnstableRewrite(Exception):
    """A second run over buildport's own output would change it again, or the output is not valid in its
    language (a line a pass wrote): a bug of buildport's, reported against the file being ported."""


class Result:
    """The new text of one file and what was found in it.

    ``original`` and ``text`` may be given as the file's :class:`SourceText` (as
    :meth:`unchanged` does): the file is then read only when they are asked for,
    which a run the cache answers mostly never does.
    """

    __slots__ = ("path", "_original", "_text", "findings", "packages", "_changed", "rerun", "regions")

    def __init__(self, path: str, original: str | SourceText, text: str | SourceText,
                 findings: list[Finding] | None = None, packages: set[str] | None = None,
                 changed: bool | None = None, regions: list[Region] | None = None) -> None:
        """``changed``, when the caller knows it (a stored result), spares reading the file to compare.
        ``regions``, when the engine knows them, say where the texts differ (None: anywhere)."""
        self.path = path
        self._changed = changed
        self.regions = [] if regions is None and text is original else regions
        #: What porting ``text`` gives, when the stability check computed it (a run over the
        #: rewritten file would compute it again).
        self.rerun: Result | None = None
        self._original: str | SourceText = original
        self._text: str | SourceText = text
        self.findings: list[Finding] = findings if findings is not None else []
        self.packages: set[str] = packages if packages is not None else set()

    @classmethod
    def unchanged(cls, source: SourceText, findings: list[Finding] | None = None,
                  packages: set[str] | None = None) -> "Result":
        return cls(source.path, source, source, findings, packages)

    @property
    def original(self) -> str:
        value = self._original
        return value if isinstance(value, str) else value.text

    @property
    def text(self) -> str:
        value = self._text
        return value if isinstance(value, str) else value.text

    @property
    def changed(self) -> bool:
        if self._changed is None:
            self._changed = self._text is not self._original and self.text != self.original
        return self._changed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return (self.path, self.original, self.text, self.findings, self.packages) == (
            other.path, other.original, other.text, other.findings, other.packages)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Result(path={self.path!r}, original={self.original!r}, text={self.text!r}, "
                f"findings={self.findings!r}, packages={self.packages!r})")
