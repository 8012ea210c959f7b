"""The built-in conversion engine: what hipify-perl writes for a file, byte for byte, in a few passes.

hipify-perl (run as ``migrate`` runs it: ``-print-stats FILE``) reads the whole file and then, in order:

1. counts ``__global__`` and ``__shared__`` (each at most once);
2. warns, line by line, about the names it cannot convert: for each line it walks the hashes of
   experimental, removed and deprecated names, then the lists of unsupported names and of unsupported
   device functions, with Perl's ``m/NAME/g``, whose search starts where the line's previous successful
   search ended (and from the start after a failed one);
3. applies its ~3,500 ``subst`` rows one after another (``s/\\bCUDA\\b/HIP/g``; header rows also refuse
   some characters before them);
4. renames ``cub::`` and ``using namespace cub``;
5. warns about each line still holding a ``cudaXxx`` word (after blanking the words of its whitelist);
6. when the file has device code, counts the supported device functions it calls (statistics only);
7. wraps symbol arguments in ``HIP_SYMBOL(...)`` (``hipMemcpyToSymbol`` and friends);
8. writes ``#include "hip/hip_runtime.h"`` on top when the file has device code, then the text, and
   prints its statistics when it converted or warned about anything.

Here a run of word rows (all but the headers) is one pass over the file's words with a dictionary, each
word resolved once through the rows it goes through in order; a header row runs only where its literal
text occurs; a warning search runs only on the lines where one of the names occurs. Where Perl's own
order decides the result (two names of one hash on a line: Perl walks a hash in an order that changes
from run to run), :meth:`Converter.convert` gives ``None`` and the caller runs hipify-perl itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from buildport.passes.wordtrie import trie_pattern
from buildport.source.hipify_script import HipifyScript, Row, read_script, script_text, script_version
from buildport.source.perl_search import Ordered, Unsure, device_call, find, walk_hash

_WORD = re.compile(rb"\w+")
_LEFT = re.compile(rb"\bcuda[A-Z]\w+")  # step 5: a CUDA runtime name left in a line
#: hipify-perl's ``$i`` of its ``subst``: the characters a header may not follow. The Perl string holds
#: ``\\$%``, in which ``$%`` is a variable (0): the class refuses NUL, and allows ``$`` and ``%``.
_NOT_BEFORE_HEADER = rb"(?<![!~`@#\x00^&*\-+=\[\](){}.,?'>])"
_LOOKBEHIND_KINDS = frozenset(("include", "include_cuda_main_header"))
_CUB = ((re.compile(rb"using\s*namespace\s*cub"), b"using namespace hipcub"), (re.compile(rb"\bcub::\b"), b"hipcub::"))
#: the statistics that say the file has device code (the rest are API calls)
_KERNEL_STATS = ("kernel_launch", "device_function")


@dataclass(frozen=True)
class Converted:
    """What hipify-perl writes for one file: ``output`` to stdout, ``messages`` (warnings, statistics) to stderr."""

    output: bytes
    messages: bytes


class Converter:
    """One hipify-perl's conversion, compiled from its data (:func:`~buildport.source.hipify_script.read_script`)."""

    def __init__(self, script: HipifyScript) -> None:
        self.script = script
        self._steps = _steps(script.rows)
        self._keys = frozenset().union(*(s.keys for s in self._steps if isinstance(s, _Words)))
        self._chunks = tuple(s.chunk for s in self._steps if isinstance(s, _Header))
        hashes = (script.experimental, script.removed, script.deprecated)
        lists = (script.unsupported, script.hip_only_unsupported)
        named = {n for h in hashes for n in h} | {n for names in lists for n in names}
        self._named = named
        self._named_search = _trie(named | set(script.unsupported_device))
        self._named_at = re.compile(b"(?=(" + _trie_source(named) + b"))")
        self._lists = tuple(Ordered(names) for names in lists)
        self._unsupported_device = Ordered(script.unsupported_device)
        self._supported_device = Ordered(script.supported_device)
        self._supported_search = re.compile(rb"\b(?:" + _trie_source(set(script.supported_device)) + rb")\b")
        self._whitelist = tuple((w, re.compile(rb"\b" + w + rb"\b")) for w in script.whitelist)
        self._symbols = [(re.compile(_perl_pattern(pattern, func)), _perl_replacement(replacement, func))
                         for pattern, replacement, funcs in script.host_functions for func in funcs]
        self._symbol_search = _trie({func for _, _, funcs in script.host_functions for func in funcs})
        self._said = {function: _PerlString(text) for function, text in script.warnings.items()}

    def untouched(self, data: bytes) -> bool:
        """Whether hipify-perl leaves ``data`` as it is and says nothing about it: no name or header of its
        tables, no device code, nothing it warns about or rewrites. Such a file needs no engine."""
        if b"__global__" in data or b"__shared__" in data or b"cub" in data:
            return False
        if self._named_search.search(data) or _LEFT.search(data) or self._symbol_search.search(data):
            return False
        if any(chunk in data for chunk in self._chunks):
            return False
        return self._keys.isdisjoint(_WORD.findall(data))

    def convert(self, data: bytes, name: str) -> Converted | None:
        """hipify-perl's stdout and stderr for a file of this content at ``name``; None where the result is
        not certain here (then run hipify-perl)."""
        done = self.attempt(data, name)
        return done if isinstance(done, Converted) else None

    def attempt(self, data: bytes, name: str) -> Converted | str:
        """:meth:`convert`, or why hipify-perl must convert this file itself."""
        if "%" in name:
            return "a '%' in the file's name (hipify-perl prints it as part of a printf format)"
        try:
            encoded = name.encode("utf-8")
        except UnicodeEncodeError:
            return "a file name that is not UTF-8"
        if not data or self.untouched(data):
            return Converted(data, b"")
        try:
            return self._convert(data, encoded)
        except Unsure as exc:
            return str(exc)

    def _convert(self, data: bytes, name: bytes) -> Converted:
        device = (b"__global__" in data) + (b"__shared__" in data)
        messages = self._named_warnings(data, name)
        stats = _Stats()
        text = data
        tokens: set[bytes] | None = None
        for step in self._steps:
            if isinstance(step, _Words):
                tokens = set(_WORD.findall(text)) if tokens is None else tokens
                text = step.apply(text, tokens, stats)
            elif step.chunk in text:
                text, changed = step.apply(text, stats)
                tokens = None if changed else tokens
        for pattern, new in _CUB:
            if b"cub" in text:
                text = pattern.sub(_literal(new), text)
        device += stats.kinds.get("device_function", 0)
        messages += self._left_warnings(text, name)
        if device > 0:
            stats.add("device_function", self._device_calls(text))
        if self._symbol_search.search(text):
            for pattern, replace in self._symbols:
                text = pattern.sub(replace, text)
        # hipify-perl adds the include when (API calls + kernel stuff) and kernel stuff are both non-zero:
        # the first is never zero when the second is not
        kernel = device + sum(stats.kinds.get(k, 0) for k in _KERNEL_STATS)
        output = text
        if kernel:
            output = b'#include "hip/hip_runtime.h"' + (b"\r\n" if re.search(rb"\r\n$", text) else b"\n") + text
        total = sum(stats.kinds.values())
        if total + len(messages):
            messages.append(stats.render(name, total, text.count(b"\n"), len(messages)))
        return Converted(output, b"".join(messages))

    def _named_warnings(self, data: bytes, name: bytes) -> list[bytes]:
        """Step 2: the warnings of each line holding a name of the warning lists."""
        found: list[bytes] = []
        for number, line in _lines_with(self._named_search, data):
            where = {b"fileName": name, b"line_num": str(number).encode(), b"_": line}
            found += [self._said[function].render({**where, **values}) + b"\n"
                      for function, values in self._line_warnings(line)]
        return found

    def _line_warnings(self, line: bytes) -> list[tuple[str, dict[bytes, bytes]]]:
        """What hipify-perl's warning functions say about one line (the function, the values its warning
        names), following where each search starts."""
        present: set[bytes] = set()
        for m in self._named_at.finditer(line):
            longest = m.group(1)
            present.update(longest[:k] for k in range(1, len(longest) + 1) if longest[:k] in self._named)
        said: list[tuple[str, dict[bytes, bytes]]] = []
        at = {0}
        script = self.script
        for function, names in (("warnExperimentalFunctions", script.experimental),
                                ("warnRemovedFunctions", script.removed),
                                ("warnDeprecatedFunctions", script.deprecated)):
            warned, at = walk_hash(names, line, present, at)
            for f in warned:
                cuda = b"CUDNN" if f.lower().startswith(b"cudnn") else b"CUDA"
                said.append((function, {b"func": f, b"val": names[f], b"cuda": cuda}))
        for function, ordered in zip(("warnUnsupportedFunctions", "warnHipOnlyUnsupportedFunctions"), self._lists):
            warned, at = ordered.walk(at, lambda f, pos: find(line, f, pos), present)
            said += [(function, {b"func": f}) for f in warned]
        device = set(_WORD.findall(line)) & self._unsupported_device.positions.keys()
        warned, at = self._unsupported_device.walk(at, lambda f, pos: device_call(line, f, pos), device)
        said += [("warnUnsupportedDeviceFunctions", {b"func": f}) for f in warned]
        return said

    def _left_warnings(self, text: bytes, name: bytes) -> list[bytes]:
        """Step 5: each line with a ``cudaXxx`` word left once the whitelist's words are blanked."""
        found: list[bytes] = []
        for number, line in _lines_with(_LEFT, text):
            for word, pattern in self._whitelist:
                if word in line:
                    line = pattern.sub(b"ZAP", line)
            if _LEFT.search(line):
                found.append(b"  warning: " + name + b":#" + str(number).encode() + b" : " + line + b"\n")
        return found

    def _device_calls(self, text: bytes) -> int:
        """Step 6: how many supported device functions hipify-perl counts in the file."""
        present = {m.group() for m in self._supported_search.finditer(text)}
        warned, _at = self._supported_device.walk({0}, lambda f, pos: device_call(text, f, pos), present)
        return len(warned)


