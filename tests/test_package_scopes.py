"""Where the ROCm packages a CMake file links are found: buildport.passes.package_scopes and a whole run."""

from __future__ import annotations

from pathlib import Path

from buildport.options import Options
from buildport.passes.package_scopes import extra_packages
from buildport.pipeline.port import port_files


def _extra(files: dict[str, tuple[set[str], bool]]) -> dict[str, tuple[str, ...]]:
    names = list(files)
    found = extra_packages(["/p/" + n for n in names], [files[n][0] for n in names], [files[n][1] for n in names])
    return {name: found.get(i, ()) for i, name in enumerate(names)}


def test_separate_projects_keep_their_packages() -> None:
    """cuda-samples: every sample finds CUDA itself, and so finds only what it links."""
    got = _extra({
        "CMakeLists.txt": (set(), True),
        "Samples/CMakeLists.txt": (set(), False),
        "Samples/vectorAdd/CMakeLists.txt": (set(), True),
        "Samples/blasSample/CMakeLists.txt": ({"hipblas"}, True),
        "Samples/randSample/CMakeLists.txt": ({"hiprand"}, True),
    })  # fmt: skip
    assert set(got.values()) == {()}


def test_a_library_folder_hands_its_packages_to_the_nearest_finder_above() -> None:
    got = _extra({
        "CMakeLists.txt": (set(), True),
        "src/CMakeLists.txt": (set(), True),
        "src/lib/CMakeLists.txt": ({"hiprand"}, False),
        "tools/CMakeLists.txt": ({"hipfft", "hip"}, False),
    })  # fmt: skip
    assert got == {
        "CMakeLists.txt": ("hipfft",), "src/CMakeLists.txt": ("hiprand",),
        "src/lib/CMakeLists.txt": (), "tools/CMakeLists.txt": (),
    }  # fmt: skip


def test_a_module_counts_as_in_the_folder_of_the_nearest_cmakelists_above() -> None:
    """cmake/deps.cmake, included by the top CMakeLists.txt, finds CUDA for the whole project."""
    got = _extra({
        "CMakeLists.txt": (set(), False),
        "cmake/deps.cmake": (set(), True),
        "src/CMakeLists.txt": ({"hipblas"}, False),
    })  # fmt: skip
    assert got["cmake/deps.cmake"] == ("hipblas",)


def test_a_module_with_no_finder_above_hands_its_packages_to_every_finder() -> None:
    """A module may be included from anywhere; a CMakeLists.txt with no finder above is in no finder's scope."""
    got = _extra({
        "a/CMakeLists.txt": (set(), True),
        "b/CMakeLists.txt": ({"hipsparse"}, True),
        "c/CMakeLists.txt": ({"hipblas"}, False),
        "modules/FindThing.cmake": ({"hipfft"}, False),
    })  # fmt: skip
    assert got == {"a/CMakeLists.txt": ("hipfft",), "b/CMakeLists.txt": ("hipfft",), "c/CMakeLists.txt": (),
                   "modules/FindThing.cmake": ()}


def test_a_sample_that_links_nothing_requires_no_package_its_neighbour_links(tmp_path: Path) -> None:
    """The whole run, as `buildport cmake DIR` and migrate port a tree of separate projects: before,
    every find_package(CUDAToolkit) of the run got every package any file linked, so vectorAdd of
    cuda-samples required hipBLAS (not installed: its configure failed) because another sample links
    cuBLAS."""
    files = {
        "CMakeLists.txt": "project(all LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"
                          "add_subdirectory(vectorAdd)\nadd_subdirectory(gemm)\n",
        "vectorAdd/CMakeLists.txt": "project(vectorAdd LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"
                                    "add_executable(vectorAdd vectorAdd.cu)\n",
        "gemm/CMakeLists.txt": "project(gemm LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"
                               "add_executable(gemm gemm.cu)\ntarget_link_libraries(gemm CUDA::cublas)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run = port_files([str(tmp_path / name) for name in files], Options())
    texts = dict(zip(files, (o.result.text for o in run.outcomes if o.result is not None)))
    assert "hipblas" not in texts["CMakeLists.txt"] and "hipblas" not in texts["vectorAdd/CMakeLists.txt"]
    assert "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)\n" in texts["gemm/CMakeLists.txt"]


def test_the_samples_fixture_finds_each_package_in_the_sample_that_links_it() -> None:
    """fixtures/migrate/cmake-samples (built end to end by tests/e2e): only randomFill finds hipRAND."""
    root = Path(__file__).resolve().parents[1] / "fixtures" / "migrate" / "cmake-samples"
    files = sorted(str(p) for p in root.rglob("CMakeLists.txt"))
    run = port_files(files, Options())
    texts = {str(Path(o.path).relative_to(root)): o.result.text for o in run.outcomes if o.result is not None}
    finders = {name for name, text in texts.items() if "find_package(hip REQUIRED)" in text}
    assert finders == {"CMakeLists.txt", *(f"Samples/{s}/CMakeLists.txt"
                                           for s in ("vectorAdd", "mergeHost", "randomFill", "moduleBuild"))}
    assert [name for name, text in texts.items() if "hiprand" in text] == ["Samples/randomFill/CMakeLists.txt"]
