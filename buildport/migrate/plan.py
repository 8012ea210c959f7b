"""``buildport migrate``: a whole CUDA project to HIP, with a report of what is left.

Plan first (discover build files, resolve the sources they reference, hipify
them in memory, port the build files), then write: every file through a
temporary file and ``os.replace``, never outside the target root, never
through a symbolic link. Nothing is written when the plan fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import stat
from concurrent.futures import ThreadPoolExecutor
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from buildport.dual import is_dual
from buildport.dual.compat import Usage
from buildport.migrate import keep
from buildport.migrate.asking import Answer
from buildport.rules.source_rules import CUDA_IDENTIFIER
from buildport.rules.dual import COMPAT_FOLDER, DEFAULT_RUNTIME, RUNTIME_VARIABLE
from buildport.source.carry import carried
from buildport.migrate.cmakeapi import Configure, configures
from buildport.migrate.dryrun import COMPILED_SUFFIXES, DryRun, dry_runs
from buildport.findings import Finding, Severity
from buildport.source.hipify import (
    ENGINE_TIMEOUT, HipifyResult, builtin_engine, convert_source, find_engine, installed_hip_version,
)
from buildport.options import Options
from buildport.result import Region, Result, UnstableRewrite
from buildport.syntax.errors import ParseError
from buildport.pipeline.discovery import (
    BUILD_TREE_MARKS, discover, included_makefiles, is_cmake_file, is_make_file, is_setup_py,
)
from buildport.pipeline.ignore import Ignore
from buildport.pipeline.outcomes import FileOutcome
from buildport.pipeline.port import port_files
from buildport.source.scan import is_cuda_source, scan_source
from buildport.source.fix import FIXES, full_mask_macros, port_source
from buildport.source.references import (
    CUDA_SUFFIXES, INCLUDE_DIRECTIVE, SOURCE_SUFFIXES, SourceSet, add_headers, cmake_sources, inside, make_sources,
    project_header, unreferenced,
)
from buildport.textio import (
    NOT_READ, InputError, SourceText, digest, encode, file_kind, read_bytes, read_input, read_source,
    remove_stale_temporaries,
    write_atomic, write_new,
)

if TYPE_CHECKING:
    from buildport.source.convert import Converter


class MigrationError(Exception):
    """The migration cannot go ahead; nothing was written."""


@dataclass(slots=True)
class Change:
    """One file the migration writes."""

    path: Path
    source: SourceText
    new_text: str
    kind: str  # "cmake", "make", "python" (a setup.py), "source"
    hipify: HipifyResult | None = None
    #: What buildport.source.fix changed in a source after hipify: fix id → how many.
    fixes: dict[str, int] = field(default_factory=dict)
    #: The name the source had before ``--rename-sources hip`` (``path`` is the new one).
    renamed_from: Path | None = None
    #: Where a build file's port changed it (None: not known, and a diff compares the whole files).
    regions: list[Region] | None = None


#: The build tools migrate asks by default.
ASK_ALL = frozenset({"make", "cmake"})


@dataclass(slots=True)
class Plan:
    """Everything the migration would do, computed before anything is written."""

    root: Path
    build_files: list[Path] = field(default_factory=list)
    sources: SourceSet = field(default_factory=SourceSet)
    changes: list[Change] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unreferenced: list[Path] = field(default_factory=list)
    #: C and C++ files (not .cu/.cuh) that hold CUDA but were not converted: no source of the build was found
    #: to include them (an include resolved by a path of one configuration among several, say).
    cuda_left: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    hip_version: tuple[int, int] | None = None  # the installed HIP's, for the source fixes that depend on it
    hipify_failures: list[tuple[str, str]] = field(default_factory=list)
    #: How many sources were handed to the engine (those that could be read).
    engine_given: int = 0
    engine: str = ""
    #: Sources written under a new name by --rename-sources hip (no longer in ``changes``: written already).
    renamed: list[Change] = field(default_factory=list)
    #: What make's dry run said of each Makefile (none when it was not asked), the sources only it named
    #: (added), and the compiled sources only the build files name, where every dry run answered (kept).
    dry_runs: list[DryRun] = field(default_factory=list)
    dry_run_added: list[Path] = field(default_factory=list)
    static_only: list[Path] = field(default_factory=list)
    #: The same of CMake's File API after a configure of each top-level CMakeLists.txt.
    configures: list[Configure] = field(default_factory=list)
    cmake_added: list[Path] = field(default_factory=list)
    cmake_static_only: list[Path] = field(default_factory=list)
    #: The setup.py files that build PyTorch extensions, and the CUDA sources those name: left as they are,
    #: PyTorch hipifies them when it builds the extension on ROCm.
    setup_files: list[Path] = field(default_factory=list)
    extension_sources: list[Path] = field(default_factory=list)
    #: A dual build (``--keep-cuda``): the sources stay as they are, the CUDA names they use (``usage``) are
    #: mapped by the compatibility folder, whose files are ``new_files`` (``compat_names`` names mapped).
    keep_cuda: bool = False
    usage: Usage = field(default_factory=Usage)
    new_files: dict[Path, str] = field(default_factory=dict)
    compat_names: int = 0

    def reported(self) -> list[Change]:
        """Every file the migration changed or renamed, in path order: what the reports list."""
        return sorted(self.changes + self.renamed, key=lambda c: self.relative(c.path))

    def relative(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)


@dataclass(frozen=True, slots=True)
class GitState:
    """What git says of a folder: inside a work tree (by its ``.git``), with uncommitted changes, or why
    git could not tell (not installed, a repository it refuses: another owner's, a broken one)."""

    tree: bool
    dirty: bool = False
    unknown: str = ""


def git_state(path: Path) -> GitState:
    """The git state of ``path``: a folder with a ``.git`` in it or above it is a work tree, whether or
    not git can read it; then ``git status`` says whether it has changes, or ``unknown`` why not."""
    real = path.resolve()
    if not any((folder / ".git").exists() for folder in (real, *real.parents)):
        return GitState(False)
    try:
        done = subprocess.run(["git", "-C", str(path), "status", "--porcelain"], capture_output=True, check=False,
                              stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
    except OSError as exc:
        return GitState(True, unknown=f"git could not run ({exc.strerror or exc})")
    if done.returncode != 0:
        said = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        return GitState(True, unknown="git refused the repository" + (f" ({said[0]})" if said else ""))
    return GitState(True, dirty=bool(done.stdout.strip()))


#: The mark of a copy (``--out``) being made: removed when the migration is done. A folder that still has it
#: was left half-made by a run that was killed, and the next run starts it again.
INCOMPLETE = ".buildport-incomplete"


def copy_tree(source: Path, target: Path, ignore: Ignore | None = None) -> list[tuple[str, str]]:
    """Copy a project; links stay links (their targets, maybe outside, are never copied). Named pipes,
    devices and sockets are not copied, nor build trees (a folder with ``CMakeCache.txt`` or ``CMakeFiles``)
    and folders ``ignore`` leaves out (``.gitignore``, ``--exclude``): returned, each with why (relative to
    ``source``). A copy that fails (a full disk, an unreadable file) is a :class:`MigrationError` naming the
    first file. The copy holds :data:`INCOMPLETE` until :func:`completed` removes it."""
    if target.exists() and any(p.name != INCOMPLETE for p in target.iterdir()):
        raise MigrationError(f"{target}: the output directory exists and is not empty")
    if target.resolve() == source.resolve() or source.resolve() in target.resolve().parents:
        raise MigrationError(f"{target}: the output directory must not be inside {source}")
    target.mkdir(parents=True, exist_ok=True)
    _write_new(target / INCOMPLETE, f"a copy of {source} being migrated\n", 0o644, target)
    left: list[tuple[str, str]] = []

    def ignored(folder: str, names: list[str]) -> set[str]:
        out = {".git", INCOMPLETE} & set(names)
        for name in names:
            try:
                mode = os.lstat(os.path.join(folder, name)).st_mode
            except OSError:
                continue  # the copy reports it
            why = ""
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                why = f"not copied: {file_kind(mode)}"
            elif stat.S_ISDIR(mode) and name not in out:
                inside_names = _names(os.path.join(folder, name))
                if inside_names & BUILD_TREE_MARKS:
                    why = "not copied: a build tree"
                elif ignore is not None and ignore.walked(folder, name, True, str(source)):
                    why = "not copied: left out by .gitignore or --exclude"
            if why:
                out.add(name)
                left.append((os.path.relpath(os.path.join(folder, name), source), why))
        return out

    try:
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True, ignore=ignored)
    except shutil.Error as exc:
        first = exc.args[0][0] if exc.args and isinstance(exc.args[0], list) and exc.args[0] else None
        if first is not None:
            raise MigrationError(f"{first[0]}: cannot copy to {first[1]}: {first[2]}") from None
        raise MigrationError(f"{target}: cannot copy the project: {exc}") from None
    except OSError as exc:
        raise MigrationError(f"{exc.filename or target}: cannot copy the project: {exc.strerror or exc}") from None
    return left


def _names(folder: str) -> set[str]:
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()  # the copy reports it


def half_made(target: Path) -> bool:
    """Whether ``target`` is a copy an interrupted run left half-made (it holds :data:`INCOMPLETE`, a file);
    if so it is removed, so that the migration can start again."""
    mark = target / INCOMPLETE
    if mark.is_symlink() or not mark.is_file():
        return False
    shutil.rmtree(target)
    return True


def completed(target: Path) -> None:
    """The copy is migrated: its :data:`INCOMPLETE` mark goes."""
    with contextlib.suppress(FileNotFoundError):
        (target / INCOMPLETE).unlink()


def make_plan(root: Path, options: Options, engine_path: str | None, jobs: int,
              progress: Callable[[int, int], None] | None = None, original: Path | None = None,
              ask: frozenset[str] = ASK_ALL, engine_timeout: float = ENGINE_TIMEOUT,
              ignore: Ignore | None = None, engine_args: tuple[str, ...] = ()) -> Plan:  # fmt: skip
    """Read the tree and compute every change; writes nothing. ``original``: the project ``root`` is a
    copy of (where the build finds the files outside it that it names). ``ask``: the build tools asked which
    sources the build compiles, besides reading its files: ``make`` (the Makefiles' dry run,
    :mod:`buildport.migrate.dryrun`), ``cmake`` (its File API after a configure with nvcc, :mod:`buildport.migrate.cmakeapi`)."""
    plan = Plan(root, keep_cuda=options.keep_cuda)
    if original is not None:
        plan.sources.copied = (root, original)
    engine = find_engine(engine_path)
    plan.engine = str(engine)
    plan.hip_version = installed_hip_version()
    notes: list[str] = []  # what discovery could not read (a folder, a named pipe): listed as skipped
    cmake_files = list(discover(root, is_cmake_file, notes, ignore=ignore))
    make_files = list(discover(root, is_make_file, notes, ignore=ignore))
    setup_files = list(discover(root, is_setup_py, notes, ignore=ignore))
    for note in dict.fromkeys(notes):  # both walks meet an unreadable folder
        where, _, why = note.partition(": skipped: ")
        if "cannot be read" in why or why.endswith(NOT_READ):
            plan.skipped.append((plan.relative(Path(where)), why))
    included = [Path(p) for p in included_makefiles([str(p) for p in make_files])]
    # an included file the walks leave out (.gitignore, --exclude) is read for what it defines, not ported
    left_out = [p for p in included if ignore is not None and inside(p, root) and ignore.excluded(str(p))]
    plan.skipped += [(plan.relative(p), "included, and left out by .gitignore or --exclude: read for what it "
                      "defines, not ported") for p in left_out]
    make_files += [p for p in included if inside(p, root) and p not in left_out]
    # an included file outside the project (rodinia's ../../common/make.config) is read for what it
    # defines, but neither ported nor written: it is listed with the files outside the project
    beyond = [p for p in included if not inside(p, root)]
    # a copy (--out) is read where its original lies: an include that leaves the project finds its file there
    originals: dict[Path, Path] = {}
    if original is not None:
        originals = {p: original / p.relative_to(root) for p in make_files}
        found = included_makefiles([str(o) for o in originals.values()])
        beyond += [Path(p) for p in found if not inside(Path(p), original)]
    plan.build_files = [p for p in cmake_files + make_files if not _link_out(p, root, plan)]
    for path in plan.build_files:
        (cmake_sources if is_cmake_file(path.name) else make_sources)(path, root, plan.sources)
    if "make" in ask:
        _ask_make(plan, [p for p in plan.build_files if not is_cmake_file(p.name)])
    if "cmake" in ask:
        _ask_cmake(plan, [p for p in plan.build_files if is_cmake_file(p.name)])
    add_headers(plan.sources, root)
    sources = list(discover(root, lambda name: name.endswith(SOURCE_SUFFIXES), ignore=ignore))  # one walk for both
    every = [p for p in sources if p.suffix in CUDA_SUFFIXES]
    plan.setup_files = [p for p in setup_files if not _link_out(p, root, plan)]
    _plan_setup_py(plan, options)
    plan.unreferenced = [p for p in unreferenced(root, plan.sources, every)
                         if p.resolve() not in {e.resolve() for e in plan.extension_sources}]
    c_files = [p for p in sources if p.suffix not in CUDA_SUFFIXES]
    plan.cuda_left = [] if plan.keep_cuda else _cuda_left(plan, c_files)
    builtin = builtin_engine(engine, engine_path, engine_args)
    _plan_sources(plan, engine, jobs, progress, engine_timeout, engine_args, builtin)
    _plan_build(plan, options, cmake_files, make_files, beyond + left_out, originals)
    if plan.keep_cuda:
        keep.compat_folder(plan, str(engine))
    return plan


def _plan_setup_py(plan: Plan, options: Options) -> None:
    """Port each ``setup.py`` that builds PyTorch extensions (:func:`buildport.engine.port_setup_py`), and
    list the CUDA sources its extensions name. Those are not hipified here: on ROCm, PyTorch's
    ``BuildExtension`` hipifies them itself when it builds the extension (with its own table of PyTorch's
    CUDA names, which hipify-perl lacks), and the same sources and ``setup.py`` still build with CUDA."""
    from buildport.engine import port_setup_py
    from buildport.passes.setup_py import extension_sources

    for path in plan.setup_files:
        try:
            source = read_source(str(path))
            result = port_setup_py(source.text, str(path), options)
            named = extension_sources(source.text, str(path))
        except (ParseError, InputError, UnstableRewrite) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "could not be read"
            plan.skipped.append((plan.relative(path), f"not ported: {first}"))
            continue
        for name in named:
            found = path.parent / name
            if found.suffix in (".cu", ".cuh") and found.is_file() and found not in plan.extension_sources:
                plan.extension_sources.append(found)
        relative = plan.relative(path)
        plan.findings.extend(dataclasses.replace(f, path=relative) for f in result.findings
                             if f.severity >= Severity.WARNING)
        if result.changed and plan.keep_cuda:
            plan.findings.append(keep.setup_py_left(relative))
        elif result.changed:
            plan.changes.append(Change(path, source, result.text, "python", regions=result.regions))


def _in_copy(outcome: FileOutcome[Result], copy: str) -> FileOutcome[Result]:
    """The outcome of porting an original, as that of its copy (which must hold the same bytes)."""
    source = read_source(copy)
    assert outcome.source is not None and outcome.result is not None
    if source.digest != outcome.source.digest:
        raise MigrationError(f"{copy}: differs from {outcome.path}, which it was copied from")
    result = outcome.result
    moved = Result(copy, source.text, result.text, result.findings, result.packages, regions=result.regions)
    return FileOutcome(copy, source=source, result=moved)


def _ask_make(plan: Plan, make_files: list[Path]) -> None:
    """The sources make's dry run of each Makefile names: those the build files did not show are added,
    with the include folders the commands give; where every dry run answered, the compiled sources only
    the build files name are listed (and kept: a configuration the dry run did not take may compile them)."""
    plan.dry_runs = dry_runs(plan.root, make_files)
    if plan.dry_runs:
        plan.dry_run_added, plan.static_only = _combine(plan, make_files, make_sources, plan.dry_runs)


def _ask_cmake(plan: Plan, cmake_files: list[Path]) -> None:
    """The same of CMake's File API: the sources every target of each top-level CMakeLists.txt compiles."""
    plan.configures = configures(plan.root, cmake_files)
    if plan.configures:
        plan.cmake_added, plan.cmake_static_only = _combine(plan, cmake_files, cmake_sources, plan.configures)


def _combine(plan: Plan, files: list[Path], read: Callable[[Path, Path, SourceSet], None],
             answers: Sequence[Answer]) -> tuple[list[Path], list[Path]]:  # fmt: skip
    """The build tool's ``answers`` combined with the static reading (``read``) of ``files``: the sources only
    the tool named are added to the plan, with its include folders; returned with the compiled sources only
    the static reading names, where every answer came (those are kept: another configuration may compile
    them)."""
    static = SourceSet()
    for path in files:
        read(path, plan.root, static)
    named: set[Path] = set()
    for answer in answers:
        named |= answer.sources
        plan.sources.include_dirs |= answer.include_dirs
    known = plan.sources.sources
    added = sorted(p for p in named if p not in known and not p.is_symlink())
    known.update(added)
    if not all(answer.ok for answer in answers):
        return added, []
    return added, sorted(p for p in static.sources if p.suffix in COMPILED_SUFFIXES and p not in named)


def _link_out(path: Path, root: Path, plan: Plan) -> bool:
    if path.is_symlink():
        plan.skipped.append((plan.relative(path), "a symbolic link; not followed, not written"))
        return True
    return False


def _cuda_left(plan: Plan, files: list[Path]) -> list[Path]:
    """Those of ``files`` (the C and C++ files of the tree) that hold CUDA (a name only CUDA has, in code) and
    that the migration does not convert (no source of the build was found to include them), for the report."""
    used = plan.sources.all | {e.resolve() for e in plan.extension_sources}
    left = []
    for path in files:
        if path.resolve() in used or keep.is_compat_file(plan, path):
            continue
        try:
            text = read_source(str(path)).text
        except InputError:
            continue
        if CUDA_IDENTIFIER.search(text) and is_cuda_source(str(path), text):  # CUDA's own, not HIP's device code
            left.append(path)
    return sorted(left)


#: How many of those files MIGRATION.md lists (a vendored library can hold thousands).
_LISTED = 50


def _plan_sources(plan: Plan, engine: Path, jobs: int, progress: Callable[[int, int], None] | None,
                  timeout: float = ENGINE_TIMEOUT, engine_args: tuple[str, ...] = (),
                  builtin: Converter | None = None) -> None:
    """Each source the build uses through the engine (the built-in one where it is certain, else the program
    on a copy of its bytes: see :func:`~buildport.source.hipify.convert_source`), then the source rules over
    what it gave. ``progress`` is told (files done, files in all) as each file is done."""
    import threading

    files = sorted(p for p in plan.sources.all if not keep.is_compat_file(plan, p))  # buildport's own headers
    include_dirs = sorted(plan.sources.include_dirs)
    done = [0]
    counting = threading.Lock()

    def one(path: Path) -> tuple[SourceText | InputError, HipifyResult]:
        try:
            data = read_input(str(path))
        except InputError as exc:
            return exc, HipifyResult(str(path))
        result = convert_source(engine, path, include_dirs, timeout, data, engine_args, builtin)
        if progress is not None:
            with counting:
                done[0] += 1
                progress(done[0], len(files))
        return read_source(path, data), result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        read = list(pool.map(one, files))
    results = [result for _source, result in read]
    plan.engine_given = sum(1 for source, _result in read if not isinstance(source, InputError))
    # a warp mask macro one header defines (#define FULLMASK 0xffffffff) and other files use
    full_masks: frozenset[str] = frozenset()
    if any(r.text and "_sync" in r.text for r in results):
        full_masks = frozenset().union(*(full_mask_macros(r.text) for r in results if r.text))
    for path, (source, result) in zip(files, read):
        if isinstance(source, InputError):
            plan.skipped.append((plan.relative(path), source.message))
            plan.findings.append(_not_converted(plan.relative(path), f"this source could not be read ({source.message})",
                                                "convert it by hand"))
            continue
        if result.error or result.text is None:
            why = result.error or "no output"
            plan.hipify_failures.append((plan.relative(path), why))
            plan.findings.append(_not_converted(plan.relative(path), f"{engine.name} failed on this file ({why})",
                                                "convert it by hand, or fix what stopped the engine and migrate "
                                                "again"))
            continue
        converted = result.converted and result.text != source.text and not _only_adds_include(source.text, result.text)
        text = result.text if converted else source.text
        if converted and _include_on_top_unwanted(path, source.text, text):
            text = "".join(text.splitlines(keepends=True)[1:])
        engine_text = text
        # the engine's renames of the project's own headers put back before the fixes, which may add lines (then
        # the lines no longer match one to one), and again after them (a header the fixes renamed)
        text, kept_first = _own_headers_kept(plan, path, source.text, text)
        text, fixes = port_source(text, str(path), plan.hip_version, full_masks)  # what hipify leaves: register...
        text, kept = _own_headers_kept(plan, path, source.text, text)
        kept = sorted(set(kept_first) | set(kept))
        if kept:
            fixes = _recounted(fixes, kept, source.text, engine_text)
        if converted and (text == source.text or _only_adds_include(source.text, text)):
            # what the engine changed, the fixes put back (includes of the project's own headers; a
            # using-directive of its own namespace named cub…), but for hipify's runtime include again
            text, converted, fixes = source.text, False, {}
        if (converted or fixes) and not plan.keep_cuda:
            plan.changes.append(Change(path, source, text, "source", result if converted else None, fixes))
        found = scan_source(text, plan.relative(path))
        if converted:  # what the rules saw by CUDA's names, where hipify renamed them
            found += carried(source.text, engine_text, text, scan_source(source.text, plan.relative(path)), found)
        found += _unsupported(result, source.text, text, plan.relative(path), engine.name)
        if plan.keep_cuda:  # said of the untouched source, with the fixes a macro cannot carry
            keep.source_findings(plan, path, source, text, fixes, found, _added_on_top(source.text, text))
        else:
            plan.findings.extend(found)


def check_engine(plan: Plan) -> None:
    """:class:`MigrationError` when the engine failed on every source it was given: most likely an
    engine that is broken, and writing the ported build over sources all left in CUDA would leave a
    tree that builds neither way."""
    given = plan.engine_given
    if given and len(plan.hipify_failures) == given:
        path, why = plan.hipify_failures[0]
        raise MigrationError(f"{Path(plan.engine).name} failed on every source the build uses ({given}; "
                             f"{path}: {why}); nothing was written")


def _not_converted(relative: str, why: str, suggestion: str) -> Finding:
    """A source the build compiles that migrate left in CUDA (``hipify-failed``: work for a person)."""
    return Finding(relative, 1, 1, "hipify-failed", Severity.ERROR,
                   f"{why}: it is left as it was, in CUDA, while the build that compiles it is ported", suggestion)


_RUNTIME_INCLUDE = '#include "hip/hip_runtime.h"'


def _own_headers_kept(plan: Plan, path: Path, original: str, text: str) -> tuple[str, list[int]]:
    """``text`` (what the conversion made of ``original``) with each include of a project header renamed to
    one of HIP's own headers as if it were CUDA's (darknet's ``"cuda.h"`` → ``"hip/hip_runtime.h"``) put back;
    and the lines put back (of ``original``). A rename to a library's header stays (a vendored CUB's
    ``<cub/cub.cuh>`` → ``<hipcub/hipcub.hpp>``: the code now names hipcub). Lines are matched one to one
    (the runtime include added on top aside); otherwise nothing is put back."""
    before = original.splitlines(keepends=True)
    after = text.splitlines(keepends=True)
    shift = _added_on_top(original, text)
    if len(after) != len(before) + shift:
        return text, []
    kept: list[int] = []
    for i, line in enumerate(before):
        m = INCLUDE_DIRECTIVE.match(line)
        if m is None or after[i + shift] == line:
            continue
        new = INCLUDE_DIRECTIVE.match(after[i + shift])
        renamed_to = (new.group(1) or new.group(2) or "") if new is not None else ""
        # "cuda.h" → "hip/hip_runtime.h"; in a folder of the project's, "vendors/cuda.h" → "vendors/hip/hip_runtime.h"
        if not (renamed_to.startswith("hip/") or "/hip/" in renamed_to):
            continue
        name, quoted = (m.group(1), True) if m.group(1) is not None else (m.group(2), False)
        if project_header(plan.sources, plan.root, path, name, quoted) is not None:
            after[i + shift] = line
            kept.append(i)
    return ("".join(after), kept) if kept else (text, [])


def _include_on_top_unwanted(path: Path, original: str, text: str) -> bool:
    """Whether the runtime include the engine put on top of a header goes: the header includes CUDA's runtime
    itself where its author wanted it (``#ifdef FLIP_ENABLE_CUDA``), and the engine converted that include;
    on top, it breaks the C++ files of a CPU build that include the header (FLIP). A ``.cu`` file keeps it:
    nvcc included the runtime in every one."""
    return (path.suffix.lower() not in (".cu",) and _added_on_top(original, text) == 1
            and any((m.group(1) or m.group(2)) in _RUNTIME_HEADERS for m in INCLUDE_DIRECTIVE.finditer(original)))


#: CUDA's runtime headers, whose includes the engine converts.
_RUNTIME_HEADERS = frozenset({"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"})


def _added_on_top(original: str, text: str) -> int:
    return int(text.startswith(_RUNTIME_INCLUDE) and not original.startswith(_RUNTIME_INCLUDE))


def _recounted(fixes: dict[str, int], kept: list[int], original: str, engine_text: str) -> dict[str, int]:
    """The fixes' counts once the includes ``kept`` are put back: those the engine left and the ``headers`` fix
    renamed are that fix's no more."""
    before = original.splitlines(keepends=True)
    engine = engine_text.splitlines(keepends=True)
    shift = _added_on_top(original, engine_text)
    by_fix = sum(1 for i in kept if i + shift < len(engine) and engine[i + shift] == before[i])
    out = dict(fixes)
    if by_fix and "headers" in out:
        out["headers"] -= by_fix
        if out["headers"] <= 0:
            del out["headers"]
    return {"own_headers": len(kept), **out}


def _unsupported(result: HipifyResult, original: str, text: str, relative: str, engine: str) -> list[Finding]:
    """Each name the engine said it could not convert, where it stands in the converted text (hipify's line
    numbers are the input's: the runtime include it puts on top of a file moves them one down)."""
    lines = text.splitlines()
    shift = _added_on_top(original, text)
    found: list[Finding] = []
    for line, name in dict.fromkeys(result.unsupported):
        at = line + shift
        match = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lines[at - 1]) if 0 < at <= len(lines) else None
        if match is None:
            continue  # a fix after the engine replaced it (a warp *_sync call)
        col = match.start() + 1
        found.append(Finding(relative, at, col, "hipify-unsupported", Severity.ERROR,
                             f"`{name}`: {engine} has no HIP name for it; left as it is, it will not compile",
                             "replace it by hand (see the HIP API reference)"))
    return found


