"""A whole lint run: resolve files and per-file settings, lint each, collect results."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from triton_lint.cache import LintCache, entry_key
from triton_lint.config import Config, config_for_directory
from triton_lint.discovery import is_excluded, iter_python_files
from triton_lint.dynamic.dynamic_report import DynamicReport
from triton_lint.engine import FileResult, lint_bytes, lint_text
from triton_lint.finding import Finding
from triton_lint.fixes import FixError, FixOutcome, fix_text, fixable, write_fixed
from triton_lint.model.project import ProjectContext
from triton_lint.project.run import (
    MAX_PROJECT_FILES,
    extra_kernel_files,
    project_index,
    project_root,
    reads_hold,
    remember_reads,
    resolved_directory,
    resolved_file,
    route_findings,
)
from triton_lint.project.store import Store
from triton_lint.rules.base import Rule
from triton_lint.selection import Layer, expand, resolve, rules_for
from triton_lint.source import decode
from triton_lint.target import resolve_target
from triton_lint.workers import FileJob, default_jobs, lint_jobs


@dataclass
class RunOptions:
    """What the command line asked for; config files fill in the rest per file."""

    cli_layer: Layer = field(default_factory=Layer)
    config: Config | None = None  # --config FILE: used for every file
    isolated: bool = False  # --isolated: ignore every configuration file
    target_version: str | None = None
    fix: str | None = None  # "fix" (apply and write) or "diff" (compute, do not write)
    unsafe_fixes: bool = False  # also apply fixes marked unsafe
    jobs: int | None = None  # files linted in parallel (None: one per core)
    cache_dir: Path | None = None  # the results cache (None: no cache)


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    files: list[FileResult] = field(default_factory=list)
    #: Files `--fix`/`--diff` changed (or would change), with the text before and after.
    fixed: list[FixOutcome] = field(default_factory=list)
    #: With `--baseline`: findings hidden because the baseline has them, and baseline
    #: entries that no longer match any finding (fixed since the baseline was written).
    baselined: int = 0
    resolved_baseline: int = 0
    #: Stress matrix and timings of a dynamic run (None for static-only runs).
    dynamic: DynamicReport | None = None
    #: Files under a vendor-fork backend directory (`fork-backends`), where the rules that
    #: judge code against upstream Triton's API were skipped.
    fork_files: int = 0


class Runner:
    """Lints files with the rules each file's configuration selects."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self._rules_cache: dict[tuple[Config, str], list[Rule]] = {}
        self.result = RunResult()
        self.stdin = False
        #: Files found under a directory argument (the others were named one by one).
        self.directory_files: set[Path] = set()
        self._isolated: Config | None = None  # --isolated: one configuration for every file
        self._places: dict[tuple[str, str], tuple[Config, str | None, bool, str]] = {}

    def config_for(self, directory: Path) -> Config:
        if self.options.isolated:
            if self._isolated is None:
                self._isolated = Config(root=Path.cwd())
            return self._isolated
        if self.options.config is not None:
            return self.options.config
        return config_for_directory(directory.resolve())

    def rules_for_file(self, path: Path, relative: str, config: Config, fork: bool) -> list[Rule]:
        """The selected rules, less per-file ignores and, for vendor-fork code, the rules
        that judge code against upstream Triton (``relative``: the path from the config root)."""
        ignored: list[str] = []
        for pattern, codes in config.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path.name, pattern):
                ignored.extend(codes)
        key = (config, ",".join(sorted(ignored)), fork)
        if key not in self._rules_cache:
            layers = [
                Layer(config.select, config.extend_select, config.ignore),
                self.options.cli_layer,
            ]
            codes = resolve(layers) - expand(ignored)
            rules = rules_for(codes)
            if fork:
                rules = [rule for rule in rules if not rule.upstream_only]
            self._rules_cache[key] = rules
        return self._rules_cache[key]

    def collect(self, paths: list[Path]) -> list[Path]:
        files: list[Path] = []
        for path in paths:
            if path.is_dir():
                root_config = self.config_for(path)
                if path != Path(".") and is_excluded(path, root_config):
                    continue
                found = list(iter_python_files(path, self.config_for))
                self.directory_files.update(found)
                files.extend(found)
            elif path.exists() or path.is_symlink():
                files.append(path)  # explicit files are always linted (or say why not)
            else:
                self.result.unreadable.append((str(path), "No such file or directory"))
        return list(dict.fromkeys(files))

    def lint_files(self, files: list[Path]) -> None:
        """Lint ``files``: cached results where the cache has them, the rest in parallel.

        The project index (`triton_lint.project.index`) is built first over these files and,
        for files named one by one (pre-commit, an editor), the rest of their project: a
        kernel file's lint reads the launches and callers elsewhere, and a file that only
        launches kernels is checked by linting those kernels' files. Findings are reported
        only in the files asked for."""
        cache = LintCache(self.options.cache_dir) if self.options.cache_dir else None
        contents: dict[Path, bytes] = {}
        since_ns = time.time_ns()  # files written after this are not kept by signature
        for path in files:
            data = self.read(path)
            if data is not None:
                contents[path] = data
        store = (
            Store(cache.load_index(), load=cache.load_outlines, load_views=cache.load_views)
            if cache
            else None
        )
        index = project_index(contents, self.project_files(files, contents), store, since_ns)
        asked = {str(path) for path in contents}
        slots: list[tuple[FileJob | None, FileResult | None]] = []
        pending: list[FileJob] = []
        jobs = [(path, str(path), data) for path, data in contents.items()]
        jobs += extra_kernel_files(index, asked)
        for path, display, data in jobs:
            if not index.facts[display].kernels:
                slots.append((None, FileResult(display)))  # no kernel can be here
                continue
            job = self.job_for(path, display, data, index.context_for(display))
            result: FileResult | None = None
            if cache is not None and store is not None:
                hit = cache.get(_key(job))
                result = FileResult.from_cache(job.display, hit) if hit is not None else None
                if result is not None and not reads_hold(result.reads, job.project, store):
                    result = None  # a file it read has changed where it read it
            if result is None:
                pending.append(job)
            slots.append((job, result))
        linted = iter(lint_jobs(pending, self.options.jobs or default_jobs()))
        results: list[tuple[FileJob | None, FileResult]] = []
        for job, cached in slots:
            result = cached if cached is not None else next(linted)
            if job is not None and cached is None and cache is not None and not result.crashes:
                cache.put(_key(job), result.to_cache())
                if store is not None:
                    remember_reads(result.reads, job.project, store)
            results.append((job, result))
        by_display = {display: data for _, display, data in jobs}
        for _job, result in route_findings(results, asked):
            if result.findings:  # fingerprints read the source around findings
                result.text = _text(by_display[result.path])
            self.record(result)
        if cache is not None and store is not None:
            index.remember()
            if store.changed or len(store.used) != len(store.entries):
                cache.save_index(*store.kept(), store.new_views)
            cache.prune()

    def project_files(self, files: list[Path], contents: dict[Path, bytes]) -> list[Path]:
        """The other files of the project of each file named one by one: every Python file
        under its configuration root (at most `MAX_PROJECT_FILES`)."""
        roots = {
            project_root(path, self.config_for(path.parent).root)
            for path in files
            if path not in self.directory_files
        }
        found: list[Path] = []
        if not roots:
            return found
        known = {resolved_file(path) for path in contents}
        for root in sorted(roots):
            for path in iter_python_files(root, self.config_for):
                if len(found) >= MAX_PROJECT_FILES:
                    return found
                if resolved_file(path) not in known:
                    known.add(resolved_file(path))
                    found.append(path)
        return found

    def read(self, path: Path) -> bytes | None:
        """The file's bytes; None (and a line in ``unreadable``) for what cannot be read.

        Only regular files are opened: reading a named pipe or a device would block or never
        end.
        """
        try:
            status = os.stat(path)
            if not stat.S_ISREG(status.st_mode):
                self.result.unreadable.append((str(path), "not a regular file"))
                return None
            return _read_bytes(path, status.st_size)
        except OSError as error:
            self.result.unreadable.append((str(path), error.strerror or str(error)))
            return None

    def job_for(
        self, path: Path, display: str, data: bytes, project: ProjectContext | None = None
    ) -> FileJob:
        """The file's rules and target version, from its configuration."""
        rules, target = self.settings_for(path)
        return FileJob(display, data, tuple(rule.code for rule in rules), target, project)

    def settings_for(self, path: Path) -> tuple[list[Rule], str]:
        """The rules and the Triton version for one file (and count it if it is fork code)."""
        directory, name = os.path.split(path)
        place = self._places.get((os.getcwd(), directory))
        if place is None:
            place = self._place(path.parent)
            self._places[(os.getcwd(), directory)] = place
        config, base, fork, target = place
        if base is None:
            relative = path.as_posix()
            fork = is_fork_backend(relative, config.fork_backends)
        else:
            relative = f"{base}/{name}" if base else name
            fork = fork or is_fork_backend(name, config.fork_backends)
        self.result.fork_files += fork
        return self.rules_for_file(path, relative, config, fork), target

    def _place(self, directory: Path) -> tuple[Config, str | None, bool, str]:
        """What the files of one directory share: their configuration, the directory's path
        relative to its root (None outside it), whether it lies under a vendor-fork backend
        directory, and the target version (a warm run asks for thousands of files)."""
        config = self.config_for(directory)
        base = _relative_directory(os.getcwd(), os.fspath(directory), config.root)
        fork = base is not None and is_fork_backend(base, config.fork_backends)
        target = resolve_target(self.options.target_version or config.target_version)
        return config, base, fork, target

    def lint_path(self, path: Path) -> None:
        data = self.read(path)
        if data is not None:
            self.lint_data(path, str(path), data)

    def lint_data(self, path: Path, display: str, data: bytes) -> None:
        """Lint one file here, fixing it when asked (standard input, `--fix`, `--diff`)."""
        rules, target = self.settings_for(path)
        file_result = lint_bytes(display, data, rules, target)
        if self.options.fix and file_result.text is not None:
            self.fix_file(path, display, data, file_result, rules, target)
        file_result.model = None
        self.record(file_result)

    def record(self, file_result: FileResult) -> None:
        self.result.files_checked += 1
        self.result.files.append(file_result)
        self.result.findings.extend(file_result.findings)
        self.result.warnings.extend(file_result.warnings)
        self.result.crashes.extend(file_result.crashes)

    def fix_file(
        self,
        path: Path,
        display: str,
        data: bytes,
        file_result: FileResult,
        rules: list[Rule],
        target: str | None,
    ) -> None:
        """Fix one file in place of its findings (the findings left after fixing are kept)."""
        unsafe = self.options.unsafe_fixes
        if file_result.text is None or not fixable(file_result.findings, unsafe):
            return
        last: list[FileResult] = []

        def relint(text: str) -> list[Finding]:
            last.append(lint_text(display, text, rules, target))
            return last[-1].findings

        outcome, _ = fix_text(display, file_result.text, file_result.findings, relint, unsafe)
        self.result.warnings.extend(outcome.warnings)
        if not outcome.changed:
            return
        if self.options.fix == "fix":
            if self.stdin:  # never write over a file named by --stdin-filename
                return
            try:
                write_fixed(path, data, outcome.fixed)
            except (FixError, OSError) as error:
                self.result.warnings.append(str(error))
                return
        self.result.fixed.append(outcome)
        if self.options.fix == "fix" and last:
            final = last[-1]
            file_result.findings = final.findings
            file_result.text = final.text
            file_result.kernel_lines = final.kernel_lines
            file_result.warnings = final.warnings
            file_result.crashes.extend(final.crashes)


