"""Print how fast the static linter is on a tree: files, bytes, and where the time goes.

Usage: python bench/static_speed.py [PATH ...]   (default: the bundled fixtures)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import libcst as cst

from triton_lint.discovery import iter_python_files
from triton_lint.engine import may_define_kernels, mentions_triton
from triton_lint.model.build import build_module_model
from triton_lint.rules import all_rules
from triton_lint.run import Runner, RunOptions
from triton_lint.source import decode


def main(paths: list[Path]) -> None:
    runner = Runner(RunOptions())
    files = [
        f for p in paths for f in (iter_python_files(p, runner.config_for) if p.is_dir() else [p])
    ]
    total_bytes = parsed_bytes = kernels = 0
    read = parse = model = rules_time = 0.0
    rules = list(all_rules())
    for path in files:
        start = time.perf_counter()
        text = decode(path.read_bytes())
        total_bytes += len(text)
        read += time.perf_counter() - start
        if not (mentions_triton(text) and may_define_kernels(text)):
            continue
        start = time.perf_counter()
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        parse += time.perf_counter() - start
        parsed_bytes += len(text)
        start = time.perf_counter()
        built = build_module_model(str(path), text, module)
        model += time.perf_counter() - start
        kernels += len(built.kernels)
        start = time.perf_counter()
        for rule in rules:
            list(rule.check(built))
        rules_time += time.perf_counter() - start
    total = read + parse + model + rules_time
    print(f"files            {len(files)}")
    print(f"bytes            {total_bytes / 1e6:.2f} MB ({parsed_bytes / 1e6:.2f} MB parsed)")
    print(f"kernels          {kernels}")
    print(f"read+prefilter   {read:.2f} s")
    print(f"parse (libcst)   {parse:.2f} s  ({parsed_bytes / 1e6 / max(parse, 1e-9):.2f} MB/s)")
    print(f"kernel model     {model:.2f} s  (data and the walk of each kernel)")
    print(
        f"rules            {rules_time:.2f} s  ({len(rules)} rules, with the analyses they ask for)"
    )
    print(f"total            {total:.2f} s  ({len(files) / max(total, 1e-9):.0f} files/s)")


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [Path(__file__).resolve().parent.parent / "fixtures"])
