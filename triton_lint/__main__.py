"""``python -m triton_lint`` and the ``triton-lint`` console script (`entry`).

A warm pre-commit or editor run is short (a third of a second), so what the interpreter does
around it counts: the collector's passes over the objects the imports create (libcst builds
about 250 classes) and, at exit, the teardown that frees every module and object one by one
(a tenth of a run that lints one file). `entry` imports with the collector paused, freezes
what the imports made (never garbage, never scanned again), passes over the youngest objects
less often (`YOUNG_OBJECTS`), leaves the last linted file's
model to the exit (`workers.LAST_MODEL_LEFT_TO_EXIT`), and ends the process once its output
is flushed and exit handlers have run, without the teardown.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

#: Allocations between passes over the youngest objects (Python's default is 700): a warm run
#: decodes thousands of cache entries and index records, and passes every 700 objects cost
#: it a tenth of its time. Cycles are still collected, less often (workers forked on Linux
#: inherit the setting).
YOUNG_OBJECTS = 10_000


def entry() -> NoReturn:
    """Run the command line (`triton_lint.cli.main`), then exit without the teardown."""
    gc.disable()
    try:
        from triton_lint import workers
        from triton_lint.cli import main
    finally:
        gc.freeze()
        gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
        gc.enable()
    workers.LAST_MODEL_LEFT_TO_EXIT = True
    try:
        main()
        code: object = 0
    except SystemExit as exit_:
        code = exit_.code
    if threading.active_count() > 1:  # a thread the normal exit would join (the server's)
        sys.exit(code)
    os._exit(_flushed_exit_status(code))


def _flushed_exit_status(code: object) -> int:
    """What `sys.exit(code)` would end with, after the exit handlers and flushing output (a
    message for a code that is not a number goes to stderr; a closed pipe is exit 120, as
    Python reports a failed flush at exit)."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    status = code or 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    return status


if __name__ == "__main__":  # spawned worker processes import this module as __mp_main__
    entry()
