"""What porting one file gives, and what a run is told about each file: kept apart from the
engine so that a run answered from the cache never imports the parsers and passes."""

from __future__ import annotations

from dataclasses import dataclass, field

from buildport.findings import Finding


class UnstableRewrite(Exception):
    """A second run over buildport's own output would change it again: a bug."""


@dataclass(slots=True)
class Result:
    """The new text of one file and what was found in it."""

    path: str
    original: str
    text: str
    findings: list[Finding] = field(default_factory=list)
    packages: set[str] = field(default_factory=set)

    @property
    def changed(self) -> bool:
        return self.text != self.original