def _only_adds_include(old: str, new: str) -> bool:
    """hipify-perl adds ``#include "hip/hip_runtime.h"`` to converted files again: not a change."""
    if "hip/hip_runtime.h" not in old:
        return False
    import difflib

    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, _a0, _a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert" or any(line.strip() != _RUNTIME_INCLUDE for line in new.splitlines()[b0:b1]):
            return False
    return True


def _plan_build(plan: Plan, options: Options, cmake_files: list[Path], make_files: list[Path],
                beyond: list[Path] | None = None, originals: dict[Path, Path] | None = None) -> None:
    """Port the build files. ``beyond``: Makefiles outside the project that its Makefiles include, read for
    what they define; ``originals``: for a copy, where each Makefile's original lies (read there, so that
    its includes resolve as they do for the original; the copy holds the same bytes)."""
    for kind, files in (("cmake", cmake_files), ("make", make_files)):
        names = [str(p) for p in files if p in plan.build_files]
        if not names:
            continue
        foreign = {os.path.normpath(p) for p in beyond or []} if kind == "make" else set()
        to_original = {n: str(originals[Path(n)]) for n in names} if kind == "make" and originals else {}
        copies = {o: n for n, o in to_original.items()}
        read = [to_original[n] for n in names] if to_original else names
        run = port_files(read + sorted(foreign), options, None, kind)  # what those define, for the others
        for outcome in run.outcomes:
            if outcome.path in foreign:
                continue  # not the project's: listed, not ported
            if outcome.error:
                # one file that is not CMake or make (a configure_file template named .cmake, say) stops only
                # itself: left as it is, and listed for a person
                first = outcome.error.strip().splitlines()[0] if outcome.error.strip() else "could not be read"
                plan.skipped.append((plan.relative(Path(outcome.path)), f"not ported: {first}"))
                continue
            if outcome.path in copies:
                outcome = _in_copy(outcome, copies[outcome.path])
            assert outcome.result is not None and outcome.source is not None
            relative = plan.relative(Path(outcome.path))
            if plan.keep_cuda and is_dual(outcome.source.text, kind):
                continue  # made dual by an earlier run: its CUDA branch is the project's, its HIP branch ported
            plan.findings.extend(
                Finding(relative, f.line, f.col, f.rule, f.severity, f.message, f.suggestion, f.fixable,
                        f.replacement)
                for f in outcome.result.findings if f.severity >= Severity.WARNING
            )
            if outcome.result.changed and plan.keep_cuda:
                text, found = keep.dual_text(plan, kind, Path(outcome.path), outcome.source.text, outcome.result)
                plan.findings += found
                plan.changes.append(Change(Path(outcome.path), outcome.source, text, kind))
            elif outcome.result.changed:
                plan.changes.append(Change(Path(outcome.path), outcome.source, outcome.result.text, kind,
                                           regions=outcome.result.regions))
    if plan.keep_cuda:
        keep.declare_switch(plan)


