"""``python -m triton_lint``."""

from triton_lint.cli import main

if __name__ == "__main__":  # spawned worker processes import this module as __mp_main__
    main()
