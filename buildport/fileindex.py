"""What the cache remembers of each file it has read: the file's metadata and the hash of its bytes.

A warm run over an unchanged tree should not read the tree again. Every file
read by discovery is recorded here under its device and inode, with its size,
modification time and status-change time (nanoseconds) and the SHA-256 of its
bytes. When a later run finds a file whose metadata are all still the same,
the index *vouches* for it: the run takes the recorded hash as the file's hash
(the cache is keyed on that hash) and reads the file only if its text is needed
after all (a cache miss, a diff, printing it).

Metadata can stay equal while content changes when two writes fall in the same
tick of the file system's clock. A file is therefore recorded only if both its
times lie at least ``MARGIN_NS`` before the moment its metadata were read: a
write after that moment gives it a later time, so it no longer matches.
Changing a file and then setting its modification time back (``touch -d``,
``cp -p``) also sets its status-change time to the present, which no tool can
set back, so that file does not match either. A file on a network file system
whose clock runs ahead of this machine's by more than the margin could defeat
this; ``--no-cache`` (or ``BUILDPORT_FILE_INDEX=0``) turns the index off.

Beside the metadata, the index keeps the names a Makefile ``include``s, by
the hash of its bytes (they depend on nothing else), so that following the
includes of a tree does not read its Makefiles again either.

The index is one JSON file in the cache folder, written atomically, and only
when a run recorded something new; it keeps the newest ``KEEP`` files.
"""

from __future__ import annotations

import json
import os
import tempfile
import time

#: How long before the metadata were read a file's times must lie for the file to be recorded.
MARGIN_NS = 3_000_000_000
#: The most files the index keeps (about 110 bytes each); the oldest records go first.
KEEP = 200_000
#: The file's name in the cache folder, and the version of its layout.
NAME = "files.index"
FORMAT = 1


def enabled() -> bool:
    return os.environ.get("BUILDPORT_FILE_INDEX", "1") != "0"


class FileIndex:
    """Recorded (size, mtime, ctime, digest) by ``"device:inode"``, loaded from ``folder`` when first used."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.path = os.path.join(os.fspath(folder), NAME)
        self._entries: dict[str, list[object]] | None = None
        self._new: dict[str, list[object]] = {}
        self._includes: dict[str, list[str]] = {}
        self._new_includes = False
        #: Files with times after this are too recent to record (see the module's docstring).
        self.since = time.time_ns() - MARGIN_NS

    def _load(self) -> dict[str, list[object]]:
        if self._entries is None:
            try:
                with open(self.path, encoding="utf-8") as handle:
                    data = json.load(handle)
                entries = data["files"] if isinstance(data, dict) and data.get("format") == FORMAT else {}
                includes = data.get("includes") if isinstance(data, dict) else None
                self._entries = entries if isinstance(entries, dict) else {}
                self._includes = includes if isinstance(includes, dict) else {}
            except (OSError, ValueError, KeyError):
                self._entries = {}
        return self._entries

    def lookup(self, info: os.stat_result) -> str | None:
        """The recorded digest of the file with metadata ``info``, if they are all as recorded."""
        entry = self._load().get(f"{info.st_dev}:{info.st_ino}")
        if (
            isinstance(entry, list) and len(entry) == 4 and entry[0] == info.st_size
            and entry[1] == info.st_mtime_ns and entry[2] == info.st_ctime_ns and isinstance(entry[3], str)
        ):
            return entry[3]
        return None

    def record(self, info: os.stat_result, digest: str) -> None:
        """Remember that the file with metadata ``info`` (read before its bytes were) hashes to ``digest``."""
        if info.st_mtime_ns >= self.since or info.st_ctime_ns >= self.since:
            return  # written too recently to be sure a later write changes its times
        entry: list[object] = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest]
        key = f"{info.st_dev}:{info.st_ino}"
        if self._load().get(key) != entry:
            self._new[key] = entry

    def includes(self, digest: str) -> list[str] | None:
        """The names the Makefile with this hash includes, if a run recorded them."""
        self._load()
        words = self._includes.get(digest)
        return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else None

    def record_includes(self, digest: str, words: list[str]) -> None:
        self._load()
        if self._includes.get(digest) != words:
            self._includes[digest] = words
            self._new_includes = True

    def save(self) -> None:
        """Write what this run recorded, if anything; a failure to write only costs a later run time."""
        if not self._new and not self._new_includes:
            return
        entries = self._load()
        for key in self._new:
            entries.pop(key, None)  # re-inserted last: dict order is the age order pruning follows
        entries.update(self._new)
        self._new = {}
        if len(entries) > KEEP:
            for key in list(entries)[:len(entries) - KEEP]:
                del entries[key]
        digests = {entry[3] for entry in entries.values() if isinstance(entry, list) and len(entry) == 4}
        includes = {d: words for d, words in self._includes.items() if d in digests}
        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".files.", suffix=".tmp", dir=folder)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"format": FORMAT, "files": entries, "includes": includes}, handle, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