#: The reports a migration writes at the root.
REPORT_NAMES = ("MIGRATION.md", "migration.json")
#: The record of a migration's renames, at the root while they are written: a rerun finishes them.
JOURNAL = ".buildport-migration.json"


def apply(plan: Plan, report_texts: dict[str, str] | None = None) -> None:
    """Write every change: each file atomically, after every target was checked (:func:`check_writable`),
    so a refusal comes before the first write.

    The sources changed in place come first (a run killed among them is done again by the next: the
    engine leaves converted text as it is). Renamed sources (``--rename-sources hip``) are written so
    that the build files never name a source that does not exist: the new files, then the build files
    that name them, and only then are the old files deleted; a journal at the root (:data:`JOURNAL`)
    records the renames, the build files' new text and the reports until the end, so that a run killed
    among them is finished by the next one (:func:`finish_interrupted`). The reports (``report_texts``,
    by file name) are written last."""
    check_writable(plan)
    root = plan.root.resolve()
    journal = root / JOURNAL
    for change in plan.changes:
        if change.kind == "source":
            write_atomic(change.source, change.new_text, root)
    for path, text in keep.pending_files(plan).items():  # the compatibility folder, before the build reads it
        keep.make_folders(path.parent, plan.root)
        _write_new(path, text, 0o644, root)
    if plan.renamed:
        _write_new(journal, json.dumps(_journal(plan, report_texts or {}), indent=1) + "\n", 0o600, root)
    for change in plan.renamed:
        _write_new(change.path, change.new_text, change.renamed_from.stat().st_mode & 0o7777
                   if change.renamed_from is not None else 0o644, root)
    for change in plan.changes:
        if change.kind != "source":
            write_atomic(change.source, change.new_text, root)
    for change in plan.renamed:
        if change.renamed_from is not None:
            with contextlib.suppress(FileNotFoundError):
                change.renamed_from.unlink()
    _write_reports(root, report_texts or {})
    if plan.renamed:
        journal.unlink()
    remove_stale_temporaries(str(c.path.resolve().parent) for c in [*plan.changes, *plan.renamed])