def fork_note(count: int) -> str:
    """Tells the user which rules were skipped on vendor-fork code, and how to keep them."""
    codes = ", ".join(rule.code for rule in rules_for(expand(["ALL"])) if rule.upstream_only)
    files = f"{count} file{'s' if count != 1 else ''}"
    return (
        f"{files} under vendor-fork backend directories (`fork-backends`) written for a "
        f"Triton fork: {codes} skipped there; set `fork-backends = []` to check them "
        "against upstream Triton"
    )


def is_fork_backend(relative: str, backends: tuple[str, ...]) -> bool:
    """A directory or the file name of the path (relative to the configuration root) names a
    vendor backend that ships its own Triton fork: ``backend/_ascend/``, ``triton_ascend.py``."""
    if not backends:
        return False
    wanted = set(backends)
    return any(wanted & _words(part) for part in relative.removesuffix(".py").split("/"))


@cache
def _words(part: str) -> frozenset[str]:
    """The words of one part of a path, split at ``_`` and ``-`` (once per distinct part)."""
    return frozenset(filter(None, re.split(r"[_\-]+", part.lower())))


@cache
def _relative_directory(cwd: str, directory: str, root: Path) -> str | None:
    """``directory`` (resolved from ``cwd``) relative to ``root``: "" for the root itself,
    None outside it."""
    try:
        relative = resolved_directory(cwd, directory).relative_to(root).as_posix()
    except ValueError:
        return None
    return "" if relative == "." else relative


def lint_paths(paths: list[Path], options: RunOptions) -> RunResult:
    runner = Runner(options)
    files = runner.collect(paths)
    if options.fix:
        for path in files:  # one file at a time: fixes rewrite files and re-lint them
            runner.lint_path(path)
    else:
        runner.lint_files(files)
    runner.result.findings.sort(key=Finding.sort_key)
    return runner.result


def _key(job: FileJob) -> str:
    project = job.project.digest() if job.project is not None else ""
    return entry_key(job.display, job.codes, job.target, job.data, project)


def _read_bytes(path: Path, size: int) -> bytes:
    """The file's bytes, read with the operating system's calls (a warm run reads thousands
    of files, and a buffered file object costs more than the read)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        chunks = []
        while chunk := os.read(descriptor, max(size + 1, 1 << 16)):  # grown since its stat
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _text(data: bytes) -> str | None:
    try:
        return decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def lint_stdin(display: str, options: RunOptions) -> RunResult:
    runner = Runner(options)
    runner.stdin = True
    runner.lint_data(Path(display), display, sys.stdin.buffer.read())
    runner.result.findings.sort(key=Finding.sort_key)
    return runner.result
