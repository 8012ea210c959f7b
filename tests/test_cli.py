"""The command line as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs buildport in processes of its own, or over large inputs

CUDA_PROJECT = """cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(demo main.cu)
target_link_libraries(demo PRIVATE CUDA::cublas)
"""


def run(*args: str, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "buildport", *args], input=stdin, capture_output=True, cwd=cwd, timeout=120
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "CMakeLists.txt").write_text(CUDA_PROJECT)
    sub = tmp_path / "lib"
    sub.mkdir()
    (sub / "CMakeLists.txt").write_text("add_library(k k.cu)\ntarget_link_libraries(k CUDA::curand)\n")
    build = tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_text("")
    (build / "CMakeLists.txt").write_text("project(x CUDA)\n")  # inside a build tree: skipped
    return tmp_path


def test_version() -> None:
    out = run("--version")
    assert out.returncode == 0 and b"buildport" in out.stdout


def test_prints_by_default_and_writes_nothing(project: Path) -> None:
    out = run("cmake", str(project / "CMakeLists.txt"))
    assert out.returncode == 0
    assert b"project(demo LANGUAGES CXX HIP)" in out.stdout
    assert (project / "CMakeLists.txt").read_text() == CUDA_PROJECT


def test_check_exit_codes(project: Path) -> None:
    assert run("cmake", "--check", str(project)).returncode == 1
    assert run("cmake", "--in-place", str(project)).returncode == 0
    assert run("cmake", "--check", str(project)).returncode == 0, "a second run changes nothing"


def test_in_place_directory_skips_build_trees_and_adds_packages(project: Path) -> None:
    mode = 0o640
    os.chmod(project / "CMakeLists.txt", mode)
    out = run("cmake", "-i", str(project))
    assert out.returncode == 0, out.stderr
    top = (project / "CMakeLists.txt").read_text()
    assert "find_package(hip REQUIRED)" in top
    assert "find_package(hiprand REQUIRED)" in top, "packages linked in subdirectories are found at the top"
    assert "hip::hiprand" in (project / "lib" / "CMakeLists.txt").read_text()
    assert (project / "build" / "CMakeLists.txt").read_text() == "project(x CUDA)\n"
    assert (project / "CMakeLists.txt").stat().st_mode & 0o777 == mode
    assert not list(project.glob(".*buildport-tmp"))


def test_diff_writes_nothing(project: Path) -> None:
    out = run("cmake", "--diff", str(project / "CMakeLists.txt"))
    assert out.returncode == 0
    assert b"-project(demo LANGUAGES CXX CUDA)" in out.stdout
    assert b"+project(demo LANGUAGES CXX HIP)" in out.stdout
    assert (project / "CMakeLists.txt").read_text() == CUDA_PROJECT


def test_check_with_diff_prints_the_diff_and_fails(project: Path) -> None:
    """black's CI idiom: --check --diff shows what would change and exits 1."""
    out = run("cmake", "--check", "--diff", str(project / "CMakeLists.txt"))
    assert out.returncode == 1
    assert b"+project(demo LANGUAGES CXX HIP)" in out.stdout
    assert f"would rewrite {project / 'CMakeLists.txt'}".encode() in out.stderr
    assert (project / "CMakeLists.txt").read_text() == CUDA_PROJECT
    again = run("cmake", "--check", "--diff", "-", stdin=b"project(x CXX)\n")
    assert again.returncode == 0 and again.stdout == b""
    refused = run("cmake", "--in-place", "--check", str(project / "CMakeLists.txt"))
    assert refused.returncode == 2 and b"--in-place writes the files" in refused.stderr


def test_a_diff_applies_with_git_apply_whatever_the_path_was_given_as(tmp_path: Path) -> None:
    """Paths given absolute or through ``..`` are written from the working folder with a/ and b/, as git
    apply wants them; a file outside the working folder keeps its absolute path."""
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "other").mkdir()
    for folder in ("sub", "other"):
        (repo / folder / "CMakeLists.txt").write_text(CUDA_PROJECT)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for given in (str(repo / "sub" / "CMakeLists.txt"), "sub/../other/CMakeLists.txt"):
        diff = run("cmake", "--diff", given, cwd=repo).stdout
        assert diff.startswith(b"--- a/") and b"/../" not in diff.splitlines()[0]
        check = subprocess.run(["git", "apply", "--check", "-"], input=diff, cwd=repo, capture_output=True)
        assert check.returncode == 0, check.stderr
    outside = run("cmake", "--diff", "../other/CMakeLists.txt", cwd=repo / "sub").stdout
    assert outside.splitlines()[0] == f"--- {repo / 'other' / 'CMakeLists.txt'}".encode()


