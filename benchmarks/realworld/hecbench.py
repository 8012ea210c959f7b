"""HeCBench: ``buildport migrate`` against the suite's human-written HIP ports.

Usage::

    python benchmarks/realworld/hecbench.py --git-dir GIT --work DIR [--sample N] [--seed S]
        [--jobs J] [--code CHECKOUT] [NAME ...]

GIT is a (bare) git repository of HeCBench (https://github.com/zjin-lcf/HeCBench). Its programs
live in ``src/NAME-cuda`` and ``src/NAME-hip``, each built by a ``Makefile``. For NAMEs given, or
else ``--sample`` programs that have both (a seeded random choice), this script, per program:

1. writes both folders to ``DIR/NAME/src/``, with the sibling folders they name by relative path
   (``../include``, ``../NAME-cuda`` from the HIP port; ``../data`` is left out, runs need it,
   builds do not); blobs the repository lacks (large files left out of a snapshot) are skipped;
2. builds the human port with ``make`` (``HIP_PLATFORM=amd``: nvcc is on PATH; the port's
   Makefile names no GPU target, so ``HCC_AMDGPU_TARGET=gfx90a`` tells ``hipcc``);
3. ``buildport migrate src/NAME-cuda --out src/NAME-buildport --offload-arch gfx90a`` (a sibling,
   so its relative paths still resolve), then builds that with plain ``make`` (``HIP_PLATFORM=amd``
   only, no ``ROCM_PATH``: the ported Makefile must find ROCm itself).

With ``--keep-cuda`` the migration is ``migrate --keep-cuda`` (a dual tree, sources untouched), its HIP side
is built with ``make GPU_RUNTIME=HIP``, and its CUDA side and the CUDA original are built too, each in a
copy of its own, with nvcc (``make ARCH=sm_80``: HeCBench's default sm_60 is older than CUDA 13 builds
for), so that a dual tree is shown to keep the CUDA build the original has.

A build is ok when make exits 0 and an executable appears. A failure gets its first error line
and a cause from ``classify.py``: ``library`` (a ROCm library, MPI or OpenMP not installed here),
``source``, ``build-file``, ``environment`` or ``unknown``. The table goes to stdout and
``DIR/hecbench.json``. HeCBench's code is test input: it is never committed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from classify import COMPILE_RULES, classify, error_file, first_error  # noqa: E402

ARCH = "gfx90a"
MIGRATE_TIMEOUT = 1800
BUILD_TIMEOUT = 900
#: Folders a Makefile or a source names as ``../NAME/``; ``data`` only matters for runs.
_SIBLING = re.compile(r"\.\./([A-Za-z0-9_.+-]+)")
_SKIP_SIBLINGS = frozenset({"data", ".."})
_TEXT_SUFFIXES = frozenset({"", ".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp", ".cxx", ".mk", ".inc"})
#: classify.py's causes under the names this table uses.
_CAUSES = {"build": "build-file", "source": "source", "rocm-library": "library", "environment": "environment"}


# --- the repository ---------------------------------------------------------------------------


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, check=True).stdout


def programs(git_dir: Path) -> list[str]:
    """Programs with both a ``-cuda`` and a ``-hip`` folder holding a Makefile."""
    paths = set(_git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", "src/").decode().splitlines())
    names = {p.split("/")[1][: -len("-cuda")] for p in paths if re.fullmatch(r"src/[^/]+-cuda/Makefile", p)}
    return sorted(n for n in names if f"src/{n}-hip/Makefile" in paths)


def extract(git_dir: Path, folder: str, dest: Path) -> list[str]:
    """Write ``src/FOLDER`` of HEAD under ``dest``; return the paths whose blobs are missing."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", "HEAD", f"src/{folder}/").decode()
    missing = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob":
            continue
        blob = subprocess.run(["git", "-C", str(git_dir), "cat-file", "blob", sha], capture_output=True, check=False)
        if blob.returncode != 0:
            missing.append(path)
            continue
        out = dest / Path(path).relative_to("src")
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            out.symlink_to(blob.stdout.decode())
        else:
            out.write_bytes(blob.stdout)
            out.chmod(0o755 if mode == "100755" else 0o644)
    return missing


def siblings(folder: Path, known: set[str]) -> set[str]:
    """The folders of ``known`` that ``folder``'s Makefile or sources name as ``../NAME/``."""
    found: set[str] = set()
    for path in folder.rglob("*"):
        if path.is_file() and (path.suffix in _TEXT_SUFFIXES or path.name.startswith("Makefile")):
            text = path.read_text(errors="replace")
            found |= {m for m in _SIBLING.findall(text) if m in known and m not in _SKIP_SIBLINGS}
    return found


# --- one build --------------------------------------------------------------------------------


