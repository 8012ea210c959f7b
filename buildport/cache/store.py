"""A cache of per-file results, so that a run over an unchanged tree does little work.

An entry is one JSON file named by the SHA-256 of everything the result depends
on: buildport's own code (its version and a fingerprint of its installed files),
the kind of work (``cmake``, ``make``, ``audit``), the file's path and the hash of
its bytes, and the options (offload targets, packages found in other files, the
facts other Makefiles contribute). Entries are written atomically (a temporary
file and ``os.replace``); an entry that cannot be read or decoded is a miss, never
an error, and the cache never decides what is printed: a hit holds exactly what
the computation returned.

Most files of a tree need nothing. Rather than an entry each, they are listed
by path with the hash of their bytes in one file per kind of work and options
(``clean/<context>.json``), so a warm run reads one file for them and looks each
up without hashing.

Beside these, a run that writes nothing keeps a memo of its whole output in
``runs/`` (see :mod:`buildport.cache.replay`).

The cache is bounded: after a run that wrote entries, the least recently used
ones are deleted until it holds at most ``BUILDPORT_CACHE_MAX_MB`` megabytes
(default 256; every entry's size is read only when a sample of them says the
cache may hold 90% of that, or once a day), a ``clean`` file keeps the newest
500,000 paths and the folder the newest 64 files (kinds of work and options). A
hit marks its entry used again (at most once a day, so a warm run does not
rewrite metadata for every file).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildport import __version__
from buildport.cache.atomic import TEMPORARY_PREFIX, is_entry, keep_newest, read_json, write_json
from buildport.cache.fileindex import FileIndex, enabled as file_index_enabled

if TYPE_CHECKING:
    from buildport.result import Region, Result
    from buildport.textio import SourceText
    from buildport.findings import Finding

#: Bumped whenever the layout of an entry changes.
FORMAT = 2
#: The size the cache is pruned back to, unless ``BUILDPORT_CACHE_MAX_MB`` says otherwise.
DEFAULT_MAX_MB = 256
#: A temporary file older than this is a leftover (a hit is marked used again by read_json).
_DAY = 24 * 3600
#: The folder of "nothing to do" files, how many of the newest paths one keeps, and how many files it keeps.
_CLEAN = "clean"
_CLEAN_KEEP = 500_000
_CLEAN_FILES = 64
#: The file whose time says when every entry's size was last read (see Cache.prune), and what a
#: sample of the entries must hold before it stands for the whole cache.
_SCANNED = "last-scan"
_SAMPLE_FOLDERS = 4
_SAMPLE_ENTRIES = 256
_random = random.Random()

_fingerprint: str | None = None


#: The cache folder's tag (https://bford.info/cachedir/): backup and archive tools leave the folder out.
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by buildport.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")


def _tag(root: str | os.PathLike[str]) -> None:
    """Put the cache directory tag in ``root`` if it is not there (a folder that cannot take it: no tag)."""
    path = os.path.join(root, "CACHEDIR.TAG")
    if os.path.exists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return
    try:
        os.write(fd, CACHEDIR_TAG.encode("ascii"))
    finally:
        os.close(fd)


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/buildport``, else ``~/.cache/buildport``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "buildport"


def code_fingerprint() -> str:
    """A hash of the version and of every installed buildport file's name, size and mtime, the grammars
    among them (inside the package in a wheel, beside it in a checkout: ``grammars/``).

    A development checkout keeps one version string across edits; the file
    metadata makes an edited rule, pass or grammar invalidate what it would have changed.
    """
    global _fingerprint
    if _fingerprint is None:
        package = Path(__file__).resolve().parent.parent
        h = hashlib.sha256(f"{__version__}\0{FORMAT}".encode())
        checkout_grammars = package.parent / "grammars"
        for top in (package, *([checkout_grammars] if checkout_grammars.is_dir() else [])):
            for folder, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".lark", ".json")):
                        info = os.stat(os.path.join(folder, name))
                        h.update(f"{os.path.relpath(os.path.join(folder, name), package)}\0{info.st_size}\0"
                                 f"{info.st_mtime_ns}\0".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def rules_fingerprint() -> str:
    """:func:`code_fingerprint` and the rule set in use (a project's rows): what every stored result
    depends on besides its file and options."""
    from buildport.rules.ruleset import active

    rows = active().key()
    if rows == [[], []]:
        return code_fingerprint()
    return hashlib.sha256(json.dumps([code_fingerprint(), rows]).encode()).hexdigest()


class Keys:
    """The cache keys of one kind of work under one set of options (``options`` must be
    JSON-serialisable and canonical): the code, kind and options are hashed once."""

    __slots__ = ("_head", "context")

    def __init__(self, kind: str, options: Any) -> None:
        self._head = hashlib.sha256(json.dumps([rules_fingerprint(), kind, options], sort_keys=True).encode())
        #: Names what the keys share: the file of paths with nothing to do (see Cache.is_clean).
        self.context = self._head.hexdigest()[:32]

    def __call__(self, path: str, digest: str) -> str:
        """The entry name of the result for the file ``path`` whose bytes hash to ``digest``."""
        h = self._head.copy()
        h.update(f"{len(path)}:{path}\0{digest}".encode("utf-8", "surrogatepass"))  # unambiguous, and cheap
        return h.hexdigest()


class Cache:
    """Results stored as JSON under ``root``, two hex digits of the key per folder."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = root
        #: The files with nothing to do, {path: digest} by context (see :class:`Keys`), as read from _CLEAN.
        self._clean: dict[str, dict[str, str]] = {}
        self._new_clean: dict[str, dict[str, str]] = {}
        self._folders: set[str] | None = None  # the two-digit folders present when first read
        #: What earlier runs read of each file (see buildport.cache.fileindex); None when switched off.
        self.files = FileIndex(root, rules_fingerprint()) if file_index_enabled() else None
        if max_bytes is None:
            try:
                max_bytes = int(float(os.environ.get("BUILDPORT_CACHE_MAX_MB", DEFAULT_MAX_MB)) * 1e6)
            except ValueError:
                max_bytes = DEFAULT_MAX_MB * 1_000_000
        self.max_bytes = max_bytes

    def __getstate__(self) -> dict[str, Any]:
        """What a worker process gets: where to write, not what this process has read (the clean
        keys can number hundreds of thousands)."""
        return {"root": self.root, "max_bytes": self.max_bytes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["root"], state["max_bytes"])  # type: ignore[misc]

    def key(self, kind: str, path: str, digest: str, options: Any) -> str:
        """The entry name of one file's result; ``options`` must be JSON-serialisable and canonical."""
        return self.keys(kind, options)(path, digest)

    @staticmethod
    def keys(kind: str, options: Any) -> "Keys":
        """``key`` for many files of one run: the code, kind and options are hashed once."""
        return Keys(kind, options)

    def _file(self, key: str) -> Path:
        return Path(self._name(key))

    def _name(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def holds_entries(self) -> bool:
        """Whether any entry was stored when this process first looked (else every :meth:`get` misses,
        and a caller need not work out the keys to look up)."""
        return bool(self._listed())

    def _listed(self) -> set[str]:
        if self._folders is None:  # listed once: in a cold cache every lookup then misses without a system call
            try:
                self._folders = {name for name in os.listdir(self.root) if len(name) == 2}
            except OSError:
                self._folders = set()
        return self._folders

    def get(self, key: str) -> Any | None:
        """The stored value, or None when missing or unreadable (a corrupt entry is a miss)."""
        if key[:2] not in self._listed():
            return None
        value = read_json(self._name(key))
        if not isinstance(value, dict) or value.get("key") != key:
            return None
        return value.get("value")

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` atomically; a cache that cannot be written is silently skipped."""
        if write_json(self._name(key), {"key": key, "value": value}) and self._folders is not None:
            self._folders.add(key[:2])


    # --- results with nothing in them: one line each in one file, not a file each ------------------

    def is_clean(self, keys: "Keys", path: str, digest: str) -> bool:
        """Was the result of the file ``path`` with this hash "unchanged, no findings" (as most files of a
        tree are) for the work and options of ``keys``?"""
        clean = self._clean.get(keys.context)
        if clean is None:
            clean = self._clean[keys.context] = self._read_clean(keys.context)
        return clean.get(path) == digest

    def mark_clean(self, keys: "Keys", path: str, digest: str) -> None:
        """Remember that the result for ``path`` and ``digest`` is "nothing to do" (see :meth:`save_clean`)."""
        self._new_clean.setdefault(keys.context, {})[path] = digest

    def _read_clean(self, context: str) -> dict[str, str]:
        data = read_json(os.path.join(self.root, _CLEAN, context + ".json"))
        if not isinstance(data, dict):
            return {}
        return data if all(type(d) is str for d in data.values()) else {k: d for k, d in data.items() if type(d) is str}

    def save_clean(self) -> None:
        """Add the paths marked in this process to their files, keeping the newest ``_CLEAN_KEEP``; atomic.

        Each file is read again first, so that what a concurrent run added is kept.
        """
        folder = os.path.join(self.root, _CLEAN)
        for context, marked in self._new_clean.items():
            clean = self._read_clean(context)
            for path, digest in marked.items():
                clean.pop(path, None)  # re-inserted last: dict order is the age order pruning follows
                clean[path] = digest
            if len(clean) > _CLEAN_KEEP:
                clean = dict(list(clean.items())[-_CLEAN_KEEP:])
            self._clean[context] = clean
            write_json(os.path.join(folder, context + ".json"), clean)
        if self._new_clean:
            self._new_clean = {}
            keep_newest(folder, _CLEAN_FILES)  # other code versions and options age out

    def prune(self) -> int:
        """Delete the least recently used entries beyond ``max_bytes``, and old leftovers; the number deleted.

        Reading every entry's size costs a system call each (40,000 entries: about
        0.26 s, more than a warm run's own work), so a run first estimates the size
        from a sample (:meth:`_estimate`) and reads them all only when the estimate
        reaches 90% of the budget (pruning leaves 80%, so most runs after a prune
        read a sample only), or when the last full reading is a day old (which also
        deletes the temporary files of writers that died).
        """
        try:
            folders = [e.path for e in os.scandir(self.root) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        _tag(self.root)
        marker = os.path.join(self.root, _SCANNED)
        try:
            recent = time.time() - os.stat(marker).st_mtime < _DAY
        except OSError:
            recent = False
        if recent and self._estimate(folders) < self.max_bytes * 0.9:
            return 0
        deleted = self._scan(folders)
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))
            os.utime(marker)  # its time says when the last full reading was
        except OSError:
            pass
        return deleted

    @staticmethod
    def _estimate(folders: list[str]) -> float:
        """The bytes the entries of ``folders`` hold, from the folders read in a random order until
        :data:`_SAMPLE_FOLDERS` of them and :data:`_SAMPLE_ENTRIES` entries are read: a key is a
        hash, so each folder holds about as many entries as any other."""
        total = entries = 0
        for read, folder in enumerate(_random.sample(folders, len(folders)), 1):
            try:
                with os.scandir(folder) as listing:
                    sizes = [e.stat(follow_symlinks=False).st_size for e in listing if is_entry(e.name)]
            except OSError:
                continue
            total += sum(sizes)
            entries += len(sizes)
            if read >= _SAMPLE_FOLDERS and entries >= _SAMPLE_ENTRIES:
                return total * len(folders) / read
        return total

    def _scan(self, folders: list[str]) -> int:
        """Read every entry's size and age; delete the oldest beyond the budget and dead writers' files."""
        entries: list[tuple[float, int, str]] = []
        now = time.time()
        deleted = 0
        for folder in folders:
            try:
                listing = list(os.scandir(folder))
            except OSError:
                continue
            for entry in listing:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.name.startswith(TEMPORARY_PREFIX):
                    if now - info.st_mtime > _DAY:  # a writer that died; a live one finishes in milliseconds
                        deleted += _unlink(entry.path)
                elif is_entry(entry.name):
                    entries.append((info.st_mtime, info.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return deleted
        entries.sort()
        goal = self.max_bytes * 0.8  # some room, so that the next runs do not prune again at once
        for _, size, path in entries:
            if total <= goal:
                break
            deleted += _unlink(path)
            total -= size
        return deleted


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


def finding_to_json(finding: Finding) -> list[Any]:
    """A :class:`~buildport.findings.Finding` as a JSON list (field order)."""
    return [finding.path, finding.line, finding.col, finding.rule, int(finding.severity), finding.message,
            finding.suggestion, finding.fixable, finding.replacement]


def finding_from_json(data: Any) -> Finding:
    """The inverse of :func:`finding_to_json`; raises on malformed data."""
    return findings_from_json([data])[0]


def findings_from_json(data: Any) -> list[Finding]:
    """A list of :func:`finding_to_json` entries back to findings; raises on malformed data.

    A warm run decodes tens of thousands of findings, so the imports and the
    severity lookup happen once per list rather than once per finding.
    """
    if type(data) is list and not data:
        return []  # most files: nothing to import or look up
    from buildport.findings import Finding, Severity

    severities = {int(s): s for s in Severity}
    out = []
    for path, line, col, rule, severity, message, suggestion, fixable, replacement in data:
        # Entries are written by put() alone and name their key: a damaged one fails to parse or
        # to unpack here; the field types are not checked one by one.
        out.append(Finding(path, line, col, rule, severities[severity], message, suggestion, fixable, replacement))
    return out


def result_to_json(result: Result) -> dict[str, Any]:
    """An engine :class:`~buildport.engine.Result` without its original text (the file holds that)."""
    return {
        "path": result.path,
        "text": None if result.text == result.original else result.text,
        "findings": [finding_to_json(f) for f in result.findings],
        "packages": sorted(result.packages),
        "regions": result.regions,  # where the texts differ: a diff of the file compares only those lines
    }


def _regions(data: Any) -> list[Region] | None:
    """Stored regions (lists of four offsets), or None where an entry has none or they are malformed."""
    if type(data) is not list:
        return None
    regions = [tuple(r) for r in data]
    if all(len(r) == 4 and all(type(n) is int for n in r) for r in regions):
        return regions
    return None


def result_from_json(data: Any, original: str | SourceText) -> Result | None:
    """The Result stored by :func:`result_to_json`, or None when the entry is malformed.

    ``original`` is the file's text, or its source (read only if the result is asked for it).
    """
    from buildport.result import Result

    try:
        text = original if data["text"] is None else str(data["text"])
        findings = findings_from_json(data["findings"])
        # stored with a text only when it differed from the original (result_to_json)
        return Result(str(data["path"]), original, text, findings, {str(p) for p in data["packages"]},
                      changed=data["text"] is not None, regions=_regions(data.get("regions")))
    except (KeyError, TypeError, ValueError):  # KeyError also for an unknown severity
        return None
