"""The real-project corpus: migrate public CUDA projects, build them with ROCm, count and classify.

Usage::

    python benchmarks/realworld/run.py checkout --git-dirs DIR --dest SRC [NAME ...]
    python benchmarks/realworld/run.py run --src SRC --work WORK [--original] [NAME ...]
    python benchmarks/realworld/run.py table --work WORK

``manifest.toml`` names each project (repository, commit, how it is built). ``checkout`` writes
each project's tree at its commit from a folder of git repositories (``owner+name/repo`` or
``owner/name.git``; files a repository lacks, such as large ones left out of a snapshot, are
skipped and listed). ``run`` then, for each project:

1. ``buildport migrate SRC/NAME --out WORK/NAME/hip``;
2. configures and builds the copy with Debian's ROCm (CMake: the HIP compiler is clang++-15 through
   ``tests/toolchain/rocm-debian.cmake``; make: ``hipcc`` from PATH, no ``ROCM_PATH`` set), past
   errors (``make -k``), every compiler run recorded by ``compile_log.py``;
3. counts the translation units compiled and attempted (CMake: every entry of the compile
   database; make: every compiler run given a source) and the links, and gives every failure a
   cause (``classify.py``);
4. with ``--original``, builds the original with nvcc the same way, for its own counts.

``table`` writes ``RESULTS.md`` beside this script from WORK's results and appends the totals to
``trend.jsonl``. The projects are test input: their code is never committed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from classify import COMPILE_RULES, CONFIGURE_RULES, Cause, classify, error_file, first_error  # noqa: E402

MANIFEST = HERE / "manifest.toml"
KEPT_SECTION = "## HeCBench"
RESULTS_MD = HERE / "RESULTS.md"
TREND = HERE / "trend.jsonl"
ROCM_TOOLCHAIN = REPO / "tests" / "toolchain" / "rocm-debian.cmake"
CUDA_TOOLCHAIN = REPO / "tests" / "toolchain" / "cuda-nvcc.cmake"
LOGGER = HERE / "compile_log.py"
#: Programs a Makefile may call to compile or link; each is stood in for by compile_log.py.
COMPILERS = (
    "hipcc", "nvcc", "gcc", "g++", "cc", "c++", "clang", "clang++", "clang-15", "clang++-15",
    "mpicc", "mpicxx", "mpic++", "gfortran",
)  # fmt: skip
SOURCE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".cu", ".hip"})
_TAKES_VALUE = frozenset({"-o", "-MF", "-MT", "-MQ", "-include", "-imacros", "-Xlinker", "-x", "-I", "-L", "-isystem"})
MIGRATE_TIMEOUT = 3600
CONFIGURE_TIMEOUT = 600
BUILD_TIMEOUT = 3600


@dataclass
class Project:
    name: str
    repo: str
    commit: str
    build: str  # "cmake" or "make"
    shape: str
    directory: str = "."  # where the build starts, relative to the project
    cmake_args: list[str] = field(default_factory=list)
    make_targets: list[str] = field(default_factory=list)
    make_args: list[str] = field(default_factory=list)
    cuda_args: list[str] = field(default_factory=list)  # extra arguments for the original's build
    libraries: list[str] = field(default_factory=list)  # CUDA libraries the project uses (for the table)


def load_manifest(path: Path = MANIFEST) -> list[Project]:
    data = tomllib.loads(path.read_text())
    return [Project(**{k.replace("-", "_"): v for k, v in entry.items()}) for entry in data["project"]]


# --- checkout ---------------------------------------------------------------------------------


def _git_dir(root: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (root / f"{owner}+{name}" / "repo", root / owner / f"{name}.git", root / f"{name}.git"):
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"no git repository for {repo} under {root}")


def checkout(project: Project, git_dirs: Path, dest: Path) -> list[str]:
    """Write ``project``'s tree at its commit into ``dest/NAME``; return the paths that were missing."""
    target = dest / project.name
    if target.exists():
        shutil.rmtree(target)
    return _write_tree(_git_dir(git_dirs, project.repo), project.commit, target, git_dirs)


