"""``python -m triton_lint``."""

from triton_lint.cli import main

main()