def test_stdin_to_stdout() -> None:
    out = run("cmake", "-", stdin=b"add_executable(a a.cu)\r\n")
    assert out.returncode == 0
    assert out.stdout == b"add_executable(a a.cu)\r\nset_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\r\n"


def test_offload_arch_option() -> None:
    out = run("cmake", "--offload-arch", "gfx1100,gfx90a", "-", stdin=b"project(x CUDA)\n")
    assert b'set(CMAKE_HIP_ARCHITECTURES "gfx1100;gfx90a" CACHE STRING' in out.stdout
    bad = run("cmake", "--offload-arch", "sm_80", "-", stdin=b"project(x CUDA)\n")
    assert bad.returncode == 2


def test_parse_error_is_positioned_and_file_untouched(tmp_path: Path) -> None:
    bad = tmp_path / "CMakeLists.txt"
    text = "project(x CUDA)\nadd_executable(a\n  a.cu\n"
    bad.write_text(text)
    out = run("cmake", "--in-place", str(bad))
    assert out.returncode == 2
    assert f"{bad}:2:1: error: unbalanced parentheses".encode() in out.stderr
    assert b"Traceback" not in out.stderr
    assert bad.read_text() == text


def test_binary_and_missing_files(tmp_path: Path) -> None:
    binary = tmp_path / "CMakeLists.txt"
    binary.write_bytes(b"project(x)\x00\x01")
    out = run("cmake", str(binary), str(tmp_path / "missing.cmake"))
    assert out.returncode == 2
    assert b"binary file" in out.stderr and b"no such file" in out.stderr


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.cmake").write_text("foo(\n")
    (tmp_path / "b.cmake").write_text("add_library(b b.cu)\n")
    out = run("cmake", "-i", str(tmp_path))
    assert out.returncode == 2
    assert "LANGUAGE HIP" in (tmp_path / "b.cmake").read_text()
    assert (tmp_path / "a.cmake").read_text() == "foo(\n"


def test_findings_go_to_stderr(tmp_path: Path) -> None:
    f = tmp_path / "CMakeLists.txt"
    f.write_text("add_executable(a a.cu)\ntarget_link_libraries(a CUDA::nvjpeg)\n")
    out = run("cmake", str(f))
    assert b"CUDA::nvjpeg" in out.stdout
    assert f"{f}:2:25: warning[cmake-library-unported]".encode() in out.stderr


def test_discovery_skips_build_trees_below_the_root_but_walks_a_root_that_is_one(tmp_path: Path) -> None:
    from buildport.pipeline.discovery import files_below, is_cmake_file

    (tmp_path / "CMakeCache.txt").write_text("")
    (tmp_path / "CMakeLists.txt").write_text("project(x)\n")
    for name, mark in (("cache", "CMakeCache.txt"), ("files", "CMakeFiles"), ("linked", "CMakeFiles")):
        folder = tmp_path / "sub" / name
        folder.mkdir(parents=True)
        (folder / "CMakeLists.txt").write_text("project(y)\n")
        if name == "linked":
            (folder / mark).symlink_to(tmp_path / "sub" / "files" / "CMakeFiles")
        elif mark == "CMakeFiles":
            (folder / mark).mkdir()
        else:
            (folder / mark).write_text("")
    (tmp_path / "sub" / "plain").mkdir()
    (tmp_path / "sub" / "plain" / "CMakeLists.txt").write_text("project(z)\n")
    (tmp_path / "sub" / "dangling").mkdir()
    (tmp_path / "sub" / "dangling" / "CMakeCache.txt").symlink_to(tmp_path / "nowhere")
    (tmp_path / "sub" / "dangling" / "CMakeLists.txt").write_text("project(w)\n")
    found = [os.path.relpath(p, tmp_path) for p in files_below(tmp_path, is_cmake_file)]
    assert found == ["CMakeLists.txt", "sub/dangling/CMakeLists.txt", "sub/plain/CMakeLists.txt"]


def test_migrate_lists_a_build_file_it_cannot_read_and_goes_on(tmp_path: Path) -> None:
    """A *.cmake file that is not CMake (a configure_file template) stops only itself: it is left as it is and
    listed under Skipped, and the rest of the project is migrated."""
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = tmp_path / "proj"
    (project / "cmake").mkdir(parents=True)
    (project / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\nadd_executable(app app.cu)\n")
    (project / "app.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n")
    template = "set(CUDA_FLAGS 1)\n@CUDA_NVCC_FLAGS_CONFIG@\n"
    (project / "cmake" / "run_tool.cmake").write_text(template)
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "1 file skipped" in done.output
    assert (out / "cmake" / "run_tool.cmake").read_text() == template
    assert "HIP" in (out / "CMakeLists.txt").read_text()
    skipped = json.loads((out / "migration.json").read_text())["skipped"]
    assert [s["path"] for s in skipped] == ["cmake/run_tool.cmake"] and "2:" in skipped[0]["why"]


def test_migrate_reports_each_name_the_engine_left(tmp_path: Path) -> None:
    """hipify-perl warns `unsupported identifier "NAME"` for what it cannot convert: each becomes a finding a
    person has to act on, at the name in the converted file (the statistics' WARNINGS line is not one)."""
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = tmp_path / "proj"
    project.mkdir()
    (project / "Makefile").write_text("rng: rng.cu\n\tnvcc -o rng rng.cu -lcurand\n")
    (project / "rng.cu").write_text(
        "#include <curand.h>\nint main() {\n  curandGenerator_t g;\n  curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);\n"
        "  curandOrdering_t order = CURAND_ORDERING_PSEUDO_BEST;\n  return order == 0;\n}\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out)])
    assert done.exit_code == 0, done.output
    remaining = json.loads((out / "migration.json").read_text())["remaining"]
    left = {(r["line"], r["col"], r["message"].split("`")[1]) for r in remaining if r["rule"] == "hipify-unsupported"}
    # hipify added its include on top: the names are on line 6 of the converted file
    assert left == {(6, 3, "curandOrdering_t"), (6, 28, "CURAND_ORDERING_PSEUDO_BEST")}
    assert "curandOrdering_t" in (out / "MIGRATION.md").read_text()
    _valid_migration_json(out)


def test_a_source_the_engine_fails_on_is_work_for_a_person_and_the_migration_fails(tmp_path: Path) -> None:
    """An engine that fails on one source the build compiles: the file stays CUDA, is listed with the engine's
    message under what a person still has to do (and counted in the summary), and migrate exits 1."""
    import json
    import shutil

    from click.testing import CliRunner

    from buildport.cli import main

    real = shutil.which("hipify-perl")
    if real is None:
        pytest.skip("hipify-perl is not installed")
    engine = tmp_path / "hipify-perl-failing"
    engine.write_text(f'#!/bin/sh\nfor a; do f=$a; done\ncase "$f" in *bad.cu) echo "error: cannot read it" >&2; '
                      f'exit 3;; esac\nexec {real} "$@"\n')
    engine.chmod(0o755)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "Makefile").write_text("app: good.cu bad.cu\n\tnvcc -o app good.cu bad.cu\n")
    (project / "good.cu").write_text("#include <cuda_runtime.h>\nint main() { return cudaDeviceSynchronize(); }\n")
    bad = "#include <cuda_runtime.h>\nvoid f() { cudaDeviceReset(); }\n"
    (project / "bad.cu").write_text(bad)
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--hipify", str(engine)])
    assert done.exit_code == 1, done.output
    assert "1 finding needs a person" in done.output and "could not be converted" in done.output
    assert (out / "bad.cu").read_text() == bad
    remaining = json.loads((out / "migration.json").read_text())["remaining"]
    assert [(r["path"], r["rule"]) for r in remaining] == [("bad.cu", "hipify-failed")]
    assert "cannot read it" in remaining[0]["message"]
    markdown = (out / "MIGRATION.md").read_text()
    assert "## What a person still has to do (1)" in markdown and "`bad.cu:1:1` error [hipify-failed]" in markdown
    _valid_migration_json(out)


def _valid_migration_json(out: Path) -> None:
    """migration.json validates against the package's schema, and names no absolute path."""
    import json
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("buildport").joinpath("schemas/migration-v1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    text = (out / "migration.json").read_text()
    data = json.loads(text)
    jsonschema.Draft202012Validator(schema).validate(data)
    assert str(out) not in text.replace(data["engine"], ""), "an absolute path in migration.json"


def test_build_it_names_make_where_the_cmake_file_is_a_fragment_of_a_parent_project(tmp_path: Path) -> None:
    """A folder with a Makefile and a CMakeLists.txt without project() (a parent's add_subdirectory() adds it)
    is built with make."""
    import json

    from click.testing import CliRunner

    from buildport.cli import main

    project = tmp_path / "bench"
    project.mkdir()
    (project / "CMakeLists.txt").write_text("add_executable(bench main.cu)\n")
    (project / "Makefile").write_text("bench: main.cu\n\tnvcc -o bench main.cu\n")
    (project / "main.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), "--no-cmake-configure"])
    assert done.exit_code == 0, done.output
    commands = json.loads((out / "migration.json").read_text())["build_commands"]
    assert commands[0].startswith("make"), commands
    (project / "CMakeLists.txt").write_text("project(bench LANGUAGES CXX CUDA)\nadd_executable(bench main.cu)\n")
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(tmp_path / "out2"), "--no-cmake-configure"])
    assert json.loads((tmp_path / "out2" / "migration.json").read_text())["build_commands"][0].startswith("cmake")


def test_cmake_and_make_report_the_cuda_they_leave_as_audit_does(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\nset(EXTRA_LIB libcudart.so)\n")
    (tmp_path / "Makefile").write_text("LIBS = libcudart_static.a\nall:\n\tg++ -o x x.o $(LIBS)\n")
    runner = CliRunner()
    for command, name, line in (("cmake", "CMakeLists.txt", 2), ("make", "Makefile", 1)):
        done = runner.invoke(main, [command, "--no-cache", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        assert f"{name}:{line}:" in done.output and "warning[build-cuda-library]" in done.output, done.output


def test_migrate_writes_its_reports_through_no_link_the_tree_holds(tmp_path: Path) -> None:
    """A tree that commits links named like the reports, or like a fixed temporary name, gets its links
    replaced by the reports; the files they point at are never written."""
    from click.testing import CliRunner

    from buildport.cli import main

    project = tmp_path / "proj"
    project.mkdir()
    (project / "Makefile").write_text("app: app.cu\n\tnvcc -o app app.cu\n")
    (project / "app.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    for name in ("MIGRATION.md", ".MIGRATION.md.buildport-tmp", "migration.json", ".migration.json.buildport-tmp"):
        (project / name).symlink_to(victim)
    done = CliRunner().invoke(main, ["migrate", str(project), "--in-place", "--force"])
    assert done.exit_code == 0, done.output
    assert victim.read_text() == "keep me\n"
    report = project / "MIGRATION.md"
    assert not report.is_symlink() and "# Migration to HIP" in report.read_text()


def test_make_in_place_never_writes_an_included_makefile_outside_the_paths_given(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    (tmp_path / "shared").mkdir()
    (tmp_path / "proj").mkdir()
    common = "NVCC = nvcc\nFLAGS = -arch=sm_80\n"
    (tmp_path / "shared" / "common.mk").write_text(common)
    (tmp_path / "proj" / "Makefile").write_text(
        "include ../shared/common.mk\ninclude local.mk\napp: app.cu\n\t$(NVCC) $(FLAGS) -o app app.cu\n")
    (tmp_path / "proj" / "local.mk").write_text("LIBS = -lcudart\n")
    done = CliRunner().invoke(main, ["make", "--in-place", "--no-cache", str(tmp_path / "proj")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "shared" / "common.mk").read_text() == common  # read for its facts, not written
    assert "included from outside the paths given" in done.output
    assert "-lcudart" not in (tmp_path / "proj" / "local.mk").read_text()  # inside: ported
    # named, it is the user's to port
    done = CliRunner().invoke(main, ["make", "--in-place", "--no-cache", str(tmp_path / "proj"),
                                     str(tmp_path / "shared")])
    assert done.exit_code == 0, done.output
    assert "$(HIPCC)" in (tmp_path / "shared" / "common.mk").read_text()
