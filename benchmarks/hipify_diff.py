"""The built-in conversion engine against hipify-perl, file by file, over a corpus.

Every source is converted twice: by hipify-perl (``-print-stats FILE``, as ``migrate`` runs it, on a copy
in a scratch folder) and by :class:`buildport.source.convert.Converter` compiled from the same script.
Both must give the same stdout and the same stderr, byte for byte; a file the built-in engine hands back
(it would run hipify-perl itself) is counted with the reason. A file the built-in engine calls untouched
(no engine needed) must come out of hipify-perl unchanged and without a word. Prints the counts and each
engine's throughput in the same run; exits 1 when a file differs.

    python benchmarks/hipify_diff.py DIR [DIR ...] [--git-dir REPO.git [--under PATH]] [--skip N] [--limit N] [--jobs N]

A corpus of thousands of files costs hours of hipify-perl: ``--ledger FILE`` keeps a line per file compared
(the content's digest, the script's, the built-in engine's code, the verdict), and a later run leaves out the
contents it holds as identical or untouched for the same script and the same engine code, so a long
comparison goes on across runs; with a ledger, a file met twice (a copy in another project) is compared once.
A file that differed or was handed back is compared again by every run. ``--cuda-only`` keeps the CUDA sources: ``.cu``/``.cuh`` files and every other
file the built-in engine would change.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from buildport.source.convert import Converted, Converter, converter_for

SUFFIXES = (".cu", ".cuh", ".cpp", ".h", ".hpp", ".cc")


def hipify_perl(engine: Path, name: str, data: bytes, scratch: Path) -> tuple[int, bytes, bytes, float]:
    """(exit code, stdout, stderr, CPU seconds) of hipify-perl over a copy of ``data`` at ``scratch/name``
    (its CPU time, user and system, as ``/usr/bin/time`` reads it: the machine may be busy)."""
    given = scratch / name
    given.write_bytes(data)
    clock = scratch / "time.txt"
    done = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", str(clock), str(engine), "-print-stats", str(given)],
                          capture_output=True, check=False)
    user, system = clock.read_text().split()[-2:]
    return done.returncode, done.stdout, done.stderr, float(user) + float(system)


def compare(converter: Converter, engine: Path, name: str, data: bytes, scratch: Path) -> tuple[str, str, float, float]:
    """(verdict, detail, built-in CPU seconds, hipify-perl CPU seconds) for one file: verdict is ``identical``,
    ``untouched`` (identical, no engine needed), ``fell back`` or ``DIFFERENT``."""
    given = str(scratch / name)
    start = time.thread_time()
    ours = converter.attempt(data, given)
    mine = time.thread_time() - start
    untouched = converter.untouched(data)
    code, out, err, theirs = hipify_perl(engine, name, data, scratch)
    if not isinstance(ours, Converted):
        return "fell back", ours, mine, theirs
    if code != 0:
        return "DIFFERENT", f"hipify-perl exited with {code}: {err[-300:]!r}", mine, theirs
    if ours.output != out:
        return "DIFFERENT", "stdout: " + _first_difference(ours.output, out), mine, theirs
    if ours.messages != err:
        return "DIFFERENT", "stderr: " + _first_difference(ours.messages, err), mine, theirs
    return ("untouched" if untouched else "identical"), "", mine, theirs


def _first_difference(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"at byte {at}: built-in {ours[max(0, at - 60):at + 60]!r} / hipify-perl {theirs[max(0, at - 60):at + 60]!r}"


def folder_sources(root: Path) -> Iterator[tuple[str, bytes]]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for file in sorted(files):
            path = Path(folder) / file
            if file.endswith(SUFFIXES) and path.is_file() and not path.is_symlink():
                yield str(path), path.read_bytes()


def git_sources(git_dir: Path, under: str) -> Iterator[tuple[str, bytes]]:
    listed = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD", "--", under or "."],
                            capture_output=True, check=True).stdout
    for entry in listed.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, blob = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and name.endswith(SUFFIXES):
            data = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", blob.decode()],
                                  capture_output=True, check=True).stdout
            yield f"{git_dir}:{name}", data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--git-dir", type=Path, action="append", default=[],
                        help="a (bare) git repository: its HEAD's sources (may be given more than once)")
    parser.add_argument("--under", default="", help="with --git-dir: only this folder of the tree")
    parser.add_argument("--engine", type=Path, default=Path("/usr/local/bin/hipify-perl"))
    parser.add_argument("--limit", type=int, default=0, help="at most this many files")
    parser.add_argument("--min-lines", type=int, default=0, help="only files of more than this many lines")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N files (a run that goes on from another)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="hipify-perl runs at once")
    parser.add_argument("--max-lines", type=int, default=0, help="only files of at most this many lines")
    parser.add_argument("--suffixes", default=",".join(SUFFIXES), help="the file name endings compared")
    parser.add_argument("--per-folder", type=int, default=0, help="at most this many files of each folder named")
    parser.add_argument("--built-in-only", action="store_true",
                        help="run the built-in engine alone: its throughput, and how many files it hands back")
    parser.add_argument("--quiet", action="store_true", help="no line per file that differs or fell back")
    parser.add_argument("--ledger", type=Path, help="a JSON-lines file of the files compared: read to leave them out, appended to")
    parser.add_argument("--shortest-first", action="store_true",
                        help="compare the files in order of length (hipify-perl's time grows with it)")
    parser.add_argument("--cuda-only", action="store_true",
                        help=".cu/.cuh files and the other files the built-in engine changes, not the rest")
    args = parser.parse_args(argv)
    converter = converter_for(args.engine)
    if converter is None:
        print(f"{args.engine}: not a hipify-perl whose code the built-in engine knows", file=sys.stderr)
        return 2
    sources: list[Iterator[tuple[str, bytes]]] = [folder_sources(f) for f in args.folders]
    sources += [git_sources(git_dir, args.under) for git_dir in args.git_dir]
    suffixes = tuple(args.suffixes.split(","))
    files = []
    for source in sources:
        chosen = [item for item in source
                  if item[0].endswith(suffixes) and not (args.max_lines and item[1].count(b"\n") > args.max_lines)
                  and item[1].count(b"\n") > args.min_lines]
        files += chosen[: args.per_folder] if args.per_folder else chosen
    if args.cuda_only:
        files = [(where, data) for where, data in files if where.endswith((".cu", ".cuh")) or not converter.untouched(data)]
    script = hashlib.sha256(args.engine.read_bytes()).hexdigest()[:16]
    if args.ledger:
        script += "/" + _engine_code()
        files = _unseen(files, args.ledger, script)
    if args.shortest_first:
        files.sort(key=lambda item: len(item[1]))
    files = files[args.skip :]
    if args.limit:
        files = files[: args.limit]
    if args.built_in_only:
        return _built_in_only(converter, files)
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    times = {"built-in": 0.0, "hipify-perl": 0.0}
    size = sum(len(data) for _name, data in files)

    def one(i: int) -> tuple[str, str, str, float, float]:
        where, data = files[i]
        with tempfile.TemporaryDirectory(prefix="hipify-diff-") as scratch:
            verdict, detail, mine, theirs = compare(converter, args.engine, Path(where).name, data, Path(scratch))
        return where, verdict, detail, mine, theirs

    files_data = dict(files)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for where, verdict, detail, mine, theirs in pool.map(one, range(len(files))):
            counts[verdict] += 1
            if args.ledger:
                _record(args.ledger, where, files_data[where], script, verdict, detail, theirs)
            times["built-in"] += mine
            times["hipify-perl"] += theirs
            if verdict == "fell back":
                reasons[detail] += 1
            if verdict in ("fell back", "DIFFERENT") and not args.quiet:
                print(f"{verdict}: {where}: {detail}", flush=True)
    megabytes = size / 1e6
    print(f"files compared: {len(files)} ({megabytes:.2f} MB)")
    for verdict in ("identical", "untouched", "fell back", "DIFFERENT"):
        print(f"  {verdict}: {counts[verdict]}")
    for reason, n in reasons.most_common():
        print(f"    fell back, {n}: {reason}")
    rates = {k: megabytes / v if v else float("inf") for k, v in times.items()}
    print(f"CPU time: built-in {times['built-in']:.2f} s, {rates['built-in']:.2f} MB/s; "
          f"hipify-perl {times['hipify-perl']:.2f} s (one process a file), {rates['hipify-perl']:.4f} MB/s; "
          f"ratio {rates['built-in'] / rates['hipify-perl']:.0f}x")
    return 1 if counts["DIFFERENT"] else 0


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


#: The modules of the built-in engine: its code digest is theirs.
ENGINE_MODULES = ("buildport/source/convert.py", "buildport/source/hipify_script.py",
                  "buildport/source/perl_search.py", "buildport/passes/wordtrie.py")


def _engine_code() -> str:
    """A digest of the built-in engine's code (:data:`ENGINE_MODULES`)."""
    import buildport

    root = Path(buildport.__file__).parent.parent
    code = hashlib.sha256()
    for module in ENGINE_MODULES:
        code.update(module.encode() + b"\0" + (root / module).read_bytes())
    return code.hexdigest()[:16]


