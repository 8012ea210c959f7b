"""``--jobs`` and the result cache change how files are processed, never what comes out.

Every comparison is byte for byte over stdout, stderr and the exit code of a
real ``python -m buildport`` process. Nothing here is timed: the speed-ups are
measured by ``benchmarks/scaling.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from buildport.textio import digest

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "projects"
SCALING = REPO / "benchmarks" / "scaling.py"

Outcome = tuple[bytes, bytes, int]


def run(*args: str, cwd: Path, cache_home: Path) -> Outcome:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    done = subprocess.run([sys.executable, "-m", "buildport", *args], capture_output=True, cwd=cwd, env=env,
                          timeout=300)  # fmt: skip
    return done.stdout, done.stderr, done.returncode


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated CMake files and Makefiles, the example projects, a broken file and a CUDA source."""
    root = tmp_path_factory.mktemp("tree")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from synthetic import write_tree

    write_tree(root / "gen", 6, 5)
    for project in sorted(FIXTURES.iterdir()):
        shutil.copytree(project, root / project.name)
    (root / "broken").mkdir()
    (root / "broken" / "CMakeLists.txt").write_text("add_executable(x a.cu\n")
    (root / "broken" / "Makefile").write_text("all:\n\tnvcc -o x x.cu\nendif\n")
    (root / "src").mkdir()
    (root / "src" / "k.cu").write_text("#include <cuda_runtime.h>\n__global__ void k() { __syncthreads(); }\n")
    # skipped with a message each, in the order found, whatever the jobs and the cache
    (root / "gen" / "a-binary.cmake").write_bytes(b"set(A 1)\x00\n")
    (root / "broken" / "z-binary.cmake").write_bytes(b"\x00")
    os.symlink(tmp_path_factory.getbasetemp(), root / "broken" / "outside.cmake")
    return root


def settled(root: Path) -> Path:
    """``root`` once every file and folder in it is older than the file index's margin: a run keeps no
    memo of a tree changed within it (:mod:`buildport.cache.replay`), and a test that expects a replay would
    otherwise depend on how long the tests before it took."""
    from buildport.cache.fileindex import MARGIN_NS

    newest = max(os.lstat(os.path.join(folder, name)).st_ctime_ns
                 for folder, _dirs, files in os.walk(root) for name in [*files, "."])
    time.sleep(max(0.0, (newest + MARGIN_NS - time.time_ns()) / 1e9 + 0.05))
    return root


