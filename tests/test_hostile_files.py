"""Strange files in a linted tree: each gets a TL001 finding or a one-line message, the run
goes on, and the exit code still means what it says (1: findings, 0: none)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from triton_lint import depth, engine
from triton_lint.engine import lint_text
from triton_lint.rules import all_rules
from triton_lint.run import Runner, RunOptions

KERNEL = (REPO / "fixtures" / "TL101" / "bad.py").read_text(encoding="utf-8")
KERNEL_FINDINGS = 3  # the TL101 findings of the fixture


def lint(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_lint", "--no-cache", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def kernel_with(extra: str) -> str:
    """The fixture kernel file with ``extra`` code after it."""
    return KERNEL + "\n\n" + extra


def build_tree(root: Path) -> dict[str, tuple[int, str] | None]:
    """Write every hostile case under ``root``; return what each must give: the (line,
    message start) of its TL001, or None for a file linted normally."""
    expected: dict[str, tuple[int, str] | None] = {}

    def write(name: str, data: bytes | str, outcome: tuple[int, str] | None) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        expected[name] = outcome

    write("latin1.py", b"# -*- coding: latin-1 -*-\n" + KERNEL.encode() + b"s = '\xe9'\n", None)
    write("bad_utf8.py", KERNEL.encode() + b"s = '\xff\xfe'\n", (1, "cannot decode file"))
    write("utf16.py", KERNEL.encode("utf-16"), (1, "cannot decode file: it is UTF-16"))
    write("utf32.py", KERNEL.encode("utf-32"), (1, "cannot decode file: it is UTF-32"))
    nul = KERNEL.encode().replace(b"import triton\n", b"import triton\x00\n", 1)
    write("nul.py", nul, (1, "syntax error: source code string cannot contain null bytes"))
    depth = KERNEL.count("\n") + 3
    nested = kernel_with("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    write("nested_brackets.py", nested, (depth, "syntax error: too many nested parentheses"))
    write("deep_unary.py", kernel_with("x = " + "-" * 9000 + "1\n"), (1, "cannot parse file"))
    truncated = KERNEL[: KERNEL.index("mask=") + 3]
    write("truncated.py", truncated, (truncated.count("\n") + 1, "syntax error"))
    # Valid code the model walks 900 levels deep: linted like any other file.
    chain = (
        "@triton.jit\ndef chain(x_ptr, BLOCK: tl.constexpr):\n"
        "    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n"
        f"    y = {' + '.join(['x'] * 900)}\n"
    )
    write("long_sum.py", kernel_with(chain), None)
    body = "\n".join(f"    v{i} = tl.load(x_ptr + offs + {i}, mask=offs < n)" for i in range(10000))
    long_kernel = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        f"def long(x_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n{body}\n"
    )
    write("long_kernel.py", long_kernel, None)
    write("big_data.py", "import triton\ndata = [\n" + "    1.0,\n" * 6_000_000 + "]\n", None)
    generated = "".join(
        KERNEL.split("\n", 3)[3].replace("def ", f"def v{i}_") for i in range(2_100)
    )
    write("big_kernels.py", "import triton\nimport triton.language as tl\n" + generated, None)
    write("pkg.py/inner.py", KERNEL, None)  # a directory named like a module
    return expected


def test_a_tree_of_hostile_files_is_linted_to_the_end(tmp_path):
    expected = build_tree(tmp_path)
    os.mkfifo(tmp_path / "fifo.py")  # reading it would block forever
    (tmp_path / "loop_a.py").symlink_to(tmp_path / "loop_b.py")
    (tmp_path / "loop_b.py").symlink_to(tmp_path / "loop_a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing" / "target.py")
    (tmp_path / "up").symlink_to(tmp_path)  # a directory loop
    for jobs in ("1", "2"):
        out = lint("--format", "json", "--jobs", jobs, ".", cwd=tmp_path)
        assert out.returncode == 1, out.stderr
        findings = json.loads(out.stdout)
        for name, outcome in expected.items():
            mine = [f for f in findings if f["path"] == name]
            if outcome is None:
                assert [f["code"] for f in mine] == ["TL101"] * len(mine), name
            else:
                line, message = outcome
                assert [(f["code"], f["line"]) for f in mine] == [("TL001", line)], name
                assert mine[0]["message"].startswith(message), mine[0]["message"]
        assert len([f for f in findings if f["path"] == "pkg.py/inner.py"]) == KERNEL_FINDINGS
        assert [f for f in findings if f["path"] == "big_kernels.py"] == []
        assert sorted(out.stderr.splitlines()) == [
            "error: dangling.py: No such file or directory",
            "error: fifo.py: not a regular file",
            "error: loop_a.py: Too many levels of symbolic links",
            "error: loop_b.py: Too many levels of symbolic links",
            "warning: big_kernels.py: 2.2 MB with kernels, more than the 2 MB the linter reads "
            "(its syntax tree would take about a gigabyte of memory per megabyte); not linted",
        ]


def test_only_unreadable_files_exit_zero_with_their_message(tmp_path):
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    out = lint("dangling.py", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "error: dangling.py: No such file or directory\n")


def test_an_unreadable_file_is_reported_and_the_rest_linted(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "secret.py").write_text(KERNEL, encoding="utf-8")
    real = os.open

    def open_file(path, flags, *args, **kwargs):  # root reads a file without permissions
        if os.path.basename(path) == "secret.py":
            raise PermissionError(13, "Permission denied")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_file)
    runner = Runner(RunOptions(jobs=1))
    runner.lint_files(runner.collect([tmp_path]))
    assert runner.result.unreadable == [(str(tmp_path / "secret.py"), "Permission denied")]
    assert len(runner.result.findings) == KERNEL_FINDINGS


def test_a_file_deleted_after_discovery_is_reported_and_the_rest_linted(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(KERNEL, encoding="utf-8")
    runner = Runner(RunOptions(jobs=2))
    files = runner.collect([tmp_path])
    (tmp_path / "b.py").unlink()
    runner.lint_files(files)
    assert runner.result.unreadable == [(str(tmp_path / "b.py"), "No such file or directory")]
    assert len(runner.result.findings) == 2 * KERNEL_FINDINGS


def test_the_recursion_limit_is_restored():
    """Deep files raise the recursion limit only while they are linted."""
    before = sys.getrecursionlimit()
    chain = "@triton.jit\ndef k(x):\n    y = " + " + ".join(["x"] * 900) + "\n"
    result = lint_text("k.py", kernel_with(chain), list(all_rules()), "3.9")
    assert not result.crashes and not result.warnings
    assert sys.getrecursionlimit() == before


def test_nesting_python_accepts_but_libcst_cannot_read_is_skipped_with_a_warning(monkeypatch):
    """Python 3.12 accepts a sum of 8,000 terms, on which libcst's parser dies; the limit is
    lowered here so that Python 3.11, which rejects such depth itself, reaches the check."""
    monkeypatch.setattr(depth, "SAFE_DEPTH", 300)
    chain = "@triton.jit\ndef k(x):\n    y = " + " + ".join(["x"] * 400) + "\n"
    result = lint_text("k.py", kernel_with(chain), list(all_rules()), "3.9")
    assert result.findings == []
    assert result.warnings == [
        "k.py: expressions nested more than 300 levels deep, past what the parser the linter "
        "uses can read; not linted"
    ]


@pytest.mark.parametrize(
    "source",
    [
        "x = {}\n",
        "@d({})\ndef f(a=1):\n    pass\n",
        "def f(a={}):\n    pass\n",
        "with open({}) as f:\n    pass\n",
        "try:\n    pass\nexcept E:\n    y = {}\n",
        "z = [i for i in range(3) if {}]\n",
        "class C:\n    def m(self):\n        return {}\n",
    ],
)
def test_depth_is_found_wherever_the_expression_sits(source):
    deep = source.format(" + ".join(["a"] * 600))
    assert depth.too_deep(ast.parse(deep), deep, limit=500)
    assert not depth.too_deep(ast.parse(deep), deep, limit=700)
    wide = source.format("[" + ", ".join(["1"] * 20_000) + "]")  # long but shallow
    assert not depth.too_deep(ast.parse(wide), wide, limit=500)


def test_a_model_or_rule_that_fails_on_a_file_is_reported_and_the_run_goes_on(monkeypatch):
    """RecursionError (nesting deeper than the walks can follow) is a warning; any other
    error is a crash of the linter on that file (exit 2 at the end), not the end of the run."""
    rules = list(all_rules())
    real_build = engine.build_module_model

    def build_too_deep(*args):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(engine, "build_module_model", build_too_deep)
    result = lint_text("k.py", KERNEL, rules, "3.9")
    assert (result.findings, result.crashes) == ([], [])
    assert result.warnings == ["k.py: expressions nested too deeply to analyse; not linted"]

    def build_broken(*args):
        raise ValueError("unexpected node")

    monkeypatch.setattr(engine, "build_module_model", build_broken)
    result = lint_text("k.py", KERNEL, rules, "3.9")
    assert result.crashes == [
        "k.py: building the kernel model crashed: ValueError: unexpected node"
    ]

    monkeypatch.setattr(engine, "build_module_model", real_build)
    tl101 = next(rule for rule in rules if rule.code == "TL101")
    monkeypatch.setattr(type(tl101), "check", build_too_deep)
    result = lint_text("k.py", KERNEL, rules, "3.9")
    assert result.warnings == ["k.py: expressions nested too deeply for rule TL101; skipped"]
    assert result.findings == [] and result.crashes == []
