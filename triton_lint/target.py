"""Which Triton version the code is checked against.

Order: ``--target-version``, then ``target-version`` in the configuration, then the installed
triton's version read from package metadata (never by importing triton), then the newest
version triton-lint knows.
"""

from __future__ import annotations

import re
from functools import cache

from triton_lint.api import available_versions, installed_triton_version

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")


class TargetVersionError(ValueError):
    """A target version that is not ``MAJOR.MINOR[.PATCH]``."""


def minor(version: str) -> tuple[int, int]:
    match = _VERSION.match(version)
    if match is None:
        raise TargetVersionError(f"invalid Triton version `{version}` (expected e.g. 3.3)")
    return int(match.group(1)), int(match.group(2))


@cache  # reading package metadata scans sys.path: once per run, not once per file
def resolve_target(explicit: str | None) -> str:
    """The ``MAJOR.MINOR`` to check against."""
    candidate = explicit or installed_triton_version() or available_versions()[-1]
    major, minor_number = minor(candidate)
    return f"{major}.{minor_number}"