def _executables(folder: Path) -> set[Path]:
    """ELF executables (and PIEs) under ``folder`` with the executable bit set."""
    found = set()
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and os.access(path, os.X_OK) and path.suffix != ".so":
            with path.open("rb") as handle:
                head = handle.read(18)
            if head[:4] == b"\x7fELF" and head[16] in (2, 3):  # e_type: ET_EXEC, ET_DYN
                found.add(path)
    return found


def _env(**extra: str) -> dict[str, str]:
    drop = ("ROCM_PATH", "HIP_PATH", "HCC_AMDGPU_TARGET", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path, timeout: float) -> tuple[int, str]:
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, check=False)  # fmt: skip
        rc, output = done.returncode, done.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as exc:
        rc, output = 124, (exc.stdout or b"").decode("utf-8", "replace") + f"\n[timed out after {timeout} s]"
    log.write_text(f"$ {' '.join(cmd)}\n(cwd {cwd}, exit {rc})\n{output}")
    return rc, output


def _converted(folder: Path) -> set[Path]:
    """The sources ``buildport migrate`` changed in ``folder`` (from its migration.json)."""
    report = folder / "migration.json"
    if not report.is_file():
        return set()
    changed = json.loads(report.read_text()).get("changed", [])
    return {(folder / e["path"]).resolve() for e in changed if e.get("kind") == "source"}


