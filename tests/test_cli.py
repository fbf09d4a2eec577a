"""The command line contract: exit codes, selection, formats, config, stdin, suppressions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from triton_lint.cli import cli

BAD = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.device_print("x", x)
        tl.store(x_ptr + offs, x, mask=offs < n)
    """
)


_FINDING_LINE = re.compile(r"^\S+:\d+:\d+: TL\d{3}")


def finding_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if _FINDING_LINE.match(line)]


def run(*args: str, cwd: Path | None = None, stdin: str | None = None):
    """Invoke the CLI in-process from ``cwd`` (paths in the output are relative to it)."""
    old = os.getcwd()
    os.chdir(cwd or old)
    try:
        return CliRunner().invoke(cli, list(args), input=stdin)
    finally:
        os.chdir(old)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kern.py").write_text(BAD)
    (tmp_path / "pkg" / "host.py").write_text("def f():\n    return 1\n")
    for skipped in (".git", "build", "node_modules", ".venv", "myenv"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "kern.py").write_text(BAD)
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    return tmp_path


def test_findings_exit_1_with_text_lines_and_summary(tree):
    result = run("pkg", cwd=tree)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == (
        "pkg/kern.py:8:9: TL101 `tl.load` of `tl.arange` lanes has no mask, but line 10 bounds "
        "the same lanes with `mask=offs < n`: the lanes past the end read out of bounds; add "
        "`mask=offs < n` and a neutral `other=`"
    )
    assert lines[1].startswith("pkg/kern.py:9:5: TL401 [*] `tl.device_print` left in the kernel")
    assert lines[2:] == [
        "Found 2 findings in 2 files.",
        "By code: TL101 1, TL401 1.",
        "[*] 1 fixable with `--fix`.",
    ]


def test_default_path_skips_tool_and_virtualenv_directories(tree):
    result = run(cwd=tree)
    assert result.exit_code == 1
    paths = {line.split(":")[0] for line in finding_lines(result.output)}
    assert paths == {"pkg/kern.py"}


def test_explicit_file_inside_skipped_directory_is_linted(tree):
    result = run("build/kern.py", cwd=tree)
    assert result.exit_code == 1
    assert result.output.startswith("build/kern.py:8:9: TL101")


def test_no_findings_exit_0(tree):
    result = run("pkg/host.py", cwd=tree)
    assert result.exit_code == 0
    assert result.output == "Found 0 findings in 1 file.\n"


def test_exit_zero(tree):
    assert run("--exit-zero", "pkg", cwd=tree).exit_code == 0


def test_select_ignore_and_prefixes(tree):
    assert "TL401" not in run("--select", "TL1", "pkg", cwd=tree).output
    result = run("--ignore", "TL101,TL401", "pkg", cwd=tree)
    assert result.exit_code == 0
    result = run("--select", "ALL", "--ignore", "TL4", "pkg", cwd=tree)
    assert "TL101" in result.output and "TL401" not in result.output
    result = run("--select", "TL101", "--extend-select", "TL401", "pkg", cwd=tree)
    assert "TL101" in result.output and "TL401" in result.output


def test_off_by_default_rule_needs_selection(tmp_path):
    (tmp_path / "b.py").write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\ndef k():\n    tl.debug_barrier()\n"
    )
    assert run("b.py", cwd=tmp_path).exit_code == 0
    result = run("--extend-select", "TL402", "b.py", cwd=tmp_path)
    assert result.exit_code == 1 and "b.py:6:5: TL402" in result.output
    assert "TL402" in run("--select", "ALL", "b.py", cwd=tmp_path).output


def test_unknown_selector_is_a_usage_error(tree):
    result = run("--select", "TL999", "pkg", cwd=tree)
    assert result.exit_code == 2
    assert "unknown rule selector `TL999`" in result.output


def test_json_format_contract(tree):
    result = run("--format", "json", "pkg", cwd=tree)
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert [d["code"] for d in data] == ["TL101", "TL401"]
    first = data[0]
    assert first["path"] == "pkg/kern.py"
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (8, 9, 8, 30)
    assert first["severity"] == "error" and first["category"] == "memory-safety"
    assert first["name"] == "unmasked-load" and first["kernel"] == "k"
    assert run("--format", "json", "pkg/host.py", cwd=tree).output.strip() == "[]"


def test_output_file_and_statistics(tree):
    result = run("--statistics", "-o", "report.txt", "pkg", cwd=tree)
    assert result.exit_code == 1
    report = (tree / "report.txt").read_text()
    assert report.splitlines()[:2] == ["    1  TL101  unmasked-load", "    1  TL401  debug-print"]
    stats = json.loads(run("--statistics", "--format", "json", "pkg", cwd=tree).output)
    assert stats == [
        {"code": "TL101", "name": "unmasked-load", "count": 1},
        {"code": "TL401", "name": "debug-print", "count": 1},
    ]


def test_stdin_with_filename(tree):
    result = run("-", "--stdin-filename", "pkg/from_stdin.py", cwd=tree, stdin=BAD)
    assert result.exit_code == 1
    assert result.output.startswith("pkg/from_stdin.py:8:9: TL101")


