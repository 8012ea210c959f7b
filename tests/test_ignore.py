"""Ignore files and exclusion options: every command's walk leaves out what the project's .gitignore files
name (nested ones too, negations as git reads them), --exclude replaces them, --extend-exclude adds to them,
--force-exclude applies to files named on the command line too, and migrate --out copies no ignored folder
or build tree (and says so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildport.pipeline.ignore import Ignore, project_root

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

REPO = Path(__file__).resolve().parents[1]
CUDA_CMAKE = "project(p LANGUAGES CXX CUDA)\nadd_executable(app k.cu)\n"


def git_init(root: Path) -> None:
    """A repository at ``root`` that tracks nothing yet (every file in it untracked)."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def git_track(root: Path, *paths: str) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-f", *paths], check=True)


def buildport(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "buildport", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for folder in ("app", "third_party/lib", "vendor", "app/gen", "app/gen/keep"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "CMakeLists.txt").write_text(CUDA_CMAKE)
    git_init(root)
    (root / ".gitignore").write_text("# vendored\nthird_party/\n")
    (root / "app" / ".gitignore").write_text("gen/*\n!gen/keep/\n")  # nested, with a negation
    return root


def would_rewrite(done: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(line.removeprefix("would rewrite ") for line in done.stderr.splitlines()
                  if line.startswith("would rewrite "))


def test_gitignore_files_are_honoured(tree: Path) -> None:
    done = buildport("cmake", "--check", "--no-cache", ".", cwd=tree)
    assert would_rewrite(done) == ["app/CMakeLists.txt", "app/gen/keep/CMakeLists.txt",
                                   "vendor/CMakeLists.txt"]
    # from a folder below the root: the root's .gitignore still holds
    below = buildport("cmake", "--check", "--no-cache", "third_party", cwd=tree)
    assert would_rewrite(below) == []
    # a file named is ported, ignored or not
    named = buildport("cmake", "--check", "--no-cache", "third_party/lib/CMakeLists.txt", cwd=tree)
    assert would_rewrite(named) == ["third_party/lib/CMakeLists.txt"]


def test_exclude_replaces_gitignore_and_extend_exclude_adds(tree: Path) -> None:
    replaced = buildport("cmake", "--check", "--no-cache", "--exclude", "/vendor/", ".", cwd=tree)
    assert "third_party/lib/CMakeLists.txt" in would_rewrite(replaced)
    assert "vendor/CMakeLists.txt" not in would_rewrite(replaced)
    extended = buildport("cmake", "--check", "--no-cache", "--extend-exclude", "/vendor/", ".", cwd=tree)
    assert would_rewrite(extended) == ["app/CMakeLists.txt", "app/gen/keep/CMakeLists.txt"]


def test_force_exclude_applies_to_named_files(tree: Path) -> None:
    done = buildport("cmake", "--check", "--no-cache", "--force-exclude", "/vendor/", "vendor/CMakeLists.txt",
                     "app/CMakeLists.txt", cwd=tree)
    assert would_rewrite(done) == ["app/CMakeLists.txt"]


def test_a_bad_expression_is_a_usage_error(tree: Path) -> None:
    done = buildport("cmake", "--check", "--no-cache", "--exclude", "(", ".", cwd=tree)
    assert done.returncode == 2 and "--exclude: not a regular expression: '('" in done.stderr
    (tree / "buildport.toml").write_text('extend-exclude = "["\n')
    done = buildport("audit", "--no-cache", ".", cwd=tree)
    assert done.returncode == 2 and "extend-exclude: expected a regular expression" in done.stderr


def test_the_configuration_can_exclude(tree: Path) -> None:
    (tree / "buildport.toml").write_text('extend-exclude = "/vendor/"\n')
    done = buildport("make", "--check", "--no-cache", ".", cwd=tree)  # no Makefiles: nothing to do
    assert done.returncode == 0
    done = buildport("cmake", "--check", "--no-cache", ".", cwd=tree)
    assert "vendor/CMakeLists.txt" not in would_rewrite(done)


def test_audit_honours_them(tree: Path) -> None:
    done = buildport("audit", "--format", "json", "--no-cache", ".", cwd=tree)
    files = sorted(f["path"] for f in json.loads(done.stdout)["files"])
    assert files == ["app/CMakeLists.txt", "app/gen/keep/CMakeLists.txt", "vendor/CMakeLists.txt"]


def test_an_edited_gitignore_is_seen_by_a_replayed_run(tree: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from buildport.cache import fileindex
    from buildport.cli import main

    monkeypatch.setattr(fileindex, "MARGIN_NS", 0)  # files made a moment ago may be vouched for (in-process)
    monkeypatch.delenv("BUILDPORT_REPLAY", raising=False)
    monkeypatch.chdir(tree)
    cache = tmp_path / "cache"

    def check() -> list[str]:
        done = CliRunner().invoke(main, ["cmake", "--check", "--cache-dir", str(cache), "."])
        return sorted(line.removeprefix("would rewrite ") for line in done.stderr.splitlines()
                      if line.startswith("would rewrite "))

    first = check()
    assert "vendor/CMakeLists.txt" in first
    assert check() == first
    assert list((cache / "runs").glob("*.json"))  # the run is kept, to be replayed while nothing changes
    with open(tree / ".gitignore", "a") as f:  # in place: the folder's own times stay
        f.write("vendor/\n")
    assert "vendor/CMakeLists.txt" not in check()
    (tree / "vendor" / ".gitignore").write_text("*.txt\n")  # a new one below: its folder's times change
    (tree / ".gitignore").write_text("third_party/\n")
    assert check() == ["app/CMakeLists.txt", "app/gen/keep/CMakeLists.txt"]


def test_migrate_out_copies_no_ignored_folder_or_build_tree(tree: Path, tmp_path: Path) -> None:
    (tree / "build" / "CMakeFiles").mkdir(parents=True)
    (tree / "build" / "CMakeCache.txt").write_text("CMAKE_CUDA_COMPILER:FILEPATH=/usr/bin/nvcc\n")
    (tree / "app" / "k.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    out = tmp_path / "out"
    done = buildport("migrate", ".", "--out", out, "--no-make-dry-run", "--no-cmake-configure", "-q", cwd=tree)
    assert done.returncode == 0, done.stderr
    assert not (out / "third_party").exists() and not (out / "build").exists()
    assert (out / "vendor" / "CMakeLists.txt").exists() and (out / "app" / "gen" / "keep").exists()
    report = json.loads((out / "migration.json").read_text())
    skipped = json.dumps(report)
    assert "third_party" in skipped and "left out by .gitignore or --exclude" in skipped
    assert "a build tree" in skipped
    assert "third_party" in (out / "MIGRATION.md").read_text()


def test_the_project_root_is_the_repository(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    assert project_root(str(tmp_path / "repo" / "a" / "b")) == str(tmp_path / "repo")
    (tmp_path / "plain" / "x").mkdir(parents=True)
    assert project_root(str(tmp_path / "plain" / "x")).startswith(str(tmp_path))
    assert Ignore().key() == [None, None, None, True]


def test_an_included_makefile_left_out_is_read_not_rewritten(tmp_path: Path) -> None:
    root = tmp_path / "inc"
    (root / "vendor").mkdir(parents=True)
    git_init(root)
    (root / ".gitignore").write_text("vendor/\n")
    (root / "vendor" / "cuda.mk").write_text("NVCC = nvcc\nLIBS = -lcublas\n")
    (root / "Makefile").write_text("include vendor/cuda.mk\napp: a.cu\n\t$(NVCC) -o app a.cu $(LIBS)\n")
    done = buildport("make", "--check", "--no-cache", ".", cwd=root)
    assert would_rewrite(done) == []
    assert "vendor/cuda.mk: included, and left out by .gitignore or --exclude" in done.stderr
    kept = buildport("make", "--check", "--no-cache", "--exclude", "^$", ".", cwd=root)  # .gitignore replaced
    assert would_rewrite(kept) == ["vendor/cuda.mk"]
    forced = buildport("make", "--check", "--no-cache", "--exclude", "^$", "--force-exclude", "/vendor/", ".",
                       cwd=root)
    assert would_rewrite(forced) == []
    audited = json.loads(buildport("audit", "--format", "json", "--no-cache", ".", cwd=root).stdout)
    assert [f["path"] for f in audited["files"]] == ["Makefile"]
    audited = json.loads(buildport("audit", "--format", "json", "--no-cache", "--exclude", "^$", ".",
                                   cwd=root).stdout)
    assert [f["path"] for f in audited["files"]] == ["Makefile", "vendor/cuda.mk"]


def test_the_order_of_the_paths_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "g"
    (root / "sub" / "in").mkdir(parents=True)
    git_init(root)
    (root / ".gitignore").write_text("*.gen.cmake\n")
    (root / "sub" / "in" / "a.gen.cmake").write_text(CUDA_CMAKE)
    (root / "sub" / "CMakeLists.txt").write_text(CUDA_CMAKE)
    one = buildport("cmake", "--check", "--no-cache", ".", "sub", cwd=root)
    other = buildport("cmake", "--check", "--no-cache", "sub", ".", cwd=root)
    assert would_rewrite(one) == would_rewrite(other) == ["sub/CMakeLists.txt"]
    # an anchored pattern means the same for a file named as for a walk (the root is the repository's)
    (root / "vendor").mkdir()
    (root / "vendor" / "CMakeLists.txt").write_text(CUDA_CMAKE)
    walked = buildport("cmake", "--check", "--no-cache", "--force-exclude", "^/vendor/", ".", cwd=root)
    named = buildport("cmake", "--check", "--no-cache", "--force-exclude", "^/vendor/", "vendor/CMakeLists.txt",
                      cwd=root)
    assert "vendor/CMakeLists.txt" not in would_rewrite(walked) and would_rewrite(named) == []


def test_migrate_out_of_a_subfolder_keeps_the_rules_above_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    git_init(root)
    (root / ".gitignore").write_text("*.gen.cmake\n")
    (root / "sub").mkdir()
    (root / "sub" / "CMakeLists.txt").write_text(CUDA_CMAKE + "include(x.gen.cmake)\n")
    (root / "sub" / "x.gen.cmake").write_text("enable_language(CUDA)\n")
    (root / "sub" / "k.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    out = tmp_path / "out"
    done = buildport("migrate", "sub", "--out", out, "--no-make-dry-run", "--no-cmake-configure", "-q", cwd=root)
    assert done.returncode == 0, done.stderr
    assert (out / "x.gen.cmake").read_text() == "enable_language(CUDA)\n"  # copied, not ported
    assert "LANGUAGES CXX HIP" in (out / "CMakeLists.txt").read_text()


def test_git_ignores_no_file_it_tracks(tmp_path: Path) -> None:
    root = tmp_path / "tracked"
    git_init(root)
    (root / ".gitignore").write_text("data/\nbuild*/\n")
    for folder in ("data", "buildtools", "build-out"):
        (root / folder).mkdir()
        (root / folder / "CMakeLists.txt").write_text(CUDA_CMAKE)
    git_track(root, "data/CMakeLists.txt", "buildtools/CMakeLists.txt")  # tracked, though .gitignore names them
    done = buildport("cmake", "--check", "--no-cache", ".", cwd=root)
    assert would_rewrite(done) == ["buildtools/CMakeLists.txt", "data/CMakeLists.txt"]
    (root / "k.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    (root / "CMakeLists.txt").write_text(CUDA_CMAKE)
    out = tmp_path / "out"
    migrated = buildport("migrate", ".", "--out", out, "--no-make-dry-run", "--no-cmake-configure", "-q", cwd=root)
    assert migrated.returncode == 0, migrated.stderr
    assert (out / "data").is_dir() and (out / "buildtools").is_dir() and not (out / "build-out").exists()


def test_a_tree_that_is_no_repository_keeps_what_its_gitignore_names(tmp_path: Path) -> None:
    root = tmp_path / "export"  # an exported tree: its .gitignore's folders may be data the program reads
    (root / "cfg").mkdir(parents=True)
    (root / ".gitignore").write_text("cfg/\n")
    (root / "cfg" / "net.cfg").write_text("[net]\n")
    (root / "CMakeLists.txt").write_text(CUDA_CMAKE)
    (root / "k.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    out = tmp_path / "out"
    migrated = buildport("migrate", ".", "--out", out, "--no-make-dry-run", "--no-cmake-configure", "-q", cwd=root)
    assert migrated.returncode == 0, migrated.stderr
    assert (out / "cfg" / "net.cfg").read_text() == "[net]\n"
    # nor does a walk leave out a build file its .gitignore names (a tracked one, in the repository it came from)
    (root / "cfg" / "CMakeLists.txt").write_text(CUDA_CMAKE)
    assert would_rewrite(buildport("cmake", "--check", "--no-cache", ".", cwd=root)) == [
        "CMakeLists.txt", "cfg/CMakeLists.txt"]
    assert would_rewrite(buildport("cmake", "--check", "--no-cache", "--extend-exclude", "/cfg/", ".",
                                   cwd=root)) == ["CMakeLists.txt"]  # the options hold everywhere
