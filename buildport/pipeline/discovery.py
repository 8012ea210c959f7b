"""Discovery: the build files below the paths a command is given, and the Makefiles they include.

Discovery skips hidden directories, build trees (a ``CMakeCache.txt`` or a
``CMakeFiles/`` marks one) and directory links that leave the root; it also
skips, with a message, file links that leave the root and binary files.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from buildport.cache.fileindex import FileIndex, Listing, folder_stamp, stamp
from buildport.passes.includes import expanded, include_targets, simple_variables
from buildport.pipeline.ignore import Ignore
from buildport.rules.python import SETUP_NAMES
from buildport.textio import InputError, NotARegularFile, SourceText, check_regular, read_bytes, read_source

if TYPE_CHECKING:
    from buildport.cache.replay import Trail


def is_cmake_file(name: str) -> bool:
    return name == "CMakeLists.txt" or name.endswith(".cmake")


MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def is_make_file(name: str) -> bool:
    return name in MAKEFILE_NAMES or name.endswith(".mk")


def is_setup_py(name: str) -> bool:
    """A Python build file that may build PyTorch extensions (``setup.py``)."""
    return name in SETUP_NAMES


#: Entries that mark a folder as a build tree, whose files discovery skips (a folder given as the
#: root is walked all the same).
BUILD_TREE_MARKS = frozenset({"CMakeCache.txt", "CMakeFiles"})


def discover(
    root: Path, wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None, ignore: Ignore | None = None,
) -> Iterator[Path]:
    """Build files below ``root`` in a stable order (a folder's files by name, then its folders by name).

    A file link that leaves ``root`` is never yielded (so never written through),
    nor is a binary file; each gets a message in ``skipped``. A link inside the
    root comes after the real files, and only if its target was not yielded, so
    that no file is ported twice. Directory links are not followed. Each file is
    read to see whether it is binary; with ``contents`` the text read is kept
    there under ``str(path)``, so that porting does not read the file again.

    With ``index`` (the cache's :class:`~buildport.cache.fileindex.FileIndex`), a file
    whose metadata are as an earlier run recorded them is not read: it was not
    binary then, and its entry in ``contents`` is a source the index vouches for,
    read later only if its text is needed. The files read are recorded in it.

    ``ignore`` leaves out what the project's ``.gitignore`` files and the exclusion options name
    (:mod:`buildport.pipeline.ignore`).
    """
    return (Path(name) for name in files_below(root, wanted, skipped, contents, index, ignore))


def files_below(
    root: Path, wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None, ignore: Ignore | None = None,
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
    trail = index.trail if index is not None else None  # what the run looks at (buildport.cache.replay)
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
        if ignore is not None:
            read = len(ignore.read)
            files = [name for name in files if not ignore.walked(folder, name, False, stack_root)]
            folders = [name for name in folders if not ignore.walked(folder, name, True, stack_root)]
            if trail is not None:
                for gitignore in ignore.read[read:]:
                    trail.path(gitignore)  # its rules, or that there is none: a run replayed must see the same
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
                if name in BUILD_TREE_MARKS:
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
            source = known if known is not None else read_source(name)
            words = include_words(source, index)
        except InputError:
            continue
        if words_of is not None:
            words_of[name] = words
        simple: dict[str, str] | None = None
        for word in words:
            if "$" in word:
                # a variable the file sets once to one word (caffe's CONFIG_FILE := Makefile.config); any other
                # name made with variables: which file it is, only make can tell
                simple = simple_variables(source.text) if simple is None else simple
                word = expanded(word, simple)
                if "$" in word:
                    continue
            target = str(Path(name).parent / word)
            if trail is not None:
                trail.path(target)  # whether it exists (a later one changes the run), and its metadata
            try:
                info = os.stat(target)
            except OSError:
                template = _config_template(target, trail)
                if template is None:
                    continue
                target, info = template
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


#: What a project calls the template of a configuration its Makefile includes and the user writes (caffe's
#: ``Makefile.config.example``): ported in its place, as the user's copy will be read.
CONFIG_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".default")


def _config_template(target: str, trail: Trail | None) -> tuple[str, os.stat_result] | None:
    """The template beside an included file that does not exist (``Makefile.config`` → ``Makefile.config.example``),
    and its metadata; None without one."""
    for suffix in CONFIG_TEMPLATE_SUFFIXES:
        candidate = target + suffix
        if trail is not None:
            trail.path(candidate)
        try:
            return candidate, os.stat(candidate)
        except OSError:
            continue
    return None


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


def expand_paths(
    paths: list[str], wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None, ignore: Ignore | None = None,
) -> list[str]:
    """Files as given, directories expanded (see :func:`discover`, which fills ``contents``
    and ``index``), ``-`` kept for standard input."""
    return list(iter_paths(paths, wanted, skipped, contents, index, ignore))


def iter_paths(
    paths: list[str], wanted: Callable[[str], bool], skipped: list[str] | None = None,
    contents: dict[str, SourceText] | None = None, index: FileIndex | None = None, ignore: Ignore | None = None,
) -> Iterator[str]:
    """:func:`expand_paths` as it goes: each file as soon as discovery has read it, so
    that porting (:func:`port_files`) can begin while the walk goes on. A path named is
    left out only by ``--force-exclude`` (``ignore``)."""
    trail = index.trail if index is not None else None
    for p in paths:
        path = Path(p)
        if ignore is not None and ignore.named(p):
            continue
        if p != "-" and path.is_dir() and not wanted(path.name):
            yield from files_below(path, wanted, skipped, contents, index, ignore)
        else:
            if trail is not None and p == "-":
                trail.spoil()  # stdin is no file to look at again
            elif trail is not None:
                trail.path(p)
            yield p


def unique_files(paths: Iterable[str], contents: dict[str, SourceText] | None = None) -> Iterator[str]:
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


