"""What a kernel file's lint read of another file of the project, as a digest: the results
cache keeps it with the kernel file's entry and re-lints that file only when the digest of the
other file's current content differs (`triton_lint.project.run.reads_hold`).

A lint reads another file through its relevant text (`triton_lint.model.host_text`): the
kept statements, the names of the functions and classes made blank, and its ``noqa`` lines
(a finding at a launch there obeys that file's suppressions). Editing a function the lint
made blank, or a comment outside the kept statements, leaves the digest as it was. A lint that
read more of the file (an autograd helper parsed from the whole file, a file that does not
decode) depends on all of it: its digest is the content's (`WHOLE`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache

from triton_lint.model.host_text import relevant_text
from triton_lint.source import decode

#: The prefix of the digest of a read that depends on every byte of the file.
WHOLE = "whole:"


def whole_digest(data: bytes) -> str:
    return WHOLE + hashlib.blake2b(data, digest_size=16).hexdigest()


def host_digest(text: str, relevant: str, blank: Iterable[str]) -> str:
    """The digest of the relevant text ``relevant`` of ``text`` and the names it made blank.
    Blank lines at its end are left out: a statement added after the last kept one and made
    blank moves nothing the lint read."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(relevant.rstrip().encode("utf-8", "surrogatepass"))
    hasher.update(("\0" + "\0".join(sorted(blank))).encode())
    if "noqa" in text.lower():  # every suppression directive says `noqa`
        for number, line in enumerate(text.splitlines(), start=1):
            if "noqa" in line.lower():
                hasher.update(f"\0{number}:{line}".encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def read_digest(data: bytes, names: frozenset[str]) -> str:
    """The digest a lint that parsed the part of ``data`` naming ``names`` recorded."""
    try:
        text = decode(data)
    except (SyntaxError, UnicodeError, LookupError):
        return whole_digest(data)
    return relevant_read(text, names)[2]


@lru_cache(maxsize=8)
def relevant_read(text: str, names: frozenset[str]) -> tuple[str, frozenset[str], str]:
    """The relevant text of ``text`` for ``names``, the names it made blank and the digest of
    that read: computed once in a process that checks a cached result's read of a file and
    then lints with it (a warm run after an edit of a launching file)."""
    relevant, blank = relevant_text(text, names)
    return relevant, frozenset(blank), host_digest(text, relevant, blank)