COMMANDS = {
    "cmake-print": ["cmake", "."],
    "cmake-check": ["cmake", "--check", "-v", "."],
    "make-print": ["make", "."],
    "audit-json": ["audit", "--format", "json", "."],
    "audit-sarif": ["audit", "--format", "sarif", "."],  # its fixes: what a cached audit keeps of each line
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_jobs_and_cache_give_the_same_bytes(name: str, tree: Path, tmp_path: Path) -> None:
    args = COMMANDS[name]
    serial = run(*args, "--jobs", "1", "--no-cache", cwd=tree, cache_home=tmp_path / "unused")
    assert serial[0] or serial[1]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    variants = {
        "jobs 2, no cache": run(*args, "-j", "2", "--no-cache", cwd=tree, cache_home=tmp_path / "unused"),
        "jobs 2, cold cache": run(*args, "-j", "2", *cache, cwd=tree, cache_home=tmp_path / "unused"),
        "jobs 2, warm cache": run(*args, "-j", "2", *cache, cwd=tree, cache_home=tmp_path / "unused"),
        "jobs 1, warm cache": run(*args, "-j", "1", *cache, cwd=tree, cache_home=tmp_path / "unused"),
    }
    for label, outcome in variants.items():
        assert outcome == serial, label
    assert not (tmp_path / "unused").exists()  # --cache-dir and --no-cache keep the default cache untouched
    assert list((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("kind", ["cmake", "make"])
def test_a_diff_read_from_cached_results_is_the_diff_of_the_port(
    kind: str, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A result from the cache keeps where the port changed the file: its diff is read from those lines."""
    monkeypatch.setenv("BUILDPORT_REPLAY", "0")  # file by file: the entries are read, not a replayed run
    args = [kind, "--diff", "-j", "1", "."]
    serial = run(*args, "--no-cache", cwd=tree, cache_home=tmp_path / "unused")
    assert serial[0].startswith(b"--- ")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert run(*args, *cache, cwd=tree, cache_home=tmp_path / "unused") == serial
    stored = [json.loads(e.read_text(encoding="utf-8"))["value"] for e in (tmp_path / "cache").glob("??/*.json")]
    changed = [v for v in stored if isinstance(v, dict) and v.get("text") is not None]
    assert changed and all(v["regions"] for v in changed)
    assert run(*args, *cache, cwd=tree, cache_home=tmp_path / "unused") == serial


def test_default_cache_is_under_xdg_cache_home(tree: Path, tmp_path: Path) -> None:
    first = run("cmake", "--check", "-q", "gen", cwd=tree, cache_home=tmp_path / "xdg")
    assert list((tmp_path / "xdg" / "buildport").rglob("*.json"))
    assert run("cmake", "--check", "-q", "gen", cwd=tree, cache_home=tmp_path / "xdg") == first


def test_corrupt_entries_are_recomputed(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDPORT_REPLAY", "0")  # file by file: a whole run replayed reads no entry
    args = ["audit", "--format", "json", "-j", "1", "--cache-dir", str(tmp_path / "c"), "."]
    expected = run(*args, cwd=tree, cache_home=tmp_path)
    entries = sorted((tmp_path / "c").glob("??/*.json"))
    clean = sorted((tmp_path / "c" / "clean").glob("*.json"))
    assert entries and clean
    for i, entry in enumerate(entries + clean):  # truncated, not JSON, JSON of the wrong shape
        entry.write_bytes([b'{"key": "', b"\x00garbage", b'{"key": "x", "value": 1}', b"[]"][i % 4])
    assert run(*args, cwd=tree, cache_home=tmp_path) == expected
    for entry in entries:  # rewritten whole
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == entry.stem
    for entry in clean:
        assert all(isinstance(d, str) for d in json.loads(entry.read_text(encoding="utf-8")).values())
    cmake = ["cmake", "-j", "1", "--cache-dir", str(tmp_path / "c"), "."]
    expected = run(*cmake, cwd=tree, cache_home=tmp_path)
    for entry in (tmp_path / "c").glob("??/*.json"):
        data = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(data["value"], dict) and "text" in data["value"]:
            data["value"]["findings"] = [["too", "short"]]
            entry.write_text(json.dumps(data), encoding="utf-8")
    assert run(*cmake, cwd=tree, cache_home=tmp_path) == expected


def test_cache_is_keyed_on_the_options(tree: Path, tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "c")]
    target = "cmake-modern-rdc"
    first = run("cmake", "--offload-arch", "gfx90a", *cache, target, cwd=tree, cache_home=tmp_path)
    second = run("cmake", "--offload-arch", "gfx1100", *cache, target, cwd=tree, cache_home=tmp_path)
    uncached = run("cmake", "--offload-arch", "gfx1100", "--no-cache", target, cwd=tree, cache_home=tmp_path)
    assert first[0] != second[0]
    assert b"gfx1100" in second[0]
    assert second == uncached


def test_cache_entries_are_written_atomically(tmp_path: Path) -> None:
    from buildport.cache.store import Cache

    cache = Cache(tmp_path / "c")
    key = cache.key("cmake", "CMakeLists.txt", "00", [["gfx90a"], [], None])
    assert cache.get(key) is None
    cache.put(key, {"a": [1, "\udcff"]})
    assert cache.get(key) == {"a": [1, "\udcff"]}
    assert [p.name for p in (tmp_path / "c").rglob("*") if p.is_file()] == [f"{key}.json"]
    assert cache.key("cmake", "CMakeLists.txt", "00", [["gfx1100"], [], None]) != key
    assert cache.key("make", "CMakeLists.txt", "00", [["gfx90a"], [], None]) != key


def test_the_cache_keeps_the_recently_used_entries_within_its_budget(tmp_path: Path) -> None:
    from buildport.cache.store import Cache

    cache = Cache(tmp_path / "c", max_bytes=10_000)
    keys = [cache.key("cmake", f"f{i}.txt", "00", None) for i in range(40)]
    for age, key in enumerate(keys):  # each entry is about 600 bytes; the oldest written first
        cache.put(key, {"text": "x" * 500})
        stamp = 1_000_000 + age
        os.utime(cache._file(key), (stamp, stamp))
    cache.get(keys[0])  # an old entry, used again: it is kept
    leftover = cache.root / "ab" / ".tmp-dead.json"
    leftover.parent.mkdir(exist_ok=True)
    leftover.write_text("{")
    os.utime(leftover, (1_000_000, 1_000_000))
    deleted = cache.prune()
    sizes = sum(p.stat().st_size for p in cache.root.rglob("*.json"))
    assert sizes <= 8_000 and deleted > 20
    assert cache.get(keys[0]) is not None and cache.get(keys[-1]) is not None
    assert cache.get(keys[1]) is None and not leftover.exists()
    assert cache.prune() == 0  # under budget: nothing more goes


def _fill_every_folder(cache: Any, per_folder: int) -> None:
    """``per_folder`` entries of about 600 bytes in each of the 256 folders a key can start with."""
    for folder in range(256):
        for i in range(per_folder):
            cache.put(f"{folder:02x}{i:062x}", {"text": "x" * 500})


def test_a_cache_far_below_its_budget_is_sized_from_a_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.cache.store import Cache

    cache = Cache(tmp_path / "c", max_bytes=100_000_000)
    _fill_every_folder(cache, 12)
    dead = cache.root / "ab" / ".tmp-dead.json"
    dead.write_text("{")
    os.utime(dead, (1_000_000, 1_000_000))
    listed: list[str] = []
    scandir = os.scandir

    def counting(path: Any = ".") -> Any:
        listed.append(os.path.basename(os.fspath(path)))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    assert cache.prune() == 1  # no full reading yet: every entry is read, and the dead writer's file goes
    assert len([name for name in listed if len(name) == 2]) == 256 and not dead.exists()
    assert (cache.root / "last-scan").stat().st_mode & 0o777 == 0o600  # as private as the entries
    dead.write_text("{")
    os.utime(dead, (1_000_000, 1_000_000))
    listed.clear()
    assert cache.prune() == 0
    # 12 entries a folder: the sample reads folders until it holds 256 entries, 22 of the 256
    assert len([name for name in listed if len(name) == 2]) == 22 and dead.exists()
    day_old = 1_000_000
    os.utime(cache.root / "last-scan", (day_old, day_old))
    assert cache.prune() == 1 and not dead.exists()  # a day on, every entry is read again


def test_a_cache_over_budget_is_pruned_though_it_was_read_whole_lately(tmp_path: Path) -> None:
    from buildport.cache.store import Cache

    cache = Cache(tmp_path / "c", max_bytes=1_000_000)
    _fill_every_folder(cache, 8)  # ~1.2 MB
    (cache.root / "last-scan").touch()
    assert cache.prune() > 0
    assert sum(p.stat().st_size for p in cache.root.rglob("*.json")) <= 800_000


def test_a_run_prunes_the_cache_to_the_budget_from_the_environment(tree: Path, tmp_path: Path) -> None:
    def fill(cache: Path, budget_mb: float) -> int:
        env = dict(os.environ, BUILDPORT_CACHE_MAX_MB=str(budget_mb))
        done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "--check", "--cache-dir", str(cache),
                               "gen"], capture_output=True, cwd=tree, env=env, timeout=300)  # fmt: skip
        assert done.returncode == 1, done.stderr
        return sum(p.stat().st_size for p in cache.glob("??/*.json"))  # the results, not the parser cache's files

    full = fill(tmp_path / "full", 256)
    budget = full / 2 / 1e6
    pruned = fill(tmp_path / "pruned", budget)
    assert 0 < pruned <= full / 2


def _clean_files(cache: Path) -> dict[str, dict[str, str]]:
    return {f.name: json.loads(f.read_text()) for f in sorted((cache / "clean").glob("*.json"))}


def test_files_with_nothing_to_do_are_listed_in_one_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    tree = tmp_path / "tree"
    plain = tree / "plain"
    plain.mkdir(parents=True)
    for i in range(6):
        (plain / f"m{i}.cmake").write_text(f"message(STATUS {i})\n")
    (plain / "CMakeLists.txt").write_text("project(p CUDA)\nadd_executable(a a.cu)\n")
    first = run("cmake", "--check", "--cache-dir", str(cache), "plain", cwd=tree, cache_home=tmp_path)
    clean = _clean_files(cache)
    entries = list(cache.rglob("??/*.json"))
    # the CUDA file has changes: an entry of its own, and one for its rewritten text (the stability check)
    assert len(clean) == 1 and len(entries) == 2
    [listed] = clean.values()
    assert sorted(listed) == [os.path.join("plain", f"m{i}.cmake") for i in range(6)]
    assert listed[os.path.join("plain", "m0.cmake")] == digest(b"message(STATUS 0)\n")
    assert run("cmake", "--check", "--cache-dir", str(cache), "plain", cwd=tree, cache_home=tmp_path) == first
    assert _clean_files(cache) == clean  # nothing new to add
    (plain / "m0.cmake").write_text("message(STATUS changed)\n")
    run("cmake", "--check", "--cache-dir", str(cache), "plain", cwd=tree, cache_home=tmp_path)
    [after] = _clean_files(cache).values()
    assert len(after) == 6 and after[os.path.join("plain", "m0.cmake")] == digest(b"message(STATUS changed)\n")
    run("cmake", "--check", "--offload-arch", "gfx1100", "--cache-dir", str(cache), "plain", cwd=tree,
        cache_home=tmp_path)
    assert len(_clean_files(cache)) == 2  # other options: a file of their own


def test_clean_paths_keep_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.cache import store as cache_module

    monkeypatch.setattr(cache_module, "_CLEAN_KEEP", 3)
    keys = cache_module.Cache.keys("cmake", None)
    cache = cache_module.Cache(tmp_path / "c")
    for path in ("a1", "a2"):
        cache.mark_clean(keys, path, "d")
    cache.save_clean()
    later = cache_module.Cache(tmp_path / "c")
    for path in ("a3", "a4", "a2"):
        later.mark_clean(keys, path, "d")
    later.save_clean()
    assert list(_clean_files(tmp_path / "c").values()) == [{"a3": "d", "a4": "d", "a2": "d"}]
    fresh = cache_module.Cache(tmp_path / "c")
    assert fresh.is_clean(keys, "a4", "d") and not fresh.is_clean(keys, "a1", "d")
    assert not fresh.is_clean(keys, "a4", "e")  # another text of the file
    assert not fresh.is_clean(cache_module.Cache.keys("make", None), "a4", "d")  # another kind of work


def test_clean_files_keep_the_newest_contexts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buildport.cache import store as cache_module

    monkeypatch.setattr(cache_module, "_CLEAN_FILES", 2)
    cache = cache_module.Cache(tmp_path / "c")
    contexts = [cache_module.Cache.keys("cmake", [i]) for i in range(3)]
    for i, keys in enumerate(contexts):
        cache.mark_clean(keys, "a", "d")
        cache.save_clean()
        os.utime(tmp_path / "c" / "clean" / f"{keys.context}.json", (1000 + i, 1000 + i))
    cache.mark_clean(contexts[2], "b", "d")
    cache.save_clean()
    assert sorted(_clean_files(tmp_path / "c")) == sorted(f"{k.context}.json" for k in contexts[1:])


def test_a_damaged_clean_file_is_a_miss(tmp_path: Path) -> None:
    from buildport.cache import store as cache_module

    keys = cache_module.Cache.keys("cmake", None)
    (tmp_path / "c" / "clean").mkdir(parents=True)
    for damage in ("\x00", "[1, 2]", '{"a": 1}'):
        (tmp_path / "c" / "clean" / f"{keys.context}.json").write_text(damage)
        assert not cache_module.Cache(tmp_path / "c").is_clean(keys, "a", "d")


def test_unwritable_cache_is_skipped(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    expected = run("cmake", "--no-cache", "gen", cwd=tree, cache_home=tmp_path)
    assert run("cmake", "--cache-dir", str(blocker / "c"), "gen", cwd=tree, cache_home=tmp_path) == expected


def test_version_imports_no_engine() -> None:
    code = ("import sys, buildport.cli.commands\n"
            "print(sorted(m for m in ('lark', 'buildport.engine', 'buildport.pipeline.port', 'buildport.passes.base')"
            " if m in sys.modules))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "[]"


def test_a_cmake_run_loads_no_make_parser() -> None:
    code = ("import sys\n"
            "from buildport.engine import port_cmake\n"
            "port_cmake('project(p CUDA)\\nadd_executable(a a.cu)\\n', 'CMakeLists.txt')\n"
            "print(sorted(m for m in sys.modules if m.startswith(('buildport.syntax.make', 'buildport.passes.make'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [["cmake", "--check"], ["make", "--check"], ["audit"]])
def test_a_run_the_cache_answers_whole_loads_no_parser(command: list[str], tree: Path, tmp_path: Path) -> None:
    """Results, parse errors (the tree has a broken CMake file and Makefile) and make facts all come
    from the cache on a second run: neither the engine nor Lark is imported."""
    args = [*command, "--cache-dir", str(tmp_path / "c"), "."]
    first = run(*args, cwd=settled(tree), cache_home=tmp_path)
    assert b"broken" in first[1], "the tree's broken files are reported"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "buildport", *args], capture_output=True,
                          cwd=tree, env=env, timeout=300)  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert not imported & {"buildport.engine", "lark", "buildport.syntax.cmake", "buildport.syntax.make"}
    assert done.returncode == first[2]


def test_scaling_benchmark_runs_on_a_tiny_tree() -> None:
    done = subprocess.run([sys.executable, str(SCALING), "--files", "4", "--reps", "1", "--startup-reps", "1",
                           "--filler", "300"],
                          capture_output=True, text=True, check=True, timeout=600)  # fmt: skip
    out = done.stdout
    for run in ("cmake --check", "make --check", "audit"):
        assert f"| {run}, --jobs 1 / --jobs 2 (no results cached) | " in out
        assert f"| {run}, cold / warm cache (--jobs 1) | " in out
        assert f"| {run}, cold / warm cache, replay off (BUILDPORT_REPLAY=0) | " in out
    assert re.search(r"\| cmake --check --jobs 1: CPU of one run alone / of each of two at once \| "
                     r"[0-9.]+ s / [0-9.]+ s: [0-9.]+× the CPU, so --jobs 2 can be at most [0-9.]+× --jobs 1 here \|",
                     out)
    assert re.search(r"\| cmake --check after a one-line edit: cache with 300 other entries / without \| "
                     r"[0-9.]+ s / [0-9.]+ s = [0-9.]+× \|", out)
    assert "--version" in out


def _pids(items: list[int], shared: int) -> list[tuple[int, int]]:
    return [(item + shared, os.getpid()) for item in items]


def _in_chunks(items: list[int], jobs: int, shared: int) -> list[tuple[int, int]]:
    from buildport.pipeline.pool import Workers

    with Workers(jobs) as workers:
        return workers.run(_pids, items, shared)


def test_workers_keep_the_order_and_use_processes() -> None:
    from buildport.pipeline.pool import MIN_ITEMS_PER_WORKER

    items = list(range(40))
    parallel = _in_chunks(items, 2, 100)
    assert [value for value, _ in parallel] == [i + 100 for i in items]
    assert os.getpid() not in {pid for _, pid in parallel}
    small = _in_chunks(items[: MIN_ITEMS_PER_WORKER * 2 - 1], 2, 0)
    assert {pid for _, pid in small} == {os.getpid()}  # too few to repay a pool
    assert {pid for _, pid in _in_chunks(items, 1, 0)} == {os.getpid()}


def test_packages_reach_the_nearest_find_package_above_as_if_each_were_ported_again(tmp_path: Path) -> None:
    """A file that links a library and does not find CUDA hands its package to the nearest file above it
    that does; a module with no such file above hands it to every one. A file whose own links already cover
    what it is handed is not ported a second time: the outcome equals porting each find_package(CUDAToolkit)
    file again with the packages handed to it."""
    from buildport.engine import port_cmake
    from buildport.passes.base import Options
    from buildport.pipeline.port import port_files

    files = {
        "top/CMakeLists.txt": "find_package(CUDAToolkit REQUIRED)\nadd_subdirectory(a)\n",
        "top/a/CMakeLists.txt": "add_library(a a.cu)\ntarget_link_libraries(a CUDA::cublas CUDA::curand)\n",
        "b/CMakeLists.txt": "find_package(CUDAToolkit)\nadd_library(b b.cu)\n"
                            "target_link_libraries(b CUDA::curand CUDA::cublas)\n",
        "c/CMakeLists.txt": "find_package(CUDAToolkit)\nadd_library(c c.cu)\ntarget_link_libraries(c CUDA::cufft)\n",
        "d/sparse.cmake": "add_library(d d.cu)\ntarget_link_libraries(d CUDA::cusparse)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    run = port_files(paths, Options())
    handed = {"top": ("hipblas", "hiprand", "hipsparse"), "b": ("hipsparse",), "c": ("hipsparse",)}
    for name, path, outcome in zip(files, paths, run.outcomes):
        extra = handed.get(name.split("/")[0], ()) if "find_package" in files[name] else ()
        expected = port_cmake(files[name], path, Options(extra_packages=extra))
        assert outcome.result is not None and outcome.result.text == expected.text, path
        assert outcome.result.findings == expected.findings
    assert "find_package(hipfft" not in run.outcomes[0].result.text  # type: ignore[union-attr]
    assert "find_package(hipfft)" in run.outcomes[3].result.text  # type: ignore[union-attr]  # optional, as CUDA was


@pytest.mark.parametrize("project", ["cmake-legacy-findcuda", "cmake-hiprand-hipsparse"])
def test_a_check_after_in_place_is_answered_by_the_cache(project: str, tmp_path: Path) -> None:
    """The stability check ports each rewritten file again; that result is kept under the new text's
    hash, so the usual next step (check the rewritten tree) needs no parser."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / project, tree)
    args = ["--cache-dir", str(tmp_path / "c"), "."]
    wrote = run("cmake", "--in-place", *args, cwd=tree, cache_home=tmp_path)
    assert wrote[2] == 0
    expected = run("cmake", "--check", "-v", "--no-cache", ".", cwd=tree, cache_home=tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "buildport", "cmake", "--check", "-v", *args],
                          capture_output=True, cwd=tree, env=env, timeout=300)  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert not imported & {"buildport.engine", "lark", "buildport.syntax.cmake"}
    findings = [line for line in done.stderr.decode().splitlines() if "|" not in line]
    assert (done.stdout, "\n".join(findings).encode() + b"\n" if findings else b"", done.returncode) == expected


def test_a_feed_sends_chunks_as_items_come_and_keeps_their_order() -> None:
    from buildport.pipeline.pool import FEED_CHUNK, FEED_FIRST, Workers

    items = list(range(FEED_CHUNK * 5 + 5))
    with Workers(2) as workers:
        feed = workers.feed(_pids, 1000)
        for item in items[:FEED_FIRST]:
            feed.add(item)
        assert len(feed.sent) == 1 and not feed.pending  # a chunk is in the pool before the rest exists
        for item in items[FEED_FIRST:]:
            feed.add(item)
        sizes = [len(chunk) for chunk, _ in feed.sent]
        done = feed.results()
        left = [len(chunk) for chunk, _ in feed.sent[len(sizes):]]
    assert sizes[:3] == [FEED_FIRST, 2 * FEED_FIRST, 4 * FEED_FIRST] and max(sizes) == FEED_CHUNK
    assert len(left) == 2 and abs(left[0] - left[1]) <= 1  # what is left, shared out among the workers
    assert [value for value, _ in done] == [item + 1000 for item in items]
    assert os.getpid() not in {pid for _, pid in done}


def test_a_feed_of_less_than_a_chunk_runs_as_a_batch_would() -> None:
    from buildport.pipeline.pool import FEED_CHUNK, MIN_ITEMS_PER_WORKER, Workers

    with Workers(1) as workers:  # one job: never a pool, however many items
        feed = workers.feed(_pids, 0)
        for item in range(FEED_CHUNK * 2):
            feed.add(item)
        assert {pid for _, pid in feed.results()} == {os.getpid()} and not feed.sent
    with Workers(2) as workers:
        few = workers.feed(_pids, 0)
        for item in range(MIN_ITEMS_PER_WORKER):
            few.add(item)
        assert [pid for _, pid in few.results()] == [os.getpid()] * MIN_ITEMS_PER_WORKER  # too few to repay a pool


def test_files_are_ported_while_discovery_goes_on(tmp_path: Path) -> None:
    from buildport.pipeline import discovery, pool, port
    from buildport.options import Options

    for i in range(pool.FEED_FIRST * 3 + 3):
        folder = tmp_path / f"d{i:03}"
        folder.mkdir()
        (folder / "CMakeLists.txt").write_text(f"add_executable(app{i} main.cu)\n")
    pulled: list[int] = []
    sent_when_pulled: list[int] = []
    feeds: list[pool.Feed[Any, Any]] = []
    original = pool.Workers.feed

    def feed(self: pool.Workers, *args: Any) -> pool.Feed[Any, Any]:
        feeds.append(original(self, *args))
        return feeds[-1]

    def walk() -> Iterator[str]:
        for path in discovery.iter_paths([str(tmp_path)], discovery.is_cmake_file):
            pulled.append(1)
            sent_when_pulled.append(sum(len(chunk) for chunk, _ in feeds[0].sent) if feeds else 0)
            yield path

    pool.Workers.feed = feed  # type: ignore[method-assign]
    try:
        streamed = port.port_files(walk(), Options(), jobs=2)
    finally:
        pool.Workers.feed = original  # type: ignore[method-assign]
    assert sent_when_pulled[-1] == pool.FEED_FIRST * 3  # two chunks were in the pool before the walk ended
    batch = port.port_files(discovery.expand_paths([str(tmp_path)], discovery.is_cmake_file), Options(), jobs=1)
    assert [(o.path, o.result.text if o.result else o.error) for o in streamed.outcomes] == [
        (o.path, o.result.text if o.result else o.error) for o in batch.outcomes
    ]


def test_an_unchanged_outcome_crosses_from_a_worker_as_an_empty_tuple(tmp_path: Path) -> None:
    from buildport.pipeline import port
    from buildport.options import Options
    from buildport.textio import read_source

    plain, cuda = tmp_path / "plain.cmake", tmp_path / "CMakeLists.txt"
    plain.write_text("set(A 1)\n")
    cuda.write_text("enable_language(CUDA)\nadd_executable(app main.cu)\n")
    for path in (plain, cuda):
        source = read_source(str(path))
        outcome = port._port_one(str(path), source, Options())
        packed = port._pack_outcome(outcome)
        assert (packed == ()) == (path == plain)
        back = port._unpack_outcome(str(path), source, packed)
        assert back.result is not None and outcome.result is not None
        assert (back.path, back.error, back.result.text, back.result.findings, back.result.packages, back.result.changed) == (
            outcome.path, outcome.error, outcome.result.text, outcome.result.findings, outcome.result.packages,
            outcome.result.changed)


def test_an_edited_grammar_of_a_checkout_invalidates_the_results(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """In a checkout the grammars lie beside the package (``grammars/``), not in it: they are part of the
    code the results are keyed on all the same."""
    from buildport.cache import store as cache

    package, grammars = tmp_path / "buildport", tmp_path / "grammars"
    package.mkdir()
    grammars.mkdir()
    (package / "cache.py").write_text("")
    (grammars / "make.lark").write_text("start: x\n")

    def fingerprint() -> str:
        monkeypatch.setattr(cache, "_fingerprint", None)
        return cache.code_fingerprint()

    monkeypatch.setattr(cache, "__file__", str(package / "cache.py"))
    before = fingerprint()
    assert fingerprint() == before
    (grammars / "make.lark").write_text("start: x y\n")
    assert fingerprint() != before


def test_an_audit_is_not_replayed_after_the_hipify_perl_it_read_changed(tmp_path: Path) -> None:
    """The audit of sources reads the installed hipify-perl's tables: a whole run replayed after that
    script changed would report what the old one could not convert."""
    bin_dir, tree = tmp_path / "bin", tmp_path / "tree"
    bin_dir.mkdir()
    tree.mkdir()
    (tree / "k.cu").write_text("#include <cuda_runtime.h>\nvoid f(void **p) { cudaFooAlloc(p, 4); }\n")
    engine = bin_dir / "hipify-perl"

    def install(rows: str) -> None:
        engine.write_text(f"sub simpleSubstitutions {{\n{rows}}}\n")
        engine.chmod(0o755)

    def audit() -> str:
        env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", XDG_CACHE_HOME=str(tmp_path))
        env.pop("ROCM_PATH", None)
        done = subprocess.run([sys.executable, "-m", "buildport", "audit", "--no-color",
                               "--cache-dir", str(tmp_path / "c"), "."], capture_output=True, text=True, cwd=tree,
                              env=env, timeout=120)
        return done.stdout

    install('    subst("cuda_runtime.h", "hip\\/hip_runtime.h", "include_cuda_main_header");\n')
    first = audit()
    assert audit() == first  # replayed or not, the same
    install('    subst("cuda_runtime.h", "hip\\/hip_runtime.h", "include_cuda_main_header");\n'
            '    subst("cudaFooAlloc", "hipFooAlloc", "memory");\n')
    assert "2 CUDA names left in this file: <cuda_runtime.h>, cudaFooAlloc" in first
    assert "2 CUDA names hipify-perl converts left in this file: <cuda_runtime.h>, cudaFooAlloc" in audit()
