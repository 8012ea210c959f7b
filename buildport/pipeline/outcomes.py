"""What a run over many files gives: one outcome per input (a result, or the error that stopped it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

from buildport.findings import Finding
from buildport.result import Result
from buildport.textio import SourceText


#: What the work made of a file: a port's :class:`~buildport.result.Result`, an audit's findings.
T = TypeVar("T")


@dataclass(slots=True)
class FileOutcome(Generic[T]):
    """What happened to one input, whatever the work (a port, an audit): one of

    - done: ``result``, what the work made of it;
    - nothing to say of it: no ``result`` and no ``error`` (the audit of a C/C++ file without CUDA);
    - failed: ``error``, the one line that says why (the file could not be read or parsed, or, with
      ``exception``, an engine's bug).
    """

    path: str
    result: T | None = None
    source: SourceText | None = None
    error: str = ""
    #: An unexpected exception behind ``error`` (a bug): never kept in the cache; the CLI re-raises it with --debug.
    exception: Exception | None = None
    #: For a result the cache gave: the work itself, run again before the result is written in place
    #: (a cache restored from elsewhere must not decide what is written).
    recompute: Callable[[], FileOutcome[T]] | None = None


@dataclass(slots=True)
class Run:
    """The outcomes of one command over all its inputs."""

    outcomes: list[FileOutcome[Result]] = field(default_factory=list)

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
    def changed(self) -> list[FileOutcome[Result]]:
        return [o for o in self.outcomes if o.result is not None and o.result.changed]


