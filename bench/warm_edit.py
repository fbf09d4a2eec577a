"""Warm-cache runs after one edit, as pre-commit and editors meet them: CPU time of
`triton-lint check` over a copy of a package whose results cache is filled, after

- nothing changed;
- a statement added inside the function of a launching file that launches another file's
  kernels (a realistic edit: that kernel file is linted again, its findings read the launch);
- a statement put in front of one in a function of the same file that no kernel file's
  lint reads, on the same line (nothing is linted again: `FileResult.reads`; a line added
  there would move the launches below it, and their findings' lines, so it re-lints);
- a function that calls the launching function appended to its file (the edit changes what
  the project index read, `triton_lint/project/views.py`: it is brought up to date for the
  kernel files the edit reaches, `triton_lint/project/incremental.py`).

    python bench/warm_edit.py PACKAGE_DIR [--file SUBSTRING] [--rounds 5]

CPU time is user + system of the process tree (`os.wait4`), with bytecode written once first
(as an installed package has it); rounds alternate the three cases.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def launching_file(root: Path, wanted: str = "") -> tuple[Path, str, Path]:
    """A launching file under ``root`` that defines no kernel (whose path contains
    ``wanted``), a pattern of its launches of another file's kernels, and that kernel file."""
    from triton_lint.project.index import ProjectIndex

    files = [(str(p), p, p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    index = ProjectIndex(files)
    for kernel_file, refs in sorted(index.kernel_refs.items()):
        for launching, names in sorted(refs.items()):
            if wanted not in launching or index.files[launching].kernels:
                continue  # a file with kernels of its own is linted again when edited
            alternatives = "|".join(re.escape(name) for name in sorted(names))
            text = Path(launching).read_text()
            for pattern in (  # the launch, else the kernel named (bound to a local first)
                rf"(?<![\w.])(?:{alternatives})\s*\)?\s*\[",
                rf"(?<![\w.])(?:{alternatives})\b(?!\s*,)",
            ):
                match = re.search(pattern, text)
                if match is not None and _inside_function(text, match.start()):
                    return Path(launching), pattern, Path(kernel_file)
    raise SystemExit(f"no file launching another file's kernels under {root}")


def launch_line(path: Path, pattern: str) -> int:
    """The first line of the statement holding the file's first launch matching ``pattern``."""
    text = path.read_text()
    match = re.search(pattern, text)
    assert match is not None
    return _statement_line(text, text.count("\n", 0, match.start()) + 1)


def unread_function(root: Path, launching: Path, kernel_file: Path) -> str | None:
    """A top-level function of ``launching`` that the kernel file's lint leaves out of the
    part it parses (`triton_lint.model.host_text`)."""
    from triton_lint.model.host_text import relevant_text, wanted_names
    from triton_lint.project.index import ProjectIndex

    files = [(str(p), p, p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    context = ProjectIndex(files).context_for(str(kernel_file))
    if context is None:
        return None
    names = context.host_names.get(str(launching)) or wanted_names(context, str(launching))
    text = launching.read_text()
    relevant, _ = relevant_text(text, names)
    kept = relevant.splitlines()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and not kept[node.lineno - 1].strip():
            return node.name
    return None


def function_line(path: Path, name: str) -> int:
    """The line of the first simple statement (not ``if``, ``for``...) directly in the
    top-level function ``name``."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            for statement in node.body:
                if not hasattr(statement, "body"):
                    return statement.lineno
    raise LookupError(name)


def prefix_statement(path: Path, line: int, number: int) -> None:
    """Put ``edit_N = N;`` before the simple statement at line ``line``: a change of code in
    place, which moves no line (a line moved is a change to every position after it)."""
    lines = path.read_text().splitlines(keepends=True)
    indent = re.match(r"[ \t]*", lines[line - 1]).group()  # type: ignore[union-attr]
    lines[line - 1] = f"{indent}edit_{number} = {number}; {lines[line - 1][len(indent) :]}"
    path.write_text("".join(lines))


def _inside_function(text: str, offset: int) -> bool:
    line = text.count("\n", 0, offset) + 1
    return any(
        isinstance(node, ast.FunctionDef) and node.lineno < line <= (node.end_lineno or 0)
        for node in ast.walk(ast.parse(text))
    )


def _statement_line(text: str, line: int) -> int:
    """The first line of the innermost statement spanning ``line``."""
    best: ast.stmt | None = None
    for node in ast.walk(ast.parse(text)):
        spans = isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or 0)
        if spans and (best is None or node.lineno >= best.lineno):
            best = node  # type: ignore[assignment]
    assert best is not None
    return best.lineno


def insert_statement(path: Path, line: int, number: int) -> None:
    """Add ``edit_N = N`` before line ``line``, indented as it is (a new local statement)."""
    lines = path.read_text().splitlines(keepends=True)
    indent = re.match(r"[ \t]*", lines[line - 1]).group()  # type: ignore[union-attr]
    lines.insert(line - 1, f"{indent}edit_{number} = {number}\n")
    path.write_text("".join(lines))


def launching_function(path: Path, line: int) -> str | None:
    """The top-level function of ``path`` that holds line ``line`` (None inside a class)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
            return node.name
    return None


def append_caller(path: Path, function: str, number: int) -> None:
    """Append a function that calls ``function``: a new caller, which the index records."""
    with path.open("a") as stream:
        stream.write(f"\n\ndef edit_caller_{number}(*args):\n    return {function}(*args)\n")


def cpu_of(command: list[str], environment: dict[str, str]) -> float:
    process = subprocess.Popen(
        command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("--file", default="", help="a substring of the launching file's path")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / args.package.name
        shutil.copytree(args.package, copy)
        launching, pattern, kernel_file = launching_file(copy, args.file)
        unread = unread_function(copy, launching, kernel_file)
        print(f"launching file {launching.relative_to(scratch)}, launching kernels of")
        print(f"  {kernel_file.relative_to(scratch)}; a function it does not read: {unread}")
        command = [sys.executable, "-m", "triton_lint", "check", "--isolated"]
        command += ["--cache-dir", str(Path(scratch) / "cache"), str(copy)]
        cpu_of(command, environment)  # fills the cache, writes bytecode
        cases = {
            "nothing changed": lambda _: None,
            "launching function edited": lambda number: insert_statement(
                launching, launch_line(launching, pattern), number
            ),
        }
        if unread is not None:
            cases["unread function edited"] = lambda number: prefix_statement(
                launching, function_line(launching, unread), number
            )
        function = launching_function(launching, launch_line(launching, pattern))
        if function is not None:
            cases["caller added (index updated)"] = lambda number: append_caller(
                launching, function, number
            )
        times: dict[str, list[float]] = {name: [] for name in cases}
        for number in range(args.rounds):
            for name, edit in cases.items():
                edit(number)
                times[name].append(cpu_of(command, environment))
        for name, runs in times.items():
            print(
                f"{name:28s} CPU median {statistics.median(runs):.2f} s "
                f"(min {min(runs):.2f}, max {max(runs):.2f}, {len(runs)} runs)  "
                f"load {os.getloadavg()[0]:.1f}"
            )


if __name__ == "__main__":
    main()
