"""CMake's File API answer (buildport.migrate.cmakeapi): which CMakeLists.txt are configured, and the codemodel read."""

from __future__ import annotations

import json
from pathlib import Path

from buildport.migrate.cmakeapi import read_codemodel, top_level


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_top_level_lists_files_are_those_a_user_configures(tmp_path: Path) -> None:
    root = _write(tmp_path / "CMakeLists.txt", "project(top)\nadd_subdirectory(lib)\n")
    lib = _write(tmp_path / "lib" / "CMakeLists.txt", "add_library(lib a.cu)\n")
    # a project of its own below the top one is configured through it; one beside it on its own
    nested = _write(tmp_path / "lib" / "sub" / "CMakeLists.txt", "project(sub)\n")
    assert top_level([nested, lib, root], tmp_path) == [root]

    alone = tmp_path / "samples"
    one = _write(alone / "one" / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.18)\nPROJECT(one CUDA)\n")
    two = _write(alone / "two" / "CMakeLists.txt", "project (two LANGUAGES CUDA)\n")
    helper = _write(alone / "cmake" / "CMakeLists.txt", "# no project here\n")
    found = top_level([two, helper, one], alone)
    assert found == [one, two]


def _reply(build: Path, source: Path, targets: dict[str, dict[str, object]]) -> None:
    reply = build / ".cmake" / "api" / "v1" / "reply"
    reply.mkdir(parents=True)
    entries = []
    for name, target in targets.items():
        (reply / f"target-{name}.json").write_text(json.dumps(target))
        entries.append({"name": name, "jsonFile": f"target-{name}.json"})
    codemodel = {"paths": {"source": str(source), "build": str(build)},
                 "configurations": [{"name": "", "targets": entries}]}
    (reply / "codemodel-v2-1.json").write_text(json.dumps(codemodel))
    index = {"reply": {"codemodel-v2": {"kind": "codemodel", "version": {"major": 2, "minor": 4},
                                        "jsonFile": "codemodel-v2-1.json"}}}
    (reply / "index-2026-01-01T00-00-00-0000.json").write_text(json.dumps(index))


def test_the_codemodel_names_compiled_sources_and_include_folders(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for name in ("main.cu", "kernels/a.cu", "host.cpp", "notes.txt", "util.c"):
        _write(source / name, "")
    (source / "include").mkdir()
    build = tmp_path / "build"
    groups = [{"language": "CUDA", "sourceIndexes": [0, 1], "includes": [{"path": str(source / "include")}]},
              {"language": "CXX", "sourceIndexes": [2]}, {"language": "C", "sourceIndexes": [5]}]
    _reply(build, source, {
        "app": {"sources": [{"path": "main.cu", "compileGroupIndex": 0},
                            {"path": str(source / "kernels/a.cu"), "compileGroupIndex": 0},
                            {"path": "host.cpp", "compileGroupIndex": 1},
                            {"path": "notes.txt"},  # not compiled
                            {"path": str(build / "gen.cu"), "compileGroupIndex": 0, "isGenerated": True},
                            {"path": "util.c", "compileGroupIndex": 2}],
                "compileGroups": groups},
        "docs": {"sources": [{"path": "notes.txt"}]},
    })
    found = read_codemodel(build, source)
    assert found.ok and found.targets == 2
    assert found.sources == {(source / n).resolve() for n in ("main.cu", "kernels/a.cu", "host.cpp", "util.c")}
    assert found.include_dirs == {(source / "include").resolve()}


def test_no_reply_is_no_answer(tmp_path: Path) -> None:
    found = read_codemodel(tmp_path / "build", tmp_path)
    assert not found.ok and "no codemodel" in found.why
