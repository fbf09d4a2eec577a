"""triton-lint: a static and dynamic linter for Triton GPU kernels."""

__version__ = "0.1.0"
