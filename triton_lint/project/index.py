"""The project index: kernels by module, every launch of them wherever it is, and the callers of
the functions that launch them. It reads files' outlines line by line
(`triton_lint.project.outline`), not syntax trees: a kernel file's lint parses it with libcst
anyway, and the index must not parse it a second time.

Which files are read:

1. files that may define kernels (the engine's prefilter): their top-level ``@jit`` functions;
2. files that write one of those kernels' names: the launches (``name[`` or ``name)[``),
   resolved through imports (``from .kernels import kern``, ``import pkg.kernels as K``,
   relative imports, re-exports through a package's ``__init__``); module names follow the
   packages (``__init__.py``) above a file, so a ``src/`` layout needs nothing more;
3. files that write a launching function's name: the calls of it (``name(``), then the calls
   of those callers, up to `MAX_DEPTH` levels.

Files that mention ``triton`` (a bytes search) are read as above. A file that never names
Triton is read only when its import statements name a module or function the index follows
(a kernel file, a launching or calling function's file, one of those functions through a
package's ``__init__``), or when a name is resolved through it (a re-exporting ``__init__``):
`triton_lint.project.dormant` finds those statements in its bytes without outlining it.

The work is bounded: `MAX_DEPTH` levels of callers, and a function called from more than
`MAXCALLS` places gets no caller facts at all (`ProjectContext.unbounded`): a helper called
everywhere says nothing about any one launch. A name the index cannot resolve is left out, so
what is unknown stays unknown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TypeGuard

from triton_lint.model.callers import MAX_DEPTH
from triton_lint.model.host_text import wanted_names
from triton_lint.model.project import FunctionKey, ProjectContext
from triton_lint.project.autograd_apply import apply_calls, called_as
from triton_lint.project.caller_tree import UNSEARCHED, followed_callers
from triton_lint.project.dormant import Wanted
from triton_lint.project.indexed_files import IndexedFiles
from triton_lint.project.launch_census import LAUNCH, with_census
from triton_lint.project.project_file import ProjectFile

MAXCALLS = 8
CALL = r"\s*\("
LINE_END = r"[ \t]*(?:#[^\n]*)?(?:\r?\n|$)"  # `return kern`: a dispatch helper's return


class ProjectIndex(IndexedFiles):
    """Kernels, launches and callers across the files of one run."""

    def _read(self) -> None:
        """Find the kernels, their launches and the callers (`IndexedFiles` asks it once)."""
        #: kernel file display -> launching file display -> dotted name -> kernel name
        self.kernel_refs: dict[str, dict[str, dict[str, str]]] = {}
        #: kernel file display -> calling file display -> dotted name -> dispatch helper
        self.dispatch_refs: dict[str, dict[str, dict[str, str]]] = {}
        #: launching functions of each kernel file
        self.launchers: dict[str, set[FunctionKey]] = {}
        self.callers: dict[FunctionKey, dict[str, set[str]]] = {}
        self.unbounded: set[FunctionKey] = set()
        #: a function -> the functions that call it
        self.calling: dict[FunctionKey, set[FunctionKey]] = {}
        self._contexts: dict[str, ProjectContext | None] = {}
        self._build()

    # -- building --------------------------------------------------------------------------
    def _build(self) -> None:
        facts = self.facts
        kernel_files = [
            f
            for f in self.files.values()
            if (self.only is None or f.display in self.only)
            and facts[f.display].kernels
            and f.may_define()
            and f.parse()
            and f.kernels
        ]
        if not kernel_files:
            return
        names = {name for f in kernel_files for name in f.kernels}
        wanted: Wanted = {}
        for kernel_file in kernel_files:
            wanted.setdefault(kernel_file.module, set()).update(kernel_file.kernels)
        self._admit(wanted)
        helpers: list[tuple[ProjectFile, str]] = []  # dispatch helpers of the kernels' files
        for entry in self._pass(names):
            if entry.written(names):  # a launch, or an import under another name
                self._record_launches(entry, names, helpers)
        self._record_dispatch_calls(helpers)
        frontier = {key for keys in self.launchers.values() for key in keys}
        seen = set(frontier)
        for _ in range(MAX_DEPTH):
            wanted = {}
            for path, function in frontier:  # a method's callers are its class's methods
                for name in called_as(path, self.files, function):  # but `C.apply(` is `forward`
                    wanted.setdefault(self.files[path].module, set()).add(name.split(".")[0])
            self._admit(wanted)
            frontier = self._record_callers(frontier) - seen
            seen |= frontier

    def _record_launches(
        self, entry: ProjectFile, names: set[str], helpers: list[tuple[ProjectFile, str]]
    ) -> None:
        entry.parse()
        aliases = {n for n, target in entry.imports.items() if target.split(".")[-1] in names}
        for function, dotted in entry.uses(names, LAUNCH, aliases):
            target = self.locate_in(entry, dotted)
            if not self._followed(target):
                continue
            kernel_file, kernel = target
            self.launchers.setdefault(kernel_file.display, set())
            if function:
                self.launchers[kernel_file.display].add((entry.display, function))
            if entry is not kernel_file:
                refs = self.kernel_refs.setdefault(kernel_file.display, {})
                refs.setdefault(entry.display, {})[dotted] = kernel
        self._record_dispatch(entry, names, aliases, helpers)

    def _record_dispatch(
        self,
        entry: ProjectFile,
        names: set[str],
        aliases: set[str],
        helpers: list[tuple[ProjectFile, str]],
    ) -> None:
        """A top-level function of ``entry`` that returns a kernel (a dispatch helper): the
        functions of the same file that call it launch what it returns; a helper of the
        kernels' own file joins ``helpers``, whose callers elsewhere launch them too."""
        for helper, dotted in entry.uses(names, LINE_END, aliases):
            target = self.locate_in(entry, dotted)
            if not helper or "." in helper or not self._followed(target):
                continue
            kernel_file, kernel = target
            launching = {scope for scope, name in entry.uses({helper}, CALL) if name == helper}
            launching -= {"", helper}  # its own `def` line, a recursive call
            launchers = self.launchers.setdefault(kernel_file.display, set())
            launchers.update((entry.display, function) for function in launching)
            if entry is kernel_file:
                helpers.append((entry, helper))
            elif launching:
                refs = self.kernel_refs.setdefault(kernel_file.display, {})
                refs.setdefault(entry.display, {})[dotted] = kernel

    def _followed(
        self, target: tuple[ProjectFile, str] | None
    ) -> TypeGuard[tuple[ProjectFile, str]]:
        """Whether ``target`` is a kernel of a kernel file this index follows."""
        if target is None or target[1] not in target[0].kernels:
            return False
        return self.only is None or target[0].display in self.only

    def _record_dispatch_calls(self, helpers: list[tuple[ProjectFile, str]]) -> None:
        """The functions of other files that call a dispatch helper of the kernels' file
        (one pass over the files for every helper of the project)."""
        files_of: dict[str, list[ProjectFile]] = {}
        for kernel_file, helper in helpers:
            files_of.setdefault(helper, []).append(kernel_file)
        names = set(files_of)
        files = self._pass(names)
        for entry in files if names else ():
            for helper in sorted(entry.written(names)):
                entry.parse()
                aliases = {n for n, t in entry.imports.items() if t.split(".")[-1] == helper}
                for kernel_file in files_of[helper]:
                    if entry is not kernel_file:
                        self._record_dispatch_call(entry, kernel_file, helper, aliases)

    def _record_dispatch_call(
        self, entry: ProjectFile, kernel_file: ProjectFile, helper: str, aliases: set[str]
    ) -> None:
        """The functions of ``entry`` that call ``kernel_file``'s ``helper`` launch what it
        returns (a call of another file's helper of that name is not one)."""
        for caller, dotted in entry.uses({helper}, CALL, aliases):
            if caller and self._function_key(entry, dotted, caller) == (
                kernel_file.display,
                helper,
            ):
                self.launchers[kernel_file.display].add((entry.display, caller))
                refs = self.dispatch_refs.setdefault(kernel_file.display, {})
                refs.setdefault(entry.display, {})[dotted] = helper

    def _record_callers(self, functions: set[FunctionKey]) -> set[FunctionKey]:
        """Record who calls ``functions``; the calling functions, to follow next."""
        through = apply_calls(functions, self.files)  # `C.apply(`: `C.forward`'s callers
        wanted = _searched([*functions, *through], through)
        owners = {  # `C.apply(`: a call of another class's `apply` is not one
            short: frozenset(key[1].rsplit(".", 1)[0] for key in keys if "." in key[1])
            for short, keys in wanted.items()
            if short in UNSEARCHED
        }
        files = self._pass(set(wanted), owners)
        if not wanted:
            return set()
        found: set[FunctionKey] = set()
        counts: dict[FunctionKey, int] = {}
        names = set(wanted)
        for entry in files:
            if not entry.written(names):
                continue
            entry.parse()
            aliases = {n for n, t in entry.imports.items() if t.split(".")[-1] in names}
            located: dict[str, FunctionKey | None] = {}  # a name used in many functions
            for caller, dotted in set(entry.uses(names, CALL, aliases)):
                if dotted.startswith("self.") and "." in caller:
                    key = self._function_key(entry, dotted, caller)
                else:  # found once: what resolution wakes serves the next ones alike
                    if dotted not in located:
                        located[dotted] = self._function_key(entry, dotted, caller)
                    key = located[dotted]
                short = key[1].rsplit(".", 1)[-1] if key is not None else ""
                if (
                    key is None
                    or key not in wanted.get(short, ())
                    or (entry.display, caller) == key
                ):
                    continue
                key = through.get(key, key)
                counts[key] = counts.get(key, 0) + 1
                self.callers.setdefault(key, {}).setdefault(entry.display, set()).add(dotted)
                if caller:
                    found.add((entry.display, caller))
                    self.calling.setdefault(key, set()).add((entry.display, caller))
        self.unbounded |= {key for key, count in counts.items() if count > MAXCALLS}
        return found

    # -- the facts of one kernel file --------------------------------------------------------
    def kernel_files(self) -> list[str]:
        """Files whose kernels are launched somewhere in the project."""
        return sorted(set(self.kernel_refs) | set(self.launchers) | set(self.dispatch_refs))

    def context_for(self, display: str) -> ProjectContext | None:
        """What linting the kernel file ``display`` reads of the rest of the project: empty
        of launches when the index read the file and found none of its kernels launched (a
        rule may say so), None when the index never read it (nothing is known)."""
        if not self._contexts:
            bare = {path: followed_callers(self, path) for path in self.kernel_files()}
            wanted: dict[str, set[str]] = {}
            for context in bare.values():
                for path in context.sources if context is not None else ():
                    wanted.setdefault(path, set()).update(wanted_names(context, path))
            for path, context in bare.items():
                if context is not None:
                    names = {p: frozenset(wanted[p]) for p in context.sources}
                    context = dataclasses.replace(context, host_names=names)
                self._contexts[path] = context
        context = self._contexts.get(display)
        if context is None and display in self.files:
            context = ProjectContext()
        if context is None:
            return None
        return with_census(self, display, context)

    def dependents(self, display: str) -> set[str]:
        """Kernel files whose lint reads ``display`` (an editor re-lints them on save)."""
        found = set()
        for kernel_file in self.kernel_files():
            context = self.context_for(kernel_file)
            if context is not None and display in context.sources:
                found.add(kernel_file)
        return found


def _searched(
    functions: Iterable[FunctionKey], through: dict[FunctionKey, FunctionKey]
) -> dict[str, set[FunctionKey]]:
    """The functions whose calls are searched, by the last component of their names: not a
    nested one, nor one named too commonly unless it is ``C.apply`` of an autograd function."""
    wanted: dict[str, set[FunctionKey]] = {}
    for key in functions:
        short = key[1].rsplit(".", 1)[-1]
        if "<" not in key[1] and (short not in UNSEARCHED or key in through):
            wanted.setdefault(short, set()).add(key)
    return wanted
