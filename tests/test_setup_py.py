"""The setup.py engine (:mod:`buildport.passes.setup_py`): inline before/after cases, look-alikes that
stay as they are, errors, and what ``migrate`` does with a PyTorch extension's setup.py and sources."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from buildport.cli.migrate import run_migration
from buildport.engine import port_setup_py
from buildport.options import Options
from buildport.passes.setup_py import extension_sources
from buildport.syntax.errors import ParseError

IMPORT = "from torch.utils.cpp_extension import CUDAExtension\n"
GFX90A = Options(("gfx90a",))


def ported(body: str, options: Options | None = None) -> str:
    return port_setup_py(IMPORT + body, "setup.py", options).text[len(IMPORT):]


def rules(body: str) -> list[str]:
    return [f.rule for f in port_setup_py(IMPORT + body, "setup.py").findings]


# (before, after): the call's lists and the names it uses, as the rewrite leaves them
CASES = [
    ('CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]})\n',
     'CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": ["-O3", "-ffast-math"]})\n'),
    ("CUDAExtension('e', ['e.cu'], extra_compile_args=dict(cxx=['-O2'], nvcc=['-G', '-O2']))\n",
     "CUDAExtension('e', ['e.cu'], extra_compile_args=dict(cxx=['-O2'], nvcc=['-g', '-O0', '-O2']))\n"),
    ('f = ["-Xptxas", "-v", "-O3"]\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n',
     'f = ["-O3"]\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n'),
    ('f = ["-O3", "--expt-relaxed-constexpr"]\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n',
     'f = ["-O3"]\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n'),
    ('f = []\nif x:\n    f.append("-lineinfo")\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n',
     'f = []\nif x:\n    f.append("-gline-tables-only")\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n'),
    ('f = []\nf.append("-G")\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n',
     'f = []\nf.extend(["-g", "-O0"])\nCUDAExtension("e", [], extra_compile_args={"nvcc": f})\n'),
    ('a = {"cxx": []}\na["nvcc"] = ["-rdc=true"]\nCUDAExtension("e", [], extra_compile_args=a)\n',
     'a = {"cxx": []}\na["nvcc"] = ["-fgpu-rdc"]\nCUDAExtension("e", [], extra_compile_args=a)\n'),
    ('CUDAExtension("e", [], libraries=["cufft", "cusparse"])\n',
     'CUDAExtension("e", [], libraries=["hipfft", "hipsparse"])\n'),
    ('load_inline("e", cpp, cuda, extra_cuda_cflags=["--use_fast_math"])\n',
     'load_inline("e", cpp, cuda, extra_cuda_cflags=["-ffast-math"])\n'),
    ('CUDAExtension("e", [], extra_compile_args={"nvcc": ["-arch=sm_80", "-arch=sm_90"]})\n',
     'CUDAExtension("e", [], extra_compile_args={"nvcc": []})\n'),
    ("CUDAExtension('e', [], extra_compile_args={'nvcc': [\n    '-O3',  # fast\n    '--expt-extended-lambda',\n]})\n",
     "CUDAExtension('e', [], extra_compile_args={'nvcc': [\n    '-O3',  # fast\n]})\n"),
]


@pytest.mark.parametrize("before, after", CASES)
def test_rewrite(before: str, after: str) -> None:
    assert ported(before) == after
    assert ported(after) == after, "a second run changes nothing"


def test_architectures_become_the_targets_named() -> None:
    body = 'CUDAExtension("e", [], extra_compile_args={"nvcc": ["-gencode", "arch=compute_80,code=sm_80"]})\n'
    assert ported(body, Options(("gfx90a", "gfx942"))) == (
        'CUDAExtension("e", [], extra_compile_args={"nvcc": ["--offload-arch=gfx90a", "--offload-arch=gfx942"]})\n')


# look-alikes: nothing changes, nothing is reported
NOOP = [
    'CUDAExtension("e", [], extra_compile_args={"cxx": ["-G", "--use_fast_math"]})\n',  # the host compiler's
    'CppExtension("e", [], libraries=["cublas"])\n',
    'Extension("e", [], extra_compile_args={"nvcc": ["--use_fast_math"]})\n',
    'flags = ["--use_fast_math"]\nprint(flags)\n',  # a list no extension uses
    'CUDAExtension("e", [], extra_compile_args={"nvcc": ["-O3", "-DWITH_CUDA", "-I/opt/include"]})\n',
]


@pytest.mark.parametrize("body", NOOP)
def test_lookalike_is_left_alone(body: str) -> None:
    result = port_setup_py(IMPORT + body, "setup.py")
    assert result.text == IMPORT + body and result.findings == []


def test_a_file_without_the_extension_module_is_not_read() -> None:
    text = 'from setuptools import setup\nnvcc = ["--use_fast_math"]\nsetup(ext_modules=[CUDAExtension(' \
           '"e", [], extra_compile_args={"nvcc": nvcc})])\n'
    result = port_setup_py(text, "setup.py")
    assert result.text == text and not result.findings and result.regions == []


def test_flags_it_cannot_read_are_left_and_reported() -> None:
    body = 'CUDAExtension("e", [], extra_compile_args={"nvcc": ["-gencode", f"arch=compute_{cc},code=sm_{cc}"]})\n'
    assert ported(body) == body
    assert rules(body) == ["setup-py-dynamic"]
    assert rules('CUDAExtension("e", [], extra_compile_args=make_args())\n') == ["setup-py-dynamic"]
    assert rules('def f(flags):\n    CUDAExtension("e", [], extra_compile_args={"nvcc": flags})\n') == [
        "setup-py-dynamic"]


def test_unknown_values_and_phases_are_the_flag_tables_findings() -> None:
    assert rules('CUDAExtension("e", [], extra_compile_args={"nvcc": ["-ptx"]})\n') == ["nvcc-phase"]


def test_crlf_layout_and_quotes_are_kept() -> None:
    text = (IMPORT + "f = ['-O3',\r\n     '--use_fast_math']  # tuned\r\n"
            "CUDAExtension('e', [], extra_compile_args={'nvcc': f})\r\n")
    new = port_setup_py(text, "setup.py").text
    assert new == text.replace("'--use_fast_math'", "'-ffast-math'")


def test_the_regions_say_where_the_texts_differ() -> None:
    text = IMPORT + 'x = 1\nCUDAExtension("e", [], libraries=["cublas"])\ny = 2\n'
    result = port_setup_py(text, "setup.py")
    [(start, end, new_start, new_end)] = result.regions or []
    assert text[start:end] == 'CUDAExtension("e", [], libraries=["cublas"])\n'
    assert result.text[new_start:new_end] == 'CUDAExtension("e", [], libraries=["hipblas"])\n'


def test_text_that_is_not_python_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as error:
        port_setup_py(IMPORT + "def f(:\n", "setup.py")
    assert error.value.line == 2


def test_the_sources_an_extension_names() -> None:
    text = IMPORT + 'CUDAExtension("e", ["a.cpp", "k.cu"])\nCUDAExtension(name="f", sources=[s, "g.cu"])\n'
    assert extension_sources(text, "setup.py") == ["a.cpp", "k.cu", "g.cu"]


def test_libcst_is_imported_only_for_a_file_that_uses_the_extension_module() -> None:
    code = ("import sys\nfrom buildport.engine import port_cmake, port_setup_py\n"
            "port_cmake('project(p CUDA)\\nadd_executable(a a.cu)\\n')\n"
            "port_setup_py('from setuptools import setup\\nsetup()\\n')\n"
            "print('libcst' in sys.modules)\n"
            "port_setup_py('from torch.utils.cpp_extension import CUDAExtension\\n')\n"
            "print('libcst' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="ops",
    ext_modules=[CUDAExtension("ops", ["ops.cpp", "kernel.cu"],
                               extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]},
                               libraries=["cublas"])],
    cmdclass={"build_ext": BuildExtension},
)
"""
KERNEL = "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def test_migrate_ports_the_setup_py_and_leaves_the_extension_sources_to_pytorch(tmp_path: Path) -> None:
    root = tmp_path / "ext"
    root.mkdir()
    (root / "setup.py").write_text(SETUP)
    (root / "kernel.cu").write_text(KERNEL)
    (root / "ops.cpp").write_text("#include <torch/extension.h>\n")
    engine = tmp_path / "hipify-perl"
    engine.write_text("#!/bin/sh\necho should-not-run >&2\nexit 1\n")
    engine.chmod(0o755)
    code = run_migration(str(root), None, True, True, False, (), str(engine), "keep", 1, True, False,
                         ask=frozenset())
    assert code == 0
    assert (root / "setup.py").read_text() == SETUP.replace('"--use_fast_math"', '"-ffast-math"').replace(
        '"cublas"', '"hipblas"')
    assert (root / "kernel.cu").read_text() == KERNEL
    report = json.loads((root / "migration.json").read_text())
    schema = json.loads((Path(__file__).parents[1] / "buildport" / "schemas" / "migration-v1.json").read_text())
    jsonschema.validate(report, schema)
    assert [c["kind"] for c in report["changed"]] == ["python"]
    assert report["extension_sources"] == ["kernel.cu"] and report["unreferenced"] == []
    assert report["build_commands"] == ["pip install --no-build-isolation ."]
    assert "CUDA sources of PyTorch extensions" in (root / "MIGRATION.md").read_text()