class _Stats:
    """hipify-perl's counts: by kind of row, by CUDA name, by HIP name."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.to_hip: dict[bytes, bytes] = {}
        self.by_hip: dict[bytes, int] = {}

    def add(self, kind: str, count: int) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + count

    def row(self, row: Row, count: int) -> None:
        self.add(row.kind, count)
        self.by_hip[row.hip] = self.by_hip.get(row.hip, 0) + count
        self.to_hip[row.cuda] = row.hip

    def render(self, name: bytes, total: int, lines: int, warnings: int) -> bytes:
        head = (b"\n[HIPIFY] info: file '%s' statistics:\n  CONVERTED refs count: %d\n  TOTAL lines of code: %d\n"
                b"  WARNINGS: %d\n[HIPIFY] info: CONVERTED refs by names:\n") % (name, total, lines, warnings)
        return head + b"".join(b"  %s => %s: %d\n" % (cuda, self.to_hip[cuda], self.by_hip[self.to_hip[cuda]])
                               for cuda in sorted(self.to_hip))


class _Words:
    """A run of word rows (``s/\\bWORD\\b/HIP/g`` each): one pass over the file's words. A word goes through
    the rows in order (a HIP name another row of the run renames again goes on to that row)."""

    def __init__(self, rows: list[tuple[int, Row]]) -> None:
        self.rows = rows
        self.by_word: dict[bytes, list[int]] = {}
        for i, (_index, row) in enumerate(rows):
            self.by_word.setdefault(row.cuda, []).append(i)
        self.keys = frozenset(self.by_word)
        self._resolved: dict[bytes, tuple[bytes, tuple[tuple[int, int], ...]]] = {}

    def resolve(self, word: bytes) -> tuple[bytes, tuple[tuple[int, int], ...]]:
        """What the run makes of one occurrence of ``word``, and (row, count) of each row it goes through."""
        done = self._resolved.get(word)
        if done is None:
            text, last, fired = word, -1, []
            while True:
                later = [i for w in set(_WORD.findall(text)) for i in self.by_word.get(w, ()) if i > last]
                if not later:
                    break
                last = min(later)
                row = self.rows[last][1]
                text, count = re.subn(rb"\b" + row.cuda + rb"\b", _literal(row.hip), text)
                fired.append((last, count))
            done = self._resolved[word] = (text, tuple(fired))
        return done

    def apply(self, text: bytes, tokens: set[bytes], stats: _Stats) -> bytes:
        hits = self.keys.intersection(tokens)
        if not hits:
            return text
        seen: dict[bytes, int] = {}

        def replace(m: re.Match[bytes]) -> bytes:
            word = m.group()
            if word in hits:
                seen[word] = seen.get(word, 0) + 1
                return self.resolve(word)[0]
            return word

        text = _WORD.sub(replace, text)
        counts: dict[int, int] = {}
        for word, n in seen.items():
            for i, count in self.resolve(word)[1]:
                counts[i] = counts.get(i, 0) + n * count
                tokens.update(_WORD.findall(self.rows[i][1].hip))
        for i in sorted(counts):
            stats.row(self.rows[i][1], counts[i])
        return text


class _Header:
    """A header row: a Perl regex (``cuda.h``: the dot is any character) run where its longest literal occurs."""

    def __init__(self, row: Row) -> None:
        self.row = row
        self.chunk = max(row.cuda.split(b"."), key=len)
        before = _NOT_BEFORE_HEADER if row.kind in _LOOKBEHIND_KINDS else b""
        self.pattern = re.compile(before + rb"\b" + row.cuda + rb"\b")

    def apply(self, text: bytes, stats: _Stats) -> tuple[bytes, bool]:
        text, count = self.pattern.subn(lambda _m: self.row.hip, text)
        if count:
            stats.row(self.row, count)
        return text, bool(count)


def _lines_with(pattern: re.Pattern[bytes], data: bytes) -> Iterator[tuple[int, bytes]]:
    """Each line of ``data`` that ``pattern`` finds something in, once, with its number (from 1), in order."""
    line_start, number, counted_to = -1, 1, 0
    for hit in pattern.finditer(data):
        start = data.rfind(b"\n", 0, hit.start()) + 1
        if start == line_start:
            continue
        number += data.count(b"\n", counted_to, start)
        counted_to = line_start = start
        end = data.find(b"\n", start)
        yield number, data[start : end if end >= 0 else len(data)]


def _literal(new: bytes) -> Callable[[re.Match[bytes]], bytes]:
    """A replacement taken as it is (no template: ``re`` would read backslashes in it)."""
    return lambda _m: new


def _steps(rows: tuple[Row, ...]) -> list[_Words | _Header]:
    steps: list[_Words | _Header] = []
    run: list[tuple[int, Row]] = []
    for index, row in enumerate(rows):
        if _WORD.fullmatch(row.cuda):
            run.append((index, row))
            continue
        if run:
            steps.append(_Words(run))
            run = []
        steps.append(_Header(row))
    if run:
        steps.append(_Words(run))
    return steps


def _trie_source(words: set[bytes]) -> bytes:
    return trie_pattern(w.decode() for w in words).encode() if words else b"(?!)"


def _trie(words: set[bytes]) -> re.Pattern[bytes]:
    return re.compile(_trie_source(words))


class _PerlString:
    """The text of a Perl string (a warning's words, a substitution's replacement), its variables filled in:
    ``$func``, ``$_``, a match's group ``$2`` (digits only: ``$3HIP_SYMBOL`` is ``$3`` and text, as in
    Perl); an escaped character (``\\"``, ``\\(``) is itself."""

    _PIECE = re.compile(rb"\$(\d+|[A-Za-z_]\w*)|\\(.)|([^$\\]+)", re.S)

    def __init__(self, text: str) -> None:
        self.pieces: list[tuple[bool, bytes]] = []  # (a variable, its name or the text)
        for m in self._PIECE.finditer(text.encode()):
            variable, escaped, plain = m.groups()
            self.pieces.append((True, variable) if variable is not None else (False, escaped or plain))

    def render(self, values: dict[bytes, bytes]) -> bytes:
        """The text, each variable its value (one without, as an unmatched group in Perl, empty)."""
        return b"".join(values.get(text, b"") if variable else text for variable, text in self.pieces)


def _perl_pattern(pattern: str, func: bytes) -> bytes:
    """A pattern of ``transformHostFunctions`` for one function (``$func`` in it), as Python reads it: its
    syntax (``\\/``, ``(?<!...)``, ``[^,\\)]``, ``\\s``) means the same to both."""
    return pattern.encode().replace(b"$func", re.escape(func))


def _perl_replacement(replacement: str, func: bytes) -> Callable[[re.Match[bytes]], bytes]:
    """A replacement of ``transformHostFunctions`` for one function: ``$func``, the match's groups."""
    text = _PerlString(replacement)
    return lambda m: text.render({b"func": func, **{b"%d" % i: group for i, group in enumerate(m.groups(), 1) if group}})


def converter_for(engine: Path) -> Converter | None:
    """The built-in engine for the hipify-perl at ``engine``: None when it is not a hipify-perl, cannot be
    read, or its code is not the code :mod:`buildport.source.hipify_script` knows."""
    version = script_version(engine)
    return None if version is None else _converter_of(*version)


@functools.cache
def _converter_of(path: str, mtime: int, size: int) -> Converter | None:
    """One script's engine, compiled once per process for each version of the file."""
    text = script_text(path, mtime, size)
    if text is None:
        return None
    script = read_script(text)
    return None if script is None else Converter(script)


__all__ = ["Converted", "Converter", "converter_for"]
