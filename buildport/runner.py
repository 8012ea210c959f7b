"""Many files: discover build files below a directory and port each one.

Discovery skips hidden directories, build trees (a ``CMakeCache.txt`` or a
``CMakeFiles/`` marks one) and directory links that leave the root; it also
skips, with a message, file links that leave the root and binary files.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Generic, Iterable, Iterator, Mapping, Sequence, TypeVar

from buildport.cache import Cache, Keys, result_from_json, result_to_json
from buildport.findings import Finding
from buildport.options import MakeFacts, Options
from buildport.result import Result, UnstableRewrite
from buildport.syntax.errors import ParseError
from buildport.fileindex import FileIndex, Listing, folder_stamp, stamp
from buildport.includes import include_graph, include_targets
from buildport.package_scopes import extra_packages
from buildport.rules import ruleset
from buildport.rules.cmake import FIND_HIP
from buildport.textio import (
    InputError, NotARegularFile, SourceText, check_regular, decode, digest, encode, read_bytes, read_source,
    remove_stale_temporaries, write_atomic,
)

# The parsers and passes (buildport.engine) are imported where a file is ported: a run that the
# cache answers whole never needs them.


def is_cmake_file(name: str) -> bool:
    return name == "CMakeLists.txt" or name.endswith(".cmake")


MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def is_make_file(name: str) -> bool:
    return name in MAKEFILE_NAMES or name.endswith(".mk")


#: Entries that mark a folder as a build tree, whose files discovery skips (a folder given as the
#: root is walked all the same).
_BUILD_TREE_MARKS = frozenset({"CMakeCache.txt", "CMakeFiles"})


def discover(
    root: Path, wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None,
) -> Iterator[Path]:
    """Build files below ``root`` in a stable order (a folder's files by name, then its folders by name).

    A file link that leaves ``root`` is never yielded (so never written through),
    nor is a binary file; each gets a message in ``skipped``. A link inside the
    root comes after the real files, and only if its target was not yielded, so
    that no file is ported twice. Directory links are not followed. Each file is
    read to see whether it is binary; with ``contents`` the text read is kept
    there under ``str(path)``, so that porting does not read the file again.

    With ``index`` (the cache's :class:`~buildport.fileindex.FileIndex`), a file
    whose metadata are as an earlier run recorded them is not read: it was not
    binary then, and its entry in ``contents`` is a source the index vouches for,
    read later only if its text is needed. The files read are recorded in it.
    """
    return (Path(name) for name in files_below(root, wanted, skipped, contents, index))


def files_below(
    root: Path, wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None,
) -> Iterator[str]:
    """:func:`discover`, as the strings ``str(path)`` of the paths (no path objects are made).

    With ``index``, a folder is listed only if the index has no listing of it for
    ``wanted`` that is still current (``wanted`` must then be a module-level
    function: its name is what the listing is kept under).
    """
    real_root = root.resolve()
    stack_root = str(root)
    predicate = _predicate_name(wanted) if index is not None else None
    vouch = index.lookup if index is not None and contents is not None else None
    trail = index.trail if index is not None else None  # what the run looks at (buildport.replay)
    if trail is not None and (predicate is None or vouch is None):
        trail.spoil()  # folders or files would go unrecorded
    vouched = SourceText.vouched
    yielded: list[tuple[str, list[str]]] = []  # (folder, names of the real files yielded from it)
    links: list[str] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        listing = _listing(folder, wanted, index if predicate is not None else None, predicate or "")
        if listing is None:
            if trail is not None:
                trail.spoil()
            if skipped is not None:
                skipped.append(f"{folder}: skipped: the folder cannot be read ({_unlisted(folder)})")
            continue
        build_tree, folders, files, linked = listing
        if build_tree and folder != stack_root:
            continue
        prefix = "" if folder == "." else _with_separator(folder)  # str(Path(".") / name) is just name
        names: list[str] = []
        for name in files:
            path = prefix + name
            is_link = bool(linked) and name in linked
            info = None
            stamped = None
            if vouch is not None and not is_link:  # inline, as most files of a warm run take this way
                try:
                    info = os.lstat(path)  # before reading: a later write gives the file new times
                except OSError:
                    if trail is not None:
                        trail.spoil()
                    # reading it reports the error
                else:
                    stamped = stamp(info)
                    if trail is not None:
                        trail.file(path, info, stamped)
                    known = vouch(info, stamped)
                    if known is not None:
                        contents[path] = vouched(path, known, (info.st_dev, info.st_ino))  # type: ignore[index]
                        names.append(name)
                        yield path
                        continue
            if is_link and trail is not None:
                trail.path(path)  # what the link leads to, now
            reason = _skip_reason(path, real_root, is_link, contents, index, info, stamped)
            if reason:
                if skipped is not None:
                    skipped.append(f"{path}: skipped: {reason}")
                continue
            if is_link:
                links.append(path)
                continue
            names.append(name)
            yield path
        if names:
            yielded.append((folder, names))
        stack.extend(prefix + name for name in reversed(folders))
    if links:
        seen = {Path(os.path.realpath(folder), name) for folder, names in yielded for name in names}
        for link in links:
            target = Path(link).resolve()
            if target not in seen:
                seen.add(target)
                yield link


def _with_separator(folder: str) -> str:
    """``os.path.join(folder, "")``: on POSIX, without the call's generality (it runs for every folder)."""
    if os.sep == "/" and os.altsep is None:
        return folder if folder.endswith("/") else folder + "/"
    return os.path.join(folder, "")


def _predicate_name(wanted: Callable[[str], bool]) -> str | None:
    """What listings made with ``wanted`` are kept under; None for a function without a lasting name."""
    name = f"{getattr(wanted, '__module__', '')}.{getattr(wanted, '__qualname__', '<?>')}"
    return None if "<" in name else name


def _unlisted(folder: str) -> str:
    """Why ``folder`` cannot be listed, in a few words."""
    try:
        with os.scandir(folder):
            return "it changed while it was read"
    except OSError as exc:
        return exc.strerror or str(exc)


def _listing(folder: str, wanted: Callable[[str], bool], index: FileIndex | None, predicate: str) -> Listing | None:
    """The folder's build-tree mark, folders (not hidden) and wanted files (with the links among them),
    from ``index`` if it has them, else listed (and recorded there); None if it cannot be listed."""
    info = None
    stamped = ""
    if index is not None:
        try:
            info = os.stat(folder)  # before listing: a later change gives the folder new times
        except OSError:
            return None
        if index.trail is not None:
            index.trail.folder(folder, info)
        stamped = folder_stamp(info)
        known = index.listing(predicate, info, stamped)
        if known is not None:
            return known
    files: list[str] = []
    folders: list[str] = []
    links: list[str] = []
    build_tree = False  # a CMakeCache.txt (any kind) or a CMakeFiles folder (or link to one) in it
    marks_linked = False
    try:
        with os.scandir(folder) as entries:
            for entry in entries:  # only folders and wanted files: most of a source tree is neither
                name = entry.name
                if name in _BUILD_TREE_MARKS:
                    build_tree = build_tree or (entry.is_dir() if name == "CMakeFiles" else os.path.exists(entry.path))
                    marks_linked = marks_linked or entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith("."):
                        folders.append(name)
                elif wanted(name):
                    files.append(name)
                    if entry.is_symlink():
                        links.append(name)
    except OSError:
        return None
    files.sort()
    folders.sort()
    links.sort()
    listing = (build_tree, folders, files, links)
    if index is not None and info is not None and not marks_linked:
        index.record_listing(predicate, info, listing, stamped)
    elif marks_linked and index is not None and index.trail is not None:
        index.trail.spoil()  # what the marks lead to can change without the folder knowing
    return listing


def _skip_reason(
    path: str, real_root: Path, is_link: bool, contents: dict[str, SourceText] | None = None,
    index: FileIndex | None = None, info: os.stat_result | None = None, stamped: str | None = None,
) -> str:
    """Why a discovered file must be left alone, or ``""``; fills ``contents`` and ``index`` (see discover).

    ``info`` holds the file's metadata, taken before reading it, when the index is to record it (the
    index had no record of them: :func:`files_below` looks them up); ``stamped``, their stamp.
    """
    if is_link:
        target = Path(os.path.realpath(path))  # (Path.resolve raises for a loop before Python 3.13)
        if not _inside(target, real_root):
            return f"symbolic link to {target}, outside {real_root}"
    try:
        if info is not None:
            check_regular(info)
        data = read_bytes(path, None if info is None else info.st_size)
    except NotARegularFile as exc:
        return str(exc.strerror)  # a named pipe would hang the run, a device fill its memory
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        return ""  # reading it again reports the error
    if b"\x00" in data:
        return "binary file (contains NUL bytes)"
    if contents is not None:
        source = read_source(path, data, None if info is None else (info.st_dev, info.st_ino))
        contents[path] = source
        if index is not None and info is not None:
            index.record(info, source.digest, stamped)
    return ""


def included_makefiles(
    files: list[str], contents: dict[str, SourceText] | None = None, index: FileIndex | None = None,
    words_of: dict[str, list[str]] | None = None,
) -> list[str]:
    """Files that discovered Makefiles ``include`` by a literal relative name (make.config...).

    ``contents`` holds what discovery read (see :func:`discover`); the other files
    are read here. ``index`` remembers the words of their include lines by the hash
    of each file, so that a file it vouches for is not read for them; ``words_of``,
    if given, gets them too (path → words: see :func:`include_targets`).
    """
    seen: set[object] | None = None  # which files they are (device and inode), worked out at the first include
    extra: list[str] = []
    trail = index.trail if index is not None else None
    for name in files:
        known = contents.get(name) if contents is not None else None
        try:
            words = include_words(known if known is not None else read_source(name), index)
        except InputError:
            continue
        if words_of is not None:
            words_of[name] = words
        for word in words:
            if "$" in word:
                continue  # a name made with variables: which file it is, only make can tell
            target = str(Path(name).parent / word)
            if trail is not None:
                trail.path(target)  # whether it exists (a later one changes the run), and its metadata
            try:
                info = os.stat(target)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if seen is None:
                seen = {file_identity(f, contents) for f in files}
            identity = (info.st_dev, info.st_ino)  # a/../common.mk and b/../common.mk are one file
            if identity not in seen:
                seen.add(identity)
                plain = os.path.normpath(target)
                extra.append(plain if os.path.realpath(plain) == os.path.realpath(target) else target)
    return extra


def include_words(source: SourceText, index: FileIndex | None) -> list[str]:
    """The words of a Makefile's include lines (:func:`include_targets`): from ``index`` by the file's hash
    if a run recorded them, else read from its text (and recorded); :class:`InputError` if it cannot be read."""
    words = index.includes(source.digest) if index is not None else None
    if words is None:
        words = include_targets(source.text)
        if index is not None:
            index.record_includes(source.digest, words)
    return words


def file_identity(path: str, contents: dict[str, SourceText] | None) -> object:
    """The device and inode of the file at ``path`` (as discovery saw it, if it did); the real path
    of one that cannot be looked at."""
    known = contents.get(path) if contents is not None else None
    if known is not None and known.identity is not None:
        return known.identity
    try:
        info = os.stat(path)  # the same file by any path or link has the same device and inode
    except OSError:
        return os.path.realpath(path)
    return (info.st_dev, info.st_ino)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


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


def expand_paths(
    paths: list[str], wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None,
) -> list[str]:
    """Files as given, directories expanded (see :func:`discover`, which fills ``contents``
    and ``index``), ``-`` kept for standard input."""
    return list(iter_paths(paths, wanted, skipped, contents, index))


def iter_paths(
    paths: list[str], wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None,
) -> Iterator[str]:
    """:func:`expand_paths` as it goes: each file as soon as discovery has read it, so
    that porting (:func:`port_files`) can begin while the walk goes on."""
    trail = index.trail if index is not None else None
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir() and not wanted(path.name):
            yield from files_below(path, wanted, skipped, contents, index)
        else:
            if trail is not None and p == "-":
                trail.spoil()  # stdin is no file to look at again
            elif trail is not None:
                trail.path(p)
            yield p


def port_files(
    paths: Iterable[str], options: Options, stdin: bytes | None = None, kind: str = "cmake",
    jobs: int = 1, cache: Cache | None = None, contents: dict[str, SourceText] | None = None,
    walking: bool = False,
) -> Run:
    """Port every file; for CMake, the ROCm packages any file links are found where CUDA is.

    With ``jobs`` > 1 the files are ported in a pool of processes; the outcomes
    are the same, in the same order, as with ``jobs`` = 1 (which stays in this
    process). ``cache`` holds results from earlier runs; a hit is what the
    computation would return. ``contents`` holds what discovery read (see
    :func:`discover`); it is used, and dropped, instead of reading again.

    ``paths`` may be a discovery still under way (:func:`iter_paths`): CMake
    files go to the pool in chunks as they come, so the workers port while this
    process walks and reads. Makefiles are read as a whole first (what one
    defines, another uses). ``walking`` says that ``paths`` walks a directory
    as it is read: for Makefiles the workers are then started as soon as the
    walk has found files enough for a pool, and build the make parser's lexers
    while the walk goes on.
    """
    make = kind == "make"
    with Workers(jobs, _warm_make_parser if make else None, _load_make_port if make else _load_cmake_port) as workers:
        run = _port_files(paths, options, stdin, kind, workers, cache, contents, walking)
    if cache is not None and cache.files is not None:
        cache.files.save()  # what discovery recorded
    return run


def _load_make_port() -> None:
    """Before the workers are forked: the make port's modules and parser, which this process needs
    later (the facts of the run) or not at all, loaded once here rather than in each worker."""
    _engine().make_modules()
    _warm_make_parser()


def _load_cmake_port() -> None:
    """Before the workers are forked: the CMake port's modules and its search for the rules' words."""
    from buildport.prescan import cmake_trigger

    _engine()
    cmake_trigger()


def _warm_make_parser() -> None:
    """In each worker as it starts: every lexer of the make parser, compiled before the first chunk."""
    from buildport.syntax.make import warm_up

    warm_up()


def _port_files(
    paths: Iterable[str], options: Options, stdin: bytes | None, kind: str, workers: Workers, cache: Cache | None,
    contents: dict[str, SourceText] | None, walking: bool = False,
) -> Run:
    run = Run()
    known = contents if contents is not None else {}
    # a Makefile's text stays in ``known``: the walk may still be going on, and its includes are read at its end
    take = known.get if kind == "make" else known.pop
    loading: Iterator[FileOutcome] = (_load(path, stdin, take(path, None)) for path in _unique(paths, known))
    facts = None
    ported: dict[str, Any] = {}
    if kind == "make":
        sources = []
        # with nothing stored, no facts can be found in the cache: the workers read each file's as the walk finds it
        early = walking and workers.jobs > 1 and (cache is None or not cache.holds_entries())
        feed = workers.feed(_file_facts_chunk, options) if early else None
        tasks: list[tuple[str, str, str]] = []
        for loaded in loading:
            sources.append(loaded)
            if feed is not None:
                if (task := _facts_task(loaded)) is not None:
                    tasks.append(task)
                    feed.add(task)  # the pool starts with the first chunk: its workers build the make lexers first
            elif walking and len(sources) == FEED_FIRST and workers.jobs > 1:
                workers.pool()  # files enough for a pool: its workers build the make lexers while the walk goes on
        fed = (tasks, list(feed.results())) if feed is not None else None
        facts, ported = _make_facts(sources, options, cache, workers, fed)
        loading = iter(sources)
    run.outcomes = _port_all(loading, options, kind, facts, workers, cache, ported)
    if kind != "cmake":
        return run
    if len(run.outcomes) < 2 or not any(o.result is not None and o.result.packages for o in run.outcomes):
        return run
    linked = [o.result.packages if o.result is not None else set() for o in run.outcomes]
    finds = [o.result is not None and _finds_cuda(o.result) for o in run.outcomes]
    # the packages a file links are found where CUDA is found for it (buildport.package_scopes); they
    # reach only find_package(CUDA/CUDAToolkit) rewrites, each reported, and change nothing in a file
    # that links every one of them itself
    again: dict[tuple[str, ...], list[int]] = {}
    for i, extra in extra_packages([o.path for o in run.outcomes], linked, finds).items():
        if not set(extra) <= linked[i]:
            again.setdefault(extra, []).append(i)
    for extra, indices in again.items():
        wider = Options(options.offload_arch, extra)
        redone = _port_all([run.outcomes[i] for i in indices], wider, kind, None, workers, cache)
        for i, outcome in zip(indices, redone):
            run.outcomes[i] = outcome
    return run


def _finds_cuda(result: Result) -> bool:
    """Whether the port turned a find_package(CUDA/CUDAToolkit) of the file into find_package(hip)."""
    return any(f.rule == "cmake-find-package" and f.replacement.startswith((FIND_HIP + ")", FIND_HIP + " "))
               for f in result.findings)


def _load(path: str, stdin: bytes | None, known: SourceText | None = None) -> FileOutcome:
    """The file read and decoded (``source`` set; ``known`` is what discovery read), or its read error."""
    if known is not None:
        return FileOutcome(path, source=known)
    try:
        if path == "-":
            source = SourceText("<stdin>", decode(stdin or b"", "<stdin>"), "")
        else:
            source = read_source(path)
    except InputError as exc:
        return FileOutcome(path, error=str(exc))
    return FileOutcome(path, source=source)


def _port_all(
    loaded: Iterable[FileOutcome], options: Options, kind: str, facts: Mapping[str, MakeFacts] | None,
    workers: Workers, cache: Cache | None, ported: dict[str, Any] | None = None,
) -> list[FileOutcome]:
    """Port every loaded file: cache hits here, the misses in a pool when ``jobs`` > 1, handed over
    in chunks as ``loaded`` yields them. ``facts``: each Makefile's facts by path (see
    :func:`_make_facts`; a file without is read alone). ``ported``: Makefiles already ported while
    their facts were read, each taken where its facts cannot change it."""
    ported = ported or {}
    taken = 0
    out: list[FileOutcome] = []
    missing: list[int] = []
    keys: dict[int, str] = {}
    digests: dict[int, str] = {}
    key_for = FactKeys(kind, lambda made: _settings(options, made))
    lookups = cache is not None and cache.holds_entries()  # else no key is worked out here: the workers store
    feed = workers.feed(_port_chunk, (options, kind, cache), _pack_outcome, _unpack_outcome)
    for i, item in enumerate(loaded):
        source = item.source
        if source is None or item.error:
            out.append(FileOutcome(item.path, error=item.error))
            continue
        file_facts = facts.get(item.path) if facts is not None else None
        key_of = key_for(file_facts)
        if cache is not None and source.digest:
            if cache.is_clean(key_of, item.path, source.digest):
                item.result = Result.unchanged(source)
                out.append(item)
                continue
            if lookups:
                keys[i] = key_of(item.path, source.digest)
                stored = cache.get(keys[i])
                if isinstance(stored, dict) and isinstance(stored.get("error"), str):
                    out.append(FileOutcome(item.path, error=stored["error"]))  # input the parser rejected
                    continue
                result = result_from_json(stored, source) if stored is not None else None
                if result is not None:
                    again = functools.partial(_port_one, item.path, source, options, kind, file_facts)
                    out.append(FileOutcome(item.path, result, source, recompute=again))
                    continue
        try:
            source.text  # a source the file index vouched for is read now, for the pass (or its error)
        except InputError as exc:
            out.append(FileOutcome(item.path, error=str(exc)))
            continue
        if file_facts is not None and (packed := ported.get(item.path)) is not None:
            done = _unpack_outcome((item.path, source, None, file_facts), packed)
            if done.result is not None and _unaffected(file_facts)(source.text, done.result.text):
                out.append(done)
                taken += 1
                if cache is not None and source.digest:
                    if _nothing(done.result):
                        cache.mark_clean(key_of, item.path, source.digest)
                    else:
                        cache.put(keys.get(i) or key_of(item.path, source.digest), packed[2])
                continue
        out.append(item)
        missing.append(i)
        digests[i] = source.digest
        feed.add((item.path, source, keys.get(i), file_facts))
    for i, outcome in zip(missing, feed.results()):
        out[i] = outcome
        if cache is not None and digests[i] and outcome.result is not None and _nothing(outcome.result):
            cache.mark_clean(key_for(facts.get(outcome.path) if facts is not None else None), outcome.path,
                             digests[i])
    if cache is not None and (missing or taken):
        cache.save_clean()
        cache.prune()
    return out


def _unaffected(facts: MakeFacts) -> Callable[[str, str], bool]:
    """Whether a Makefile's port made with no facts but the defaults (its text, and the text it was
    ported to, given) is also its port with ``facts``.

    The make passes ask the facts only whether a name they read in the text (a
    variable assigned, referred to, or given to ``-arch=``) is a compiler,
    architecture or flag variable, and whether a host compiler links (only for a
    runtime library's ``-l``, a word of the search: a file ported early holds
    none). So the port is the same if none of the names the facts add occurs in
    either text.
    """
    base = MakeFacts()
    added = (facts.compiler_vars - base.compiler_vars) | (facts.arch_vars - base.arch_vars) | (
        facts.flag_vars - base.flag_vars)  # fmt: skip
    return lambda text, new: not any(name in text or name in new for name in added)


def _nothing(result: Result) -> bool:
    """Unchanged, no findings, no packages: what most files of a tree come out as."""
    return not result.changed and not result.findings and not result.packages


class FactKeys:
    """The cache keys of one kind of work for each set of make facts met (files that share facts share
    one object): the code, kind, options and facts are hashed once for each set, not once per file."""

    __slots__ = ("_kind", "_settings", "_made")

    def __init__(self, kind: str, settings: Callable[[MakeFacts | None], object]) -> None:
        self._kind = kind
        self._settings = settings
        self._made: dict[int, tuple[MakeFacts | None, Keys]] = {}  # by id, the facts kept alive beside their keys

    def __call__(self, facts: MakeFacts | None) -> Keys:
        found = self._made.get(id(facts))
        if found is None:
            found = self._made[id(facts)] = (facts, Cache.keys(self._kind, self._settings(facts)))
        return found[1]


def _settings(options: Options, facts: MakeFacts | None) -> list[object]:
    """Everything besides the file that its result depends on, as canonical JSON data."""
    made = None if facts is None else facts.as_json()
    return [list(options.offload_arch), list(options.extra_packages), made]


#: A worker costs about as much to start as porting a few files, so a small run stays in one process.
MIN_ITEMS_PER_WORKER = 4
#: Files per chunk when they are handed to the pool as they come (:meth:`Workers.feed`): the first
#: chunk is small, so that the pool starts early, and each next one twice as large up to the last
#: size, large enough to cost little to send.
FEED_FIRST = 2 * MIN_ITEMS_PER_WORKER
FEED_CHUNK = 64

Task = TypeVar("Task")
Done = TypeVar("Done")


class Workers:
    """A pool of ``jobs`` processes, started when first needed and kept for every phase of a run,
    so that what a worker compiled for one phase (parser tables, regexes) serves the next.

    ``initializer`` runs in each worker as it starts, before its first chunk (it
    may start early, while this process still finds the items: see
    :func:`port_files`). A run that never starts the pool never calls it.
    ``preload`` runs here, once, just before the workers are forked, which then
    have what it loaded (modules, tables) without loading it themselves.
    """

    def __init__(
        self, jobs: int, initializer: Callable[[], None] | None = None, preload: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        self.jobs = jobs
        self.initializer = initializer
        self.preload = preload
        self._pool: Any = None

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=exc_type is None)  # an error or an interrupt: no need to finish the work
            self._pool = None

    def run(
        self, function: Callable[[list[Task], Any], list[Done]], items: list[Task], shared: Any,
        pack: Callable[[Done], Any] | None = None, unpack: Callable[[Task, Any], Done] | None = None,
    ) -> list[Done]:
        """``function(chunk, shared)`` over chunks of ``items``, in the pool when ``jobs`` > 1.

        The results come back in the order of ``items``, whatever the pool does.
        One process, or too few items to repay starting workers, runs here without a pool.
        With ``pack`` and ``unpack``, a result crosses from a worker as ``pack(result)``
        (plain data, cheap to send) and becomes ``unpack(item, packed)`` here again.
        """
        workers = min(self.jobs, len(items) // MIN_ITEMS_PER_WORKER)
        if workers <= 1:
            return function(items, shared)
        size = max(1, -(-len(items) // (workers * 4)))  # about four chunks per worker balances uneven files
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        n = len(chunks)
        out: list[Done] = []
        for chunk, part in zip(chunks, self.pool().map(_call, [function] * n, chunks, [shared] * n, [pack] * n)):
            out += _unpacked(chunk, part, unpack)
        return out

    def pool(self) -> Any:
        """The process pool, started on first use: forked workers fed through pipes where the
        system can fork (:mod:`buildport.forkpool`), else a ``ProcessPoolExecutor``."""
        if self._pool is None:
            from buildport import forkpool

            if forkpool.available():
                if self.preload is not None:
                    self.preload()  # once here, and every forked worker has it
                self._pool = forkpool.ForkPool(self.jobs, self.initializer)
            else:
                from concurrent.futures import ProcessPoolExecutor

                # a started worker has the built-in rule set: it is given this run's
                self._pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=functools.partial(
                    _start_worker, ruleset.active(), self.initializer))
        return self._pool

    def feed(
        self, function: Callable[[list[Task], Any], list[Done]], shared: Any,
        pack: Callable[[Done], Any] | None = None, unpack: Callable[[Task, Any], Done] | None = None,
    ) -> "Feed[Task, Done]":
        """:meth:`run` for items that come one by one: see :class:`Feed`."""
        return Feed(self, function, shared, pack, unpack)


def _start_worker(rules: ruleset.RuleSet, initializer: Callable[[], None] | None) -> None:
    ruleset.use(rules)
    if initializer is not None:
        initializer()


class Feed(Generic[Task, Done]):
    """Items handed to the pool in chunks as they are added (:data:`FEED_FIRST` items, then twice
    as many each time up to :data:`FEED_CHUNK`), so that the workers start while the items are
    still being found; :meth:`results` yields what :meth:`Workers.run` would have returned for
    all of them, in their order. What is left at the end is shared out among the workers; fewer
    items than the first chunk go to :meth:`Workers.run`, as they would have."""

    def __init__(
        self, workers: Workers, function: Callable[[list[Task], Any], list[Done]], shared: Any,
        pack: Callable[[Done], Any] | None, unpack: Callable[[Task, Any], Done] | None,
    ) -> None:
        self.workers, self.function, self.shared, self.pack, self.unpack = workers, function, shared, pack, unpack
        self.pending: list[Task] = []
        self.sent: list[tuple[list[Task], Any]] = []  # (chunk, future)
        self.size = FEED_FIRST

    def add(self, item: Task) -> None:
        self.pending.append(item)
        if len(self.pending) >= self.size and self.workers.jobs > 1:
            self._send(self.pending)
            self.pending = []
            self.size = min(2 * self.size, FEED_CHUNK)

    def _send(self, chunk: list[Task]) -> None:
        self.sent.append((chunk, self.workers.pool().submit(_call, self.function, chunk, self.shared, self.pack)))

    def results(self) -> Iterator[Done]:
        """The results in the order of the items, each chunk's as soon as it is done (what is left
        is sent at once): the caller takes in the first chunks' while the workers port the last."""
        if not self.sent:
            return iter(self.workers.run(self.function, self.pending, self.shared, self.pack, self.unpack))
        left, jobs = self.pending, self.workers.jobs
        share = -(-len(left) // jobs)
        for i in range(0, len(left), share or 1):  # the last items, one part per worker
            self._send(left[i : i + share])
        return self._collected()

    def _collected(self) -> Iterator[Done]:
        for chunk, future in self.sent:
            yield from _unpacked(chunk, future.result(), self.unpack)


def _unpacked(chunk: list[Task], part: list[Any], unpack: Callable[[Task, Any], Done] | None) -> list[Done]:
    """A chunk's results as a worker sent them, made whole again here (see :meth:`Workers.run`)."""
    return part if unpack is None else [unpack(item, packed) for item, packed in zip(chunk, part)]


def _call(function: Callable[[list[Task], Any], list[Done]], chunk: list[Task], shared: Any,
          pack: Callable[[Done], Any] | None) -> list[Any]:
    """In a worker: ``function`` over a chunk, each result packed for the way back."""
    done = function(chunk, shared)
    return done if pack is None else [pack(result) for result in done]


#: What a worker ports: the path, the source, the cache key looked up (if any) and the file's make facts.
PortTask = tuple[str, SourceText | None, str | None, MakeFacts | None]


def _port_chunk(tasks: list[PortTask], shared: Any) -> list[FileOutcome]:
    """Port a chunk of loaded files and store the results under their keys (in a worker with ``jobs`` > 1)."""
    options, kind, cache = shared
    key_for = FactKeys(kind, lambda made: _settings(options, made))  # a chunk's files that share facts share one object
    out = []
    for path, source, key, facts in tasks:
        assert source is not None
        key_of = key_for(facts) if cache is not None else None
        outcome = _port_one(path, source, options, kind, facts)
        kept = outcome.error or (outcome.result is not None and not _nothing(outcome.result))
        if key is None and key_of is not None and source.digest and kept:
            key = key_of(path, source.digest)  # the main process, with nothing stored, looked nothing up
        if cache is not None and key is not None and outcome.result is not None and not _nothing(outcome.result):
            cache.put(key, result_to_json(outcome.result))  # "nothing" is kept apart (see _port_all)
        rerun = outcome.result.rerun if outcome.result is not None else None
        if cache is not None and key_of is not None and key is not None and rerun is not None:
            # the stability check ported the rewritten text: a run after --in-place finds it here
            cache.put(key_of(path, digest(encode(rerun.original))), result_to_json(rerun))
        elif cache is not None and key is not None and outcome.error and outcome.exception is None:
            cache.put(key, {"error": outcome.error})  # a parse error depends on the text alone, too
        if outcome.exception is not None and not _picklable(outcome.exception):
            outcome.exception = RuntimeError(f"{type(outcome.exception).__name__}: {outcome.exception}")
        out.append(outcome)
    return out


def _pack_outcome(outcome: FileOutcome) -> tuple[Any, ...]:
    """A worker's outcome as the cache stores a result: without the source text the parent holds;
    ``()`` for what most files of a tree come to, their text unchanged and nothing found."""
    if outcome.result is not None and not outcome.error and outcome.exception is None and _nothing(outcome.result):
        return ()
    packed = None if outcome.result is None else result_to_json(outcome.result)
    return outcome.error, outcome.exception, packed


def _unpack_outcome(task: PortTask, packed: tuple[Any, ...]) -> FileOutcome:
    path, source = task[0], task[1]
    if not packed and source is not None:
        return FileOutcome(path, Result.unchanged(source), source)
    error, exception, data = packed
    if data is None or source is None:
        return FileOutcome(path, error=error, exception=exception)
    result = result_from_json(data, source)
    assert result is not None, "packed by _pack_outcome in a worker of this run"
    return FileOutcome(path, result, source, error, exception)


def _picklable(exc: Exception) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any failure means the exception cannot cross a process boundary
        return False
    return True


def _unique(paths: Iterable[str], contents: dict[str, SourceText] | None = None) -> Iterator[str]:
    """Each file once, however it was reached (``a/../common.mk`` and ``b/../common.mk``), as the paths come.

    A file discovery read (in ``contents``, looked up as each path comes) is known by the
    device and inode it had then.
    """
    seen: set[object] = set()
    for p in paths:
        key = p if p == "-" else file_identity(p, contents)  # missing: reading it reports the error
        if key not in seen:
            seen.add(key)
            yield p if p == "-" else os.path.normpath(p)


def _make_facts(
    loaded: list[FileOutcome], options: Options, cache: Cache | None, workers: Workers,
    fed: tuple[list[tuple[str, str, str]], list[Any]] | None = None,
) -> tuple[dict[str, MakeFacts], dict[str, Any]]:
    """Each Makefile's compiler, flag and architecture variables (by path), read with the files make
    reads along with it (see :func:`buildport.passes.make_facts.scopes`), and the Makefiles ported
    on the way (path → packed outcome).

    Each file is read on its own (by the pool's workers, if any), then the parts
    of the files that include each other are combined; the facts depend on all
    of them, so the cache keeps them under the paths and hashes of every file. A
    file that holds no word a make rule looks for is ported as soon as it is
    parsed, with the default facts: where its facts turn out not to concern it
    (:func:`_unaffected`), that is its port, and it is neither sent nor parsed
    again. ``fed``: the tasks already handed to the workers as the walk found
    the files, and what they gave back (a run whose cache holds nothing).
    """
    key = None
    named = [o.path for o in loaded]
    if cache is not None and "-" not in named:
        digests = [[o.path, o.source.digest if o.source else ""] for o in loaded]
        key = cache.key(_SCOPED_FACTS, "", "", digests)
        stored = cache.get(key) if fed is None else None  # with ``fed``, the cache held nothing
        known = _stored_facts(stored, len(named))
        if known is not None:
            return {path: facts for path, facts in zip(named, known) if facts is not None}, {}
    from buildport.passes.make_facts import scoped_facts

    if fed is not None:
        tasks, parts = fed
    else:
        tasks = [task for task in map(_facts_task, loaded) if task is not None]
        parts = workers.run(_file_facts_chunk, tasks, options)
    paths = [path for path, _, _ in tasks]
    identities = {item.path: item.source.identity for item in loaded if item.source is not None}
    includes = include_graph(paths, [include_targets(text) for _, _, text in tasks],
                             lambda i: identities.get(paths[i]) or file_identity(paths[i], None))
    by_task = scoped_facts([part for part, _ in parts], includes)
    facts = {path: made for (path, _, _), made in zip(tasks, by_task)}
    if key is not None:
        distinct: dict[int, int] = {}
        table: list[list[Any]] = []
        of: list[int] = []
        for path in named:
            made = facts.get(path)
            if made is None:
                of.append(-1)
                continue
            if id(made) not in distinct:
                distinct[id(made)] = len(table)
                table.append(made.as_json())
            of.append(distinct[id(made)])
        cache.put(key, {"facts": table, "of": of})  # type: ignore[union-attr]  # a key only with a cache
    return facts, {task[0]: packed for task, (_, packed) in zip(tasks, parts) if packed is not None}


#: The kind of work the cache keeps each run's facts under (by the paths and hashes of its Makefiles).
_SCOPED_FACTS = "make-facts-scoped"


def _stored_facts(stored: Any, count: int) -> list[MakeFacts | None] | None:
    """The facts of each of ``count`` files as :func:`_make_facts` stored them; None if malformed."""
    try:
        table, of = stored["facts"], stored["of"]
        if type(of) is not list or len(of) != count:
            return None
        made = [MakeFacts.from_json(data) for data in table]
        return [None if i == -1 else made[i] for i in of]
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _facts_task(item: FileOutcome) -> tuple[str, str, str] | None:
    """What :func:`_file_facts_chunk` reads of a loaded Makefile; None for one that could not be
    read (reported when it is ported)."""
    if item.path == "-" or item.source is None:
        return None
    try:
        return item.path, item.source.path, item.source.text
    except InputError:
        return None


def _file_facts_chunk(tasks: list[tuple[str, str, str]], options: Options) -> list[Any]:
    """What each Makefile of a chunk says on its own (None for one that does not parse: reported
    when it is ported), and, for one that holds no word a make rule looks for, its port with the
    default facts, packed (else None). Runs in a worker process with ``jobs`` > 1."""
    from buildport.engine import port_make
    from buildport.passes.make_facts import file_facts
    from buildport.passes.make_prescan import may_hold_rule_words
    from buildport.syntax.errors import ParseError
    from buildport.syntax.make import parse_make

    out: list[Any] = []
    for path, source_path, text in tasks:
        try:
            tree = parse_make(text, path)
        except ParseError:
            out.append((None, None))
            continue
        packed = None
        if not may_hold_rule_words(text):
            try:
                result = port_make(text, source_path, options, facts=MakeFacts(), tree=tree)
            except Exception:  # noqa: BLE001 - ported again, and reported, with the run's facts
                pass
            else:
                packed = _pack_outcome(FileOutcome(path, result))
        out.append((file_facts(tree), packed))
    return out


@functools.cache
def _engine() -> ModuleType:
    """:mod:`buildport.engine`, imported with the first file ported (see the note on imports above),
    once: an import statement run for each file costs microseconds each time."""
    import buildport.engine

    return buildport.engine


def _port_one(path: str, source: SourceText, options: Options, kind: str = "cmake",
              facts: MakeFacts | None = None) -> FileOutcome:
    engine = _engine()
    try:
        if kind == "cmake":
            result = engine.port_cmake(source.text, source.path, options)
        else:
            result = engine.port_make(source.text, source.path, options, facts=facts)
        result.findings.extend(_left_behind(source.text, source.path, kind, result))
    except (ParseError, InputError) as exc:
        return FileOutcome(path, error=str(exc))
    except UnstableRewrite as exc:
        return FileOutcome(path, error=f"{exc} (internal error: please report it with this file)", exception=exc)
    except Exception as exc:  # a bug in a pass must not stop the other files
        message = str(exc).splitlines()[0] if str(exc) else ""
        error = (f"{path}: internal error: {type(exc).__name__}: {message} "
                 "(please report it with this file; --debug shows a traceback)")
        return FileOutcome(path, error=error, exception=exc)
    return FileOutcome(path, result, source)


def _left_behind(text: str, path: str, kind: str, result: Result) -> list[Finding]:
    """CUDA the rewrite leaves in the file that no finding of the engine names (a CUDA library's file name,
    a path into the toolkit): what ``audit`` reports of it, so ``cmake`` and ``make`` say it too."""
    from buildport.audit import left_behind

    return left_behind(text, path, kind, result)


def write_changes(run: Run, roots: Sequence[str] = ()) -> list[str]:
    """Write every changed file in place; returns the errors.

    With ``roots`` (the folders the user named, and the folders of the files named), a file is written
    only if it is below the root that holds it when it is written (see :func:`write_atomic`)."""
    errors: list[str] = []
    named = sorted({(os.path.abspath(r), os.path.realpath(r)) for r in roots}, key=lambda r: -len(r[0]))
    for o in run.changed:
        assert o.result is not None and o.source is not None
        if o.path == "-":
            continue
        if o.recompute is not None:
            fresh = o.recompute()
            if fresh.result is None or fresh.result.text != o.result.text:
                errors.append(f"{o.path}: error: the cache's result for this file is not what porting it gives "
                              "(a cache restored from elsewhere?); not written: rerun with --no-cache")
                continue
        try:
            write_atomic(o.source, o.result.text, _root_of(o.path, named) if named else None)
        except InputError as exc:
            errors.append(str(exc))
    remove_stale_temporaries(os.path.dirname(os.path.realpath(o.path)) for o in run.changed if o.path != "-")
    return errors


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _root_of(path: str, roots: Sequence[tuple[str, str]]) -> str:
    """The resolved root, of ``roots`` (each as named and resolved, innermost first), that holds
    ``path``: by its name as discovery wrote it, else by where it leads now; with none, the
    innermost (the write is then refused as outside)."""
    absolute = os.path.abspath(path)
    for given, real in roots:
        if _below(absolute, given) or _below(absolute, real):
            return real
    now = os.path.realpath(absolute)  # a file named through a link: where the link leads
    for _given, real in roots:
        if _below(now, real):
            return real
    return roots[0][1]