def check_writable(plan: Plan) -> None:
    """:class:`MigrationError` naming every file the migration could not write (outside the root, a link,
    changed since it was read, read-only, in a folder that cannot be written, a new name taken) — before
    anything is written."""
    root = plan.root.resolve()
    problems: list[str] = []
    for change in plan.changes:
        problems += _cannot_write(change.path, root, change.source)
    for change in plan.renamed:
        if change.path.exists() or change.path.is_symlink():
            problems.append(f"{plan.relative(change.path)}: exists already")
        if change.renamed_from is not None:
            problems += _cannot_write(change.renamed_from, root, change.source)
    if plan.new_files:
        problems += keep.check_folder(plan)
    if not os.access(root, os.W_OK | os.X_OK):
        problems.append(f"{root}: the folder cannot be written (for the reports)")
    if problems:
        listed = "\n  ".join(problems[:20]) + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise MigrationError(f"{len(problems)} file{'s' if len(problems) != 1 else ''} could not be written; "
                             f"nothing was written:\n  {listed}")


def _cannot_write(path: Path, root: Path, source: SourceText) -> list[str]:
    """Why ``path`` (read as ``source``) cannot be replaced, or nothing."""
    if path.is_symlink():
        return [f"{path}: a symbolic link; not written"]
    real = path.resolve()
    if root not in real.parents:
        return [f"{path}: outside {root}; not written"]
    try:
        info = real.stat()
        current = read_bytes(str(real))
    except OSError as exc:
        return [f"{path}: cannot be read again: {exc.strerror or exc}"]
    if digest(current) != source.digest:
        return [f"{path}: changed while buildport was running"]
    if not stat.S_IMODE(info.st_mode) & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        return [f"{path}: read-only"]
    if not os.access(real.parent, os.W_OK | os.X_OK):
        return [f"{path}: its folder cannot be written"]
    return []


