"""buildport: port the build system of a CUDA project to AMD ROCm/HIP."""

__version__ = "0.1.0.dev0"
