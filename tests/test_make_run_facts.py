"""Makefiles ported with the facts of the files make reads with them: one with no include line as it is found,
alone, and again at the end where the files that include it change its facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildport import engine
from buildport.pipeline import discovery, outcomes, pool, port
from buildport.cache.store import Cache
from buildport.options import MakeFacts, Options
from buildport.passes.make_facts import combine, file_facts
from buildport.syntax.make import parse_make
from buildport.textio import read_source

#: common.mk makes CUDA_CC a compiler and, through its recipe, GPU_FLAGS a flag variable; flags.mk,
#: which it includes, holds no word a rule looks for, but its port depends on that; sibling.mk says
#: what flags.mk says, but nothing includes it, so it is read alone; plain.mk and other.mk depend on nothing.
COMMON = "CUDA_CC := /usr/local/cuda/bin/nvcc\nall: app\napp: main.o\n\t$(CUDA_CC) $(GPU_FLAGS) -o app main.o\n"
FILES = {
    "common.mk": "include flags.mk\n" + COMMON,
    "flags.mk": "GPU_FLAGS := -O2 -G -m64\n",
    "sibling.mk": "GPU_FLAGS := -O2 -G -m64\n",
    "plain.mk": "CFLAGS := -O2\nall:\n\tcc -o x x.c\n",
    "other.mk": "OPTS := -O2 -G\ninclude rules.inc\n",
    "broken.mk": "all:\n\techo\nendif\n",
}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _expected(paths: list[str]) -> list[tuple[str, str | None, list[str]]]:
    """Each file ported one by one: common.mk and flags.mk with the facts of both, the others alone."""
    together = [path for path in paths if Path(path).name in ("common.mk", "flags.mk")]
    facts = MakeFacts()
    combine(facts, [file_facts(parse_make(Path(path).read_text(), path)) for path in together])
    out = []
    for path in paths:
        outcome = port._port_one(path, read_source(path), Options(), "make", facts if path in together else None)
        result = outcome.result
        out.append((path, result.text if result else outcome.error, [f.rule for f in result.findings] if result else []))
    return out


def _seen(run: outcomes.Run) -> list[tuple[str, str | None, list[str]]]:
    return [(o.path, o.result.text if o.result else o.error, [f.rule for f in o.result.findings] if o.result else [])
            for o in run.outcomes]  # fmt: skip


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("cached", [False, True])
def test_a_run_ports_each_makefile_as_with_the_runs_facts(
    project: Path, tmp_path_factory: pytest.TempPathFactory, jobs: int, cached: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool, "MIN_ITEMS_PER_WORKER", 1)  # a pool even for these few files
    paths = [str(project / name) for name in sorted(FILES)]
    cache = Cache(tmp_path_factory.mktemp("cache")) if cached else None
    run = port.port_files(paths, Options(), kind="make", jobs=jobs, cache=cache)
    expected = _expected(paths)
    assert _seen(run) == expected
    texts = dict((Path(p).name, t) for p, t, _ in expected)
    assert texts["flags.mk"] == "GPU_FLAGS := -O2 -g -O0 -m64\n"  # the facts of the file that includes it reached it
    assert texts["sibling.mk"] == FILES["sibling.mk"]  # and no file that includes nothing of common.mk
    if cache is not None:  # and the cache gives the same again
        again = port.port_files(paths, Options(), kind="make", jobs=jobs, cache=Cache(cache.root))
        assert _seen(again) == expected


def test_a_makefile_is_ported_as_found_and_again_only_where_the_files_that_include_it_change_its_facts(
    project: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    ported: list[str] = []
    parsed: list[str] = []
    real_port, real_parse = engine.port_make, parse_make

    def counted(text: str, path: str = "<input>", *args: object, verify: bool = True, **kwargs: object) -> object:
        result = real_port(text, path, *args, verify=verify, **kwargs)  # type: ignore[arg-type]
        if verify:  # not the stability check's second port
            ported.append(Path(path).name)
        return result

    def parse(text: str, path: str = "<input>", *args: object, **kwargs: object) -> object:
        parsed.append(Path(path).name)
        return real_parse(text, path, *args, **kwargs)  # type: ignore[arg-type]

    paths = [str(project / name) for name in sorted(FILES)]
    expected = _expected(paths)
    monkeypatch.setattr(engine, "port_make", counted)
    monkeypatch.setattr("buildport.syntax.make.parse_make", parse)  # as the facts are read (the port's own: not here)
    run = port.port_files(paths, Options(), kind="make", jobs=1)
    assert _seen(run) == expected
    # flags.mk, plain.mk and sibling.mk have no include line: ported alone as they come (broken.mk does not
    # parse); common.mk and other.mk have include lines: ported at the end, with flags.mk again, whose facts
    # common.mk changes (other.mk includes nothing of the run: alone)
    assert ported == ["flags.mk", "plain.mk", "sibling.mk", "common.mk", "flags.mk", "other.mk"]
    assert sorted(parsed) == ["common.mk", "flags.mk"]  # for their facts: the files make reads together, no other


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_walked_makefile_is_read_once_even_when_its_port_begins_before_the_includes_are_read(
    project: Path, monkeypatch: pytest.MonkeyPatch, jobs: str,
) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    (project / "rules.inc").write_text("CXXFLAGS := -O2\n")  # included by other.mk: found by its include line
    for n in range(8):  # files enough for a pool with --jobs 2
        (project / f"more{n}.mk").write_text(f"X{n} := {n}\n")
    read: list[str] = []
    real = port.read_source

    def counting(path: str, data: bytes | None = None, *args: object) -> object:
        if data is None:  # read from the file, not decoded from bytes discovery read
            read.append(Path(path).name)
        return real(path, data, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(port, "read_source", counting)  # the files a port reads
    monkeypatch.setattr(discovery, "read_source", counting)  # and those discovery reads for their includes
    done = CliRunner().invoke(main, ["make", "--check", "-q", "--no-cache", "-j", jobs, str(project)])
    assert done.exit_code in (0, 1, 2), done.output
    assert read == ["rules.inc"]  # what discovery read is not read again for the includes


@pytest.mark.parametrize("cache", ["none", "cold"])
def test_facts_read_while_the_walk_goes_on_are_the_runs_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str,
) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "aa_flags.mk").write_text("GPU_FLAGS := -O2 -G -m64\n")  # found first; its port needs the last file
    for n in range(20):  # files enough for several chunks with --jobs 2
        (tree / f"m{n:02}.mk").write_text(f"X{n} := {n}\nall:\n\tcc -o x{n} x.c\n")
    (tree / "m05.mk").write_bytes(b"A := 1\n\x00\n")  # binary: reported, and no facts are read from it
    (tree / "m07.mk").write_text("all:\n\techo\nendif\n")  # does not parse: reported
    (tree / "zz_common.mk").write_text("include aa_flags.mk\n" + COMMON)
    outputs = {}
    for jobs in ("1", "2"):
        options = ["--no-cache"] if cache == "none" else ["--cache-dir", str(tmp_path / f"cache{jobs}")]
        done = CliRunner().invoke(main, ["make", "--diff", "-j", jobs, *options, str(tree)])
        assert done.exit_code == 2, done.output  # an input error outranks the changes
        outputs[jobs] = done.output
    assert outputs["1"] == outputs["2"]
    assert "+GPU_FLAGS := -O2 -g -O0 -m64" in outputs["2"]  # the last file's facts reached the first
    assert "m05.mk" in outputs["2"] and "m07.mk" in outputs["2"]
