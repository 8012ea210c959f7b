"""``migrate --keep-cuda``: one tree that builds for NVIDIA and AMD, the CUDA sources untouched.

The plan is a normal migration's, read differently: each source is converted in memory only, to learn what
a normal migration would change in it beyond renaming (each such fix is reported: the untouched source
needs it for HIP) and to report what is left as a normal migration does; the build files' ports become
branches of the runtime switch (:mod:`buildport.dual`); a compatibility folder at the root carries the
names (:mod:`buildport.dual.compat`).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from buildport.dual import is_dual
from buildport.dual.compat import compat_files
from buildport.findings import Finding, Severity
from buildport.rules.dual import COMPAT_FOLDER, COMPAT_MARK, MAPPING_HEADER, RUNTIME_VARIABLE
from buildport.source.fix import FIXES
from buildport.source.references import inside
from buildport.source.hipify_tables import installed_tables
from buildport.textio import SourceText

if TYPE_CHECKING:
    from buildport.migrate.plan import Plan
    from buildport.result import Result

#: Fixes a normal migration makes that the compatibility folder carries (or that only undo a rename).
CARRIED_FIXES = frozenset({
    "runtime_include", "own_headers", "headers", "cub_namespace", "header_tests", "struct_typedef", "c_defaults",
    "kernel_pointer", "void_pointer", "warp_sync", "fallbacks", "intrinsic_casts", "nvtx", "callback_macro",
    "cub_macros", "register",
})


def source_findings(plan: Plan, path: Path, source: SourceText, text: str, fixes: dict[str, int],
                    found: list[Finding], shift: int) -> None:
    """What a normal migration of one source found (``found``, in its converted ``text``, lines moved down by
    ``shift`` added on top), at the lines of the untouched source; and each fix it would make that a macro
    cannot carry. ``plan.usage`` learns the source's CUDA names."""
    plan.usage.add(source.text)
    last = source.text.count("\n") + 1
    for finding in found:
        line = min(max(1, finding.line - shift), last)
        plan.findings.append(replace(finding, line=line))
    for fix, count in fixes.items():
        if fix in CARRIED_FIXES:
            continue
        places = f"{count} place{'s' * (count != 1)}"
        plan.findings.append(Finding(
            plan.relative(path), 1, 1, "dual-source-not-carried", Severity.WARNING,
            f"the HIP build needs {FIXES[fix]} ({places}), which a normal migration writes into the source and "
            "the compatibility folder cannot carry; this source is left as it is",
            "write it under `#ifdef __HIP_PLATFORM_AMD__` in the source, or migrate without --keep-cuda"))


def compat_folder(plan: Plan, engine: str) -> None:
    """The compatibility folder's files (``plan.new_files``), from the names the sources use."""
    from buildport.migrate.plan import MigrationError

    tables = installed_tables(engine)
    if tables is None:
        raise MigrationError(f"--keep-cuda maps CUDA names with hipify-perl's tables, and {Path(engine).name} has "
                             "none that can be read; give --hipify the path of a hipify-perl")
    folder = plan.root / COMPAT_FOLDER
    own = [plan.relative(p) for p in plan.sources.all if not inside(p, folder)]
    made = compat_files(plan.usage, tables, own)
    plan.new_files = {folder / name: text for name, text in made.files.items()}
    for name in made.unsupported:
        plan.findings.append(Finding(
            f"{COMPAT_FOLDER}/{MAPPING_HEADER}", 1, 1, "hipify-unsupported", Severity.ERROR,
            f"`{name}`: the sources use it and HIP has no name for it; the HIP build will not compile it",
            "replace it by hand under `#ifdef __HIP_PLATFORM_AMD__` (see the HIP API reference)"))
    plan.compat_names = len(made.mapped)


def compat_path(plan: Plan, build_file: Path) -> str:
    """The compatibility folder relative to a build file's directory."""
    return os.path.relpath(plan.root / COMPAT_FOLDER, build_file.parent)


def check_folder(plan: Plan) -> list[str]:
    """Why the compatibility folder cannot be written: a file of it that buildport did not write."""
    problems = []
    for path in plan.new_files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{plan.relative(path)}: cannot be read ({exc.strerror or exc})")
            continue
        if not text.startswith(COMPAT_MARK):
            problems.append(f"{plan.relative(path)}: the project's own file, where --keep-cuda writes its "
                            f"compatibility folder ({COMPAT_FOLDER}/)")
    return problems


def build_lines(plan: Plan, commands: list[str]) -> list[str]:
    """How to build each way: the normal build as the project documents it, and the HIP one."""
    cuda, hip = [], []
    for line in commands:
        if line.startswith("cmake -S"):
            cuda.append(line.replace("cmake -S . -B build", "cmake -S . -B build-cuda").split(" -DCMAKE_HIP")[0])
            hip.append(line.replace("cmake -S . -B build", f"cmake -S . -B build-hip -D{RUNTIME_VARIABLE}=HIP"))
        elif line.startswith("cmake --build"):
            cuda.append("cmake --build build-cuda")
            hip.append("cmake --build build-hip")
        elif line.startswith("make"):
            cuda.append("make")
            hip.append(line.replace("make", f"make {RUNTIME_VARIABLE}=HIP", 1))
        else:
            cuda.append(line)
            hip.append(line.replace("as before)", f"as before, with {RUNTIME_VARIABLE}=HIP: make "
                                    f"{RUNTIME_VARIABLE}=HIP, cmake -D{RUNTIME_VARIABLE}=HIP)"))
    return ["# NVIDIA (CUDA), as before", *cuda, "", "# AMD (HIP)", *hip]


