"""Project options from ``buildport.toml`` or ``[tool.buildport]`` in ``pyproject.toml``.

Every command reads it: found as black finds its configuration (:func:`find`: from the
paths given up to the project root), or named with ``--config FILE``. Keys are the long
option names (``offload-arch``, ``hipify``, ``hipify-args``, ``rename-sources``, ``jobs``, ``exclude``,
``extend-exclude``, ``force-exclude``); a value given on
the command line wins over the file. Two tables extend the built-in mappings and take
precedence over them (the project's :class:`~buildport.rules.ruleset.RuleSet`):

```toml
[tool.buildport.libraries.mycufoo]      # one row per CUDA library
cmake-targets = ["CUDA::cufoo"]
link-names = ["cufoo"]
rocm-package = "hipfoo"
rocm-target = "roc::hipfoo"
rocm-link = "hipfoo"

[tool.buildport.flags]                  # nvcc spelling → what replaces it ([] drops it)
"--my-nvcc-switch" = ["-fmy-clang-switch"]
```

Every key and value is checked; a wrong one is a :class:`ConfigError` naming the file, the
key and what was expected. ``buildport/schemas/config-v1.json`` describes the file for editors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildport.rules import libraries as library_rules
from buildport.rules.ruleset import RuleSet

OPTION_KEYS = frozenset({"offload-arch", "hipify", "hipify-args", "rename-sources", "jobs", "exclude",
                         "extend-exclude", "force-exclude"})
TABLE_KEYS = frozenset({"libraries", "flags"})
#: A library row's keys: list keys hold names, the others one name.
LIBRARY_LISTS = ("cmake-targets", "link-names", "legacy-vars")
LIBRARY_STRINGS = ("rocm-package", "rocm-target", "rocm-link", "include-subdir", "note")
#: Folders that end the search upwards: the project's root (as black stops at a repository's).
ROOT_MARKERS = (".git", ".hg")
#: An AMD GPU target, with its features: gfx90a, gfx1030, gfx90a:xnack+.
AMD_TARGET = re.compile(r"^gfx[0-9a-f]{3,4}(?::[a-z-]+[+-])*$")


class ConfigError(Exception):
    """A configuration file that buildport cannot use."""


@dataclass(slots=True)
class Config:
    """What a project's configuration file says."""

    path: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    libraries: list[library_rules.Library] = field(default_factory=list)
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def rules(self) -> RuleSet:
        """The rule set the file makes: its rows in front of the built-in ones."""
        return RuleSet(tuple(self.libraries), tuple(self.flags.items()), str(self.path or ""))

    def chosen(self, given: Collection[str]) -> dict[str, Any]:
        """The file's options but those the command line gave (``given``: their long names)."""
        return {key: value for key, value in self.options.items() if key not in given}

    @property
    def offload_arch(self) -> tuple[str, ...]:
        value = self.options.get("offload-arch", ())
        return tuple(_arch_words(value)) if isinstance(value, str) else tuple(value)


def load(root: Path) -> Config:
    """``buildport.toml`` at ``root``, else ``[tool.buildport]`` of ``pyproject.toml``, else nothing."""
    found = _in_folder(root)
    return read(found) if found is not None else Config()


def for_paths(paths: Iterable[str], named: str | None = None) -> Config:
    """The configuration of a run over ``paths``: the file ``named`` (``--config``), else the one
    :func:`find` finds, else none."""
    path = Path(named) if named else find(paths)
    return read(path) if path is not None else Config()


def find(paths: Iterable[str]) -> Path | None:
    """The configuration of the files and folders named: from the folder that holds them all
    upwards, the first ``buildport.toml`` or ``pyproject.toml`` with a ``[tool.buildport]`` table,
    up to the project's root (a folder with ``.git`` or ``.hg``) and no further."""
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths if p != "-"]
    if not folders:
        folders = [os.getcwd()]  # stdin: the working folder's project
    try:
        start = Path(os.path.commonpath(folders))
    except ValueError:  # folders on different drives: each its own project, none shared
        return None
    for folder in (start, *start.parents):
        found = _in_folder(folder)
        if found is not None:
            return found
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return None
    return None


def _in_folder(folder: Path) -> Path | None:
    if (folder / "buildport.toml").is_file():
        return folder / "buildport.toml"
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and _section(pyproject, _parse(pyproject)):
        return pyproject
    return None