def test_the_python_command_prints_checks_and_rewrites(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from buildport.cli import main

    (tmp_path / "setup.py").write_text(SETUP)
    runner = CliRunner()
    checked = runner.invoke(main, ["python", "--check", "--no-cache", str(tmp_path)])
    assert checked.exit_code == 1
    diff = runner.invoke(main, ["python", "--diff", "--no-cache", str(tmp_path)])
    assert diff.exit_code == 0 and '+                               extra_compile_args={"nvcc": ["-O3", "-ffast-math"]},' \
        in diff.output
    written = runner.invoke(main, ["python", "--in-place", "--no-cache", str(tmp_path)])
    assert written.exit_code == 0 and '"hipblas"' in (tmp_path / "setup.py").read_text()
    assert runner.invoke(main, ["python", "--check", "--no-cache", str(tmp_path)]).exit_code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    none = runner.invoke(main, ["python", "--no-cache", str(empty)])
    assert none.exit_code == 0 and "no setup.py files found" in none.output


def test_two_extensions_that_share_their_arguments_are_read_once() -> None:
    body = ('args = {"nvcc": ["--use_fast_math"]}\nCUDAExtension("a", [], extra_compile_args=args)\n'
            'CUDAExtension("b", [], extra_compile_args=args)\n')
    assert rules(body) == ["setup-py-nvcc-flag"]
    assert ported(body) == body.replace("--use_fast_math", "-ffast-math")


@pytest.mark.parametrize("like", ['"a"', "'a'", 'r"a"', "u'a'"])
@pytest.mark.parametrize("word", ["-ffast-math", "a\\b", 'x"y', "x'y"])
def test_a_new_string_has_the_quotes_of_the_old_and_the_word_as_its_value(like: str, word: str) -> None:
    import libcst

    from buildport.passes.setup_py_lists import string

    made = string(word, libcst.SimpleString(like))
    assert made.evaluated_value == word and made.quote == like[-1]
