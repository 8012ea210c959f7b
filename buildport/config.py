"""Project options from ``buildport.toml`` or ``[tool.buildport]`` in ``pyproject.toml``.

Keys are the long option names (``offload-arch``, ``hipify``, ``rename-sources``,
``jobs``); a command-line option wins over the file. Two tables extend the
built-in mappings and take precedence over them:

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
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildport import prescan
from buildport.rules import flags as flag_rules
from buildport.rules import libraries as library_rules

OPTION_KEYS = frozenset({"offload-arch", "hipify", "rename-sources", "jobs"})


class ConfigError(Exception):
    """A configuration file that buildport cannot use."""


@dataclass(slots=True)
class Config:
    """What a project's configuration file says."""

    path: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    libraries: list[library_rules.Library] = field(default_factory=list)
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)


def load(root: Path) -> Config:
    """``buildport.toml`` at ``root``, else ``[tool.buildport]`` of ``pyproject.toml``, else nothing."""
    for name, section in (("buildport.toml", ()), ("pyproject.toml", ("tool", "buildport"))):
        path = root / name
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: error: not valid TOML: {exc}") from None
        for key in section:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if name == "pyproject.toml" and not data:
            continue
        return _read(path, data)
    return Config()


def _read(path: Path, data: dict[str, Any]) -> Config:
    config = Config(path)
    for key, value in data.items():
        if key in OPTION_KEYS:
            config.options[key] = value
        elif key == "libraries":
            config.libraries = [_library(path, name, row) for name, row in value.items()]
        elif key == "flags":
            config.flags = {spelling: tuple(to) for spelling, to in value.items()}
        else:
            raise ConfigError(f"{path}: error: unknown key {key!r} (known: "
                              f"{', '.join(sorted(OPTION_KEYS | {'libraries', 'flags'}))})")
    return config


def _library(path: Path, name: str, row: dict[str, Any]) -> library_rules.Library:
    try:
        return library_rules.Library(
            name, tuple(row.get("cmake-targets", ())), tuple(row.get("link-names", ())),
            tuple(row.get("legacy-vars", ())), row.get("rocm-package", ""), row.get("rocm-target", ""),
            row.get("rocm-link", ""), row.get("include-subdir", ""), note=row.get("note", f"from {path.name}"),
        )
    except TypeError as exc:
        raise ConfigError(f"{path}: error: library {name!r}: {exc}") from None


def install(config: Config) -> None:
    """Put the project's rows in front of the built-in tables."""
    if config.libraries:
        library_rules.extend(config.libraries)
        prescan.tables_changed()
    for spelling, to in config.flags.items():
        row = flag_rules.Flag((spelling,), "map", to, note=f"from {config.path}")
        flag_rules.BY_NAME[spelling] = row
