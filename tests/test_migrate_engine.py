"""Which engine ``migrate`` converts sources with.

By default the built-in engine (compiled from the hipify-perl found) converts each source, a source with
nothing to convert goes to no engine, and a source the built-in engine is not certain of goes to hipify-perl
itself; ``--hipify PATH`` runs that program on every source. Both give the same tree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import buildport.source.hipify as hipify
from buildport.cli import main
from buildport.source.convert import converter_for
from tests.support.cuda_sources import HIPIFY_PERL

SOURCES = {
    "main.cu": "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n"
               "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d); return 0; }\n",
    "plain.cu": "int helper() { return 1; }\n",
    # two names of hipify-perl's hash of removed names on one line: its warnings come in Perl's hash order
    "bound.cu": "void bind(texture<float> t, float *p) { cudaBindTexture2D(0, t, p); }\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    if converter_for(HIPIFY_PERL) is None:
        pytest.fail(f"{HIPIFY_PERL}, the hipify-perl the built-in engine knows, is needed (.ci/setup.sh)")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "Makefile").write_text("app: main.cu plain.cu bound.cu\n\tnvcc -o app main.cu plain.cu bound.cu\n")
    for name, text in SOURCES.items():
        (root / name).write_text(text)
    return root


def _migrate(project: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> list[str]:
    """Migrate ``project`` to ``out``; the names of the sources hipify-perl itself was run on."""
    ran: list[str] = []
    run_engine = hipify.run_engine

    def recorded(engine: Path, path: Path, *rest: object, **named: object) -> hipify.HipifyResult:
        ran.append(path.name)
        return run_engine(engine, path, *rest, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(hipify, "run_engine", recorded)
    monkeypatch.setenv("PATH", f"{HIPIFY_PERL.parent}:/usr/bin:/bin")
    done = CliRunner().invoke(main, ["migrate", str(project), "--out", str(out), *args])
    assert done.exit_code == 0, done.output
    return sorted(ran)


def test_migrate_converts_with_the_built_in_engine_and_hands_back_what_it_is_not_sure_of(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    assert _migrate(project, out, monkeypatch) == ["bound.cu"]
    main_cu = (out / "main.cu").read_text()
    assert "hipMalloc(&d, 4)" in main_cu and "hipFree(d)" in main_cu and "cudaMalloc" not in main_cu
    assert "hipBindTexture2D" in (out / "bound.cu").read_text()
    changes = {c["path"]: c for c in json.loads((out / "migration.json").read_text())["changed"]}
    assert changes["main.cu"]["hipify"]["converted"] == 3


def test_hipify_path_runs_that_program_on_every_source_and_gives_the_same_tree(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built_in, program = tmp_path / "built-in", tmp_path / "program"
    _migrate(project, built_in, monkeypatch)
    assert _migrate(project, program, monkeypatch, "--hipify", str(HIPIFY_PERL)) == sorted(SOURCES)
    files = sorted(p.relative_to(built_in) for p in built_in.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(program) for p in program.rglob("*") if p.is_file())
    for name in files:
        if name.name not in ("migration.json", "MIGRATION.md"):  # bound.cu's warnings: in Perl's hash order
            assert (built_in / name).read_bytes() == (program / name).read_bytes(), name
    ours, theirs = (json.loads((out / "migration.json").read_text())["changed"] for out in (built_in, program))
    assert [c for c in ours if c["path"] != "bound.cu"] == [c for c in theirs if c["path"] != "bound.cu"]


def test_arguments_for_the_engine_run_the_program(project: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``--hipify-arg`` is for the program (the built-in engine reproduces its default run only)."""
    assert _migrate(project, tmp_path / "out", monkeypatch, "--hipify-arg=-quiet-warnings") == sorted(SOURCES)
