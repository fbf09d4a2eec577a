"""Fuzz the static pipeline: no input may make the linter or a reporter raise.

Usage: python bench/fuzz.py [--seconds S] [--seed N] [--out DIR] [PATH ...]

Inputs are real kernel files (the bundled fixtures and every kernel file under PATH, e.g. the
corpus `bench/corpus.py` unpacks) mutated the way edits in progress and broken files look:
a deleted token run, two arguments of a call swapped, a truncated file, a duplicated or
deleted line, a name replaced by another, an indentation changed; and Python generated from
the grammar (hypothesmith) with its functions decorated ``@triton.jit``. Each input runs
through `lint_text` with every rule and through every reporter; an exception, a rule crash
or a finding outside the file is a failure, saved under ``--out``. Prints the inputs tried
per kind and the failures. tests/test_fuzz.py runs a fast subset of the same inputs.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
import tokenize
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from triton_lint.engine import lint_text
from triton_lint.fingerprint import split_lines
from triton_lint.reporters import REPORTERS
from triton_lint.rules import all_rules
from triton_lint.run import RunResult

REPO = Path(__file__).resolve().parent.parent
RULES = list(all_rules())
_SKIPPED = {tokenize.ENCODING, tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE}


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in _SKIPPED and t.string.strip()
        ]
    except (tokenize.TokenError, SyntaxError):
        return []


def _offset(lines: list[str], position: tuple[int, int]) -> int:
    row, column = position
    return sum(len(line) for line in lines[: row - 1]) + column


def delete_tokens(text: str, rng: random.Random) -> str:
    tokens = _tokens(text)
    if not tokens:
        return text[: rng.randrange(len(text) + 1)]
    first = rng.randrange(len(tokens))
    last = min(len(tokens) - 1, first + rng.randrange(4))
    lines = split_lines(text)
    start, end = _offset(lines, tokens[first].start), _offset(lines, tokens[last].end)
    return text[:start] + text[end:]


def swap_arguments(text: str, rng: random.Random) -> str:
    """Swap two comma-separated pieces of one line (the arguments of a call, mostly)."""
    lines = split_lines(text)
    candidates = [i for i, line in enumerate(lines) if line.count(",") >= 1 and "(" in line]
    if not candidates:
        return text
    index = rng.choice(candidates)
    line = lines[index]
    start, end = line.index("(") + 1, line.rindex(")") if ")" in line else len(line)
    parts = line[start:end].split(",")
    if len(parts) >= 2:
        i, j = rng.sample(range(len(parts)), 2)
        parts[i], parts[j] = parts[j], parts[i]
        lines[index] = line[:start] + ",".join(parts) + line[end:]
    return "".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def duplicate_or_drop_line(text: str, rng: random.Random) -> str:
    lines = split_lines(text)
    if not lines:
        return text
    index = rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines.insert(index, lines[index])
    else:
        del lines[index]
    return "".join(lines)


def replace_name(text: str, rng: random.Random) -> str:
    tokens = [t for t in _tokens(text) if t.type == tokenize.NAME]
    if len(tokens) < 2:
        return text
    target, source = rng.sample(tokens, 2)
    lines = split_lines(text)
    start, end = _offset(lines, target.start), _offset(lines, target.end)
    return text[:start] + source.string + text[end:]


def reindent(text: str, rng: random.Random) -> str:
    lines = split_lines(text)
    indented = [i for i, line in enumerate(lines) if line.startswith(" ")]
    if not indented:
        return text
    index = rng.choice(indented)
    lines[index] = rng.choice(["", " ", "\t", "        "]) + lines[index].lstrip(" ")
    return "".join(lines)


MUTATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "delete-tokens": delete_tokens,
    "swap-arguments": swap_arguments,
    "truncate": truncate,
    "duplicate-or-drop-line": duplicate_or_drop_line,
    "replace-name": replace_name,
    "reindent": reindent,
}


def as_kernels(source: str) -> str:
    """Generated Python with its functions made kernels, so the model has something to read."""
    lines = ["import triton\n", "import triton.language as tl\n"]
    for line in split_lines(source):
        stripped = line.lstrip()
        if stripped.startswith(("def ", "async def ")):
            lines.append(line[: len(line) - len(stripped)] + "@triton.jit\n")
        lines.append(line)
    return "".join(lines)


def check(path: str, text: str) -> str | None:
    """None if the pipeline and every reporter handle ``text``; else what went wrong."""
    try:
        result = lint_text(path, text, RULES, "3.9")
        if result.crashes:
            return "; ".join(result.crashes)
        lines = len(split_lines(text)) + 1
        outside = [f for f in result.findings if not 1 <= f.line <= lines]
        if outside:
            return f"finding outside the file: {outside[0]}"
        result.model = None
        run = RunResult(findings=result.findings, files_checked=1, files=[result])
        for render in REPORTERS.values():
            render(run, False)
    except Exception as error:  # the point of fuzzing: nothing may escape
        return f"{type(error).__name__}: {error}"
    return None


def kernel_files(paths: list[Path]) -> list[Path]:
    found = sorted((REPO / "fixtures").glob("TL*/**/*.py"))
    for root in paths:
        for path in sorted(root.rglob("*.py")):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if b"@triton.jit" in data and len(data) < 200_000:
                found.append(path)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = kernel_files(args.paths)
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in files]
    tried: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    generated = _generated_sources(args.seed)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        if rng.random() < 0.1:
            kind, text = "generated", as_kernels(next(generated))
        else:
            kind = rng.choice(list(MUTATIONS))
            text = texts[rng.randrange(len(texts))]
            for _ in range(rng.randint(1, 3)):
                text = MUTATIONS[kind](text, rng)
        tried[kind] += 1
        problem = check("fuzz.py", text)
        if problem is not None:
            failures[kind] += 1
            args.out.mkdir(exist_ok=True)
            name = f"{kind}-{sum(failures.values())}"
            (args.out / f"{name}.py").write_text(text, encoding="utf-8")
            (args.out / f"{name}.txt").write_text(problem + "\n", encoding="utf-8")
            print(f"FAIL {name}: {problem[:200]}", file=sys.stderr)
    print(f"{len(files)} kernel files, seed {args.seed}, {args.seconds:g} s")
    print("| input | tried | failures |\n|---|---:|---:|")
    for kind in sorted(tried):
        print(f"| {kind} | {tried[kind]} | {failures[kind]} |")
    print(f"| **all** | {sum(tried.values())} | {sum(failures.values())} |")


def _generated_sources(seed: int):
    """Python modules drawn from the grammar by hypothesmith, one at a time."""
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fix_seed

    while True:
        found: list[str] = []

        @fix_seed(seed)
        @settings(max_examples=50, database=None, suppress_health_check=list(HealthCheck))
        @given(hypothesmith.from_grammar())
        def draw(source: str) -> None:
            found.append(source)  # noqa: B023 - drawn and used within this round

        draw()
        yield from found
        seed += 1


if __name__ == "__main__":
    main()
