"""Which ``find_package(hip)`` of a run finds the ROCm packages another file links.

A CMake file that links ``roc::hipblas`` needs ``find_package(hipblas)`` in its
own directory or in one above it: an imported target is seen in the directory
that found it and below. The port writes those calls where CUDA was found
(``find_package(CUDAToolkit)`` becomes ``find_package(hip)`` and the packages
the file links). A file that links a library but leaves finding CUDA to a file
above it hands its packages to the nearest such file: the one whose folder is
the closest above its own. A ``*.cmake`` module counts as being in the folder
of the nearest ``CMakeLists.txt`` of the run above it (``cmake/deps.cmake`` is
included by the top ``CMakeLists.txt``). A module with no finder above it
hands its packages to every finder of the run, as it cannot tell which one
includes it; a ``CMakeLists.txt`` with none above it hands them to none, as no
finder of the run is in its scope (CUDA is found for it outside the run, or its
targets were not seen there either).

A tree of separate projects (one sample per folder, each finding CUDA itself)
so keeps each project's packages to itself: a sample that links nothing does
not require hipBLAS because its neighbour does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def extra_packages(
    paths: Sequence[str], linked: Sequence[set[str]], finds: Sequence[bool],
) -> dict[int, tuple[str, ...]]:
    """For the CMake files ``paths`` (``linked[i]``: the ROCm packages file i links; ``finds[i]``:
    whether it finds CUDA), the packages other files hand each finder that is handed any (sorted)."""
    # a finder finds what it links itself
    linkers = [i for i, packages in enumerate(linked) if packages and not finds[i] and not packages <= _NOTHING]
    if not linkers or not any(finds):
        return {}
    lists: set[str] | None = None  # the folders of the run's CMakeLists.txt, for a module that finds CUDA
    finders: dict[str, list[int]] = {}  # folder a finder counts as being in -> the finders
    for i in (i for i, found in enumerate(finds) if found):
        home = _folder(paths[i])
        if not _is_lists(paths[i]):
            if lists is None:
                lists = {_folder(p) for p in paths if _is_lists(p)}
            home = _nearest(home, lists)
        finders.setdefault(home, []).append(i)
    handed: dict[int, set[str]] = {}
    for i in linkers:
        owners = finders.get(_nearest(_folder(paths[i]), finders), [])
        if not owners and not _is_lists(paths[i]):
            owners = [j for group in finders.values() for j in group]
        for j in owners:
            handed.setdefault(j, set()).update(linked[i] - _NOTHING)
    return {j: tuple(sorted(packages)) for j, packages in handed.items()}


#: What no file need be handed: the HIP runtime (every finder finds hip) and no package.
_NOTHING = frozenset({"hip", ""})


def _folder(path: str) -> str:
    """The file's folder, absolute (as the run names it: a discovered path is already both)."""
    return os.path.dirname(path if path[:1] == "/" else os.path.abspath(path))


def _is_lists(path: str) -> bool:
    return path.endswith("CMakeLists.txt") and os.path.basename(path) == "CMakeLists.txt"


def _nearest(folder: str, among: set[str] | dict[str, list[int]]) -> str:
    """``folder`` or the closest folder above it that is in ``among``; ``folder`` itself if none is."""
    at = folder
    while True:
        if at in among:
            return at
        parent = os.path.dirname(at)
        if parent == at:
            return folder
        at = parent
