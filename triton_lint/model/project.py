"""What a kernel file's lint knows of the rest of the project: the files that launch its kernels
or call the functions that do, and how each refers to them. Built by `triton_lint.project.index`
(a pass over the stdlib's trees of the project), read by `triton_lint.model.foreign`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

#: A function of the project: (display path of its file, qualified name in it: ``op``,
#: ``Attention.forward``).
FunctionKey = tuple[str, str]


@dataclass(frozen=True)
class ProjectContext:
    """The project facts one kernel file's lint may read (picklable: it travels to workers)."""

    #: Display path -> content of every other file these facts come from.
    sources: dict[str, bytes] = field(default_factory=dict)
    #: Launching file -> the dotted names it launches this file's kernels by
    #: (``K.add_kernel``, ``kern``) -> the kernel's name here.
    kernel_refs: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Launching file -> the dotted names it calls a dispatch helper of this file by
    #: (``K.pick``) -> the helper's name here (it returns this file's kernels).
    dispatch_refs: dict[str, dict[str, str]] = field(default_factory=dict)
    #: A function -> every file that calls it -> the dotted names the calls use there.
    callers: dict[FunctionKey, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    #: Functions called from more places than the index follows: their callers are unknown.
    unbounded: frozenset[FunctionKey] = frozenset()
    #: Display path -> the names every kernel file's facts look up in it (launches and calls):
    #: the part of the file parsed (`triton_lint.model.host_text`), the same for every kernel
    #: file so that one parse serves them all. It decides what is parsed, not what is found
    #: (each lint looks up only its own names).
    host_names: dict[str, frozenset[str]] = field(default_factory=dict)
    #: This file's kernels (as the index reads them) whose names no other file of the project
    #: writes: elsewhere a launch the index does not follow (``k = kern[grid]; k(...)``, a
    #: table of kernels) could hide, here none can.
    unreferenced: frozenset[str] = frozenset()
    #: This file's kernels whose every mention in the other files is an import of it or a
    #: launch the index resolved to it -> the number of those launches
    #: (`triton_lint.project.launch_census`): no launch hides elsewhere.
    launch_counts: dict[str, int] = field(default_factory=dict)
    #: `digest`, once computed (or read back with a saved context: `project.snapshot`);
    #: not copied by `dataclasses.replace`, whose copy has other facts
    known_digest: str = field(default="", init=False, repr=False, compare=False)

    def digest(self) -> str:
        """Changes when these facts' shape changes: which files they come from, the names they
        are found by, the callers followed, the part of each file parsed. Not the files'
        content: a lint records the digest of what it read of each (`FileResult.reads`), and
        the results cache checks those against the files as they are now."""
        if not self.known_digest:
            object.__setattr__(self, "known_digest", self._digest())
        return self.known_digest

    def _digest(self) -> str:
        hasher = hashlib.blake2b(digest_size=16)
        hasher.update("\0".join(sorted(self.sources)).encode())
        hasher.update(repr(sorted(self.kernel_refs.items())).encode())
        hasher.update(repr(sorted(self.dispatch_refs.items())).encode())
        hasher.update(
            repr(sorted((k, sorted(v.items())) for k, v in self.callers.items())).encode()
        )
        hasher.update(repr(sorted(self.unbounded)).encode())
        hasher.update(repr(sorted((k, sorted(v)) for k, v in self.host_names.items())).encode())
        hasher.update(repr(sorted(self.unreferenced)).encode())
        hasher.update(repr(sorted(self.launch_counts.items())).encode())
        return hasher.hexdigest()

    def __bool__(self) -> bool:
        return bool(self.kernel_refs or self.dispatch_refs or self.callers)
