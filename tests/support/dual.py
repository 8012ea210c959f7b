"""Reading a dual build file as one runtime would: ``projected(text, "HIP")`` is what CMake or make reads with
``GPU_RUNTIME=HIP``, as text (the switch's own lines left out). A dual file is right when its CUDA projection is
the project's file and its HIP projection the port."""

from __future__ import annotations

from buildport.dual.view import read_as


def projected(text: str, runtime: str, kind: str = "cmake") -> str:
    return read_as(text, kind, runtime, keep_lines=False)
