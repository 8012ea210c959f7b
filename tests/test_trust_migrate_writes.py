"""``migrate`` writes all of its changes or none, and a run killed half-way is repaired by the next.

Every target is checked before the first write (a read-only file met half-way used
to leave part of the tree written while the message said "nothing was written").
With ``--rename-sources hip`` the new files are written first, the build files
next, the old files deleted last, under a journal that a rerun finishes: at no
moment do the build files name sources that do not exist.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from buildport.migrate import plan as migrate_module
from buildport.migrate.plan import JOURNAL
from buildport.cli.migrate import run_migration

GOOD = "#include <cuda_runtime.h>\nint main() { return cudaDeviceSynchronize(); }\n"
HEADER = "#pragma once\n#include <cuda_runtime.h>\ninline cudaError_t sync() { return cudaDeviceSynchronize(); }\n"
MAKEFILE = "app: a.cu b.cu\n\tnvcc -o app a.cu b.cu\n"
CONVERT = 'sed s/cuda/hip/g "$f"; echo "CONVERTED refs count: 1" >&2'


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    (root / "Makefile").write_text(MAKEFILE)
    (root / "a.cu").write_text('#include "util.h"\n' + GOOD)
    (root / "b.cu").write_text(GOOD.replace("main", "other"))
    (root / "util.h").write_text(HEADER)
    return root


def engine(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "hipify-perl"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\nfor a; do f=$a; done\n{CONVERT}\n")
    path.chmod(0o755)
    return path


def run(root: Path, tool: Path, rename: str = "keep") -> int:
    return run_migration(str(root), None, True, True, False, (), str(tool), rename, 1, True, False,
                         ask=frozenset())


REPORTS = ("MIGRATION.md", "migration.json")  # a rerun's reports tell of what that run did


def snapshot(root: Path, reports: bool = True) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and (reports or p.name not in REPORTS)}


def test_a_read_only_file_stops_the_migration_before_the_first_write(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "b.cu").chmod(0o444)
    before = snapshot(root)
    assert run(root, engine(tmp_path)) == 2
    assert snapshot(root) == before, "part of the tree was written"


def test_every_file_that_cannot_be_written_is_named_at_once(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    (root / "util.h").chmod(0o444)
    (root / "b.cu").chmod(0o444)  # renamed: its folder is written, the file itself is deleted, so refused
    before = snapshot(root)
    assert run(root, engine(tmp_path), "hip") == 2
    err = capsys.readouterr().err
    assert "2 files could not be written; nothing was written" in err
    assert "util.h: read-only" in err and "b.cu: read-only" in err
    assert snapshot(root) == before


class Killed(BaseException):
    """The process dying at a write: nothing after it runs."""


def named_sources(root: Path) -> list[str]:
    return re.findall(r"\b\w+\.(?:cu|hip)\b", (root / "Makefile").read_text())


@pytest.mark.parametrize("kill_at", range(12))
def test_a_rename_killed_at_any_write_leaves_a_tree_whose_build_names_existing_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kill_at: int) -> None:
    tool = engine(tmp_path)
    whole = project(tmp_path / "whole")
    assert run(whole, tool, "hip") == 0
    expected = snapshot(whole, reports=False)
    assert named_sources(whole) == ["a.hip", "b.hip", "a.hip", "b.hip"]

    root = project(tmp_path)
    writes = {"count": 0}

    def counted(real):  # type: ignore[no-untyped-def]
        def write(*args, **kwargs):  # type: ignore[no-untyped-def]
            if writes["count"] == kill_at:
                raise Killed
            writes["count"] += 1
            return real(*args, **kwargs)
        return write

    monkeypatch.setattr(migrate_module, "_write_new", counted(migrate_module._write_new))
    monkeypatch.setattr(migrate_module, "write_atomic", counted(migrate_module.write_atomic))
    monkeypatch.setattr(Path, "unlink", counted(Path.unlink))
    try:
        run(root, tool, "hip")
        killed = False
    except Killed:
        killed = True
    monkeypatch.undo()
    # whatever moment it died at, the build names only sources that exist
    assert all((root / name).is_file() for name in named_sources(root)), snapshot(root)
    if killed:
        assert run(root, tool, "hip") == 0
    assert snapshot(root, reports=False) == expected
    assert all((root / name).is_file() for name in REPORTS)
    assert not (root / JOURNAL).exists()


def test_a_full_disk_while_writing_is_an_error_not_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import errno
    import os

    root = project(tmp_path)
    out = tmp_path / "out"
    real = migrate_module._write_new

    def full(path: Path, text: str, mode: int = 0o644, root: Path | None = None) -> None:
        if path.name == "MIGRATION.md":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text, mode, root)

    monkeypatch.setattr(migrate_module, "_write_new", full)
    code = run_migration(str(root), str(out), False, False, False, (), str(engine(tmp_path)), "keep", 1, True, False,
                         ask=frozenset())
    assert code == 2
    assert f"{out / 'MIGRATION.md'}: cannot write: No space left on device" in capsys.readouterr().err
    assert not out.exists(), "the half-made copy is removed"


def test_a_half_made_copy_is_started_again_and_an_interrupted_one_removed(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.cli import migrate as migrate_cli
    from buildport.migrate.plan import INCOMPLETE

    root, out, tool = project(tmp_path), tmp_path / "out", engine(tmp_path)

    def out_run() -> int:
        return run_migration(str(root), str(out), False, False, False, (), str(tool), "keep", 1, True, False,
                             ask=frozenset())

    # a run killed half-way (kill -9) left a copy with its mark: the next run starts again
    out.mkdir()
    (out / INCOMPLETE).write_text("")
    (out / "Makefile").write_text("half")
    assert out_run() == 0
    assert "hipcc" in (out / "Makefile").read_text().lower() and not (out / INCOMPLETE).exists()
    # a finished copy has no mark: a second run into it is refused, as before
    assert out_run() == 2 and (out / "MIGRATION.md").exists()
    # Ctrl-C during the plan: nothing is left to block the rerun
    shutil.rmtree(out)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(migrate_cli, "make_plan", interrupted)
    with pytest.raises(KeyboardInterrupt):
        out_run()
    assert not out.exists()