def _journal(plan: Plan, report_texts: dict[str, str]) -> dict[str, object]:
    """What :func:`finish_interrupted` needs: each rename (old, new, the new text's digest), each build
    file's new text (with the digest of the text it replaces) and the reports."""
    return {
        "format": "buildport-migration-journal", "version": 1,
        "renames": [{"old": plan.relative(c.renamed_from), "new": plan.relative(c.path),
                     "digest": digest(encode(c.new_text))} for c in plan.renamed if c.renamed_from is not None],
        "build": [{"path": plan.relative(c.path), "digest": c.source.digest, "text": c.new_text}
                  for c in plan.changes if c.kind != "source"],
        "reports": report_texts,
    }


def finish_interrupted(root: Path) -> str:
    """Finish a migration that was killed while it renamed sources (its journal is at ``root``); returns
    what was done, ``""`` when there was nothing to finish.

    When the run died before every new file existed, nothing but those and the sources changed in place
    had been written: the new files are removed (the next run renames again). Otherwise the build files
    are brought to the text the journal holds (those still as they were) and the old files deleted: the
    tree is as that run would have left it."""
    journal = root / JOURNAL
    if journal.is_symlink() or not journal.is_file():
        return ""
    try:
        data = json.loads(journal.read_text(encoding="utf-8", errors="surrogateescape"))
        renames = [(root / r["old"], root / r["new"], r["digest"]) for r in data["renames"]]
        builds = [(root / b["path"], b["digest"], b["text"]) for b in data["build"]]
        texts = {str(name): str(text) for name, text in data.get("reports", {}).items() if name in REPORT_NAMES}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MigrationError(f"{journal}: an interrupted migration's journal that cannot be read ({exc}); "
                             "check the renamed sources by hand, then delete it") from None
    for path in [p for _old, p, _d in renames] + [p for p, _d, _t in builds]:
        if path.is_symlink() or root.resolve() not in path.resolve().parents:
            raise MigrationError(f"{journal}: names {path}, outside the project or a link; delete it")
    made = [(old, new) for old, new, d in renames if new.is_file() and digest(new.read_bytes()) == d]
    if len(made) < len(renames):
        for _old, new in made:
            new.unlink()
        journal.unlink()
        return f"an interrupted migration was undone ({len(made)} of {len(renames)} renamed sources removed)"
    for path, before, text in builds:
        current = read_source(path)
        if current.digest == before:
            write_atomic(current, text, root)
    for old, _new in made:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()
    _write_reports(root, texts)
    journal.unlink()
    return f"an interrupted migration was finished ({len(renames)} renamed sources)"


