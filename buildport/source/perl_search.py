"""hipify-perl's warning searches: Perl's ``m/NAME/g`` in scalar context, over one line or the whole file.

Such a search starts where the previous successful ``m//g`` on the same string ended (``pos``), and a
failed one sets the start back to 0; hipify-perl runs one after another for every name of its lists, so
whether a name is found depends on the names before it. :class:`Ordered` follows a list (walked in order);
:func:`walk_hash` a hash, which Perl walks in an order that changes from run to run: where that order
decides a warning, :class:`Unsure` says so (the file then goes to hipify-perl itself).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable


class Unsure(Exception):
    """The result depends on something the engine does not reproduce: hipify-perl must convert the file."""


class Ordered:
    """A list hipify-perl walks in order with ``m//g`` searches that start where the last success ended."""

    def __init__(self, names: tuple[bytes, ...]) -> None:
        self.names = names
        self.positions: dict[bytes, list[int]] = {}
        for i, name in enumerate(names):
            self.positions.setdefault(name, []).append(i)

    def walk(self, starts: set[int], search: Callable[[bytes, int], tuple[bool, int]],
             present: Iterable[bytes]) -> tuple[list[bytes], set[int]]:
        """The names warned about, and where the next search may start; ``search(name, pos)``: (warn, new pos).
        A name not ``present`` fails (the next search starts at 0). :class:`Unsure` when the start matters."""
        if not self.names:
            return [], starts
        hits = sorted(i for name in present for i in self.positions.get(name, ()))
        outcomes = set()
        for start in starts:
            pos, last, warned = start, -1, []
            for i in hits:
                if i > last + 1:
                    pos = 0
                said, pos = search(self.names[i], pos)
                if said:
                    warned.append(self.names[i])
                last = i
            outcomes.add((tuple(warned), pos if last == len(self.names) - 1 else 0))
        if len({w for w, _ in outcomes}) != 1:
            raise Unsure("a line where a warning depends on the order Perl walks a hash in")
        return list(next(iter(outcomes))[0]), {pos for _, pos in outcomes}


def walk_hash(names: dict[bytes, bytes], line: bytes, present: set[bytes],
               starts: set[int]) -> tuple[list[bytes], set[int]]:
    """A hash walked with ``m//g`` in Perl's hash order, which is not fixed: certain only when at most one
    of its names is in the line and every order gives the same warning."""
    if not names:
        return [], starts
    found = [f for f in names if f in present]
    if not found:
        return [], {0}
    if len(found) > 1:
        raise Unsure("a line with two names of one of hipify-perl's hashes (warned in Perl's random hash order)")
    f = found[0]
    # (first walked, last walked): the first starts where the search before ended; one after a failure at 0
    orders = [(True, True)] if len(names) == 1 else [(True, False), (False, True)] + [(False, False)] * (len(names) > 2)
    outcomes = set()
    for start in starts:
        for first, last in orders:
            at = line.find(f, start if first else 0)
            outcomes.add((at >= 0, at + len(f) if at >= 0 and last else 0))
    if len({said for said, _ in outcomes}) != 1:
        raise Unsure("a line where a warning depends on the order Perl walks a hash in")
    return ([f] if next(iter(outcomes))[0] else []), {pos for _, pos in outcomes}


def find(line: bytes, name: bytes, pos: int) -> tuple[bool, int]:
    at = line.find(name, pos)
    return (True, at + len(name)) if at >= 0 else (False, 0)


_CALLS: dict[bytes, tuple[re.Pattern[bytes], re.Pattern[bytes]]] = {}


def device_call(text: bytes, name: bytes, pos: int) -> tuple[bool, int]:
    """hipify-perl's two searches for a device function call: one after ``ns::`` (not warned), one alone."""
    patterns = _CALLS.get(name)
    if patterns is None:
        patterns = _CALLS[name] = (re.compile(rb"(\w+)::(" + name + rb")\s*\(\s*.*\s*\)"),
                                   re.compile(rb"\b(" + name + rb")\b\s*\(\s*.*\s*\)"))
    qualified = patterns[0].search(text, pos)
    pos = qualified.end() if qualified else 0
    alone = patterns[1].search(text, pos)
    return bool(alone and not qualified), alone.end() if alone else 0


__all__ = ["Ordered", "Unsure", "device_call", "find", "walk_hash"]