def test_syntax_and_decode_errors_are_findings_and_the_run_goes_on(tmp_path):
    (tmp_path / "a.py").write_text("import triton\n@triton.jit\ndef broken(:\n")
    (tmp_path / "b.py").write_bytes(
        b"# -*- coding: ascii -*-\nimport triton\n@triton.jit\ndef k():\n    x = '\xff'\n"
    )
    (tmp_path / "c.py").write_text(BAD)
    # No `jit` decorator: no kernel can be here, so the file is not parsed at all.
    (tmp_path / "d.py").write_text("import triton\ndef broken(:\n")
    (tmp_path / "e.py").write_bytes(b"# -*- coding: ascii -*-\nimport triton\nx = '\xff'\n")
    result = run(".", cwd=tmp_path)
    assert result.exit_code == 1
    located = [line.split(" ")[:2] for line in finding_lines(result.output)]
    assert located == [
        ["a.py:3:12:", "TL001"],
        ["b.py:1:1:", "TL001"],
        ["c.py:8:9:", "TL101"],
        ["c.py:9:5:", "TL401"],
    ]
    assert "cannot decode file" in result.output


def test_missing_path_is_reported_not_crashing(tmp_path):
    result = run("does_not_exist.py", cwd=tmp_path)
    assert result.exit_code == 0
    assert "does_not_exist.py: No such file or directory" in result.output


def test_pyproject_config_discovered_upward_and_cli_wins(tree):
    (tree / "pyproject.toml").write_text(
        '[tool.triton-lint]\nignore = ["TL401"]\n'
        '[tool.triton-lint.per-file-ignores]\n"*/other.py" = ["TL101"]\n'
    )
    (tree / "pkg" / "other.py").write_text(BAD)
    result = run("pkg", cwd=tree)
    assert "TL401" not in result.output
    assert "pkg/kern.py:8:9: TL101" in result.output and "other.py" not in result.output
    assert "TL401" in run("--select", "TL4", "pkg/kern.py", cwd=tree).output
    assert "TL401" in run("--isolated", "pkg/kern.py", cwd=tree).output


def test_exclude_skips_directories_but_not_explicit_files(tree):
    (tree / "pyproject.toml").write_text('[tool.triton-lint]\nexclude = ["pkg"]\n')
    assert run(".", cwd=tree).output == "Found 0 findings in 0 files.\n"
    assert run("pkg/kern.py", cwd=tree).exit_code == 1


def test_explicit_config_file_and_errors(tree):
    (tree / "lint.toml").write_text('select = ["TL4"]\n')
    result = run("--config", "lint.toml", "pkg", cwd=tree)
    assert "TL101" not in result.output and "TL401" in result.output
    (tree / "bad.toml").write_text('select = "TL1\n')
    result = run("--config", "bad.toml", "pkg", cwd=tree)
    assert result.exit_code == 2 and "invalid TOML" in result.output
    (tree / "pyproject.toml").write_text('[tool.triton-lint]\nselct = ["TL1"]\n')
    result = run("pkg", cwd=tree)
    assert (
        result.exit_code == 2 and "unknown option(s) in [tool.triton-lint]: selct" in result.output
    )
    (tree / "pyproject.toml").write_text('[tool.triton-lint]\ntarget-version = "three"\n')
    assert run("pkg", cwd=tree).exit_code == 2
    assert run("--isolated", "--target-version", "x", "pkg", cwd=tree).exit_code == 2


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('select = ["TL999"]', "`select`: unknown rule selector `TL999`"),
        ('extend-select = ["XY"]', "`extend-select`: unknown rule selector `XY`"),
        ('ignore = ["TL9"]', "`ignore`: unknown rule selector `TL9`"),
        ('per-file-ignores = { "*.py" = ["TLX"] }', "`per-file-ignores.*.py`: unknown rule"),
        ('exclude = ["build/[abc"]', "`exclude`: invalid glob `build/[abc` (an unclosed `[`)"),
        ('exclude = [" "]', "`exclude`: invalid glob ` ` (an empty pattern)"),
        ('per-file-ignores = { "[x" = ["TL1"] }', "`per-file-ignores`: invalid glob `[x`"),
        ('select = ["TL1"', "invalid TOML"),
        ("exclude = 3", "`exclude` must be a list of glob patterns"),
    ],
)
def test_configuration_errors_name_the_file_and_key(tree, table, message):
    (tree / "pyproject.toml").write_text(f"[tool.triton-lint]\n{table}\n")
    result = run("pkg", cwd=tree)
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {tree / 'pyproject.toml'}: ")
    assert message in result.output and "Usage:" not in result.output


