"""Project configuration: buildport.toml / [tool.buildport], options and user mapping rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from buildport import config as project_config
from buildport.engine import port_cmake, port_make
from buildport.rules import ruleset


@pytest.fixture()
def restore_tables() -> Iterator[None]:
    yield None
    ruleset.use(ruleset.BUILT_IN)


def test_pyproject_section_and_user_rows_take_precedence(tmp_path: Path, restore_tables: object) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.buildport]\noffload-arch = "gfx942"\njobs = 3\n'
        '[tool.buildport.libraries.cufoo]\ncmake-targets = ["CUDA::cufoo"]\nlink-names = ["cufoo"]\n'
        'rocm-package = "hipfoo"\nrocm-target = "roc::hipfoo"\nrocm-link = "hipfoo"\n'
        '[tool.buildport.libraries.cublas]\ncmake-targets = ["CUDA::cublas"]\nrocm-package = "rocblas"\n'
        'rocm-target = "roc::rocblas"\n'
        '[tool.buildport.flags]\n"--my-nvcc-switch" = ["-fmy-clang-switch"]\n'
    )
    config = project_config.load(tmp_path)
    assert config.options == {"offload-arch": "gfx942", "jobs": 3}
    ruleset.use(config.rules)
    out = port_cmake("target_link_libraries(a PRIVATE CUDA::cufoo CUDA::cublas)\n").text
    assert out == "target_link_libraries(a PRIVATE roc::hipfoo roc::rocblas)\n"
    made = port_make("NVCCFLAGS = -O2 --my-nvcc-switch\nLIBS = -lcufoo\n").text
    assert "NVCCFLAGS = -O2 -fmy-clang-switch\n" in made and "LIBS = -lhipfoo\n" in made
    (tmp_path / "buildport.toml").write_text(
        '[libraries.cufoo]\ncmake-targets = ["cuFOO::cufoo"]\nlink-names = ["cufoo"]\n'
        'rocm-package = "hipfoo"\nrocm-target = "roc::hipfoo"\nrocm-link = "hipfoo"\n')
    ruleset.use(project_config.load(tmp_path).rules)
    # the row alone: its target in a variable too, not only in a link command
    out = port_cmake("set(LIBS cuFOO::cufoo)\ntarget_link_libraries(a PRIVATE ${LIBS} cuFOO::cufoo)\n").text
    assert out == "set(LIBS roc::hipfoo)\ntarget_link_libraries(a PRIVATE ${LIBS} roc::hipfoo)\n"


def test_buildport_toml_wins_and_unknown_keys_are_errors(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.buildport]\njobs = 1\n")
    (tmp_path / "buildport.toml").write_text('rename-sources = "hip"\n')
    assert project_config.load(tmp_path).options == {"rename-sources": "hip"}
    (tmp_path / "buildport.toml").write_text("colour = true\n")
    with pytest.raises(project_config.ConfigError, match="unknown key 'colour'"):
        project_config.load(tmp_path)
    (tmp_path / "buildport.toml").write_text("jobs = \n")
    with pytest.raises(project_config.ConfigError, match="not valid TOML"):
        project_config.load(tmp_path)


def test_no_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert project_config.load(tmp_path).path is None


# --- checking every key and value -----------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ('jobs = "abc"\n', "jobs: expected a whole number of processes, 1 or more, got 'abc'"),
    ("jobs = 0\n", "jobs: expected a whole number"),
    ("jobs = true\n", "jobs: expected a whole number"),
    ("offload-arch = 5\n", "offload-arch: expected AMD targets: a string"),
    ('offload-arch = "sm_80"\n', "offload-arch: expected AMD targets such as gfx90a (NVIDIA's sm_80 or 80 have no "
                                 "meaning here), got 'sm_80'"),
    ('offload-arch = ["gfx90a", "80"]\n', "got '80'"),
    ('offload-arch = ""\n', "offload-arch: expected AMD targets such as gfx90a"),
    ('rename-sources = "yes"\n', "rename-sources: expected \"keep\" or \"hip\", got 'yes'"),
    ("hipify = 3\n", "hipify: expected the path or name of a hipify program"),
    ('[flags]\n"--my-switch" = "-fmy"\n', "flags.'--my-switch': expected a list of strings, got '-fmy'"),
    ("flags = 3\n", "flags: expected a table, got 3"),
    ('[libraries.cufoo]\nlink-name = ["cufoo"]\n', "libraries.cufoo: unknown key 'link-name'"),
    ('[libraries.cufoo]\nlink-names = "cufoo"\n', "libraries.cufoo.link-names: expected a list of strings"),
    ('[libraries.cufoo]\nlink-names = ["cufoo"]\nrocm-link = ["hipfoo"]\n', "libraries.cufoo.rocm-link: expected a string"),
    ('[libraries.cufoo]\nrocm-link = "hipfoo"\n', "libraries.cufoo: names no CUDA library"),
])
def test_every_key_and_value_is_checked(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "buildport.toml").write_text(text)
    with pytest.raises(project_config.ConfigError) as raised:
        project_config.load(tmp_path)
    assert str(raised.value).startswith(f"{tmp_path / 'buildport.toml'}: error: ")
    assert message in str(raised.value)


@pytest.mark.parametrize("text", ['offload-arch = "gfx90a;gfx1030"\n', 'offload-arch = ["gfx90a:xnack+"]\n',
                                  'rename-sources = "keep"\njobs = 2\nhipify = "hipify-perl"\n'])
def test_good_values_pass(tmp_path: Path, text: str) -> None:
    (tmp_path / "buildport.toml").write_text(text)
    assert project_config.load(tmp_path).options


def test_the_schema_names_the_keys_the_reader_knows() -> None:
    import json

    schema = json.loads((Path(project_config.__file__).parent / "schemas" / "config-v1.json").read_text())
    assert set(schema["properties"]) == project_config.OPTION_KEYS | project_config.TABLE_KEYS
    row = schema["properties"]["libraries"]["additionalProperties"]["properties"]
    assert set(row) == set(project_config.LIBRARY_LISTS + project_config.LIBRARY_STRINGS)
    assert schema["properties"]["rename-sources"]["enum"] == ["keep", "hip"]


# --- finding the file -----------------------------------------------------------------------------


def test_found_from_the_paths_upwards_to_the_project_root(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "gpu").mkdir(parents=True)
    (project / "buildport.toml").write_text("jobs = 2\n")
    (project / "src" / "gpu" / "Makefile").write_text("all:\n")
    assert project_config.find([str(project / "src" / "gpu" / "Makefile")]) == project / "buildport.toml"
    assert project_config.find([str(project / "src" / "gpu"), str(project / "src")]) == project / "buildport.toml"
    # a pyproject.toml without the table is no configuration; the nearest that has one is
    (project / "src" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert project_config.find([str(project / "src" / "gpu")]) == project / "buildport.toml"
    (project / "src" / "pyproject.toml").write_text("[tool.buildport]\njobs = 3\n")
    assert project_config.find([str(project / "src" / "gpu")]) == project / "src" / "pyproject.toml"


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "buildport.toml").write_text("jobs = 2\n")  # above the repository: another project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert project_config.find([str(repo / "sub")]) is None
    (repo / "buildport.toml").write_text("jobs = 4\n")
    assert project_config.find([str(repo / "sub")]) == repo / "buildport.toml"


def test_a_named_file_is_read_whatever_its_name(tmp_path: Path) -> None:
    (tmp_path / "ci.toml").write_text("[tool.buildport]\njobs = 2\n")
    assert project_config.read(tmp_path / "ci.toml").options == {"jobs": 2}
    (tmp_path / "buildport.toml").write_text("jobs = 3\n")
    assert project_config.read(tmp_path / "buildport.toml").options == {"jobs": 3}
    with pytest.raises(project_config.ConfigError, match="no such configuration file"):
        project_config.read(tmp_path / "missing.toml")