def _write_tree(git: Path, commit: str, target: Path, git_dirs: Path) -> list[str]:
    """The tree of ``commit`` in ``git`` written to ``target``, with the submodules found among ``git_dirs``
    (at their recorded commit, else at what that repository holds: a snapshot may lack older commits)."""
    listing = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "-z", commit],
        capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    missing = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "commit":
            missing += _submodule(git, commit, path, sha, target, git_dirs)
            continue
        if kind != "blob":
            continue
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        blob = subprocess.run(["git", "-C", str(git), "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:
            missing.append(path)
            continue
        if mode == "120000":
            out.symlink_to(blob.stdout.decode())
        else:
            out.write_bytes(blob.stdout)
            if mode == "100755":
                out.chmod(0o755)
    return missing


def _submodule(git: Path, commit: str, path: str, sha: str, target: Path, git_dirs: Path) -> list[str]:
    modules = subprocess.run(["git", "-C", str(git), "show", f"{commit}:.gitmodules"], capture_output=True,
                             text=True).stdout  # fmt: skip
    url = next((m.group(2) for m in re.finditer(r"path\s*=\s*(\S+)\s*\n\s*url\s*=\s*(\S+)", modules)
                if m.group(1) == path), None)  # fmt: skip
    repo = re.search(r"github\.com[/:]([^/]+/[^/]+?)(?:\.git)?/?$", url or "")
    if repo is None:
        return [f"{path} (submodule)"]
    try:
        sub_git = _git_dir(git_dirs, repo.group(1))
    except SystemExit:
        return [f"{path} (submodule {repo.group(1)})"]
    known = subprocess.run(["git", "-C", str(sub_git), "cat-file", "-e", f"{sha}^{{commit}}"],
                           stderr=subprocess.DEVNULL).returncode == 0
    if not known:
        print(f"  submodule {path}: {sha[:12]} is not in {repo.group(1)}'s snapshot; its HEAD is written")
    return _write_tree(sub_git, sha if known else "HEAD", target / path, git_dirs)


# --- one build --------------------------------------------------------------------------------


@dataclass
class Unit:
    """One translation unit a build compiled or tried to."""

    source: str
    ok: bool
    program: str
    cause: str = ""
    reason: str = ""
    message: str = ""


@dataclass
class BuildResult:
    side: str  # "hip" or "cuda"
    configured: bool = True
    configure_cause: str = ""
    configure_reason: str = ""
    configure_message: str = ""
    total: int = 0  # translation units the build has (CMake: the compile database; make: those run)
    units: list[Unit] = field(default_factory=list)
    links: int = 0
    links_ok: int = 0
    link_failures: list[Unit] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def compiled(self) -> int:
        return sum(u.ok for u in self.units)

    def failures(self) -> list[Unit]:
        return [u for u in self.units if not u.ok] + self.link_failures

    def first_blocker(self) -> str:
        if not self.configured:
            return self.configure_cause
        failed = self.failures()
        return failed[0].cause if failed else ""


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], log: Path, timeout: float) -> tuple[int, str]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=timeout, check=False,
        )  # fmt: skip
        output, rc = done.stdout.decode("utf-8", "replace"), done.returncode
    except subprocess.TimeoutExpired as exc:
        output, rc = (exc.stdout or b"").decode("utf-8", "replace") + f"\n[timed out after {timeout} s]", 124
    with log.open("a") as handle:
        handle.write(f"$ {shlex.join(cmd)}\n(cwd {cwd}, {time.monotonic() - started:.1f} s, exit {rc})\n{output}\n")
    return rc, output


