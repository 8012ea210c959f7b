"""Project configuration: buildport.toml / [tool.buildport], options and user mapping rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildport import config as project_config
from buildport import prescan
from buildport.engine import port_cmake, port_make
from buildport.rules import flags as flag_rules
from buildport.rules import libraries as library_rules


@pytest.fixture()
def restore_tables() -> object:
    targets, links = dict(library_rules.BY_TARGET), dict(library_rules.BY_LINK_NAME)
    legacy, rocm = dict(library_rules.BY_LEGACY_VAR), dict(library_rules.BY_ROCM_TARGET)
    names = dict(flag_rules.BY_NAME)
    yield None
    for table, saved in ((library_rules.BY_TARGET, targets), (library_rules.BY_LINK_NAME, links),
                         (library_rules.BY_LEGACY_VAR, legacy), (library_rules.BY_ROCM_TARGET, rocm),
                         (flag_rules.BY_NAME, names)):
        table.clear()
        table.update(saved)  # type: ignore[attr-defined]
    prescan.tables_changed()


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
    project_config.install(config)
    out = port_cmake("target_link_libraries(a PRIVATE CUDA::cufoo CUDA::cublas)\n").text
    assert out == "target_link_libraries(a PRIVATE roc::hipfoo roc::rocblas)\n"
    made = port_make("NVCCFLAGS = -O2 --my-nvcc-switch\nLIBS = -lcufoo\n").text
    assert "NVCCFLAGS = -O2 -fmy-clang-switch\n" in made and "LIBS = -lhipfoo\n" in made


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