def report(plan: Plan, options: Options) -> tuple[str, dict[str, object]]:
    """MIGRATION.md (for people) and migration.json (for tools)."""
    changed = [{"path": plan.relative(c.path), "kind": c.kind,
                "renamed_from": None if c.renamed_from is None else plan.relative(c.renamed_from),
                "hipify": None if c.hipify is None else {
                    "converted": c.hipify.converted, "unconverted": c.hipify.unconverted,
                    "warnings": [w.replace(str(c.path), plan.relative(c.path)) for w in c.hipify.warnings]},
                "fixes": c.fixes}
               for c in plan.reported()]
    def entry(f: Finding) -> dict[str, object]:
        return {"path": f.path, "line": f.line, "col": f.col, "rule": f.rule, "severity": str(f.severity),
                "message": f.message.split("\n")[0].split(". ")[0], "suggestion": f.suggestion}

    ordered = sorted(plan.findings, key=Finding.sort_key)
    remaining = [entry(f) for f in ordered if f.severity >= Severity.WARNING]
    notes = [entry(f) for f in ordered if f.severity < Severity.WARNING]
    arch = ";".join(options.targets)
    commands = _build_commands(plan, options)
    if plan.keep_cuda:
        commands = keep.build_lines(plan, commands)
    data: dict[str, object] = {
        "format": "buildport-migration", "version": 1, "engine": plan.engine,
        "offload_arch": list(options.targets), "offload_arch_probed": options.probe_targets,
        "hip_version": None if plan.hip_version is None else ".".join(map(str, plan.hip_version)),
        "changed": changed, "remaining": remaining, "notes": notes,
        "unreferenced": [plan.relative(p) for p in plan.unreferenced],
        "cuda_left": [plan.relative(p) for p in plan.cuda_left],
        "extension_sources": [plan.relative(p) for p in plan.extension_sources],
        "outside": [{"path": path, "named_in": named_in, "line": line} for path, named_in, line in outside(plan)],
        "skipped": [{"path": p, "why": w} for p, w in plan.skipped],
        "hipify_failures": [{"path": p, "error": e} for p, e in plan.hipify_failures],
        "build_commands": commands,
        "keep_cuda": None if not plan.keep_cuda else {
            "switch": RUNTIME_VARIABLE, "default": DEFAULT_RUNTIME,
            "compatibility_folder": plan.relative(plan.root / COMPAT_FOLDER),
            "files": sorted(plan.relative(p) for p in plan.new_files), "names_mapped": plan.compat_names},
        "sources_found_by": {
            "build_files": True,
            "make_dry_run": [{"makefile": plan.relative(r.makefile), "answered": r.ok, "why": r.why,
                              "sources": len(r.sources)} for r in plan.dry_runs],
            "added_by_dry_run": [plan.relative(p) for p in plan.dry_run_added],
            "only_in_build_files": [plan.relative(p) for p in plan.static_only],
            "cmake_file_api": [{"lists_file": plan.relative(c.lists_file), "answered": c.ok, "why": c.why,
                                "targets": c.targets, "sources": len(c.sources)} for c in plan.configures],
            "added_by_cmake": [plan.relative(p) for p in plan.cmake_added],
            "only_in_cmake_files": [plan.relative(p) for p in plan.cmake_static_only],
        },
    }
    found = "not found" if plan.hip_version is None else ".".join(map(str, plan.hip_version))
    lines = ["# Migration to HIP", "", f"Engine: `{plan.engine}`. AMD targets: `{arch}`{_PROBED if options.probe_targets else ''}. "
             f"Installed HIP: {found}.", "",
             f"## Files changed ({len(changed)})", ""]
    for c in plan.reported():
        h = c.hipify
        extra = f" — hipify: {h.converted} converted, {len(h.warnings)} warnings" if h is not None else ""
        if c.renamed_from is not None:
            extra = f", renamed from `{plan.relative(c.renamed_from)}`" + extra
        for fix, count in c.fixes.items():
            extra += f"{';' if extra else ' —'} {count} {FIXES[fix]}"
        lines.append(f"- `{plan.relative(c.path)}` ({c.kind}){extra}")
    lines += ["", f"## What a person still has to do ({len(remaining)})", ""]
    lines += [f"- `{r['path']}:{r['line']}:{r['col']}` {r['severity']} [{r['rule']}]: {r['message']}"
              for r in remaining] or ["- nothing found"]
    if notes:
        lines += ["", f"{len(notes)} notes of lesser weight (performance, style) are listed in migration.json."]
    if plan.extension_sources:
        lines += ["", "## CUDA sources of PyTorch extensions (left as they are)", "",
                  "PyTorch for ROCm hipifies these itself when it builds the extension that names them, and they "
                  "still build with CUDA.", ""]
        lines += [f"- `{plan.relative(p)}`" for p in plan.extension_sources]
    if plan.unreferenced:
        lines += ["", "## CUDA sources no build file references (not converted)", ""]
        lines += [f"- `{plan.relative(p)}`" for p in plan.unreferenced]
    if plan.cuda_left:
        lines += ["", "## C and C++ files that hold CUDA (not converted)", "",
                  "No source the build compiles was found to include these (an include the build resolves by a "
                  "folder of one configuration among several, say). If the build uses one, convert it by hand or "
                  "with hipify (`#ifdef __CUDACC__` is false for HIP: hipify makes it `__HIPCC__`).", ""]
        lines += [f"- `{plan.relative(p)}`" for p in plan.cuda_left[:_LISTED]]
        if len(plan.cuda_left) > _LISTED:
            lines.append(f"- and {len(plan.cuda_left) - _LISTED} more (`migration.json`, `cuda_left`, lists them all)")
    if plan.sources.outside:
        lines += ["", "## Files outside the project that the build uses (not converted, not copied)", "",
                  "The build or its sources name these by a path that leaves the project's folder. They were "
                  "left as they are (not hipified, not ported); a copy made with `--out` finds them only where "
                  "the same relative path leads. Migrate a folder that holds them too, or convert them by hand.",
                  ""]
        lines += [f"- `{path}` (named in `{named_in}:{line}`)" for path, named_in, line in outside(plan)]
    lines += _discovery_lines(plan)
    if plan.skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- `{p}`: {w}" for p, w in plan.skipped]
    if plan.keep_cuda:
        lines += keep.report_lines(plan)
    lines += ["", "## Build it", "", "```sh", *commands, "```", ""]
    return "\n".join(lines), data


