"""Which source files a build references, and the local headers they include.

CMake: every argument that names a source file (add_executable, add_library,
target_sources, user functions and macros alike), through simple ``set()`` /
``list(APPEND)`` variables and ``file(GLOB)``; ``${CMAKE_CURRENT_SOURCE_DIR}``
and the project directories are known. make: words that name source files,
``$(wildcard ...)`` patterns, and objects whose source a pattern rule builds.
Then ``#include "..."`` headers, transitively. Paths outside the root are never
returned as sources; the files and folders outside it that the build or a source
names by a relative path (``../common/util.h``, ``-I../other``) are listed apart
(:attr:`SourceSet.outside`): a migration neither converts nor copies them.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from buildport.passes.cmake_args import value_of
from buildport.passes.includes import expanded, include_targets, simple_variables
from buildport.syntax.cmake import parse_cmake
from buildport.syntax.errors import ParseError
from buildport.syntax.make import parse_make
from buildport.textio import InputError, read_source

SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl")
CUDA_SUFFIXES = (".cu", ".cuh")
#: An ``#include`` directive: the quoted name, or the bracketed one.
INCLUDE_DIRECTIVE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<([^>]+)>)', re.M)
_SIMPLE_REF = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_WILDCARD = re.compile(r"\$[({]wildcard\s+([^)}$]+)[)}]")
_MAKE_INCLUDE_DIR = re.compile(r"(?<![\w$])-I\s*([^\s$()]+)")
#: The words of a Makefile, as its build names files: split at blanks and at ``: = | ; \``.
_MAKE_WORD = re.compile(r"[^\s:=|;\\]+")


@dataclass(slots=True)
class SourceSet:
    """What the build compiles, found by reading it."""

    sources: set[Path] = field(default_factory=set)
    headers: set[Path] = field(default_factory=set)
    include_dirs: set[Path] = field(default_factory=set)
    #: Existing files and folders outside the root that the build or a source names by a relative
    #: path: each (absolute, normalized) → the file that names it first, and the line.
    outside: dict[Path, tuple[Path, int]] = field(default_factory=dict)
    #: For a copy of a project (``migrate --out``): the copy's root and the original's. A path that
    #: leaves the copy is looked for where it leads from the original, as the build there finds it.
    copied: tuple[Path, Path] | None = None

    @property
    def all(self) -> set[Path]:
        return self.sources | self.headers


def inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


#: Where a file names another: the naming file, its text, and the offset in it (its line is counted only
#: for a file outside the root).
Origin = tuple[Path, str, int]


def _add(found: SourceSet, root: Path, path: Path, origin: Origin | None = None) -> None:
    """``path`` as a source if it is one inside ``root``; with ``origin`` (where a file names it),
    an existing file outside is noted in ``found.outside``."""
    if path.suffix not in SOURCE_SUFFIXES:
        return
    if inside(path, root):
        if path.is_file() and not path.is_symlink():
            found.sources.add(path.resolve())
    elif origin is not None:
        note_outside(found, root, path, origin)


def note_outside(found: SourceSet, root: Path, path: Path, origin: Origin) -> bool:
    """Note ``path``, outside ``root``, as named at ``origin``, if there is such a file or folder (beside
    the original, for a copy); whether there is."""
    if inside(path, root):
        return False
    where = Path(os.path.normpath(path.absolute()))
    if found.copied is not None:
        copy, original = found.copied
        if not (original / os.path.relpath(where, copy.absolute())).exists():
            return False
    elif not where.exists():
        return False
    if where not in found.outside:
        named_in, text, offset = origin
        found.outside[where] = (named_in, text.count("\n", 0, offset) + 1)
    return True


def cmake_sources(path: Path, root: Path, found: SourceSet) -> None:
    """Source files a CMake file names, read as CMake reads it: relative to the current source directory,
    through variables, ``file(GLOB)``, ``include()`` (in the includer's scope and directory) and
    ``add_subdirectory()`` (a copy of the scope, the subdirectory's directory)."""
    here = path.parent.absolute()
    variables = {
        "CMAKE_SOURCE_DIR": [str(root.absolute())], "PROJECT_SOURCE_DIR": [str(root.absolute())],
        "CMAKE_CURRENT_SOURCE_DIR": [str(here)],
    }
    _CMakeReader(root, found).read(path, here, variables, 0)


class _CMakeReader:
    """Reads the CMake files one file reaches, with the variables CMake would have (simple ones)."""

    def __init__(self, root: Path, found: SourceSet) -> None:
        self.root = root
        self.found = found
        self.active: set[Path] = set()  # files being read: an include cycle is not followed
        self.functions: dict[str, _Definition] = {}  # the project's functions and macros read so far, by name
        self.calling: list[str] = []  # those being called, innermost last: a recursion is not followed
        self.calls_left = _MAX_CALLS  # bodies read at calls, in all: wrappers calling wrappers stay linear
        self.parsed: dict[Path, tuple[str, list[_Call]] | None] = {}  # each file parsed once

    def read(self, path: Path, here: Path, variables: dict[str, list[str]], depth: int) -> None:
        resolved = path.resolve()
        if depth > _MAX_DEPTH or resolved in self.active:
            return
        if resolved not in self.parsed:
            try:
                tree = parse_cmake(read_source(path).text, str(path), cut=True)  # every command is read
            except (ParseError, InputError):
                self.parsed[resolved] = None
            else:
                self.parsed[resolved] = (tree.text, [(c.identifier, [value_of(a.value) for a in c.arguments()],
                                                      c.start) for c in tree.commands()])
        parsed = self.parsed[resolved]
        if parsed is None:
            return
        self.active.add(resolved)
        variables["CMAKE_CURRENT_LIST_DIR"] = [str(path.parent.absolute())]
        text, commands = parsed
        self._run(commands, path, text, here, variables, depth, None)
        self.active.discard(resolved)

    def _run(self, commands: list[_Call], path: Path, text: str, here: Path, variables: dict[str, list[str]],
             depth: int, parent: dict[str, list[str]] | None) -> None:
        """Read ``commands`` of the file ``path``: a function's or macro's body is read where it stands (the
        files it names literally) and kept, to be read again with its arguments where the file calls it."""
        defining: _Definition | None = None
        nesting = 0
        for name, values, start in commands:
            if defining is not None:
                if name in ("function", "macro"):
                    nesting += 1
                elif name in ("endfunction", "endmacro"):
                    if not nesting:
                        self.functions[defining.name] = defining
                        defining = None
                        continue
                    nesting -= 1
                defining.body.append((name, values, start))
            elif name in ("function", "macro") and values:
                defining = _Definition(name == "macro", values[0].lower(), values[1:], path, text, [])
                nesting = 0
                continue
            elif name in self.functions:
                self._call(self.functions[name], values, here, variables, depth, parent)
            self._command(name, values, here, variables, (path, text, start), depth, parent)

    def _call(self, function: _Definition, values: list[str], here: Path, variables: dict[str, list[str]],
              depth: int, parent: dict[str, list[str]] | None) -> None:
        """A call of the project's own function or macro: its body read with its parameters, ARGN and ARGV bound
        to the call's arguments (expanded); a function in a scope of its own, which ``set(... PARENT_SCOPE)``
        leaves, a macro in the caller's."""
        if function.name in self.calling or len(self.calling) >= _MAX_CALL_DEPTH or self.calls_left <= 0:
            return
        self.calls_left -= 1
        arguments = _evaluated(values, variables)
        bound = {p: arguments[i : i + 1] for i, p in enumerate(function.parameters)}
        bound["ARGN"] = arguments[len(function.parameters) :]
        bound["ARGV"] = arguments
        bound["ARGC"] = [str(len(arguments))]
        bound.update({f"ARGV{i}": [a] for i, a in enumerate(arguments)})
        self.calling.append(function.name)
        if function.macro:  # the caller's scope; the parameters are the macro's alone
            saved = {name: variables[name] for name in bound if name in variables}
            variables.update(bound)
            self._run(function.body, function.path, function.text, here, variables, depth + 1, parent)
            for name in bound:
                variables.pop(name, None)
            variables.update(saved)
        else:
            self._run(function.body, function.path, function.text, here, {**variables, **bound}, depth + 1, variables)
        self.calling.pop()

    def _command(self, name: str, values: list[str], here: Path, variables: dict[str, list[str]],
                 origin: Origin, depth: int, parent: dict[str, list[str]] | None = None) -> None:
        found, root = self.found, self.root
        if name == "set" and values:
            # set(${variable} ...) in a function sets the variable its caller named
            # the values as they are when set() runs: a function's parameters are gone once the value leaves it
            scope = parent if parent is not None and values[-1] == "PARENT_SCOPE" else variables
            scope[_substitute(values[0], variables) or values[0]] = _evaluated(_set_values(values[1:]), variables)
        elif name == "list" and len(values) > 2 and values[0] in ("APPEND", "PREPEND"):
            listed = _substitute(values[1], variables) or values[1]
            variables[listed] = variables.get(listed, []) + _evaluated(values[2:], variables)
        elif name == "cmake_parse_arguments" and len(values) >= 4:
            _parse_arguments(values, variables)
        elif name == "get_filename_component" and len(values) > 2:
            component = _filename_component(values, here, variables)
            if component is not None:
                variables[values[0]] = [component]
        elif name == "file" and len(values) > 2 and values[0] in ("GLOB", "GLOB_RECURSE"):
            hits = self._glob(values, here, variables, origin)
            variables[values[1]] = [str(hit) for hit in hits]
        elif name in ("include_directories", "target_include_directories"):
            for value in values:
                # $<BUILD_INTERFACE:dir> is dir in this build; $<INSTALL_INTERFACE:...> is none of it
                value = _BUILD_INTERFACE.sub(r"\1", value)
                full = _substitute(value, variables)
                if full is not None and value not in ("PUBLIC", "PRIVATE", "INTERFACE", "SYSTEM", "BEFORE"):
                    candidate = Path(full) if Path(full).is_absolute() else here / full
                    if candidate.is_dir() and inside(candidate, root):
                        found.include_dirs.add(candidate.resolve())
                    elif not _absolute(value):
                        note_outside(found, root, candidate, origin)
        elif name == "include" and values:
            included = self._module(values[0], here, variables)
            if included is not None:
                self.read(included, here, variables, depth + 1)  # the includer's scope and directory
                variables["CMAKE_CURRENT_LIST_DIR"] = [str(Path(origin[0]).parent.absolute())]
        elif name == "add_subdirectory" and values:
            folder = _substitute(values[0], variables)
            if folder is not None:
                sub = Path(folder) if Path(folder).is_absolute() else here / folder
                lists = sub / "CMakeLists.txt"
                if lists.is_file() and inside(lists, root):
                    scope = dict(variables, CMAKE_CURRENT_SOURCE_DIR=[str(sub.absolute())])
                    self.read(lists, sub.absolute(), scope, depth + 1)
        for value in values:
            for item in _expand(value, variables):
                full = _substitute(item, variables)
                if full is not None and full.endswith(SOURCE_SUFFIXES):
                    _add(found, root, Path(full) if Path(full).is_absolute() else here / full,
                         None if _absolute(item) else origin)

    def _glob(self, values: list[str], here: Path, variables: dict[str, list[str]], origin: Origin) -> list[Path]:
        """``file(GLOB[_RECURSE] VAR [options] patterns...)`` as CMake globs: a recursive glob matches the
        pattern's last part in every folder below the pattern's folder (no ``**`` needed)."""
        hits: list[Path] = []
        options = iter(values[2:])
        for pattern in options:
            if pattern in ("LIST_DIRECTORIES", "RELATIVE"):
                next(options, None)
                continue
            if pattern in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                continue
            full = _substitute(pattern, variables)
            if full is None:
                continue
            for one in full.split(";"):  # a variable may hold several patterns (file(GLOB s ${ARGN}))
                if not one:
                    continue
                pattern_path = Path(one) if Path(one).is_absolute() else here / one
                if values[0] == "GLOB_RECURSE":
                    # below the project only: a pattern that is a folder would walk the one above it
                    matched = _glob_recurse(pattern_path) if inside(pattern_path.parent, self.root) else []
                else:
                    matched = [Path(hit) for hit in glob.glob(str(pattern_path))]
                for hit in matched:
                    _add(self.found, self.root, hit, None if _absolute(pattern) else origin)
                hits += matched
        return hits

    def _module(self, name: str, here: Path, variables: dict[str, list[str]]) -> Path | None:
        """The file ``include(name)`` reads: a path (relative to the current source directory), or a module
        looked for in CMAKE_MODULE_PATH; inside the project only."""
        full = _substitute(name, variables)
        if full is None:
            return None
        if full.endswith(".cmake") or "/" in full:
            candidate = Path(full) if Path(full).is_absolute() else here / full
            return candidate if candidate.is_file() and inside(candidate, self.root) else None
        for folder in variables.get("CMAKE_MODULE_PATH", []):
            folder_path = _substitute(folder, variables)
            if folder_path is None:
                continue
            candidate = (Path(folder_path) if Path(folder_path).is_absolute() else here / folder_path) / (full + ".cmake")
            if candidate.is_file() and inside(candidate, self.root):
                return candidate
        return None


#: One command as the reader keeps it: its name, its arguments' values, its offset in its file.
_Call = tuple[str, list[str], int]


@dataclass(slots=True)
class _Definition:
    """A function or macro of the project: its body, read again where it is called."""

    macro: bool
    name: str
    parameters: list[str]
    path: Path
    text: str
    body: list[_Call]


def _parse_arguments(values: list[str], variables: dict[str, list[str]]) -> None:
    """``cmake_parse_arguments(PREFIX options one_value_keywords multi_value_keywords args...)`` (or ``PARSE_ARGV
    N PREFIX ...``) as CMake does it: ``PREFIX_OPTION`` TRUE or FALSE, ``PREFIX_KEYWORD`` what follows each keyword
    given (a multi-value keyword given twice collects both), unset where it is not given, the rest in
    ``PREFIX_UNPARSED_ARGUMENTS``."""
    if values[0] == "PARSE_ARGV":
        if len(values) < 6 or not values[1].isdigit():
            return
        prefix, lists = values[2], values[3:6]
        words = variables.get("ARGV", [])[int(values[1]) :]
    else:
        prefix, lists = values[0], values[1:4]
        words = _evaluated(values[4:], variables)
    options, single, multiple = ([k for k in (_substitute(x, variables) or x).split(";") if k] for x in lists)
    for keyword in (*single, *multiple, "UNPARSED_ARGUMENTS"):
        variables.pop(f"{prefix}_{keyword}", None)
    for option in options:
        variables[f"{prefix}_{option}"] = ["FALSE"]
    parsed: dict[str, list[str]] = {}
    unparsed: list[str] = []
    current: str | None = None
    for word in words:
        if word in options:
            variables[f"{prefix}_{word}"] = ["TRUE"]
            current = None
        elif word in single:
            parsed[word] = []
            current = word
        elif word in multiple:
            parsed.setdefault(word, [])
            current = word
        elif current is not None:
            parsed[current].append(word)
            if current in single:
                current = None
        else:
            unparsed.append(word)
    for keyword, held in parsed.items():
        if held:
            variables[f"{prefix}_{keyword}"] = held
    if unparsed:
        variables[f"{prefix}_UNPARSED_ARGUMENTS"] = unparsed


def _evaluated(values: list[str], variables: dict[str, list[str]]) -> list[str]:
    """Arguments as a command receives them: each list variable's items, each reference this reader knows
    replaced (one it does not know left as it is written)."""
    out = []
    for value in values:
        for item in _expand(value, variables):
            known = _substitute(item, variables)
            out.append(item if known is None else known)
    return out


def _filename_component(values: list[str], here: Path, variables: dict[str, list[str]]) -> str | None:
    """``get_filename_component(VAR FILE MODE [BASE_DIR DIR])`` as CMake computes it, for the modes that
    name a path (``ABSOLUTE``, ``REALPATH``, ``DIRECTORY``/``PATH``) or a part of one (``NAME``,
    ``NAME_WE``, ``EXT``...); None where ``FILE`` is not known here (a variable this reader lacks)."""
    written, mode = values[1], values[2]
    full = _substitute(written, variables)
    if full is None:
        return None
    if mode in ("ABSOLUTE", "REALPATH"):
        base = here
        if len(values) > 4 and values[3] == "BASE_DIR":
            given = _substitute(values[4], variables)
            if given is None:
                return None
            base = Path(given) if Path(given).is_absolute() else here / given
        path = Path(full) if Path(full).is_absolute() else base / full
        return str(path.resolve()) if mode == "REALPATH" else os.path.normpath(path)
    name = full.rstrip("/").rsplit("/", 1)[-1]
    if mode in ("DIRECTORY", "PATH"):
        return full.rstrip("/").rsplit("/", 1)[0] if "/" in full.rstrip("/") else ""
    if mode == "NAME":
        return name
    if mode in ("NAME_WE", "EXT"):  # the longest extension: from the first dot
        stem, dot, extension = name.partition(".")
        return stem if mode == "NAME_WE" else dot + extension
    if mode in ("NAME_WLE", "LAST_EXT"):  # the last extension
        stem, dot, extension = name.rpartition(".")
        if not dot:
            stem, extension = name, ""
        return stem if mode == "NAME_WLE" else dot + extension
    return None


_MAX_DEPTH = 32
#: At most this many bodies of the project's functions and macros read at their calls, and so many calls inside
#: each other (a wrapper calling wrappers twice each would otherwise be read exponentially often).
_MAX_CALLS = 5000
_MAX_CALL_DEPTH = 12
#: What ends the values of a set(): the cache entry's type and help, or the scope it sets in.
_SET_TAIL = ("CACHE", "PARENT_SCOPE")


def _set_values(values: list[str]) -> list[str]:
    for i, value in enumerate(values):
        if value in _SET_TAIL:
            return values[:i]
    return values


def _glob_recurse(pattern: Path) -> list[Path]:
    """Files below the pattern's folder whose name matches its last part (CMake's GLOB_RECURSE)."""
    import fnmatch

    folder, name = pattern.parent, pattern.name
    if any(c in str(folder) for c in "*?["):
        return [Path(hit) for hit in glob.glob(str(pattern).replace("**", "*"), recursive=True)]
    hits = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        hits += [Path(dirpath) / f for f in sorted(filenames) if fnmatch.fnmatchcase(f, name)]
    return hits


#: A folder given to the build only (``$<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>``).
_BUILD_INTERFACE = re.compile(r"^\$<BUILD_INTERFACE:([^<>]*)>$")


def _absolute(written: str) -> bool:
    """Whether a path is written as an absolute one (``/usr/local/cuda/include``): an installed
    package, not a part of the project that lies outside its folder."""
    return written.startswith(("/", "~")) or (len(written) > 2 and written[1] == ":" and written[0].isalpha())


def _expand(value: str, variables: dict[str, list[str]], depth: int = 0) -> list[str]:
    m = re.fullmatch(r"\$\{([A-Za-z0-9_]+)\}", value)
    if m and m.group(1) in variables and depth < 8:
        out: list[str] = []
        for item in variables[m.group(1)]:
            out.extend(_expand(item, variables, depth + 1))
        return out
    return [value]


def _substitute(value: str, variables: dict[str, list[str]]) -> str | None:
    """``${CMAKE_CURRENT_SOURCE_DIR}/a.cu`` → a path, CMake's escapes (``\\$``, ``\\;``, ``\\"``, ``\\ ``,
    ``\\t``...) read as the characters they stand for; ``None`` when other references remain."""
    if "\\" not in value:  # the common case: references only
        out = _SIMPLE_REF.sub(lambda m: _known(m.group(1), variables, m.group(0)), value)
        return None if "${" in out or "$<" in out else out
    unresolved = False

    def one(m: re.Match[str]) -> str:
        nonlocal unresolved
        if m.group("escaped") is not None:
            return _ESCAPED.get(m.group("escaped"), m.group("escaped"))
        if m.group("name") is None:
            unresolved = True  # $<...> or a reference this reader does not evaluate
            return m.group(0)
        found = _known(m.group("name"), variables, "")
        unresolved = unresolved or m.group("name") not in variables
        return found

    out = _REF_OR_ESCAPE.sub(one, value)
    return None if unresolved else out


def _known(name: str, variables: dict[str, list[str]], otherwise: str) -> str:
    found = variables.get(name)
    return ";".join(found) if found is not None else otherwise


#: A CMake escape sequence, a simple reference, or the start of any other reference or expression.
_REF_OR_ESCAPE = re.compile(r"\\(?P<escaped>.)|\$\{(?P<name>[A-Za-z0-9_]+)\}|\$[{<]|\$\w+\{", re.S)
#: escape_encoded: the characters CMake's \\t, \\r, \\n stand for (escape_identity stands for itself).
_ESCAPED = {"t": "\t", "r": "\r", "n": "\n"}


def make_sources(path: Path, root: Path, found: SourceSet) -> None:
    """Source files one Makefile names (relative to its directory)."""
    try:
        text = read_source(path).text
        parse_make(text, str(path))
    except (ParseError, InputError):
        return
    here = path.parent
    for m in _WILDCARD.finditer(text):
        for pattern in m.group(1).split():
            for hit in glob.glob(str(here / pattern)):
                _add(found, root, Path(hit), None if _absolute(pattern) else (path, text, m.start()))
    for m in _MAKE_INCLUDE_DIR.finditer(text):
        candidate = here / m.group(1)
        if candidate.is_dir() and inside(candidate, root):
            found.include_dirs.add(candidate.resolve())
        elif not _absolute(m.group(1)):
            note_outside(found, root, candidate, (path, text, m.start()))
    for word in include_targets(text):  # what it includes from outside (rodinia's ../../common/make.config)
        if "$" not in word and not _absolute(word):
            note_outside(found, root, here / word, (path, text, text.find(word)))
    # an object's source: by the file's pattern and suffix rules (.c.o:), else a CUDA one; C and C++ ones
    # always, which make's built-in rules compile (their headers may be CUDA's: FastEddy's fecuda_Device.h)
    rule_sources = set(re.findall(r"%(\.\w+)", text)) | set(_SUFFIX_RULE.findall(text))
    pattern_sources = (rule_sources & set(SOURCE_SUFFIXES) or set(CUDA_SUFFIXES)) | set(_BUILT_IN_SOURCES)
    # make looks for a prerequisite in the VPATH folders (and a vpath pattern's) where it is not in the file's
    folders = [here, *(here / d for d in _vpath_folders(text))]
    simple = simple_variables(text)
    for m in _MAKE_WORD.finditer(text):
        word = m.group()
        if "$" in word:
            word = expanded(word, simple)  # $(LIST_CUDA_CC).cc with LIST_CUDA_CC=$(SCRIPTSDIR)/list-cuda-cc
        if "$" in word or "%" in word or "*" in word:
            continue
        if word.endswith(SOURCE_SUFFIXES):
            for folder in folders if not _absolute(word) else [here]:
                if (folder / word).is_file() or folder is here:
                    _add(found, root, folder / word, None if _absolute(word) else (path, text, m.start()))
        elif word.endswith(".o"):
            stem = word.rsplit("/", 1)[-1][:-2]
            for suffix in pattern_sources:
                _add(found, root, here / (word[:-2] + suffix))
                for folder in folders[1:]:  # $(OBJDIR)%.o: %.cu finds the source by VPATH
                    _add(found, root, folder / (stem + suffix))


#: An old-fashioned suffix rule, ``.c.o:`` or ``.cu.o:``: the source suffix.
_SUFFIX_RULE = re.compile(r"^(\.\w+)\.o[ \t]*:(?!=)", re.M)
#: What make's built-in rules compile into an object.
_BUILT_IN_SOURCES = (".c", ".cc", ".cpp")

_VPATH = re.compile(r"^[ \t]*(?:override[ \t]+)?VPATH[ \t]*[:+?]?=[ \t]*(.*)$|^[ \t]*vpath[ \t]+\S+[ \t]+(.*)$", re.M)


def _vpath_folders(text: str) -> list[str]:
    """The folders ``VPATH = a:b`` and ``vpath %.cu a b`` name (literal ones: a variable is not expanded)."""
    folders: list[str] = []
    for m in _VPATH.finditer(text):
        value = (m.group(1) if m.group(1) is not None else m.group(2) or "").split("#", 1)[0]
        folders += [d for d in re.split(r"[\s:]+", value) if d and "$" not in d]
    return list(dict.fromkeys(folders))


def add_headers(found: SourceSet, root: Path) -> None:
    """``#include "x.h"`` of every source, resolved like a compiler would, transitively."""
    pending = list(found.sources)
    seen = set(found.sources)
    while pending:
        source = pending.pop()
        try:
            text = read_source(source).text
        except InputError:
            continue
        for m in INCLUDE_DIRECTIVE.finditer(text):
            name = m.group(1) or m.group(2)
            # "x.h" is looked for beside the source first; <x.h> only in the project's include folders
            folders = [source.parent, *sorted(found.include_dirs)] if m.group(1) else sorted(found.include_dirs)
            for folder in folders:
                candidate = (folder / name)
                if not inside(candidate, root):
                    # the header the compiler takes, outside the project (beside the original, for a copy)
                    if not _absolute(name) and note_outside(found, root, candidate, (source, text, m.start())):
                        break
                    continue
                if candidate.is_file() and not candidate.is_symlink():
                    resolved = candidate.resolve()
                    if resolved not in seen:
                        seen.add(resolved)
                        found.headers.add(resolved)
                        pending.append(resolved)
                    break


def project_header(found: SourceSet, root: Path, source: Path, name: str, quoted: bool) -> Path | None:
    """The project's own file ``#include "name"`` (``quoted``) or ``<name>`` of ``source`` reads, found as
    :func:`add_headers` finds it; None when the compiler would look outside the project (the SDK's)."""
    folders = [source.parent, *sorted(found.include_dirs)] if quoted else sorted(found.include_dirs)
    for folder in folders:
        candidate = folder / name
        if inside(candidate, root) and candidate.is_file():
            return candidate
    return None


def unreferenced(root: Path, found: SourceSet, files: list[Path]) -> list[Path]:
    """CUDA sources in the tree that nothing in the build references."""
    used = found.all
    return sorted(p for p in files if p.suffix in CUDA_SUFFIXES and p.resolve() not in used)