def _wrappers(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in COMPILERS:
        link = folder / name
        if not link.exists():
            link.symlink_to(LOGGER)
    return folder


def _records(log: Path) -> list[dict[str, Any]]:
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _sources(argv: list[str]) -> list[str]:
    found, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in _TAKES_VALUE:
            skip = True
            continue
        if not arg.startswith("-") and Path(arg).suffix in SOURCE_SUFFIXES:
            found.append(arg)
    return found


def _output(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == "-o":
            return argv[i + 1]
    joined = next((a[2:] for a in argv if a.startswith("-o") and len(a) > 2), None)
    return joined


def _is_compile(argv: list[str]) -> bool:
    """A compile or a link: not a preprocessor run, not a check that produces nothing (``-fsyntax-only``, as the
    ported Makefiles' question to hipcc of which GPU targets it knows)."""
    preprocess_only = ("-E" in argv or "-M" in argv or "-MM" in argv) and "-c" not in argv
    return not preprocess_only and "-fsyntax-only" not in argv


def _converted_files(hip_root: Path) -> set[Path]:
    report = hip_root / "migration.json"
    if not report.is_file():
        return set()
    data = json.loads(report.read_text())
    files = set()
    for entry in data.get("changed", []):
        if entry.get("kind") == "source":
            files.add((hip_root / entry["path"]).resolve())
    return files


def _unit_cause(record: dict[str, Any], converted: set[Path], project_root: Path) -> Cause:
    output = record.get("output", "")
    if record["program"] == "nvcc":
        return Cause("build", "nvcc called by the ported build")
    named = error_file(output)
    is_converted: bool | None = None
    if named is not None:
        path = (Path(record["cwd"]) / named).resolve()
        if project_root.resolve() in path.parents:
            is_converted = path in converted
    return classify(output, COMPILE_RULES, converted=is_converted)


def collect(side: str, log: Path, compile_db: Path | None, converted: set[Path], root: Path) -> BuildResult:
    """Units and links from the compiler runs recorded in ``log`` (and CMake's compile database)."""
    result = BuildResult(side)
    seen: dict[tuple[str, str], Unit] = {}
    made_by: dict[str, Unit] = {}  # an object → the unit that compiles it
    for record in _records(log):
        argv = record["argv"]
        if "CMakeScratch" in record["cwd"] or "CMakeTmp" in record["cwd"] or not _is_compile(argv):
            continue
        sources = _sources(argv)
        cause = Cause("", "") if record["rc"] == 0 else _unit_cause(record, converted, root)
        message = "" if record["rc"] == 0 else first_error(record.get("output", ""))
        if not sources:
            result.links += 1
            result.links_ok += record["rc"] == 0
            if record["rc"]:
                target = _output(argv) or "?"
                cause = _missing_object(record, made_by) or cause
                result.link_failures.append(Unit(target, False, record["program"], cause.cause, cause.reason, message))
            continue
        for source in sources:
            key = (str((Path(record["cwd"]) / source).resolve()), _output(argv) or "")
            seen[key] = Unit(_relative(key[0], root), record["rc"] == 0, record["program"], cause.cause,
                             cause.reason, message)  # fmt: skip
            made = key[1] or (Path(source).with_suffix(".o").name if "-c" in argv and len(sources) == 1 else "")
            if made:  # (cc -c dir/a.c writes a.o in the folder it runs in)
                made_by[str((Path(record["cwd"]) / made).resolve())] = seen[key]
    result.units = list(seen.values())
    result.total = len(result.units)
    if compile_db is not None and compile_db.is_file():
        result.total = max(result.total, len(json.loads(compile_db.read_text())))
    return result


_NO_SUCH_OBJECT = re.compile(r"no such file or directory: '([^']+\.o)'|cannot find ([^\s:]+\.o)\b")


def _missing_object(record: dict[str, Any], made_by: dict[str, Unit]) -> Cause | None:
    """A link that failed for an object a failed compile did not make: that compile's cause."""
    m = _NO_SUCH_OBJECT.search(record.get("output", ""))
    if m is None:
        return None
    unit = made_by.get(str((Path(record["cwd"]) / (m.group(1) or m.group(2))).resolve()))
    if unit is None or unit.ok:
        return None
    return Cause(unit.cause, f"an object whose compile failed ({unit.reason})")


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root.resolve()))
    except ValueError:
        return path


