"""The conversion engine can do no harm: it works on copies, its output is checked, it cannot hang the run.

An engine that deleted or truncated its input used to cost the user those sources
while ``migrate`` exited 0; one that failed on every file left a tree whose build was
HIP and whose sources were CUDA; a hung one cost 300 s per file and left its children
running. Each engine here is a small shell script standing in for a broken hipify.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildport.cli import main

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

GOOD = "#include <cuda_runtime.h>\nint main() { return cudaDeviceSynchronize(); }\n"
MAKEFILE = "app: a.cu b.cu\n\tnvcc -o app a.cu b.cu\n"
#: A conversion, with the statistics line hipify-perl prints (``-print-stats``) for it.
CONVERT = 'sed s/cuda/hip/g "$f"; echo "CONVERTED refs count: 1" >&2'


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    (root / "Makefile").write_text(MAKEFILE)
    (root / "a.cu").write_text(GOOD)
    (root / "b.cu").write_text(GOOD.replace("main", "other"))
    return root


def engine(tmp_path: Path, body: str) -> Path:
    """An engine named like hipify-perl (so it gets hipify-perl's arguments: the file last)."""
    path = tmp_path / "bin" / "hipify-perl"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\nfor a; do f=$a; done\n{body}\n")
    path.chmod(0o755)
    return path


def migrate(root: Path, tool: Path, *more: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["migrate", str(root), "--in-place", "--force", "--hipify", str(tool), *more])
    return done.exit_code, done.output


def test_an_engine_that_deletes_its_input_deletes_nothing_of_the_user(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output = migrate(root, engine(tmp_path, 'rm -f "$f"; exit 1'))
    assert (root / "a.cu").read_text() == GOOD and (root / "b.cu").exists()
    assert code == 2, output
    assert "failed on every source the build uses (2;" in output and "nothing was written" in output
    assert (root / "Makefile").read_text() == MAKEFILE  # the build is not ported over CUDA sources
    assert not (root / "MIGRATION.md").exists()


def test_an_engine_that_truncates_its_input_after_reading_it_costs_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output = migrate(root, engine(tmp_path, f'{CONVERT}; : > "$f"'))
    assert code == 0, output
    assert "hipDeviceSynchronize" in (root / "a.cu").read_text()
    assert "hipcc" in (root / "Makefile").read_text()


def test_empty_output_with_success_is_a_failure(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output = migrate(root, engine(tmp_path, f'case "$f" in *a.cu) exit 0;; esac; {CONVERT}'))
    assert code == 1, output  # one of two converted: the migration is done, and says what failed
    assert (root / "a.cu").read_text() == GOOD
    report = (root / "MIGRATION.md").read_text()
    assert "a.cu" in report and "gave no output for a file with text; its output was not used" in report


def test_output_with_most_lines_gone_is_a_failure(tmp_path: Path) -> None:
    root = project(tmp_path)
    long = "".join(f"int v{i} = {i};\n" for i in range(20)) + GOOD
    (root / "a.cu").write_text(long)
    code, output = migrate(root, engine(tmp_path, f'case "$f" in *a.cu) head -n 3 "$f"; exit 0;; esac; {CONVERT}'))
    assert code == 1, output
    assert (root / "a.cu").read_text() == long
    assert "gave 3 lines for a file of 22; its output was not used" in (root / "MIGRATION.md").read_text()


def test_the_engine_messages_name_the_users_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output = migrate(root, engine(tmp_path, 'echo "warning: $f:2: unsupported identifier \\"cudaFoo\\"" >&2; '
                                                   + CONVERT))
    assert code == 0, output
    data = (root / "migration.json").read_text()
    assert '"warnings": [\n          "warning: a.cu:2: unsupported identifier' in data
    assert "buildport-engine-" not in data and "buildport-engine-" not in (root / "MIGRATION.md").read_text()


def test_a_hung_engine_is_killed_with_its_children_after_the_timeout(tmp_path: Path) -> None:
    root = project(tmp_path)
    marker = f"sleep 9{os.getpid()}.25"  # a command line no other process has
    tool = engine(tmp_path, f"{marker} & {marker}")
    started = time.monotonic()
    code, output = migrate(root, tool, "--engine-timeout", "1", "--jobs", "2")
    assert time.monotonic() - started < 60
    assert code == 2, output  # every source timed out: nothing written
    assert "timed out after 1 s" in output
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], "the engine's children live on"
    assert (root / "a.cu").read_text() == GOOD


def test_a_program_the_projects_configuration_names_inside_it_is_not_run(tmp_path: Path) -> None:
    """Migrating an untrusted repository must not run its code: ``hipify = "tools/hipify-perl"`` is refused."""
    root = project(tmp_path)
    ran = tmp_path / "it-ran"
    (root / "tools").mkdir()
    (root / "tools" / "hipify-perl").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (root / "tools" / "hipify-perl").chmod(0o755)
    (root / "buildport.toml").write_text('hipify = "tools/hipify-perl"\n')
    done = CliRunner().invoke(main, ["migrate", str(root), "--out", str(tmp_path / "out")])
    assert done.exit_code == 2, done.output
    assert "hipify = 'tools/hipify-perl' is a program inside the project" in done.output
    assert "--hipify" in done.output and not ran.exists()
    # named on the command line, it is the user's choice
    done = CliRunner().invoke(main, ["migrate", str(root), "--out", str(tmp_path / "out2"),
                                     "--hipify", str(root / "tools" / "hipify-perl")])
    assert ran.exists()


def test_a_relative_engine_path_in_the_configuration_is_the_project_roots(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    tool = engine(tmp_path, CONVERT)  # tmp_path/bin/hipify-perl, beside the project
    (root / "buildport.toml").write_text('hipify = "../bin/hipify-perl"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative to the working directory it would name nothing
    done = CliRunner().invoke(main, ["migrate", str(root), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert tool.exists() and "hipDeviceSynchronize" in (tmp_path / "out" / "a.cu").read_text()


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_in_place_is_refused_when_git_cannot_be_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    _git(root, "init", "-q")
    tool = engine(tmp_path, CONVERT)
    done = CliRunner(env={"PATH": str(tmp_path / "bin")}).invoke(
        main, ["migrate", str(root), "--in-place", "--hipify", str(tool), "--no-make-dry-run"])
    assert done.exit_code == 2, done.output
    assert "cannot tell whether the git work tree has uncommitted changes: git could not run" in done.output
    assert (root / "Makefile").read_text() == MAKEFILE


def test_in_place_is_refused_when_git_refuses_the_repository(tmp_path: Path) -> None:
    """A repository of another owner: git says "dubious ownership" and answers nothing."""
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another owner needs root")
    root = project(tmp_path)
    _git(root, "init", "-q")
    for folder, _dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.chown(name, 54321, 54321)
    done = CliRunner().invoke(main, ["migrate", str(root), "--hipify", str(engine(tmp_path, CONVERT))])
    assert done.exit_code == 2, done.output
    assert "cannot tell whether the git work tree has uncommitted changes: git refused the repository" in done.output
    assert (root / "Makefile").read_text() == MAKEFILE
    done = CliRunner().invoke(main, ["migrate", str(root), "--force", "--hipify", str(engine(tmp_path, CONVERT))])
    assert done.exit_code == 0, done.output


def test_a_long_conversion_says_how_far_it_is_in_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not on a terminal (a CI log): a plain line every few seconds, and the last one at the end."""
    from buildport.cli import migrate as migrate_cli

    root = project(tmp_path)
    monkeypatch.setattr(migrate_cli._LogProgress, "EVERY", 0.0)  # every file is "a while" here
    code, output = migrate(root, engine(tmp_path, CONVERT))
    assert code == 0, output
    assert "hipify: 1/2 files\nhipify: 2/2 files\n" in output
    monkeypatch.setattr(migrate_cli._LogProgress, "EVERY", 3600.0)
    again = project(tmp_path / "again")
    code, output = migrate(again, engine(tmp_path, CONVERT))
    assert code == 0 and "hipify:" not in output  # a short conversion says nothing


def test_the_users_engine_arguments_come_before_each_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    seen = tmp_path / "argv"
    tool = engine(tmp_path, f'echo "$@" >> {seen}\n{CONVERT}')
    code, output = migrate(root, tool, "--hipify-arg", "-roc", "--hipify-arg", "-whole")
    assert code == 0, output
    calls = seen.read_text().splitlines()
    assert len(calls) == 2 and all(call.startswith("-roc -whole -print-stats ") for call in calls)
    # the configuration's, where the command line gives none
    root = project(tmp_path / "second")
    (root / "buildport.toml").write_text('hipify-args = ["-roc"]\n')
    seen.unlink()
    code, output = migrate(root, tool)
    assert code == 0, output
    assert all(call.startswith("-roc -print-stats ") for call in seen.read_text().splitlines())
