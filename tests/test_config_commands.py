"""One configuration for every command: `buildport make`, `cmake`, `audit` and `migrate` read the
project's buildport.toml (found from the paths given, or named with --config), a value given on the
command line wins even where it equals the default, a file buildport cannot use stops each command with
exit 2 and a message naming the file and key, and a cached result of other rows is never reused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

REPO = Path(__file__).resolve().parents[1]

MAKEFILE = "NVCCFLAGS = -O2 -arch=sm_80 --my-switch\nLIBS = -lcufoo\nall:\n\tnvcc $(NVCCFLAGS) -o a a.cu $(LIBS)\n"
CMAKE = "project(p LANGUAGES CXX CUDA)\nadd_executable(a a.cu)\ntarget_link_libraries(a PRIVATE CUDA::cufoo)\n"
ROWS = ('[flags]\n"--my-switch" = ["-fmy-switch"]\n'
        '[libraries.cufoo]\ncmake-targets = ["CUDA::cufoo"]\nlink-names = ["cufoo"]\n'
        'rocm-package = "hipfoo"\nrocm-target = "roc::hipfoo"\nrocm-link = "hipfoo"\n')


def buildport(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "buildport", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "gpu").mkdir(parents=True)
    (root / ".git").mkdir()  # the project's root: the search for a configuration ends here
    (root / "gpu" / "Makefile").write_text(MAKEFILE)
    (root / "gpu" / "CMakeLists.txt").write_text(CMAKE)
    (root / "buildport.toml").write_text('offload-arch = "gfx1030"\n' + ROWS)
    return root


def test_make_and_cmake_read_the_projects_file(project: Path) -> None:
    made = buildport("make", "gpu/Makefile", "--no-cache", cwd=project)
    assert made.returncode == 0, made.stderr
    assert "-fmy-switch" in made.stdout and "-lhipfoo" in made.stdout and "gfx1030" in made.stdout
    cmade = buildport("cmake", "gpu", "--no-cache", cwd=project)
    assert cmade.returncode == 0, cmade.stderr
    assert "roc::hipfoo" in cmade.stdout and "gfx1030" in cmade.stdout


def test_a_value_on_the_command_line_wins(project: Path) -> None:
    made = buildport("make", "gpu/Makefile", "--no-cache", "--offload-arch", "gfx90a", cwd=project)
    assert made.returncode == 0, made.stderr
    assert "gfx90a" in made.stdout and "gfx1030" not in made.stdout
    assert "-fmy-switch" in made.stdout  # the rows still hold


def test_config_names_another_file(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "ci.toml"
    other.write_text('[tool.buildport]\noffload-arch = ["gfx90a:xnack+"]\n')
    made = buildport("make", "gpu/Makefile", "--no-cache", "--config", other, cwd=project)
    assert made.returncode == 0, made.stderr
    assert "gfx90a:xnack+" in made.stdout
    assert "-fmy-switch" not in made.stdout and "-lhipfoo" not in made.stdout  # the project's file is not read


def test_audit_reads_the_rows(project: Path) -> None:
    out = buildport("audit", "--format", "json", "--no-cache", "gpu/Makefile", cwd=project)
    findings = json.loads(out.stdout)["findings"]
    assert any(f["rule"] == "make-library" and "hipfoo" in f["message"] for f in findings), findings
    (project / "buildport.toml").write_text("")
    out = buildport("audit", "--format", "json", "--no-cache", "gpu/Makefile", cwd=project)
    assert not any("hipfoo" in f["message"] for f in json.loads(out.stdout)["findings"])


@pytest.mark.parametrize("command", [("make", "gpu/Makefile"), ("cmake", "gpu"), ("audit", "gpu"),
                                     ("migrate", ".", "--dry-run")])
def test_a_bad_file_stops_every_command(project: Path, command: tuple[str, ...]) -> None:
    (project / "buildport.toml").write_text('offload-arch = "sm_80"\n')
    out = buildport(*command, "--no-cache" if command[0] != "migrate" else "--no-make-dry-run", cwd=project)
    assert out.returncode == 2
    assert f"{project / 'buildport.toml'}: error: offload-arch: expected AMD targets" in out.stderr
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr


def test_a_cached_result_of_other_rows_is_not_reused(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (project / "buildport.toml").write_text("")
    first = buildport("make", "gpu/Makefile", "--cache-dir", cache, cwd=project)
    assert "--my-switch" in first.stdout
    (project / "buildport.toml").write_text(ROWS)
    second = buildport("make", "gpu/Makefile", "--cache-dir", cache, cwd=project)
    assert "-fmy-switch" in second.stdout and "-lhipfoo" in second.stdout
    (project / "buildport.toml").write_text("")
    third = buildport("make", "gpu/Makefile", "--cache-dir", cache, cwd=project)
    assert third.stdout == first.stdout


def test_migrate_takes_a_default_given_on_the_command_line(project: Path) -> None:
    (project / "gpu" / "a.cu").write_text("#include <cuda_runtime.h>\nint main() { return cudaDeviceReset(); }\n")
    (project / "buildport.toml").write_text('rename-sources = "hip"\n')
    planned = buildport("migrate", ".", "--dry-run", "--no-make-dry-run", "--no-cmake-configure", cwd=project)
    assert "gpu/a.cu -> gpu/a.hip" in planned.stdout, planned.stdout + planned.stderr
    kept = buildport("migrate", ".", "--dry-run", "--no-make-dry-run", "--no-cmake-configure",
                     "--rename-sources", "keep", cwd=project)
    assert "a.hip" not in kept.stdout, kept.stdout


def test_a_named_file_is_read_at_its_top_level_when_it_has_no_tool_table(project: Path, tmp_path: Path) -> None:
    named = tmp_path / "ci.toml"
    named.write_text('offload-arch = "gfx1100"\n')
    made = buildport("make", "gpu/Makefile", "--no-cache", "--config", named, cwd=project)
    assert made.returncode == 0, made.stderr
    assert "gfx1100" in made.stdout
    named.write_text("jobs = 0\n")
    refused = buildport("make", "gpu/Makefile", "--no-cache", "--config", named, cwd=project)
    assert refused.returncode == 2 and f"{named}: error: jobs: expected" in refused.stderr


def test_a_rows_note_is_part_of_the_cache_key(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    row = '[libraries.cufoo]\ncmake-targets = ["CUDA::cufoo"]\nnote = "NOTE-{}"\n'  # no ROCm counterpart
    (project / "buildport.toml").write_text(row.format("A"))
    first = buildport("cmake", "gpu", "--cache-dir", cache, cwd=project)
    assert "NOTE-A" in first.stderr
    (project / "buildport.toml").write_text(row.format("B"))
    second = buildport("cmake", "gpu", "--cache-dir", cache, cwd=project)
    assert "NOTE-B" in second.stderr and "NOTE-A" not in second.stderr