def build(folder: Path, env: dict[str, str], log: Path, converted: set[Path] | None = None,
          args: tuple[str, ...] = ()) -> dict[str, Any]:
    """``make`` in ``folder``: ok, exit code, first error and its cause."""
    before = _executables(folder)
    started = time.monotonic()
    rc, output = _run(["make", *args], folder, env, log, BUILD_TIMEOUT)
    produced = sorted(str(p.relative_to(folder)) for p in _executables(folder) - before)
    result: dict[str, Any] = {"ok": rc == 0 and bool(produced), "rc": rc, "executables": produced,
                              "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    if result["ok"]:
        return result
    is_converted = None
    named = error_file(output)
    if converted is not None and named is not None:
        path = (folder / named).resolve()
        is_converted = path in converted if folder.resolve() in path.parents else None
    cause = classify(output, COMPILE_RULES, converted=is_converted)
    name = _CAUSES.get(cause.cause, cause.cause)
    if cause.reason == "system package not installed":
        name = "library"  # MPI, OpenMP...: libraries Debian lacks, too
    if rc == 0:
        result.update(first_error="make succeeded but produced no executable", cause="build-file", reason="")
    elif rc == 124:
        result.update(first_error=f"timed out after {BUILD_TIMEOUT} s", cause="environment", reason="")
    else:
        result.update(first_error=first_error(output), cause=name, reason=cause.reason)
    return result


# --- a program --------------------------------------------------------------------------------


def run_program(name: str, git_dir: Path, work: Path, known: set[str], code: Path, keep_cuda: bool = False
                ) -> dict[str, Any]:
    """Extract, build the human port, migrate the CUDA folder, build the migrated copy (``keep_cuda``: a dual
    tree, built with GPU_RUNTIME=HIP)."""
    out = work / name
    if out.exists():
        shutil.rmtree(out)
    src = out / "src"
    wanted, written, missing = {f"{name}-cuda", f"{name}-hip"}, set[str](), list[str]()
    while wanted - written:  # siblings may name siblings of their own
        for folder in sorted(wanted - written):
            missing += extract(git_dir, folder, src)
            written.add(folder)
            wanted |= siblings(src / folder, known)
    result: dict[str, Any] = {"name": name, "folders": sorted(written), "missing": missing}
    human_env = _env(HIP_PLATFORM="amd", HCC_AMDGPU_TARGET=ARCH)
    result["human"] = build(src / f"{name}-hip", human_env, out / "human-build.log")
    ported = src / f"{name}-buildport"
    migrate_env = _env(PYTHONPATH=os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")])))
    started = time.monotonic()
    rc, output = _run([sys.executable, "-m", "buildport", "migrate", str(src / f"{name}-cuda"), "--out", str(ported),
                       "--offload-arch", ARCH, *(["--keep-cuda"] if keep_cuda else [])], code, migrate_env,
                      out / "migrate.log", MIGRATE_TIMEOUT)  # fmt: skip
    lines = output.strip().splitlines()
    result["migrate"] = {"rc": rc, "seconds": round(time.monotonic() - started, 1),
                         "summary": lines[-1] if lines else ""}  # fmt: skip
    if rc == 0:
        if keep_cuda:  # the CUDA side first, in copies: the HIP build writes its objects in the tree
            for side, folder in (("cuda_original", src / f"{name}-cuda"), ("cuda_dual", ported)):
                copy = out / f"{side}-tree"
                shutil.copytree(folder, copy, symlinks=True)
                result[side] = build(copy, _env(), out / f"{side}-build.log", None, ("ARCH=sm_80",))
                shutil.rmtree(copy, ignore_errors=True)
        result["buildport"] = build(ported, _env(HIP_PLATFORM="amd"), out / "buildport-build.log", _converted(ported),
                                    ("GPU_RUNTIME=HIP",) if keep_cuda else ())
    else:
        result["buildport"] = {"ok": False, "rc": rc, "executables": [], "first_error": first_error(output),
                               "cause": "build-file", "reason": "migrate failed"}  # fmt: skip
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


# --- the table --------------------------------------------------------------------------------


def _mark(side: dict[str, Any]) -> str:
    return "yes" if side["ok"] else f"no ({side['cause']})"


def summary(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The table and totals for ``results``."""
    rows = [("program", "human port", "buildport", "first error (buildport's, else the human port's)")]
    for r in results:
        side = r["buildport"] if not r["buildport"]["ok"] else r["human"]
        rows.append((r["name"], _mark(r["human"]), _mark(r["buildport"]),
                     "" if side["ok"] else side["first_error"][:140]))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3] for row in rows]
    n = len(results)
    totals: dict[str, Any] = {
        "programs": n,
        "buildport_ok": sum(r["buildport"]["ok"] for r in results),
        "human_ok": sum(r["human"]["ok"] for r in results),
        "both_ok": sum(r["buildport"]["ok"] and r["human"]["ok"] for r in results),
        "buildport_only_failed": sorted(r["name"] for r in results if r["human"]["ok"] and not r["buildport"]["ok"]),
        "human_only_failed": sorted(r["name"] for r in results if r["buildport"]["ok"] and not r["human"]["ok"]),
        "buildport_causes": dict(Counter(r["buildport"]["cause"] for r in results if not r["buildport"]["ok"])),
        "human_causes": dict(Counter(r["human"]["cause"] for r in results if not r["human"]["ok"])),
    }  # fmt: skip
    lines += [
        "",
        (f"{totals['buildport_ok']} of {n} build after migrate; human ports {totals['human_ok']} of {n} "
         f"(both: {totals['both_ok']})."),
        f"Failures by cause: buildport {totals['buildport_causes']}; human ports {totals['human_causes']}.",
        f"Human port builds, buildport's does not: {', '.join(totals['buildport_only_failed']) or 'none'}.",
        f"buildport's builds, the human port does not: {', '.join(totals['human_only_failed']) or 'none'}.",
    ]  # fmt: skip
    dual = [r for r in results if "cuda_dual" in r]
    if dual:  # --keep-cuda: the CUDA side of each dual tree against the CUDA original, both with nvcc
        totals["cuda_original_ok"] = sum(r["cuda_original"]["ok"] for r in dual)
        totals["cuda_dual_ok"] = sum(r["cuda_dual"]["ok"] for r in dual)
        totals["cuda_dual_lost"] = sorted(r["name"] for r in dual if r["cuda_original"]["ok"] and not r["cuda_dual"]["ok"])
        lines.append(f"CUDA side with nvcc: the originals {totals['cuda_original_ok']} of {len(dual)}, the dual trees "
                     f"{totals['cuda_dual_ok']}; the original builds, its dual tree does not: "
                     f"{', '.join(totals['cuda_dual_lost']) or 'none'}.")
    return "\n".join(lines), totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="a git repository of HeCBench")
    parser.add_argument("--work", type=Path, required=True, help="where programs are written and built")
    parser.add_argument("--sample", type=int, default=12, help="programs to pick when no NAME is given")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="programs handled at once")
    parser.add_argument("--code", type=Path, default=REPO, help="the buildport checkout to run (default: this one)")
    parser.add_argument("--keep-cuda", action="store_true",
                        help="migrate with --keep-cuda; build the dual tree's HIP side (GPU_RUNTIME=HIP), and its CUDA "
                        "side and the original with nvcc")
    parser.add_argument("names", nargs="*", metavar="NAME")
    args = parser.parse_args(argv)
    git_dir, work, code = args.git_dir.resolve(), args.work.resolve(), args.code.resolve()
    candidates = programs(git_dir)
    unknown = sorted(set(args.names) - set(candidates))
    if unknown:
        parser.error(f"not a program with both -cuda and -hip Makefiles: {', '.join(unknown)}")
    chosen = sorted(args.names or random.Random(args.seed).sample(candidates, min(args.sample, len(candidates))))
    known = {line.split("/")[1] for line in _git(git_dir, "ls-tree", "-d", "--name-only", "HEAD", "src/").decode().split()}
    work.mkdir(parents=True, exist_ok=True)
    print(f"{len(chosen)} of {len(candidates)} programs: {' '.join(chosen)}", flush=True)

    def one(name: str) -> dict[str, Any]:
        result = run_program(name, git_dir, work, known, code, args.keep_cuda)
        print(f"{name}: human {_mark(result['human'])}, buildport {_mark(result['buildport'])}", flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, chosen))
    text, totals = summary(results)
    print("\n" + text)
    commit = _git(git_dir, "rev-parse", "HEAD").decode()
    report = {"hecbench_commit": commit.strip(), "arch": ARCH, "seed": args.seed, "totals": totals, "programs": results}
    (work / "hecbench.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
