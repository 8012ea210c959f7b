"""What the cache remembers of each file it has read: the file's metadata and the hash of its bytes.

A warm run over an unchanged tree should not read the tree again. Every file
read by discovery is recorded here: its device, inode, size, modification time
and status-change time (nanoseconds), and the SHA-256 of its bytes. When a later
run finds a file whose metadata are all still the same, the index *vouches* for it: the run takes the recorded hash as the file's hash
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

It also keeps what discovery took from each folder it listed (its folders and
the files a predicate such as ``is_cmake_file`` wanted), under the folder's
device, inode and times. Adding, removing or renaming an entry of a folder
gives the folder a new modification time, so a folder whose times are as
recorded has the entries recorded, and a warm run does not list it again (the
files in it are still looked up one by one: writing a file leaves its folder's
times alone). The same margin applies; a folder whose build-tree marks are
links is not recorded (what they point to can change without the folder
knowing). The listings depend on the predicates' code, so they are kept only
for the code that made them.

The index is one JSON file in the cache folder, written atomically, and only
when a run recorded something new; it keeps the newest ``KEEP`` files.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

from buildport.cache.atomic import write_json

if TYPE_CHECKING:
    from buildport.cache.replay import Trail

#: How long before the metadata were read a file's times must lie for the file to be recorded.
MARGIN_NS = 3_000_000_000
#: The most files (and folders) the index keeps (about 110 bytes each); the oldest records go first.
KEEP = 200_000
#: The file's name in the cache folder, and the version of its layout.
NAME = "files.index"
FORMAT = 2

#: What a folder held for one predicate: (is it a build tree, its folders, the files wanted, the links among
#: them), each list sorted by name.
Listing = tuple[bool, list[str], list[str], list[str]]


def stamp(info: os.stat_result) -> str:
    """A file's record key: device, inode, size and both times (a record holds its digest)."""
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def folder_stamp(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _newest_per_object(records: dict[str, object], times: int) -> dict[str, object]:
    """``records`` (oldest first) with only the newest record of each device and inode: the part of a
    key before its last ``times`` fields."""
    newest = {key.rsplit(":", times)[0]: key for key in records}
    if len(newest) == len(records):
        return records
    kept = set(newest.values())
    return {key: value for key, value in records.items() if key in kept}


def enabled() -> bool:
    return os.environ.get("BUILDPORT_FILE_INDEX", "1") != "0"


class FileIndex:
    """Recorded digests by ``"device:inode:size:mtime:ctime"``, loaded from ``folder`` when first used.

    A file's record is found only by all its metadata at once; a file written
    since is looked up under a new key and not found, and its old record is
    dropped when the new one is saved.
    """

    def __init__(self, folder: str | os.PathLike[str], code: str = "") -> None:
        """``code`` identifies the code that discovers files (its listings are kept for it alone)."""
        self.path = os.path.join(os.fspath(folder), NAME)
        self.code = code
        self._entries: dict[str, object] | None = None
        self._new: dict[str, str] = {}
        self._includes: dict[str, list[str]] = {}
        self._new_includes = False
        self._listings: dict[str, dict[str, object]] = {}  # by predicate, then "device:inode:mtime:ctime"
        self._new_listings = False
        #: Files with times after this are too recent to record (see the module's docstring).
        self.since = time.time_ns() - MARGIN_NS
        #: Gathers what a run looks at when the run is to be kept whole (see buildport.cache.replay).
        self.trail: Trail | None = None

    def _load(self) -> dict[str, object]:
        if self._entries is None:
            try:
                with open(self.path, encoding="utf-8", errors="surrogateescape") as handle:
                    data = json.load(handle)
                entries = data["files"] if isinstance(data, dict) and data.get("format") == FORMAT else {}
                includes = data.get("includes") if isinstance(data, dict) else None
                listings = data.get("listings") if isinstance(data, dict) and data.get("code") == self.code else None
                self._entries = entries if isinstance(entries, dict) else {}
                self._includes = includes if isinstance(includes, dict) else {}
                self._listings = listings if isinstance(listings, dict) else {}
            except (OSError, ValueError, KeyError):
                self._entries = {}
        return self._entries

    def lookup(self, info: os.stat_result, stamped: str | None = None) -> str | None:
        """The recorded digest of the file with metadata ``info`` (``stamped``: their :func:`stamp`,
        if taken already), if they are all as recorded."""
        entries = self._entries if self._entries is not None else self._load()
        digest = entries.get(stamped or stamp(info))
        return digest if type(digest) is str else None

    def record(self, info: os.stat_result, digest: str, stamped: str | None = None) -> None:
        """Remember that the file with metadata ``info`` (read before its bytes were) hashes to ``digest``."""
        if info.st_mtime_ns >= self.since or info.st_ctime_ns >= self.since:
            return  # written too recently to be sure a later write changes its times
        key = stamped or stamp(info)
        if self._load().get(key) != digest:
            self._new[key] = digest

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

    def listing(self, predicate: str, info: os.stat_result, stamped: str | None = None) -> Listing | None:
        """What the folder with metadata ``info`` (``stamped``: their :func:`folder_stamp`, if taken
        already) held for ``predicate``, if its times are as recorded."""
        self._load()
        by_folder = self._listings.get(predicate)
        if not by_folder:
            return None
        entry = by_folder.get(stamped or folder_stamp(info)) if isinstance(by_folder, dict) else None
        if isinstance(entry, list) and len(entry) == 4 and all(type(part) is str for part in entry[1:]):
            folders, files, links = (part.split("/") if part else [] for part in entry[1:])
            return bool(entry[0]), folders, files, links  # "/" is the one character no name holds
        return None

    def record_listing(self, predicate: str, info: os.stat_result, listing: Listing, stamped: str | None = None) -> None:
        """Remember what the folder with metadata ``info`` (taken before listing it; ``stamped``: their
        :func:`folder_stamp`, if taken already) held for ``predicate``."""
        if info.st_mtime_ns >= self.since or info.st_ctime_ns >= self.since:
            return  # changed too recently to be sure a later change gives it new times
        self._load()
        build_tree, folders, files, links = listing
        entry: list[object] = [int(build_tree), "/".join(folders), "/".join(files), "/".join(links)]
        by_folder = self._listings.setdefault(predicate, {})
        key = stamped or folder_stamp(info)
        if by_folder.get(key) != entry:
            by_folder[key] = entry
            self._new_listings = True

    def save(self) -> None:
        """Write what this run recorded, if anything; a failure to write only costs a later run time."""
        if not self._new and not self._new_includes and not self._new_listings:
            return
        entries = self._load()
        for key in self._new:
            entries.pop(key, None)  # re-inserted last: dict order is the age order pruning follows
        entries.update(self._new)
        self._new = {}
        entries = _newest_per_object(entries, 3)  # "device:inode" + size, mtime, ctime
        if len(entries) > KEEP:
            for key in list(entries)[:len(entries) - KEEP]:
                del entries[key]
        digests = {entry for entry in entries.values() if isinstance(entry, str)}
        includes = {d: words for d, words in self._includes.items() if d in digests}
        listings = {}
        for predicate, by_folder in self._listings.items():
            if isinstance(by_folder, dict):
                by_folder = _newest_per_object(by_folder, 2)  # "device:inode" + mtime, ctime
                listings[predicate] = dict(list(by_folder.items())[-KEEP:]) if len(by_folder) > KEEP else by_folder
        self._new_listings = self._new_includes = False
        write_json(self.path, {"format": FORMAT, "files": entries, "includes": includes, "code": self.code,
                               "listings": listings})