def _base_env(record: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ROCM_PATH", "HIP_PATH", "MAKEFLAGS", "MFLAGS")}
    env["REALWORLD_LOG"] = str(record)
    return env


def build(project: Project, tree: Path, out: Path, side: str, jobs: int, converted: set[Path],
          count_only: bool = False) -> BuildResult:  # fmt: skip
    """Configure and build ``tree`` for ``side`` ("hip" or "cuda"), past errors; count and classify.
    ``count_only``: a CMake project is configured and its translation units counted, not built."""
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"{side}-build.log"
    record = out / f"{side}-compilers.jsonl"
    for stale in (log, record):
        stale.unlink(missing_ok=True)
    env = _base_env(record)
    if side == "hip":
        env["HIP_PLATFORM"] = "amd"  # nvcc is on this machine's PATH: hipcc would choose NVIDIA otherwise
    else:  # the CUDA math libraries .ci/setup.sh installs from NVIDIA's wheels, for the originals' Makefiles
        libs = Path(os.environ.get("BUILDPORT_CUDA_LIBS", "/opt/buildport-tools/cuda-libs")) / "nvidia" / "cu13"
        for variable, folder in (("CPATH", "include"), ("LIBRARY_PATH", "lib"), ("LD_LIBRARY_PATH", "lib")):
            env[variable] = os.pathsep.join(filter(None, [str(libs / folder), env.get(variable)]))
    started = time.monotonic()
    source = tree / project.directory
    if project.build == "cmake":
        result = _build_cmake(project, source, out / f"build-{side}", side, jobs, env, log, record, converted, tree,
                              count_only)  # fmt: skip
    else:
        result = _build_make(project, source, out, side, jobs, env, log, record, converted, tree)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _build_cmake(project: Project, source: Path, build_dir: Path, side: str, jobs: int, env: dict[str, str],
                 log: Path, record: Path, converted: set[Path], tree: Path,
                 count_only: bool = False) -> BuildResult:  # fmt: skip
    if build_dir.exists():
        shutil.rmtree(build_dir)
    languages = ("C", "CXX", "HIP") if side == "hip" else ("C", "CXX", "CUDA")
    toolchain = ROCM_TOOLCHAIN if side == "hip" else CUDA_TOOLCHAIN
    extra = project.cmake_args + (project.cuda_args if side == "cuda" else [])
    cmd = [
        "cmake", "-S", str(source), "-B", str(build_dir), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
        "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
        *(f"-DCMAKE_{lang}_{step}_LAUNCHER={LOGGER}" for lang in languages for step in ("COMPILER", "LINKER")),
        *extra,
    ]  # fmt: skip
    env = dict(env, REALWORLD_LOG=os.devnull)
    rc, output = _run(cmd, cwd=source, env=env, log=log, timeout=CONFIGURE_TIMEOUT)
    if rc != 0:
        result = BuildResult(side, configured=False)
        cause = classify(output, CONFIGURE_RULES)
        result.configure_cause, result.configure_reason = cause.cause, cause.reason
        result.configure_message = _cmake_error(output)
        return result
    env["REALWORLD_LOG"] = str(record)
    if not count_only:
        _run(["cmake", "--build", str(build_dir), "--parallel", str(jobs), "--", "-k"], cwd=source, env=env,
             log=log, timeout=BUILD_TIMEOUT)  # fmt: skip
    return collect(side, record, build_dir / "compile_commands.json", converted, tree)


def _cmake_error(output: str) -> str:
    match = re.search(r"CMake Error[^\n]*\n(?:\s*\n)?((?:  [^\n]*\n?){1,4})", output)
    if match is None:
        return first_error(output)
    head = output[match.start() : output.find("\n", match.start())].strip()
    return (head + " " + " ".join(match.group(1).split()))[:300]


def _build_make(project: Project, source: Path, out: Path, side: str, jobs: int, env: dict[str, str],
                log: Path, record: Path, converted: set[Path], tree: Path) -> BuildResult:  # fmt: skip
    wrappers = _wrappers(out / "compilers")
    env["PATH"] = f"{wrappers}{os.pathsep}{env.get('PATH', '')}"
    if side == "hip":
        # the ported Makefile's own HIPCC ?= is what a user gets; this one only records the compiles. The
        # root the Makefile finds ROCm in stays the real hipcc's (a hipcc not in a bin/ folder is not one)
        env["HIPCC"] = str(wrappers / "hipcc")
    args = project.make_args + (project.cuda_args if side == "cuda" else [])
    _, output = _run(["make", "-k", f"-j{jobs}", *args, *project.make_targets], cwd=source, env=env, log=log,
                     timeout=BUILD_TIMEOUT)  # fmt: skip
    result = collect(side, record, None, converted, tree)
    result.units += _unrecorded_failures(output, record, source)
    result.total = len(result.units)
    return result


_MAKE_FAILED = re.compile(r"^make(?:\[\d+\])?: \*\*\* \[(?:[^\]:]+:\d+: )?(?P<target>[^\]]+)\] Error (?P<code>\d+)$", re.M)


def _unrecorded_failures(output: str, record: Path, source: Path) -> list[Unit]:
    """Recipes make could not start (a compiler that does not exist, one that is not executable).

    Their targets are units no compiler run recorded; a target whose recipe did run a compiler that
    failed is already counted.
    """
    recorded = {_output(r["argv"]) for r in _records(record)}
    lines = output.splitlines()
    units = []
    for match in _MAKE_FAILED.finditer(output):
        target, code = match.group("target"), int(match.group("code"))
        if target in recorded or code not in (126, 127):
            continue
        line_no = output.count("\n", 0, match.start())
        context = "\n".join(lines[max(0, line_no - 3) : line_no])
        cause = classify(context, COMPILE_RULES)
        if cause.cause == "unknown":
            cause = Cause("build", "compiler the ported build names does not exist")
        units.append(Unit(target, False, "make", cause.cause, cause.reason, first_error(context)))
    return units


# --- a project --------------------------------------------------------------------------------


def migrate(project: Project, src: Path, hip: Path, log: Path, code: Path, keep_cuda: bool = False) -> dict[str, Any]:
    if hip.exists():
        shutil.rmtree(hip)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    started = time.monotonic()
    rc, output = _run([sys.executable, "-m", "buildport", "migrate", str(src / project.name), "--out", str(hip),
                       *(["--keep-cuda"] if keep_cuda else [])], cwd=code, env=env, log=log,
                      timeout=MIGRATE_TIMEOUT)  # fmt: skip
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return {"rc": rc, "seconds": round(time.monotonic() - started, 1), "summary": summary}


def run_project(project: Project, src: Path, work: Path, *, original: bool, jobs: int, code: Path = REPO) -> dict[str, Any]:
    out = work / project.name
    out.mkdir(parents=True, exist_ok=True)
    hip = out / "hip"
    result: dict[str, Any] = {"name": project.name, "build": project.build, "commit": project.commit,
                              "buildport": _head(code)}
    result["migrate"] = migrate(project, src, hip, out / "migrate.log", code)
    if result["migrate"]["rc"] == 0:
        result["hip"] = _as_json(build(project, hip, out, "hip", jobs, _converted_files(hip)))
    else:
        result["hip"] = _as_json(BuildResult("hip", configured=False, configure_cause="build",
                                             configure_reason="migrate failed",
                                             configure_message=result["migrate"]["summary"]))  # fmt: skip
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    if original:
        run_original(project, src, work, jobs=jobs)
    return result


def run_keep_cuda(project: Project, src: Path, work: Path, *, jobs: int, code: Path = REPO) -> dict[str, Any]:
    """``migrate --keep-cuda`` of the project, and its dual tree built both ways, each in a copy of its own: with
    ROCm (``GPU_RUNTIME=HIP``) and with nvcc (the switch left at its default), in ``NAME/keep/``; the result
    goes to ``keep-cuda.json`` (the table reads the normal run's)."""
    out = work / project.name / "keep"
    out.mkdir(parents=True, exist_ok=True)
    dual = out / "dual"
    result: dict[str, Any] = {"name": project.name, "build": project.build, "commit": project.commit,
                              "buildport": _head(code)}
    result["migrate"] = migrate(project, src, dual, out / "migrate.log", code, keep_cuda=True)
    if result["migrate"]["rc"] == 0:
        for side, switch in (("hip", "HIP"), ("cuda", None)):
            copy = out / f"tree-{side}"
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(dual, copy, symlinks=True)
            chosen = project if switch is None else replace(
                project, cmake_args=[*project.cmake_args, f"-DGPU_RUNTIME={switch}"],
                make_args=[*project.make_args, f"GPU_RUNTIME={switch}"])
            result[side] = _as_json(build(chosen, copy, out, side, jobs, set()))
    (out.parent / "keep-cuda.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _head(checkout: Path) -> str:
    """The commit of the buildport checkout that runs (its short name)."""
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    return done.stdout.strip() or "unknown"


def run_original(project: Project, src: Path, work: Path, *, jobs: int, count_only: bool = False) -> dict[str, Any]:
    """The original built with nvcc, for its own counts (``original.json``: a run of its own may do it);
    ``count_only``: configured, its translation units counted (CMake; a Makefile is built)."""
    out = work / project.name
    copy = out / "cuda-src"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(src / project.name, copy, symlinks=True)
    built = build(project, copy, out, "cuda", jobs, set(), count_only)
    result = {"name": project.name, "commit": project.commit, "built": not count_only, "cuda": _as_json(built)}
    (out / "original.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _as_json(result: BuildResult) -> dict[str, Any]:
    data = asdict(result)
    data["compiled"] = result.compiled
    data["first_blocker"] = result.first_blocker()
    data["causes"] = dict(Counter(u.cause for u in result.failures()))
    return data


# --- the table --------------------------------------------------------------------------------


def _short(text: str, limit: int = 110) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reclassified(side: dict[str, Any], log: Path) -> dict[str, Any]:
    """``side`` with a configure failure classified by today's rules from its log (the rules learn from
    later runs; the log is what CMake said)."""
    if side["configured"] or not log.is_file():
        return side
    cause = classify(log.read_text(errors="replace"), CONFIGURE_RULES)
    if cause.cause == "unknown":
        return side
    return {**side, "configure_cause": cause.cause, "configure_reason": cause.reason, "first_blocker": cause.cause}


def table(work: Path, projects: list[Project]) -> tuple[str, Counter[str]]:
    rows, totals = [], Counter()
    blocker_rows = []
    for project in projects:
        path = work / project.name / "result.json"
        if not path.is_file():
            rows.append(f"| {project.name} | {project.build} | not run | | | | |")
            continue
        data = json.loads(path.read_text())
        hip = _reclassified(data["hip"], work / project.name / "hip-build.log")
        original = work / project.name / "original.json"
        cuda = json.loads(original.read_text())["cuda"] if original.is_file() else None
        causes = Counter(hip.get("causes", {}))
        lib_units = causes["rocm-library"]
        if hip["configured"]:
            compiled = f"{hip['compiled']}/{hip['total']}"
        else:
            compiled = f"configure failed ({hip['configure_cause']})"
        if cuda and cuda["configured"]:
            original = f"{cuda['compiled']}/{cuda['total']}" if cuda["units"] else f"{cuda['total']} (configured)"
        else:
            original = "configure failed" if cuda else "—"
        blocker = hip["first_blocker"] or "none"
        counts = ", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "—"
        rows.append(f"| {project.name} | {project.build} | {compiled} | {hip['links_ok']}/{hip['links']} | "
                    f"{original} | {counts} | {blocker} |")  # fmt: skip
        totals["projects"] += 1
        # (the original's count where it is larger: a build that stops early attempts fewer units)
        totals["units"] += max(hip["total"] if hip["configured"] else 0, cuda["total"] if cuda else 0)
        totals["compiled"] += hip["compiled"] if hip["configured"] else 0
        totals["library_units"] += lib_units
        if not hip["configured"] and hip["configure_cause"] == "rocm-library":
            # a configure that stops at a missing ROCm library attempts none of the project's units
            totals["library_blocked_units"] += cuda["total"] if cuda else 0
        totals["build_blocked"] += blocker == "build"
        if not hip["configured"]:
            blocker_rows.append(f"- {project.name}: configure — {hip['configure_reason']}: "
                                f"`{_short(hip['configure_message'], 200)}`")  # fmt: skip
        for unit in [u for u in hip["units"] if not u["ok"]][:3] + hip["link_failures"][:2]:
            blocker_rows.append(f"- {project.name}: `{unit['source']}` — {unit['cause']}, {unit['reason']}: "
                                f"`{_short(unit['message'], 160)}`")  # fmt: skip
    header = [
        "| project | build | TUs compiled (ROCm) | links | TUs (nvcc) | failures by cause | first blocker |",
        "|---|---|---|---|---|---|---|",
    ]
    without_libs = totals["units"] - totals["library_units"] - totals["library_blocked_units"]
    share = 100.0 * totals["compiled"] / without_libs if without_libs else 0.0
    summary = (f"{totals['compiled']} of {totals['units']} translation units compiled "
               f"({totals['library_units']} failed for a ROCm library not installed here, and "
               f"{totals['library_blocked_units']} were not attempted: their project's configure stops at one); "
               f"of the {without_libs} left, {share:.0f}%. buildport's output is the first blocker in "
               f"{totals['build_blocked']} of {totals['projects']} projects.")  # fmt: skip
    return "\n".join([summary, "", *header, *rows, "", "First failures:", "", *blocker_rows]), totals


def write_results(work: Path, projects: list[Project]) -> None:
    body, totals = table(work, projects)
    # the buildport commits the results were made with (one, when the run is whole)
    made_with = sorted({json.loads(p.read_text()).get("buildport", "unknown")
                        for project in projects if (p := work / project.name / "result.json").is_file()})
    commit = ", ".join(made_with) or _head(REPO)
    today = dt.date.today().isoformat()
    entry = {"date": today, "commit": commit, **totals}
    trend = [json.loads(line) for line in TREND.read_text().splitlines()] if TREND.is_file() else []
    trend.append(entry)
    TREND.write_text("".join(json.dumps(e) + "\n" for e in trend))
    trend_rows = [
        f"| {e['date']} | {e['commit']} | {e['compiled']}/{e['units']} | {e['library_units']} | "
        f"{e['build_blocked']}/{e['projects']} |"
        for e in trend
    ]
    # the section of HeCBench runs (hecbench.py prints it; written by hand) is kept as it is
    old = RESULTS_MD.read_text() if RESULTS_MD.is_file() else ""
    kept = old[old.index(KEPT_SECTION):] if KEPT_SECTION in old else ""
    RESULTS_MD.write_text("\n".join([
        "# The real-project corpus",
        "",
        "Each project of `manifest.toml`, migrated with `buildport migrate --out` and built with Debian's",
        "ROCm 5.2 for its default targets past errors (`run.py`). Causes: `build` is buildport's build",
        "output or its choice of files, `source` CUDA left in a converted source, `rocm-library` a ROCm",
        "library not installed here, `environment` anything else the machine lacks (`classify.py`).",
        "",
        f"Latest run ({today}, at {commit}):",
        "",
        body,
        "",
        "## Trend",
        "",
        "| date | commit | TUs compiled | TUs needing a missing ROCm library | build output first blocker |",
        "|---|---|---|---|---|",
        *trend_rows,
        "",
    ]) + ("\n" + kept if kept else ""))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    co = sub.add_parser("checkout", help="write the projects' trees from git repositories")
    co.add_argument("--git-dirs", type=Path, required=True)
    co.add_argument("--dest", type=Path, required=True)
    co.add_argument("names", nargs="*")
    rn = sub.add_parser("run", help="migrate and build the projects")
    rn.add_argument("--src", type=Path, required=True)
    rn.add_argument("--work", type=Path, required=True)
    rn.add_argument("--original", action="store_true", help="also build the originals with nvcc")
    rn.add_argument("--original-only", action="store_true", help="build the originals with nvcc, nothing else")
    rn.add_argument("--count-only", action="store_true",
                    help="with --original-only: configure the CMake originals and count, do not build them")
    rn.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    rn.add_argument("--no-table", action="store_true")
    rn.add_argument("--keep-cuda", action="store_true",
                    help="migrate --keep-cuda and build the dual tree with ROCm (GPU_RUNTIME=HIP) and with nvcc "
                    "(NAME/keep-cuda.json; the table is the normal run's)")
    rn.add_argument("--code", type=Path, default=REPO, help="the buildport checkout to run (default: this one)")
    rn.add_argument("names", nargs="*")
    tb = sub.add_parser("table", help="write RESULTS.md from WORK")
    tb.add_argument("--work", type=Path, required=True)
    args = parser.parse_args(argv)
    projects = load_manifest()
    chosen = [p for p in projects if not getattr(args, "names", None) or p.name in args.names]
    if args.command == "checkout":
        for project in chosen:
            missing = checkout(project, args.git_dirs, args.dest)
            print(f"{project.name}: written" + (f", {len(missing)} files missing: {missing[:5]}" if missing else ""))
    elif args.command == "run":
        for project in chosen:
            if args.keep_cuda:
                done = run_keep_cuda(project, args.src, args.work, jobs=args.jobs, code=args.code.resolve())
                sides = [f"{side} {done[side]['compiled']}/{done[side]['total']}" if done[side]["configured"]
                         else f"{side} configure failed: {done[side]['configure_reason']}"
                         for side in ("hip", "cuda") if side in done]
                print(f"{project.name} (--keep-cuda): {'; '.join(sides) or done['migrate']['summary']}", flush=True)
                continue
            if args.original_only:
                cuda = run_original(project, args.src, args.work, jobs=args.jobs, count_only=args.count_only)["cuda"]
                print(f"{project.name} (nvcc): {cuda['compiled']}/{cuda['total']}", flush=True)
                continue
            result = run_project(project, args.src, args.work, original=args.original, jobs=args.jobs,
                                 code=args.code.resolve())
            hip = result["hip"]
            state = f"{hip['compiled']}/{hip['total']}" if hip["configured"] else f"configure failed: {hip['configure_reason']}"
            print(f"{project.name}: {state}; causes {hip['causes']}; first blocker {hip['first_blocker'] or 'none'}",
                  flush=True)  # fmt: skip
        if not args.no_table:
            write_results(args.work, projects)
    else:
        write_results(args.work, projects)
    return 0


if __name__ == "__main__":
    sys.exit(main())