def dual_text(plan: Plan, kind: str, path: Path, old: str, result: Result) -> tuple[str, list[Finding]]:
    """A build file's port made branches of the runtime switch; a CMake file with ``project()`` declares the
    switch and puts the compatibility folder on the HIP build's include path, a Makefile does both at its top."""
    from buildport.dual.cmake import dual_cmake
    from buildport.dual.make import dual_make

    relative = plan.relative(path)
    folder = compat_path(plan, path)
    if kind == "cmake":
        text, found = dual_cmake(old, result.text, result.regions, relative, switch=True, compat=folder)
    else:
        text, found = dual_make(old, result.text, result.regions, relative, compat=folder + "/")
    return text, found


def declare_switch(plan: Plan) -> None:
    """The top CMakeLists.txt of each project a changed CMake file belongs to (the outermost folder above it, in
    the tree, whose CMakeLists.txt has ``project()``) declares the switch and puts the folder on the include
    path, even where the port left it as it is (its subdirectories or included modules enable CUDA)."""
    from buildport.dual.cmake import dual_cmake
    from buildport.migrate.plan import Change
    from buildport.textio import InputError, read_source

    changed = {c.path.resolve() for c in plan.changes}
    tops: dict[Path, None] = {}
    lists = {p.resolve() for p in plan.build_files if p.name == "CMakeLists.txt"}
    for change in plan.changes:
        if change.kind == "cmake" and (top := _top_project(change.path.parent, plan.root, lists)) is not None:
            tops[top] = None
    for top in tops:
        if top.resolve() in changed:
            continue  # ported, and made dual with its switch
        try:
            source = read_source(str(top))
        except InputError:
            continue
        if is_dual(source.text, "cmake"):
            continue
        text, _ = dual_cmake(source.text, source.text, [], plan.relative(top), switch=True,
                             compat=compat_path(plan, top))
        if text != source.text:
            plan.changes.append(Change(top, source, text, "cmake"))


def _top_project(folder: Path, root: Path, lists: set[Path]) -> Path | None:
    """Of the CMakeLists.txt files ``lists`` (resolved), the one with ``project()`` in the outermost folder from
    ``folder`` up to ``root``; None where there is none."""
    found = None
    top = root.resolve()
    at = folder.resolve()
    while True:
        candidate = at / "CMakeLists.txt"
        if candidate in lists and _PROJECT.search(_text(candidate)):
            found = root / candidate.relative_to(top)
        if at == top or top not in at.parents:
            return found
        at = at.parent


_PROJECT = re.compile(r"^[ \t]*project[ \t]*\(", re.M | re.I)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def pending_files(plan: Plan) -> dict[Path, str]:
    """The compatibility folder's files whose text is not on disk already (a second run writes none)."""
    pending = {}
    for path, text in plan.new_files.items():
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except (OSError, UnicodeDecodeError):
            pass
        pending[path] = text
    return pending


def make_folders(folder: Path, root: Path) -> None:
    """``folder`` and its parents below ``root`` made where missing; a link on the way is refused
    (:class:`~buildport.migrate.plan.MigrationError`): nothing is written through one."""
    from buildport.migrate.plan import MigrationError

    relative = Path(os.path.relpath(folder, root))
    if relative.parts[:1] == ("..",):
        raise MigrationError(f"{folder}: outside {root}; nothing was written")
    at = root
    for part in relative.parts if relative != Path(".") else ():
        at = at / part
        if at.is_symlink():
            raise MigrationError(f"{at}: a symbolic link where --keep-cuda writes its compatibility folder; "
                                 "nothing was written through it")
        if not at.exists():
            at.mkdir()


def report_lines(plan: Plan) -> list[str]:
    """What MIGRATION.md says of a dual build."""
    files = sorted(plan.relative(p) for p in plan.new_files)
    return ["", "## One tree, two GPU runtimes (--keep-cuda)", "",
            f"Every source is as it was. The build files pick the GPU runtime with `{RUNTIME_VARIABLE}`: `CUDA` "
            "(the default: the project's own build, byte for byte in each branch) or `HIP` (the ported build). "
            f"The HIP build reads `{COMPAT_FOLDER}/` first: headers named like CUDA's that include HIP's, and "
            f"`{MAPPING_HEADER}`, included first in every source of a CMake build and through the others, which "
            f"maps the {plan.compat_names} CUDA names the sources use to HIP's (as hipify would have written "
            "them). Migrating again writes the folder again from the sources.", ""] + [f"- `{f}`" for f in files]


def is_compat_file(plan: Plan, path: Path) -> bool:
    """Whether ``path`` is a file of the compatibility folder that an earlier ``--keep-cuda`` run wrote."""
    if not inside(path, plan.root / COMPAT_FOLDER):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(len(COMPAT_MARK)) == COMPAT_MARK
    except OSError:
        return False


def setup_py_left(relative: str) -> Finding:
    """A ``setup.py`` whose extensions' flags the port would change: left as it is in a dual build (its CUDA
    build must not change), reported with what to do."""
    return Finding(relative, 1, 1, "dual-branch-unported", Severity.WARNING,
                   "a setup.py is left as it is in a dual build: PyTorch builds its extensions for ROCm from the same "
                   "file, and the nvcc flags or libraries it names need their HIP spellings there",
                   "choose them with `if torch.version.hip:` (see `buildport python --diff` for the HIP spellings)")
