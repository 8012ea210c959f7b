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


def extra_packages(paths: Sequence[str], linked: Sequence[set[str]], finds: Sequence[bool]) -> list[tuple[str, ...]]:
    """For each of the CMake files ``paths`` (``linked[i]``: the ROCm packages file i links;
    ``finds[i]``: whether it finds CUDA), the packages other files hand it, sorted (empty for a
    file that does not find CUDA)."""
    folders = [os.path.dirname(os.path.abspath(p)) for p in paths]
    lists = {folder for folder, path in zip(folders, paths) if os.path.basename(path) == "CMakeLists.txt"}
    finders: dict[str, list[int]] = {}  # folder a finder counts as being in -> the finders
    for i, (path, folder) in enumerate(zip(paths, folders)):
        if finds[i]:
            home = folder if os.path.basename(path) == "CMakeLists.txt" else _nearest(folder, lists)
            finders.setdefault(home, []).append(i)
    handed: list[set[str]] = [set() for _ in paths]
    for i, packages in enumerate(linked):
        wanted = packages - {"hip", ""}
        if not wanted or finds[i]:
            continue  # it finds its own
        owners = finders.get(_nearest(folders[i], finders), [])
        if not owners and os.path.basename(paths[i]) != "CMakeLists.txt":
            owners = [j for group in finders.values() for j in group]
        for j in owners:
            handed[j] |= wanted
    return [tuple(sorted(h)) for h in handed]


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
