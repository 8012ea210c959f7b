"""Which Makefiles of a run share their facts: those make reads together, through their include lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner

from buildport.pipeline import discovery, pool, port
from buildport.cli import main
from buildport.engine import port_make
from buildport.options import MakeFacts, Options
from buildport.passes.includes import include_graph, include_targets, scopes


def _named(includes: dict[str, list[str]]) -> dict[str, set[str]]:
    names = sorted(includes)
    graph = [[names.index(target) for target in includes[name]] for name in names]
    return {name: {names[j] for j in scope} for name, scope in zip(names, scopes(graph))}


def test_a_shared_file_is_read_with_each_includer_and_each_includer_without_the_others() -> None:
    found = _named({"a.mk": ["common.mk"], "b.mk": ["common.mk"], "common.mk": [], "alone.mk": []})
    assert found == {
        "a.mk": {"a.mk", "common.mk"},
        "b.mk": {"b.mk", "common.mk"},
        "common.mk": {"a.mk", "b.mk", "common.mk"},  # ported once, for both of the files make reads it with
        "alone.mk": {"alone.mk"},
    }


def test_includes_are_followed_both_ways_through_every_level() -> None:
    found = _named({"top": ["mid.mk"], "mid.mk": ["leaf.mk", "flags.mk"], "leaf.mk": [], "flags.mk": [],
                    "other": ["leaf.mk"]})  # fmt: skip
    assert found["top"] == {"top", "mid.mk", "leaf.mk", "flags.mk"}
    # leaf.mk is read under top (with mid.mk and flags.mk) and under other
    assert found["leaf.mk"] == {"top", "mid.mk", "leaf.mk", "flags.mk", "other"}
    assert found["flags.mk"] == {"top", "mid.mk", "leaf.mk", "flags.mk"}
    assert found["other"] == {"other", "leaf.mk"}


def test_files_that_include_each_other_share_one_scope() -> None:
    found = _named({"x.mk": ["y.mk"], "y.mk": ["x.mk"], "z.mk": ["z.mk"]})
    assert found == {"x.mk": {"x.mk", "y.mk"}, "y.mk": {"x.mk", "y.mk"}, "z.mk": {"z.mk"}}


def test_include_lines_are_resolved_from_the_files_folder(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "app").mkdir()
    files = {
        "common/make.config": "NVCC := nvcc\n",
        "common/rules.mk": "X := 1\n",
        "app/Makefile": "include ../common/make.config  # settings\n-include $(TOP)/common/rules.mk\n"
                        "sinclude missing.mk $(DEPS)\ninclude := not an include line\ninclude $(wildcard *.mk)\n",
        "app/self.mk": "include self.mk\n",
    }  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    words = [include_targets(text) for text in files.values()]
    graph = include_graph(paths, words, lambda i: discovery.file_identity(paths[i], None))
    # a literal name from the folder the file is in; a name made with variables stands for the
    # files whose paths end as its literal tail; missing files, variables alone and itself: nothing
    assert graph == [[], [], [0, 1], []]


def test_include_words_keep_a_reference_with_spaces_whole() -> None:
    text = "include ../common.mk $(DEPS)\n-include $(wildcard a b)/x.mk  # note\n  sinclude ${DFFT}/pencil.mk\n"
    assert include_targets(text) == ["../common.mk", "$(DEPS)", "$(wildcard a b)/x.mk", "${DFFT}/pencil.mk"]
    assert include_targets("include = a.mk\ninclude := b.mk\ninclude += c.mk\n") == []


#: A benchmark suite's two versions of one program side by side, as HeCBench keeps them: the CUDA one
#: makes CC a compiler and ARCH an architecture list; in the HIP one, neither is.
SUITE = {
    "foo-cuda/Makefile": "CC = nvcc\nARCH = sm_60\nCFLAGS := -std=c++17 -Xcompiler -Wall -arch=$(ARCH)\n"
                         "main: main.cu\n\t$(CC) $(CFLAGS) main.cu -o main\n",
    "foo-hip/Makefile": "CC = hipcc\nARCH = CDNA\nCFLAGS := -std=c++17 -Wall --offload-arch=$(ARCH)\n"
                        "main: main.cu util.c\n\t$(CC) $(CFLAGS) main.cu util.c -o main\n",
    "foo-omp/Makefile": "CC = icpx\nCFLAGS = --std=c++17 -fiopenmp\nmain: main.c\n\t$(CC) $(CFLAGS) main.c -o main\n",
    # a suite that shares its settings: the sub-Makefile's CUDA_CC is a compiler through config.mk
    "bar/config.mk": "CUDA_CC := /usr/local/cuda/bin/nvcc\nGPU_FLAGS := -O2 -G\n",
    "bar/app/Makefile": "include ../config.mk\napp: main.cu\n\t$(CUDA_CC) $(GPU_FLAGS) main.cu -o app\n",
}  # fmt: skip


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("cache", ["none", "cold", "warm"])
def test_a_run_ports_each_makefile_as_make_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str, cache: str,
) -> None:
    monkeypatch.setattr(pool, "MIN_ITEMS_PER_WORKER", 1)  # a pool even for these few files
    tree = tmp_path / "tree"
    for name, text in SUITE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    options = ["--no-cache"] if cache == "none" else ["--cache-dir", str(tmp_path / "cache")]
    runs = 2 if cache == "warm" else 1
    for _ in range(runs):
        done = CliRunner().invoke(main, ["make", "--diff", "-j", jobs, *options, str(tree)])
        assert done.exit_code == 0, done.output
    alone = {name: port_make(text, str(tree / name), Options()) for name, text in SUITE.items()}
    # each Makefile that includes nothing is ported as it is alone: the HIP and OpenMP versions
    # are not changed and nothing is reported of them, whatever the CUDA version beside them says
    for name in ("foo-hip/Makefile", "foo-omp/Makefile"):
        assert not alone[name].changed and not alone[name].findings
        assert name not in done.output
    assert alone["foo-cuda/Makefile"].changed and "+ARCH = $(HIP_OFFLOAD_ARCH)" in done.output
    # bar/app/Makefile launches config.mk's compiler with GPU_FLAGS: read with the file that includes
    # it, config.mk's GPU_FLAGS are nvcc flags (-G becomes -g -O0); read alone, they are not
    assert "+GPU_FLAGS := -O2 -g -O0" in done.output
    assert "GPU_FLAGS := -O2 -G\n" in alone["bar/config.mk"].text


def test_files_with_equal_facts_share_one_object() -> None:
    from buildport.passes.make_facts import FileFacts, scoped_facts

    cuda = FileFacts(compiler_vars={"CC"})
    made = scoped_facts([FileFacts(), None, FileFacts(), cuda, FileFacts(compiler_vars={"CC"})], [[], [], [], [], []])
    assert made[0] is made[1] is made[2] and made[0].compiler_vars == {"NVCC"}
    assert made[3] is made[4] and made[3].compiler_vars == {"NVCC", "CC"}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("cached", [False, True])
def test_audit_reads_each_makefile_as_make_ports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, cached: bool,
) -> None:
    from buildport.audit import audit
    from buildport.cache.store import Cache

    monkeypatch.setattr(pool, "MIN_ITEMS_PER_WORKER", 1)
    tree = tmp_path / "tree"
    for name, text in SUITE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    ported = port.port_files(discovery.expand_paths([str(tree)], discovery.is_make_file), Options(), kind="make")
    fixes = {o.path: {(f.line, f.col, f.rule) for f in o.result.findings if f.fixable} for o in ported.outcomes
             if o.result}
    assert fixes[str(tree / "bar/config.mk")] == {(1, 12, "make-compiler"), (2, 18, "make-nvcc-flag")}
    for _ in range(2 if cached else 1):  # the second run from the cache
        cache = Cache(tmp_path / "cache") if cached else None
        report = audit([str(tree)], jobs=jobs, cache=cache)
        assert not report.errors
        audited = {a.path: {(f.line, f.col, f.rule) for f in a.findings if f.fixable} for a in report.files}
        assert {path: found for path, found in audited.items() if found} == {p: f for p, f in fixes.items() if f}


def test_a_literal_name_beside_variables_on_an_include_line_is_brought_into_the_run(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "settings.inc").write_text("NVCC := nvcc\n")  # not a Makefile by its name: found by the include
    (tmp_path / "app" / "Makefile").write_text("include ../settings.inc $(DEPS)\n-include $(OBJS:.o=.d)\n")
    assert discovery.included_makefiles([str(tmp_path / "app" / "Makefile")]) == [str(tmp_path / "settings.inc")]


def test_an_included_configuration_the_user_writes_from_a_template_is_ported_as_its_template(tmp_path: Path) -> None:
    """caffe: ``CONFIG_FILE := Makefile.config`` and ``include $(CONFIG_FILE)``; the project ships
    Makefile.config.example (CUDA_DIR, CUDA_ARCH's -gencode), which the user copies: it is ported in its place."""
    (tmp_path / "Makefile.config.example").write_text("CUDA_DIR := /usr/local/cuda\n")
    (tmp_path / "Makefile").write_text("CONFIG_FILE := Makefile.config\ninclude $(CONFIG_FILE)\ninclude $(OTHER)\n")
    assert discovery.included_makefiles([str(tmp_path / "Makefile")]) == [str(tmp_path / "Makefile.config.example")]
    (tmp_path / "Makefile.config").write_text("CUDA_DIR := /opt/cuda\n")  # the user's own, once written
    assert discovery.included_makefiles([str(tmp_path / "Makefile")]) == [str(tmp_path / "Makefile.config")]


def test_kept_scope_facts_that_are_malformed_are_a_miss() -> None:
    from buildport.pipeline.makefacts import _stored_scope

    members = [3, 7]
    assert _stored_scope([["NVCC", "CUDA_CC"], [], ["GPU_FLAGS"], False, ["CUDA_PATH"], [1]], members) == (
        MakeFacts({"NVCC", "CUDA_CC"}, set(), {"GPU_FLAGS"}, False, {"CUDA_PATH"}), {7})
    for stored in (None, [], [["NVCC"], [], [], False, []], [["NVCC"], [], [], False, [], [5]], [1, 2, 3, 4, 5, 6],
                   [["NVCC"], [], [], False, [1]], "x"):
        assert _stored_scope(stored, members) is None


def test_include_words_are_split_alike_with_and_without_references() -> None:
    assert include_targets("include a.mk  b.mk \\\r\ninclude c.mk\r\n") == ["a.mk", "b.mk", "c.mk"]
    assert include_targets("include a.mk $(X) \\\r\ninclude c.mk $(Y)\r\n") == ["a.mk", "$(X)", "c.mk", "$(Y)"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_makefile_audited_again_keeps_the_audit_with_its_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int,
) -> None:
    """config.mk is audited alone as it is found, then again with the Makefile that includes it: the second
    audit is what counts, even when it comes from the cache and the first is computed after it."""
    from buildport.audit import audit
    from buildport.cache.store import Cache
    from buildport.textio import read_source

    monkeypatch.setattr(pool, "MIN_ITEMS_PER_WORKER", 1)
    monkeypatch.setenv("BUILDPORT_REPLAY", "0")
    tree = tmp_path / "tree"
    for name in ("bar/config.mk", "bar/app/Makefile"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(SUITE[name])
    first = audit([str(tree)], cache=Cache(tmp_path / "cache"))
    config = str(tree / "bar/config.mk")
    alone = Cache.keys("audit-make", None)(config, read_source(config).digest)
    (tmp_path / "cache" / alone[:2] / f"{alone}.json").unlink()  # its audit alone is gone: computed again
    again = audit([str(tree)], jobs=jobs, cache=Cache(tmp_path / "cache"))
    found = {a.path: [(f.line, f.rule) for f in a.findings] for a in again.files}
    assert (2, "make-nvcc-flag") in found[config]
    assert found == {a.path: [(f.line, f.rule) for f in a.findings] for a in first.files}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(1, 9).flatmap(lambda n: st.lists(st.lists(st.integers(0, n - 1), max_size=3), min_size=n, max_size=n)))
def test_scopes_are_what_is_included_from_every_file_that_includes_this_one(includes: list[list[int]]) -> None:
    def reach(start: int, step: Callable[[int], list[int]]) -> set[int]:
        seen, pending = {start}, [start]
        while pending:
            for j in step(pending.pop()):
                if j not in seen:
                    seen.add(j)
                    pending.append(j)
        return seen

    def includers(j: int) -> list[int]:
        return [i for i, targets in enumerate(includes) if j in targets]

    for i, scope in enumerate(scopes(includes)):
        assert scope == {k for top in reach(i, includers) for k in reach(top, lambda x: includes[x])}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="include $(){}/\\\t\r\n#:=+?ab.mk-", max_size=80))
def test_include_words_never_hold_a_blank_outside_a_reference(text: str) -> None:
    for word in include_targets(text):
        assert word and "\n" not in word
        if "$" not in word and "(" not in word and "{" not in word:
            assert not any(blank in word for blank in " \t\r\\")


def test_nvccs_cuda_phase_is_reported_as_a_phase() -> None:
    """rodinia's nn runs ``$(CC) -cuda nn_cuda.cu``; hipcc rejects -cuda. nvcc's ``x.cu.cpp.ii`` carries the device
    code too, which clang's ``-E`` does not: a rule that compiles it further would fail, so it is reported."""
    result = port_make("CC := /usr/local/cuda/bin/nvcc\nnn: nn_cuda.cu\n\t$(CC) -cuda nn_cuda.cu\n", "Makefile")
    assert [(f.line, f.rule) for f in result.findings if f.rule == "nvcc-phase"] == [(3, "nvcc-phase")]
