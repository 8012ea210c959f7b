"""What users expect of a command-line tool: a closing summary line, -q/-v on audit, a tagged cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

REPO = Path(__file__).resolve().parents[1]
AUDIT_TREE = REPO / "fixtures" / "audit" / "mixed" / "tree"


def buildport(*args: str | Path, cwd: Path, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **env_vars}
    return subprocess.run([sys.executable, "-m", "buildport", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _tree(root: Path) -> Path:
    for name in ("a", "b", "c"):
        (root / name).mkdir(parents=True)
        (root / name / "CMakeLists.txt").write_text("add_executable(app main.cpp)\n")
    (root / "a" / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\nadd_executable(app k.cu)\n")
    return root


def test_check_diff_and_in_place_end_with_a_summary(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t")
    checked = buildport("cmake", "--check", "--no-cache", ".", cwd=tree)
    assert checked.returncode == 1
    assert checked.stderr.splitlines()[-1] == "1 file would be rewritten, 2 unchanged"
    diffed = buildport("cmake", "--diff", "--no-cache", ".", cwd=tree)
    assert diffed.stderr.splitlines()[-1] == "1 file would be rewritten, 2 unchanged"
    assert buildport("cmake", "--check", "-q", "--no-cache", ".", cwd=tree).stderr == ""
    written = buildport("cmake", "--in-place", "--no-cache", ".", cwd=tree)
    assert written.returncode == 0 and written.stderr.splitlines()[-1] == "1 file rewritten, 2 unchanged"
    again = buildport("cmake", "--check", "--no-cache", ".", cwd=tree)
    assert again.returncode == 0 and again.stderr.splitlines()[-1] == "0 files would be rewritten, 3 unchanged"
    printed = buildport("cmake", "--no-cache", ".", cwd=tree)  # the ported text on stdout: no summary
    assert "rewritten" not in printed.stderr


def test_audit_quiet_and_verbose(tmp_path: Path) -> None:
    quiet = buildport("audit", "--no-cache", "-q", ".", cwd=AUDIT_TREE)
    assert quiet.returncode == 1  # the gate is the same
    assert quiet.stdout.splitlines() == [
        "Summary", "  5 files audited, 5 with findings", "  18 findings (0 error, 5 warning, 13 info), 14 auto-fixable",
        "  a tool can migrate an estimated 78% (14 of 18 findings)"]
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "CMakeLists.txt").write_text("add_executable(app main.cpp)\n")
    (tmp_path / "clean" / "Makefile").write_text("NVCC = nvcc\nall:\n\t$(NVCC) -o a a.cu\n")
    verbose = buildport("audit", "--no-cache", "-v", ".", cwd=tmp_path / "clean").stdout
    assert "  CMakeLists.txt  no findings\n" in verbose
    assert "Makefile" in verbose.split("Summary")[1]
    assert "CMakeLists.txt" not in buildport("audit", "--no-cache", ".", cwd=tmp_path / "clean").stdout


def test_the_cache_folder_is_tagged(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t")
    cache = tmp_path / "cache"
    buildport("cmake", "--check", "--cache-dir", cache, ".", cwd=tree)
    tag = (cache / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55\n")


def test_a_diff_is_coloured_where_colour_is_wanted(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t")
    cache = tmp_path / "cache"
    coloured = buildport("cmake", "--diff", "--cache-dir", cache, ".", cwd=tree, NO_COLOR="", FORCE_COLOR="1")
    assert "\x1b[31m-project(p LANGUAGES CXX CUDA)\x1b[0m\n" in coloured.stdout
    assert "\x1b[1m--- a/a/CMakeLists.txt\x1b[0m\n" in coloured.stdout
    plain = buildport("cmake", "--diff", "--cache-dir", cache, ".", cwd=tree)  # not the coloured run replayed
    assert "\x1b[" not in plain.stdout and "-project(p LANGUAGES CXX CUDA)\n" in plain.stdout
