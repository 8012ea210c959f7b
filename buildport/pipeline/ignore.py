"""What a walk leaves out: the project's ``.gitignore`` files and the ``--exclude`` options, as black does.

- ``.gitignore`` files (pathspec's git semantics, negations among them) from the project root (the
  folder with ``.git`` or ``.hg`` above the folder walked, else that folder) down to each folder walked,
  a deeper file deciding over a shallower one; not read when ``--exclude`` is given, which replaces them;
- ``--exclude`` / ``--extend-exclude``: regular expressions searched in the path from the project root,
  written with ``/``, starting with ``/`` and ending with ``/`` for a folder (``/third_party/``);
- ``--force-exclude``: the same, applied also to the files named on the command line, which the others
  never leave out.

Hidden folders and build trees are discovery's own rules (:mod:`buildport.pipeline.discovery`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from buildport.config import ROOT_MARKERS

if TYPE_CHECKING:  # pathspec is imported where a .gitignore is found (its import costs a warm run a third)
    from pathspec import GitIgnoreSpec


class ExcludeError(ValueError):
    """An exclusion pattern that is not a regular expression."""


def pattern(option: str, value: str | None) -> re.Pattern[str] | None:
    """``value`` compiled (None for none); :class:`ExcludeError` names the option if it does not compile."""
    if not value:
        return None
    try:
        return re.compile(value)
    except re.error as exc:
        raise ExcludeError(f"{option}: not a regular expression: {value!r} ({exc})") from None


def _has_marker(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS)


def _tracked_paths(root: str) -> frozenset[str] | None:
    """The files git tracks below ``root`` and the folders that hold them (relative, with ``/``)."""
    import subprocess

    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    paths: set[str] = set()
    for raw in listed.stdout.split(b"\0"):
        if raw:
            name = os.fsdecode(raw)
            paths.add(name)
            while "/" in name:
                name = name.rsplit("/", 1)[0]
                if name in paths:
                    break
                paths.add(name)
    return frozenset(paths)


def project_root(folder: str) -> str:
    """The folder with ``.git`` or ``.hg`` at or above ``folder`` (absolute), else ``folder`` itself."""
    start = os.path.abspath(folder)
    current = start
    while True:
        if _has_marker(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


@dataclass(slots=True)
class Ignore:
    """The exclusions of one run. ``gitignore`` False reads no ``.gitignore`` (so does ``exclude``).

    :meth:`anchor` gives the run one project root, that of the folder holding every path named (as black
    finds its root); without it, each folder walked finds its own. :meth:`for_copy` decides for a copy of
    the project (``migrate --out``) as for the original, whose .gitignore files above the copy count too.
    """

    exclude: re.Pattern[str] | None = None
    extend_exclude: re.Pattern[str] | None = None
    force_exclude: re.Pattern[str] | None = None
    gitignore: bool = True
    #: the project root of the run (absolute), once anchored
    root: str | None = None
    #: (the copy's root, the original's root), both absolute: a path in the copy is decided as the original's
    copy: tuple[str, str] | None = None
    #: (root, folder) → the .gitignore specs that apply below the folder, each with the folder it is relative to
    _specs: dict[tuple[str, str], list[tuple[str, GitIgnoreSpec]]] = field(default_factory=dict)
    #: folder walked from (absolute) → its project root, where the run is not anchored
    _roots: dict[str, str] = field(default_factory=dict)
    #: the .gitignore files read, for the whole-run replay's record (buildport.cache.replay)
    read: list[str] = field(default_factory=list)
    #: root → whether it is a git repository's
    _repositories: dict[str, bool] = field(default_factory=dict)
    #: root → what git tracks below it (files and their folders, relative, with /), None where git cannot say
    _tracked: dict[str, frozenset[str] | None] = field(default_factory=dict)

    @property
    def reads_gitignore(self) -> bool:
        return self.gitignore and self.exclude is None

    def key(self) -> list[Any]:
        """The options, as data for the keys of a run (not the .gitignore files: those are looked at)."""
        return [p.pattern if p is not None else None for p in (self.exclude, self.extend_exclude, self.force_exclude)] \
            + [self.reads_gitignore]

    def anchor(self, paths: list[str] | tuple[str, ...]) -> "Ignore":
        """Give the run the project root of the folder that holds all of ``paths`` (stdin: the working one)."""
        folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths if p != "-"]
        try:
            common = os.path.commonpath(folders) if folders else os.getcwd()
        except ValueError:
            return self  # on different drives: each its own root
        root = project_root(common)
        if not _has_marker(root):  # no repository: the working folder where the paths lie in it, as one runs
            cwd = os.getcwd()  # the tool from the project's folder: an anchored /vendor/ means the same each run
            root = cwd if common == cwd or common.startswith(cwd.rstrip(os.sep) + os.sep) else common
        self.root = root
        return self

    def for_copy(self, copy_root: str, original_root: str) -> "Ignore":
        """The same exclusions for a copy of ``original_root`` at ``copy_root``."""
        return Ignore(self.exclude, self.extend_exclude, self.force_exclude, self.gitignore,
                      root=self.root or project_root(original_root),
                      copy=(os.path.abspath(copy_root), os.path.abspath(original_root)))

    def walked(self, folder: str, name: str, is_dir: bool, top: str) -> bool:
        """Whether the entry ``name`` of ``folder``, reached by walking from ``top``, is left out: the
        exclusion options name it, or a .gitignore does in a git repository that does not track it. Git
        ignores no file it tracks, and a project's build files are tracked (GPUJPEG's test Makefile matches
        its own .gitignore); a tree that is no repository (an export) has nothing git ignores, and keeps what
        its .gitignore names (darknet's cfg/ and data/, which its programs read)."""
        path = self._original(os.path.join(os.path.abspath(folder), name))
        root = self._root_of(top)
        if self._matches(root, path, is_dir, (self.exclude, self.extend_exclude, self.force_exclude)):
            return True
        if not self.reads_gitignore or not self._in_repository(root) or not self._gitignored(root, path, is_dir):
            return False
        tracked = self._tracked_below(root)  # asked only once a .gitignore names something
        return tracked is not None and os.path.relpath(path, root).replace(os.sep, "/") not in tracked

    def _in_repository(self, root: str) -> bool:
        """Whether ``root`` is a git repository's (outside one, its .gitignore files are not read)."""
        found = self._repositories.get(root)
        if found is None:
            found = self._repositories[root] = os.path.exists(os.path.join(root, ".git"))
        return found

    def _gitignored(self, root: str, path: str, is_dir: bool) -> bool:
        decided = None
        for base, spec in self._specs_for(os.path.dirname(path), root):
            relative = os.path.relpath(path, base).replace(os.sep, "/") + ("/" if is_dir else "")
            include = spec.check_file(relative).include
            if include is not None:
                decided = include
        return bool(decided)

    def _tracked_below(self, root: str) -> frozenset[str] | None:
        """What git tracks in the repository at ``root``, asked once a run; None where git cannot say."""
        if root not in self._tracked:
            self._tracked[root] = _tracked_paths(root)
        return self._tracked[root]

    def named(self, path: str) -> bool:
        """Whether a path named on the command line is left out (``--force-exclude`` alone does that)."""
        if self.force_exclude is None or path == "-":
            return False
        absolute = self._original(os.path.abspath(path))
        root = self._root_of(os.path.dirname(absolute))
        return self._matches(root, absolute, os.path.isdir(path), (self.force_exclude,))

    def excluded(self, path: str) -> bool:
        """Whether a file a walk did not reach (a Makefile another includes) is one a walk would leave out:
        it, or a folder above it up to the project root."""
        absolute = self._original(os.path.abspath(path))
        root = self._root_of(os.path.dirname(absolute))
        if os.path.commonpath([root, absolute]) != root:
            return False  # outside the project: its own rules are not this project's
        parts = os.path.relpath(absolute, root).split(os.sep)
        folder = root
        for i, name in enumerate(parts):
            if self.walked(folder, name, i < len(parts) - 1, root):
                return True
            folder = os.path.join(folder, name)
        return False

    def _original(self, path: str) -> str:
        if self.copy is not None:
            copy_root, original_root = self.copy
            if path == copy_root or path.startswith(copy_root + os.sep):
                return original_root + path[len(copy_root):]
        return path

    def _root_of(self, top: str) -> str:
        if self.root is not None:
            return self.root
        root = self._roots.get(top)
        if root is None:
            root = self._roots[top] = project_root(self._original(os.path.abspath(top)))
        return root

    @staticmethod
    def _matches(root: str, path: str, is_dir: bool, patterns: tuple[re.Pattern[str] | None, ...]) -> bool:
        if not any(patterns):
            return False
        relative = "/" + os.path.relpath(path, root).replace(os.sep, "/") + ("/" if is_dir else "")
        return any(p is not None and p.search(relative) for p in patterns)

    def _specs_for(self, folder: str, root: str) -> list[tuple[str, GitIgnoreSpec]]:
        """The specs of the .gitignore files from ``root`` down to ``folder``, the shallowest first."""
        found = self._specs.get((root, folder))
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        below_root = folder.startswith(root.rstrip(os.sep) + os.sep)
        above = self._specs_for(parent, root) if below_root and parent != folder else []
        own = os.path.join(folder, ".gitignore")
        self.read.append(own)
        found = above
        if os.path.isfile(own):  # a look, not a read: most folders have none
            from pathspec import GitIgnoreSpec

            try:
                with open(own, encoding="utf-8", errors="surrogateescape") as f:
                    found = [*above, (folder, GitIgnoreSpec.from_lines(f.read().splitlines()))]
            except OSError:
                pass  # an unreadable one leaves nothing out
        self._specs[(root, folder)] = found
        return found