def _discovery_lines(plan: Plan) -> list[str]:
    """How the sources to convert were found: the build files, and make's dry run and CMake's File API
    where they were asked."""
    if not plan.dry_runs and not plan.configures:
        return []
    lines = ["", "## How the sources were found", "", "Read from the build files, and asked of the build tools."]
    if plan.dry_runs:
        lines += ["", "make: `make -n -B` (a dry run in a scratch copy, nvcc stubbed) lists the commands each "
                  "Makefile runs, resolved as make resolves them.", ""]
        for run in plan.dry_runs:
            said = f"{len(run.sources)} sources compiled" if run.ok else f"no answer ({run.why}): the build files alone"
            lines.append(f"- `{plan.relative(run.makefile)}`: {said}")
        lines += _differences(plan, "the dry run", plan.dry_run_added, plan.static_only)
    if plan.configures:
        lines += ["", "CMake: its File API, after a configure of the original with nvcc in a scratch copy, lists "
                  "every target's sources with globs, variables and branches evaluated.", ""]
        for answer in plan.configures:
            said = (f"{len(answer.sources)} sources in {answer.targets} target{'s' * (answer.targets != 1)}" if answer.ok
                    else f"no answer ({answer.why}): the build files alone")
            lines.append(f"- `{plan.relative(answer.lists_file)}`: {said}")
        lines += _differences(plan, "CMake", plan.cmake_added, plan.cmake_static_only)
    return lines