def test_fail_on_sets_the_lowest_severity_that_fails_the_run(tree):
    # TL401 alone is a warning: reported either way, failing only at warning or below
    only_warning = run("--select", "TL401", "--fail-on", "error", "pkg", cwd=tree)
    assert only_warning.exit_code == 0 and "TL401" in only_warning.output
    assert run("--select", "TL401", "--fail-on", "warning", "pkg", cwd=tree).exit_code == 1
    assert run("--select", "TL1", "--fail-on", "error", "pkg", cwd=tree).exit_code == 1
    (tree / "pyproject.toml").write_text('[tool.triton-lint]\nfail-on = "error"\n')
    assert run("--select", "TL401", "pkg", cwd=tree).exit_code == 0
    assert run("--select", "TL401", "--fail-on", "info", "pkg", cwd=tree).exit_code == 1
    assert run("--isolated", "--select", "TL401", "pkg", cwd=tree).exit_code == 1
    other = tree / "other"  # configuration is read once per directory and run
    other.mkdir()
    (other / "pyproject.toml").write_text('[tool.triton-lint]\nfail-on = "warn"\n')
    (other / "kern.py").write_text(BAD)
    result = run("kern.py", cwd=other)
    assert result.exit_code == 2 and "`fail-on` must be one of" in result.output
    assert run("--fail-on", "never", "pkg", cwd=tree).exit_code == 2


def test_noqa_inline_file_level_and_malformed(tmp_path):
    source = BAD.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs)  # noqa: TL101")
    source = source.replace('tl.device_print("x", x)', 'tl.device_print("x", x)  # noqa: E501')
    (tmp_path / "a.py").write_text(source)
    result = run("a.py", cwd=tmp_path)
    assert [line.split(" ")[1] for line in finding_lines(result.output)] == ["TL401"]
    (tmp_path / "b.py").write_text(
        BAD.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs)  # noqa")
    )
    assert "TL101" not in run("b.py", cwd=tmp_path).output
    (tmp_path / "c.py").write_text("# triton-lint: noqa: TL401\n" + BAD)
    assert "TL401" not in run("c.py", cwd=tmp_path).output
    (tmp_path / "d.py").write_text("# triton-lint: noqa\n" + BAD)
    assert run("d.py", cwd=tmp_path).exit_code == 0
    (tmp_path / "e.py").write_text(
        BAD.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs)  # noqa:")
    )
    result = run("e.py", cwd=tmp_path)
    assert result.exit_code == 1 and "TL101" in result.output
    assert "warning: e.py:8: malformed `# noqa` directive" in result.output


def test_rule_command():
    result = run("rule", "TL101")
    assert result.exit_code == 0 and result.output.startswith("# TL101 unmasked-load")
    assert run("rule", "unmasked-store").output.startswith("# TL102 unmasked-store")
    everything = run("rule", "--all").output
    assert everything.count("\n# TL") >= 7
    assert json.loads(run("rule", "TL402", "--format", "json").output)["default_enabled"] is False
    assert run("rule", "TL999").exit_code == 2
    assert run("rule").exit_code == 2


def test_version_and_explicit_check_subcommand(tree):
    assert run("--version").output.startswith("triton-lint, version ")
    assert run("check", "pkg", cwd=tree).exit_code == 1


def test_internal_error_exits_2_not_1(tmp_path, monkeypatch):
    from triton_lint.rules import tl101_unmasked_load

    def explode(self, kernel):
        raise RuntimeError("boom")

    monkeypatch.setattr(tl101_unmasked_load.UnmaskedLoad, "check_kernel", explode)
    (tmp_path / "a.py").write_text(BAD)
    result = run("a.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "rule TL101 crashed: RuntimeError: boom" in result.output
    assert "TL401" in result.output  # the other rules still ran


def test_static_path_never_imports_torch_or_triton(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    code = (
        "import sys\n"
        "from triton_lint.cli import main\n"
        "sys.argv = ['triton-lint', 'a.py', '--select', 'ALL']\n"
        "try:\n    main()\n"
        "except SystemExit as e:\n"
        "    assert e.code == 1, e.code\n"
        "heavy = sorted(m for m in sys.modules\n"
        "               if m.split('.')[0] in ('torch', 'triton', 'numpy'))\n"
        "print('HEAVY', heavy)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout


def test_console_script_entry_point(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    proc = subprocess.run(
        [sys.executable, "-m", "triton_lint", "a.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "\nFound 2 findings in 1 file.\n" in proc.stdout


def test_console_entry_flushes_output_and_keeps_exit_codes(tmp_path):
    """`entry` ends the process without the interpreter's teardown: buffered output still
    arrives whole, and every exit status is the one `main` gave."""
    for number in range(300):
        (tmp_path / f"m{number}.py").write_text(BAD)
    entry = "import sys; from triton_lint.__main__ import entry; sys.argv[0] = 'x'; entry()"
    proc = subprocess.run(
        [sys.executable, "-c", entry, ".", "--format", "json", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    assert len(json.loads(proc.stdout)) == 600  # 64 KB and more, written in one flush
    usage = subprocess.run(
        [sys.executable, "-c", entry, "--no-such-option"], capture_output=True, text=True
    )
    assert usage.returncode == 2
    assert "No such option" in usage.stderr
    clean = subprocess.run([sys.executable, "-c", entry, "--version"], capture_output=True)
    assert clean.returncode == 0
    assert clean.stdout.startswith(b"triton-lint")
