"""Apply ``--fix --unsafe-fixes`` to a copy of the corpus and check that nothing is lost.

Usage: python bench/fix_at_scale.py [--jobs N] [CORPUS_DIR ...]
(default: the libraries `bench/corpus.py` unpacked under $TRITON_LINT_CORPUS)

Copies every file that may hold a kernel, lints the copy (JSON), fixes it in place with the
CLI, then checks each changed file: Python still parses it; every changed line is a line one
of the original findings' fixes touched (the rest is byte-for-byte equal); and linting it
again finds no fixable finding left. Prints the files fixed, the fixes applied per code and
every failure.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

CORPUS = Path(os.environ.get("TRITON_LINT_CORPUS", "/work/.cache/corpus"))
LINT = [sys.executable, "-m", "triton_lint", "--isolated", "--no-cache"]
LIBRARIES = ("liger-kernel", "fla-core", "flag-gems", "vllm", "sglang", "torchao", "unsloth")


def lint_json(root: Path, jobs: int, *extra: str) -> list[dict]:
    out = subprocess.run(
        [*LINT, "--exit-zero", "--jobs", str(jobs), "--format", "json", *extra, "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"triton-lint failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout or "[]")


def copy_kernel_files(sources: list[Path], target: Path) -> int:
    copied = 0
    for source in sources:
        for path in source.rglob("*.py"):
            data = path.read_bytes()
            if b"triton" in data and b"jit" in data:
                destination = target / source.name / path.relative_to(source)
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(data)
                copied += 1
    return copied


def touched_lines(findings: list[dict]) -> dict[str, set[int]]:
    """Lines (1-based) each file's fixes edit."""
    lines: dict[str, set[int]] = {}
    for finding in findings:
        for edit in (finding.get("fix") or {}).get("edits", []):
            first, last = edit["location"]["row"], edit["end_location"]["row"]
            lines.setdefault(finding["path"], set()).update(range(first, last + 1))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sources = args.corpora or sorted(
        p for p in CORPUS.iterdir() if p.is_dir() and p.name.startswith(LIBRARIES)
    )
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        files = copy_kernel_files(sources, root)
        originals = {p: p.read_bytes() for p in root.rglob("*.py")}
        before = lint_json(root, args.jobs)
        fixable = [f for f in before if f.get("fix")]
        subprocess.run(
            [*LINT, "--fix", "--unsafe-fixes", "--jobs", str(args.jobs), "--exit-zero", "."],
            cwd=root,
            capture_output=True,
            check=False,
        )
        after = lint_json(root, args.jobs)
        touched = touched_lines(before)
        failures: list[str] = []
        changed = 0
        for path, original in originals.items():
            fixed = path.read_bytes()
            if fixed == original:
                continue
            changed += 1
            name = path.relative_to(root).as_posix()
            try:
                ast.parse(fixed)
            except SyntaxError as error:
                failures.append(f"{name}: no longer parses: {error}")
            old, new = original.splitlines(keepends=True), fixed.splitlines(keepends=True)
            matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
            for tag, i1, i2, _, _ in matcher.get_opcodes():
                lines = set(range(i1 + 1, max(i2, i1 + 1) + 1))
                if tag != "equal" and not lines & touched.get(name, set()):
                    failures.append(f"{name}:{i1 + 1}: changed outside any fix's edit")
        left = [f for f in after if f.get("fix")]
        for finding in left:
            failures.append(
                f"{finding['path']}:{finding['line']}: {finding['code']} still fixable after --fix"
            )
    print(f"{len(sources)} libraries, {files} files that may hold kernels")
    print(f"findings before: {len(before)}, with a fix: {len(fixable)}")
    print(f"files changed: {changed}; findings after: {len(after)}")
    print("fixable findings per code before:", dict(Counter(f["code"] for f in fixable)))
    print("fixable findings per code after:", dict(Counter(f["code"] for f in left)))
    print(f"failures: {len(failures)}")
    for failure in failures[:50]:
        print("  " + failure)


if __name__ == "__main__":
    main()