def read(path: Path) -> Config:
    """The configuration in ``path``: the ``[tool.buildport]`` table of a ``pyproject.toml``, or of any
    other file that has one; otherwise the file's top level, as in ``buildport.toml`` (so a file named with
    ``--config`` is read, and checked, whatever its name)."""
    if not path.is_file():
        raise ConfigError(f"{path}: error: no such configuration file")
    data = _parse(path)
    if path.name == "buildport.toml":
        return _read(path, data)
    section = _section(path, data)
    return _read(path, section if section or path.name == "pyproject.toml" else data)


def _parse(path: Path) -> dict[str, Any]:
    import tomllib  # where a file is found: a run without one does without the TOML reader

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: error: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: error: cannot read it: {exc.strerror or exc}") from None


def _section(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    tool = data.get("tool", {})
    section = tool.get("buildport", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: error: tool.buildport: expected a table")
    return section


def _read(path: Path, data: dict[str, Any]) -> Config:
    config = Config(path)
    for key, value in data.items():
        if key in OPTION_KEYS:
            config.options[key] = _option(path, key, value)
        elif key == "libraries":
            config.libraries = [_library(path, name, row) for name, row in _table(path, key, value).items()]
        elif key == "flags":
            config.flags = {spelling: tuple(_names(path, f"flags.{spelling!r}", to))
                            for spelling, to in _table(path, key, value).items()}
        else:
            raise ConfigError(f"{path}: error: unknown key {key!r} (known: "
                              f"{', '.join(sorted(OPTION_KEYS | TABLE_KEYS))})")
    return config


def _option(path: Path, key: str, value: Any) -> Any:
    if key == "jobs":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _expected(path, key, "a whole number of processes, 1 or more", value)
    elif key == "rename-sources":
        if value not in ("keep", "hip"):
            raise _expected(path, key, '"keep" or "hip"', value)
    elif key == "hipify":
        if not isinstance(value, str) or not value:
            raise _expected(path, key, "the path or name of a hipify program", value)
    elif key == "hipify-args":
        _names(path, key, value)
    elif key in ("exclude", "extend-exclude", "force-exclude"):
        if not isinstance(value, str):
            raise _expected(path, key, "a regular expression", value)
        try:
            re.compile(value)
        except re.error as exc:
            raise _expected(path, key, f"a regular expression ({exc})", value) from None
    elif key == "offload-arch":
        if isinstance(value, str):
            targets = _arch_words(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            targets = value
        else:
            raise _expected(path, key, 'AMD targets: a string ("gfx90a,gfx942") or a list of strings', value)
        bad = [t for t in targets if not AMD_TARGET.match(t)]
        if bad or not targets:
            raise _expected(path, key, "AMD targets such as gfx90a (NVIDIA's sm_80 or 80 have no meaning here)",
                            ", ".join(bad) if bad else value)
    return value


def _arch_words(value: str) -> list[str]:
    return [a.strip() for a in value.replace(";", ",").split(",") if a.strip()]


def _table(path: Path, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _expected(path, key, "a table", value)
    return value


def _names(path: Path, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _expected(path, key, "a list of strings", value)
    return value


def _library(path: Path, name: str, row: Any) -> library_rules.Library:
    row = _table(path, f"libraries.{name}", row)
    unknown = sorted(set(row) - set(LIBRARY_LISTS) - set(LIBRARY_STRINGS))
    if unknown:
        raise ConfigError(f"{path}: error: libraries.{name}: unknown key {unknown[0]!r} (known: "
                          f"{', '.join(LIBRARY_LISTS + LIBRARY_STRINGS)})")
    lists = {k: tuple(_names(path, f"libraries.{name}.{k}", row.get(k, []))) for k in LIBRARY_LISTS}
    for k in LIBRARY_STRINGS:
        if not isinstance(row.get(k, ""), str):
            raise _expected(path, f"libraries.{name}.{k}", "a string", row[k])
    if not any(lists.values()):
        raise ConfigError(f"{path}: error: libraries.{name}: names no CUDA library (expected at least one of "
                          f"{', '.join(LIBRARY_LISTS)})")
    return library_rules.Library(
        name, lists["cmake-targets"], lists["link-names"], lists["legacy-vars"], row.get("rocm-package", ""),
        row.get("rocm-target", ""), row.get("rocm-link", ""), row.get("include-subdir", ""),
        note=row.get("note", f"from {path.name}"),
    )


def _expected(path: Path, key: str, what: str, value: Any) -> ConfigError:
    return ConfigError(f"{path}: error: {key}: expected {what}, got {value!r}")
