"""The rule set a run ports with: the built-in tables and the rows a project's configuration adds.

A :class:`RuleSet` is a value: the rows a project adds (``[libraries]``, ``[flags]`` of its
``buildport.toml``), frozen. :func:`use` makes one the set the passes read, once, before a run
starts (every command does it the same way); workers get it from the process that starts them
(:func:`use` again where they do not inherit it). Its :meth:`~RuleSet.key` is part of every cache
key, so a result ported under other rows is never taken for this run's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from buildport.rules import flags as flag_rules
from buildport.rules import libraries as library_rules


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rows in front of the built-in tables (none: the built-in rule set)."""

    libraries: tuple[library_rules.Library, ...] = ()
    #: nvcc spelling → what replaces it (``()`` drops the flag).
    flags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Where the rows come from (a note in the findings they cause).
    origin: str = ""

    def key(self) -> list[object]:
        """The rows as canonical JSON data (the origin is not part of it: the same rows port alike)."""
        return [[_library_key(lib) for lib in self.libraries], [[name, list(to)] for name, to in self.flags]]


BUILT_IN = RuleSet()

_BUILT_IN_FLAGS = dict(flag_rules.BY_NAME)
_BUILT_IN_LIBRARIES = tuple(
    (table, dict(table)) for table in (library_rules.BY_TARGET, library_rules.BY_LINK_NAME,
                                       library_rules.BY_LEGACY_VAR, library_rules.BY_ROCM_TARGET)
)
_active = BUILT_IN


def active() -> RuleSet:
    """The rule set the passes read now."""
    return _active


def use(rules: RuleSet) -> None:
    """Make ``rules`` the set the passes read: the built-in tables, then its rows in front of them.
    The tables are refilled in place (modules hold them by name); using a set again changes nothing."""
    global _active
    if rules == _active:
        return
    for table, built_in in _BUILT_IN_LIBRARIES:
        table.clear()
        table.update(built_in)
    library_rules.extend(list(rules.libraries))
    flag_rules.BY_NAME.clear()
    flag_rules.BY_NAME.update(_BUILT_IN_FLAGS)
    for spelling, to in rules.flags:
        flag_rules.BY_NAME[spelling] = flag_rules.Flag((spelling,), "map", to, note=f"from {rules.origin}")
    from buildport import prescan

    prescan.tables_changed()
    _active = rules


def _library_key(lib: library_rules.Library) -> dict[str, object]:
    """Every field of the row (its note too, which findings quote), tuples as lists."""
    return {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(lib).items()}