def _unseen(files: list[tuple[str, bytes]], ledger: Path, script: str) -> list[tuple[str, bytes]]:
    """``files`` less the contents ``ledger`` holds as identical or untouched for ``script`` (the hipify-perl
    script's digest and the engine code's) and less a second copy of one content."""
    seen: set[str] = set()
    if ledger.exists():
        for line in ledger.read_text().splitlines():
            entry = json.loads(line)
            if entry["script"] == script and entry["verdict"] in ("identical", "untouched"):
                seen.add(entry["content"])
    kept = []
    for where, data in files:
        digest = _digest(data)
        if digest not in seen:
            seen.add(digest)
            kept.append((where, data))
    return kept


def _record(ledger: Path, where: str, data: bytes, script: str, verdict: str, detail: str, seconds: float) -> None:
    entry = {"content": _digest(data), "script": script, "file": where, "lines": data.count(b"\n"),
             "bytes": len(data), "verdict": verdict, "detail": detail[:300], "hipify_perl_seconds": round(seconds, 3)}
    with ledger.open("a") as out:
        out.write(json.dumps(entry) + "\n")


def _built_in_only(converter: Converter, files: list[tuple[str, bytes]]) -> int:
    """The built-in engine over ``files``, in this process: counts and MB/s of CPU time (best of three rounds)."""
    counts: collections.Counter[str] = collections.Counter()
    for where, data in files:
        done = converter.attempt(data, Path(where).name)
        counts["fell back" if isinstance(done, str) else "untouched" if converter.untouched(data) else "converted"] += 1
    best = float("inf")
    for _round in range(3):
        start = time.process_time()
        for where, data in files:
            converter.attempt(data, Path(where).name)
        best = min(best, time.process_time() - start)
    megabytes = sum(len(data) for _where, data in files) / 1e6
    print(f"files: {len(files)} ({megabytes:.2f} MB): " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"built-in: {best:.2f} s of CPU, {megabytes / best if best else float('inf'):.2f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
