"""What a run over many files gives: one outcome per input (a result, or the error that stopped it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from buildport.findings import Finding
from buildport.result import Result
from buildport.textio import SourceText


@dataclass(slots=True)
class FileOutcome:
    """What happened to one input."""

    path: str
    result: Result | None = None
    source: SourceText | None = None
    error: str = ""
    #: An unexpected exception behind ``error`` (a bug); the CLI re-raises it with --debug.
    exception: Exception | None = None
    #: For a result the cache gave: the port itself, run again before the result is written in place
    #: (a cache restored from elsewhere must not decide what is written).
    recompute: Callable[[], "FileOutcome"] | None = None


@dataclass(slots=True)
class Run:
    """The outcomes of one command over all its inputs."""

    outcomes: list[FileOutcome] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for o in self.outcomes:
            if o.result is not None:
                out.extend(o.result.findings)
        return sorted(out, key=Finding.sort_key)

    @property
    def errors(self) -> list[str]:
        return [o.error for o in self.outcomes if o.error]

    @property
    def changed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.result is not None and o.result.changed]


