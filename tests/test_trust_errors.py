"""Every error a user can meet: ``path:line:col: error: ...``, the line, a caret; exit 2; no traceback.

A traceback appears only for an internal error and only with ``--debug``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

ROOT = Path(__file__).resolve().parent.parent

#: (name, file bytes, line, col, message words, the source line shown)
PARSE_ERRORS = [
    ("unclosed-command", b"project(x)\nadd_library(k\n  k.cu\n", 2, 1, "not closed", "add_library(k"),
    ("unterminated-quote", b'set(A "abc)\n', 1, 7, "unterminated quoted argument", 'set(A "abc)'),
    ("unterminated-bracket", b"set(A [==[ x ]=])\n", 1, 7, "unterminated bracket argument", "set(A [==[ x ]=])"),
    ("unterminated-bracket-comment", b"x()\n#[[ open\n", 2, 1, "unterminated bracket comment", "#[[ open"),
    ("missing-parenthesis", b"project(x)\n\tmessage\n", 2, 9, "expected '('", "\tmessage"),
    ("word-instead-of-parenthesis", b"message STATUS\n", 1, 9, "expected '('", "message STATUS"),
    ("stray-close", b"a()\n  )\n", 2, 3, "')' closes nothing", "  )"),
    ("bom-in-the-middle", b"a()\n\xef\xbb\xbfb()\n", 2, 1, "byte-order mark", "\ufeffb()"),
    ("crlf-position", b"a()\r\nb()\r\nc(\r\n", 3, 1, "not closed", "c("),
    ("cr-only-position", b"a()\rb(\"x)\r", 2, 3, "unterminated quoted argument", 'b("x)'),
    ("binary", b"project(x)\n  \x00", 2, 3, "binary file", ""),
]


def buildport(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "buildport", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
        errors="surrogateescape",
    )


@pytest.mark.parametrize("mode", [["--check"], ["--in-place"]])
@pytest.mark.parametrize("name,data,line,col,words,shown", PARSE_ERRORS, ids=[e[0] for e in PARSE_ERRORS])
def test_positioned_error(tmp_path: Path, mode: list[str], name: str, data: bytes, line: int, col: int,
                          words: str, shown: str) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_bytes(data)
    done = buildport("cmake", *mode, str(path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    first, *rest = done.stderr.splitlines()
    assert first.startswith(f"{path}:{line}:{col}: error: ") and words in first, done.stderr
    if shown:  # the line itself, tabs as one column, then a caret under the column
        assert rest[0] == "    " + shown.expandtabs(1)
        assert rest[1] == "    " + " " * (col - 1) + "^"
    assert path.read_bytes() == data


def test_missing_file(tmp_path: Path) -> None:
    done = buildport("cmake", str(tmp_path / "nope.cmake"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"{tmp_path / 'nope.cmake'}: error: no such file"


def test_no_files_found_is_nothing_to_do(tmp_path: Path) -> None:
    done = buildport("cmake", str(tmp_path))
    assert done.returncode == 0 and "no CMake files found; nothing to do" in done.stderr


def test_read_only_file_is_an_error_and_the_others_are_written(tmp_path: Path) -> None:
    locked, free = tmp_path / "a.cmake", tmp_path / "b.cmake"
    for p in (locked, free):
        p.write_text("project(x LANGUAGES CUDA)\n")
    locked.chmod(0o444)
    done = buildport("cmake", "-i", "-q", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == f"{locked}: error: file is read-only; not written"
    assert locked.read_text() == "project(x LANGUAGES CUDA)\n"
    assert "HIP" in free.read_text()


def test_the_good_files_of_a_run_are_still_processed(tmp_path: Path) -> None:
    (tmp_path / "a.cmake").write_text("project(x LANGUAGES CUDA)\n")
    (tmp_path / "b.cmake").write_text("project(y LANGUAGES CUDA\n")
    done = buildport("cmake", "-i", "-q", str(tmp_path))
    assert done.returncode == 2
    assert "HIP" in (tmp_path / "a.cmake").read_text()
    assert (tmp_path / "b.cmake").read_text() == "project(y LANGUAGES CUDA\n"


# --- internal errors: a bug is forced into the first pass ---------------------------------------

BROKEN = textwrap.dedent(
    """
    import sys
    import buildport.engine as engine

    def broken(self, ctx, commands):
        raise ZeroDivisionError("forced for the test")

    type(engine.CMAKE_PASSES[0]).run = broken
    from buildport.cli import main
    main(sys.argv[1:], prog_name="buildport")
    """
)


def broken_buildport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BROKEN, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_internal_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text("project(x LANGUAGES CUDA)\n")
    done = broken_buildport("cmake", "-i", str(path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"{path}: internal error: ZeroDivisionError: forced for the test")
    assert lines[1:] == ["0 files rewritten, 0 unchanged, 1 failed"]  # the error is one line, then the summary
    assert path.read_text() == "project(x LANGUAGES CUDA)\n"


@pytest.mark.parametrize("where", ["group", "subcommand"])
def test_debug_shows_the_traceback(tmp_path: Path, where: str) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text("project(x LANGUAGES CUDA)\n")
    args = ["--debug", "cmake", str(path)] if where == "group" else ["cmake", "--debug", str(path)]
    done = broken_buildport(*args)
    assert done.returncode != 0
    assert "Traceback" in done.stderr and "ZeroDivisionError: forced for the test" in done.stderr


def test_unexpected_exception_outside_a_file_is_one_line(tmp_path: Path) -> None:
    """A bug outside the per-file work (here: discovery) is caught by the command group."""
    program = BROKEN.replace(
        "type(engine.CMAKE_PASSES[0]).run = broken",
        "import buildport.pipeline.discovery as discovery\ndiscovery.files_below = lambda *a, **k: 1 / 0",
    )
    run = lambda *a: subprocess.run([sys.executable, "-c", program, *a], capture_output=True, text=True,  # noqa: E731
                                    timeout=120, cwd=ROOT)
    done = run("cmake", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().startswith("buildport: internal error: ZeroDivisionError")
    assert "Traceback" not in done.stderr
    debug = run("--debug", "cmake", str(tmp_path))
    assert "Traceback" in debug.stderr