def _differences(plan: Plan, tool: str, added: list[Path], static_only: list[Path]) -> list[str]:
    lines: list[str] = []
    if added:
        lines += ["", f"Named by {tool} only (the build files did not show them), converted:", ""]
        lines += [f"- `{plan.relative(p)}`" for p in added]
    if static_only:
        lines += ["", f"Named by the build files but compiled in no configuration {tool} answered for (another "
                  "may), converted:", ""]
        lines += [f"- `{plan.relative(p)}`" for p in static_only]
    return lines


def outside(plan: Plan) -> list[tuple[str, str, int]]:
    """The files and folders outside the project the build uses (relative to its root), each with the
    file that names it first and the line, in order."""
    root = plan.root.absolute()
    return sorted((os.path.relpath(path, root), plan.relative(named_in), line)
                  for path, (named_in, line) in plan.sources.outside.items())


_PROBED = (" (the defaults: the build keeps those its HIP compiler knows; "
           "`-DCMAKE_HIP_ARCHITECTURES=...` or `make HIP_OFFLOAD_ARCH=...` chooses others)")


def _build_commands(plan: Plan, options: Options) -> list[str]:
    """How to build the port: with CMake where the top folder's CMakeLists.txt is a project (has ``project()``;
    one without is a fragment a parent project adds), else with make where there is a Makefile."""
    names = {p.name for p in plan.build_files if p.parent.resolve() == plan.root.resolve()}
    arch = ";".join(options.targets)
    if "CMakeLists.txt" in names and (not names & {"Makefile", "makefile", "GNUmakefile"}
                                      or _PROJECT.search(_text_of(plan.root / "CMakeLists.txt"))):
        chosen = "" if options.probe_targets else f' -DCMAKE_HIP_ARCHITECTURES="{arch}"'
        return [f"cmake -S . -B build{chosen}", "cmake --build build"]
    if names & {"Makefile", "makefile", "GNUmakefile"}:
        return ["make" if options.probe_targets else f'make HIP_OFFLOAD_ARCH="{arch.replace(";", " ")}"']
    if any(p.parent.resolve() == plan.root.resolve() for p in plan.setup_files):
        # PyTorch for ROCm picks the targets (PYTORCH_ROCM_ARCH) where the setup.py names none
        chosen = "" if options.probe_targets else f'PYTORCH_ROCM_ARCH="{arch}" '
        return [f"{chosen}pip install --no-build-isolation ."]
    return ["(no top-level build file: build each directory as before)"]


_PROJECT = re.compile(r"^[ \t]*project[ \t]*\(", re.M | re.I)


def _text_of(path: Path) -> str:
    try:
        return read_source(path).text
    except InputError:
        return ""


def _write_new(path: Path, text: str, mode: int = 0o644, root: Path | None = None) -> None:
    """A file the migration makes (a report, a renamed source, the journal): written to a temporary file made
    exclusively beside it (never through a link that a tree may hold under a fixed name), in its folder
    opened from ``root`` (default: its own folder) without following links, then renamed into place (a
    link at ``path`` is replaced, not followed)."""
    write_new(path, text, mode, root if root is not None else path.parent)


def reports(plan: Plan, options: Options) -> dict[str, str]:
    """The text of each report file (MIGRATION.md, migration.json), by name."""
    text, data = report(plan, options)
    return {"MIGRATION.md": text, "migration.json": json.dumps(data, indent=2) + "\n"}


def _write_reports(root: Path, texts: dict[str, str]) -> None:
    for name, content in texts.items():
        _write_new(root / name, content, 0o644, root)


def renames(plan: Plan) -> dict[Path, Path]:
    """``--rename-sources hip``: every referenced .cu becomes .hip; refuses stem collisions."""
    mapping: dict[Path, Path] = {}
    for source in sorted(plan.sources.sources):
        if source.suffix != ".cu":
            continue
        target = source.with_suffix(".hip")
        clash = [p for p in plan.sources.all if p != source and p.parent == source.parent and p.stem == source.stem
                 and p.suffix in (".cpp", ".cc", ".cxx", ".c", ".hip")]
        if target.exists() or clash:
            other = plan.relative(clash[0]) if clash else plan.relative(target)
            raise MigrationError(
                f"{plan.relative(source)} would become {plan.relative(target)}, colliding with {other} "
                "(one object file for two sources); rename one of them first, or keep .cu names"
            )
        mapping[source] = target
    return mapping


def apply_renames(plan: Plan, mapping: dict[Path, Path]) -> None:
    """Plan the renames: the build files' new text names the new names, and each renamed source becomes an
    entry of ``plan.renamed`` (its text written under the new name by :func:`apply`, which then deletes
    the old one). Nothing is written here."""
    import re

    by_name = {old.name: new.name for old, new in mapping.items()}
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(n) for n in by_name) + r")(?![\w.-])") \
        if by_name else None
    for edited in plan.changes:
        if edited.kind != "source" and pattern is not None:
            renamed = pattern.sub(lambda m: by_name[m.group(1)], edited.new_text)
            renamed = renamed.replace("%.cu", "%.hip").replace("*.cu", "*.hip")
            if renamed != edited.new_text:
                edited.new_text, edited.regions = renamed, None  # the port's regions no longer tell
    changed = {c.path.resolve(): c for c in plan.changes}
    for build in plan.build_files:
        if build.resolve() not in changed and pattern is not None:
            source = read_source(build)
            text = pattern.sub(lambda m: by_name[m.group(1)], source.text)
            if text != source.text:
                plan.changes.append(Change(build, source, text, "cmake" if is_cmake_file(build.name) else "make"))
    for old, new in mapping.items():
        change = changed.get(old.resolve())
        source = change.source if change is not None else read_source(old)
        text = change.new_text if change is not None else source.text
        if change is not None:
            plan.changes.remove(change)  # written under its new name instead
        plan.renamed.append(Change(new, source, text, "source", change.hipify if change else None,
                                   change.fixes if change else {}, renamed_from=old))
