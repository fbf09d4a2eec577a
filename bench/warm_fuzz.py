"""Random edits of a copy of a package, each followed by a warm run and a run without a cache:
the outputs must be the same (the kept project index, `triton_lint/project/views.py`, must
never answer for an edit that changed what it read).

    python bench/warm_fuzz.py PACKAGE_DIR [--edits 25] [--seed 1] [--code DIR]

Edits, drawn by seed, of any Python file of the package (one that names Triton or not): a
statement at the top of a function body, a call or launch line repeated, a function's name in
a comment, an import line dropped, a call of a function of the package at the top of a body,
a new function calling one of the package's at the end of the file (a caller the index did
not know: `project/incremental.py` brings the index up to date for it). Prints each edit and
whether the outputs matched; writes the diff of each mismatch beside the copy. Exits 1 when
one did not match.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_DEF = re.compile(r"\s*def \w+\(.*:\s*$")


def edit(path: Path, kind: str, rng: random.Random, names: list[str], number: int) -> bool:
    """Apply one edit of ``kind`` to ``path``; False when the file has no place for it."""
    lines = path.read_text().splitlines(keepends=True)
    bodies = [i for i in range(len(lines) - 1) if _DEF.match(lines[i])]
    if kind in ("statement", "call") and bodies:
        line = rng.choice(bodies)
        indent = re.match(r"\s*", lines[line + 1]).group()  # type: ignore[union-attr]
        added = f"_fuzz_{number} = {number}" if kind == "statement" else f"{rng.choice(names)}(x)"
        lines.insert(line + 1, f"{indent}{added}\n")
    elif kind == "repeat":
        calls = [i for i, t in enumerate(lines) if re.match(r"\s+\w[\w.]*[\[(].*\)\s*$", t)]
        if not calls:
            return False
        line = rng.choice(calls)
        lines.insert(line, lines[line])
    elif kind == "comment":
        lines.append(f"# {rng.choice(names)}\n")
    elif kind == "caller":
        lines.append(f"\n\ndef _fuzz_caller_{number}(x):\n    return {rng.choice(names)}(x)\n")
    elif kind == "import":
        imports = [i for i, t in enumerate(lines) if re.match(r"(from \S+ )?import \w[^(]*$", t)]
        if not imports:
            return False
        del lines[rng.choice(imports)]
    else:
        return False
    path.write_text("".join(lines))
    return True


def index_state(cache: Path) -> tuple[str, int]:
    """The views token of the cached index record and its number of layers (the record's
    layout: `triton_lint/project/snapshot.py`)."""
    for path in cache.glob("*/project-index"):
        for key, value in json.loads(path.read_bytes()).items():
            if key.startswith("x:"):
                return value.get("views", ""), len(value.get("layers", ()))
    return "", 0


def what_the_index_did(was: tuple[str, int], now: tuple[str, int]) -> str:
    """Built again (new views), brought up to date (one layer more, or consolidated), or
    kept as it was."""
    if now[0] != was[0]:
        return "built"
    return "updated" if now[1] != was[1] else "kept"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("--edits", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", type=Path, default=ROOT, help="the triton-lint checkout")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="warm-fuzz-"))
    copy = work / args.package.name
    shutil.copytree(args.package, copy)
    environment = dict(os.environ, PYTHONPATH=str(args.code), PYTHONSAFEPATH="1")

    def lint(*options: str) -> str:
        command = [sys.executable, "-m", "triton_lint", "check", "--isolated", *options]
        run = subprocess.run(
            [*command, str(copy)], capture_output=True, text=True, env=environment, cwd=work
        )
        return run.stdout

    lint("--cache-dir", str(work / "cache"))
    files = sorted(copy.rglob("*.py"))
    kernels = [p for p in files if b"triton" in p.read_bytes()]
    names = sorted({m for p in kernels for m in re.findall(r"def (\w+)\(", p.read_text())})
    mismatches = 0
    outcomes: dict[str, int] = {}
    for number in range(args.edits):
        path = rng.choice(files)
        kind = rng.choice(["statement", "repeat", "comment", "import", "call", "caller"])
        if not edit(path, kind, rng, names, number):
            continue
        was = index_state(work / "cache")
        warm, cold = lint("--cache-dir", str(work / "cache")), lint("--no-cache")
        same = warm == cold
        mismatches += not same
        did = what_the_index_did(was, index_state(work / "cache"))
        outcomes[did] = outcomes.get(did, 0) + 1
        verdict = "same" if same else "DIFFERENT"
        print(f"{number:3d} {kind:9s} {did:8s} {path.relative_to(copy)}: {verdict}")
        if not same:
            diff = difflib.unified_diff(cold.splitlines(True), warm.splitlines(True))
            (work / f"mismatch-{number}.diff").write_text("".join(diff))
    print(f"{mismatches} of {args.edits} edits gave another output warm ({work})")
    print("the warm runs' index:", ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    if mismatches == 0:
        shutil.rmtree(work)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
