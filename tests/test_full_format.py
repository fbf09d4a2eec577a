"""The full text format: snapshots on the bundled fixtures (static and dynamic findings), the
columns a terminal shows, stale locations, colour and the default style per destination."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_on_pty
from tests.test_cli import finding_lines, run
from triton_lint.finding import Category, Finding, RelatedLocation, Severity, Span
from triton_lint.reporters.full import FullOptions, Sources, render_finding, render_full
from triton_lint.reporters.snippet import Mark, SnippetWriter, layout
from triton_lint.reporters.terminal import Palette, default_text_format, use_colour
from triton_lint.run import RunResult

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = REPO / "tests" / "snapshots"
#: One fixture per kind of evidence: a masked access, a loop, a launch and its grid, grouped
#: parameters, a removed API's other uses, a multi-line span, and a fix shown as a diff.
FIXTURES = [
    "fixtures/TL101/bad.py",
    "fixtures/TL101/bad_partial_k_tile.py",
    "fixtures/TL102/bad_rounded_up_grid.py",
    "fixtures/TL203/bad_per_call_floats_near_dtypes.py",
    "fixtures/TL101/bad_block_ptr.py",
    "fixtures/TL204/bad.py",
    "fixtures/TL103/bad_dot_k_mask.py",
]
#: A real `--dynamic --device interpreter` run of fixtures/dynamic/vector_add.py, as JSON.
DYNAMIC = REPO / "tests" / "data" / "dynamic_vector_add.json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _check_snapshot(text: str, name: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _full(*args: str, cwd: Path = REPO):
    return run("--isolated", "--no-cache", "--target-version", "3.9", *args, cwd=cwd)


def test_static_findings_snapshot():
    result = _full("--output-format", "full", "--show-fixes", *FIXTURES)
    assert result.exit_code == 1, result.output
    _check_snapshot(result.output, "full_static.txt")


def test_dynamic_findings_snapshot(monkeypatch):
    monkeypatch.chdir(REPO)
    findings = [Finding.from_dict(data) for data in json.loads(DYNAMIC.read_text())]
    text = render_full(RunResult(findings=findings, files_checked=1), False, FullOptions())
    _check_snapshot(text, "full_dynamic.txt")
    # the witness is told line by line, not as the message's bracket
    assert "[N=1; float32; pattern normal; contiguous]" not in text
    assert re.search(r"^ {7}sizes +N=1$", text, re.M)


def test_every_fixture_finding_gets_its_line_then_its_snippet():
    """Over all bundled fixtures: the same finding lines as the concise format, in order, and
    each followed by its source with the span underlined and labelled."""
    concise = _full("--output-format", "concise", "fixtures")
    full = _full("--output-format", "full", "fixtures")
    assert finding_lines(full.output) == finding_lines(concise.output)
    blocks = full.output.split("\n\n")[:-1]
    assert len(blocks) == len(finding_lines(concise.output))
    for block in blocks:
        code = block.split(": ", 1)[1].split()[0]
        assert re.search(rf"^ +\| +[/|_ ]*\^+ {code} ", block, re.M), block


def test_dynamic_witness_under_the_interpreter():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    result = run(
        "--dynamic",
        "--device",
        "interpreter",
        "--output-format",
        "full",
        "--isolated",
        "fixtures/dynamic/vector_add.py",
        cwd=REPO,
    )
    assert result.exit_code == 1, result.output
    oob = [b for b in result.output.split("\n\n") if re.match(r"\S+:\d+:\d+: TL901 ", b)]
    assert oob
    for block in oob:
        labels = re.findall(r"^ {7}(\w+) ", block, re.M)
        assert labels[:4] == ["sizes", "dtype", "layout", "values"]
        assert {"program", "lane", "offset", "tensor"} <= set(labels)
        assert "kernel launched here" in block and "pattern normal" not in block


def _finding(path: str, span: Span, related: tuple[RelatedLocation, ...] = ()) -> Finding:
    return Finding(
        path,
        span,
        "TL101",
        "unmasked-load",
        Severity.ERROR,
        Category.MEMORY_SAFETY,
        "message",
        related=related,
    )


def _underline(line: str, start: int, end: int) -> list[str]:
    writer = SnippetWriter(1, Palette())
    out = writer.render([line], Mark(Span(1, start, 1, end), "L", True, "primary-error"), 0)
    assert out is not None
    return out


@pytest.mark.parametrize(
    ("line", "target", "shown", "caret"),
    [
        # a tab runs to the next stop of four cells
        (
            "\tx = tl.load(p)\r\n",
            "tl.load(p)",
            "1 |     x = tl.load(p)",
            "  |         ^^^^^^^^^^ L",
        ),
        ("x =\ttl.load(p)\n", "tl.load(p)", "1 | x = tl.load(p)", "  |     ^^^^^^^^^^ L"),
        # East Asian wide characters take two cells, the underlined ones too
        (
            's = "数据"; tl.load(p)\n',
            "tl.load(p)",
            '1 | s = "数据"; tl.load(p)',
            f"  | {' ' * 12}^^^^^^^^^^ L",
        ),
        ('s = "数据"\n', '"数据"', '1 | s = "数据"', "  |     ^^^^^^ L"),
        # a combining accent takes none; accented and non-Latin letters one
        (
            'e = "e\u0301"; tl.load(p)\n',
            "tl.load(p)",
            '1 | e = "e\u0301"; tl.load(p)',
            f"  | {' ' * 9}^^^^^^^^^^ L",
        ),
        (
            'é = "π"; tl.load(p)\n',
            "tl.load(p)",
            '1 | é = "π"; tl.load(p)',
            f"  | {' ' * 9}^^^^^^^^^^ L",
        ),
        # control characters are shown as their pictures, never sent to the terminal
        (
            "\x1b[2J = tl.load(p)\n",
            "tl.load(p)",
            "1 | \u241b[2J = tl.load(p)",
            f"  | {' ' * 7}^^^^^^^^^^ L",
        ),
    ],
)
def test_underline_columns(line, target, shown, caret):
    text = line.rstrip("\r\n")
    start = text.index(target) + 1
    assert _underline(line, start, start + len(target)) == [shown, caret]


def test_crlf_file_linted_end_to_end(tmp_path):
    source = (
        "import triton\r\nimport triton.language as tl\r\n\r\n\r\n@triton.jit\r\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\r\n"
        "\toffs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\r\n"
        '\ts = "数据"; x = tl.load(x_ptr + offs)\r\n'
        "\ttl.store(x_ptr + offs, x, mask=offs < n)\r\n"
    )
    (tmp_path / "k.py").write_bytes(source.encode())
    result = _full("--output-format", "full", "k.py", cwd=tmp_path)
    lines = result.output.splitlines()
    shown = lines.index(' 8 |     s = "数据"; x = tl.load(x_ptr + offs)')
    assert lines[shown + 1] == f"   | {' ' * 20}{'^' * 21} TL101 unmasked-load"
    assert "\r" not in result.output


def test_span_past_the_line_and_empty_span_get_one_caret():
    assert _underline("abc\n", 7, 9)[1] == "  |    ^ L"
    assert _underline("abc\n", 2, 2)[1] == "  |  ^ L"


def test_whole_line_span_skips_the_indentation():
    assert _underline("    tl.store(p, x)\n", 1, 19)[1] == "  |     ^^^^^^^^^^^^^^ L"


def test_long_multi_line_span_keeps_its_ends(tmp_path):
    lines = ["def f():\n", *[f"    x{i} = {i}\n" for i in range(10)], "    return x9\n"]
    writer = SnippetWriter(2, Palette())
    out = writer.render(lines, Mark(Span(2, 5, 11, 12), "L", True, "primary-error"), 0)
    assert out == [
        " 2 | /     x0 = 0",
        " 3 | |     x1 = 1",
        " 4 | |     x2 = 2",
        "   | | ...",
        " 9 | |     x7 = 7",
        "10 | |     x8 = 8",
        "11 | |     x9 = 9",
        "   | |__________^ L",
    ]


def test_multi_line_span_starting_mid_line():
    lines = ["x = f(a,\n", "      b)\n"]
    out = SnippetWriter(1, Palette()).render(
        lines, Mark(Span(1, 5, 2, 9), "L", True, "primary-error"), 0
    )
    assert out == ["1 |   x = f(a,", "  |  _____^", "2 | |       b)", "  | |________^ L"]


def test_stale_locations_print_without_a_snippet(tmp_path, monkeypatch):
    """A finding (or related location) at a line the file no longer has, or in a file that is
    gone, prints its line and labels but no source, and never raises."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text("x = 1\n")
    stale = _finding(
        "k.py",
        Span(40, 5, 40, 9),
        (RelatedLocation("gone.py", Span(3, 1, 3, 4), "bounded here"),),
    )
    text = "\n".join(render_finding(stale, Sources(RunResult()), FullOptions()))
    assert text.splitlines()[0] == "k.py:40:5: TL101 message"
    assert "  ::: gone.py:3:1" in text and "   | bounded here" in text
    assert not re.search(r"^ *\d+ \|", text, re.M)
    half = _finding("k.py", Span(1, 1, 9, 1))  # the end of a multi-line span is gone
    text = "\n".join(render_finding(half, Sources(RunResult()), FullOptions()))
    assert "1 | x = 1" in text


def test_line_too_long_to_show(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text("x = [" + "1, " * 600 + "]\n")
    text = "\n".join(
        render_finding(_finding("k.py", Span(1, 1, 1, 2)), Sources(RunResult()), FullOptions())
    )
    assert not re.search(r"^ *\d+ \|", text, re.M)


def test_layout_of_printable_ascii_is_the_line_itself():
    assert layout("x = 1") == ("x = 1", None)


@pytest.mark.parametrize(
    ("choice", "terminal", "environ", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"TERM": "dumb"}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # empty means unset (no-color.org)
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", False, {"FORCE_COLOR": ""}, False),
        ("auto", False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_choice(choice, terminal, environ, expected):
    assert use_colour(choice, terminal, environ) is expected


@pytest.mark.parametrize(
    ("terminal", "environ", "expected"),
    [
        (True, {}, "full"),
        (False, {}, "concise"),
        (False, {"CI": "true"}, "full"),
        (False, {"CI": "false"}, "concise"),
        (False, {"PRE_COMMIT": "1"}, "full"),
    ],
)
def test_default_style(terminal, environ, expected):
    assert default_text_format(terminal, environ) == expected


def test_cli_colour_and_default_style(monkeypatch):
    fixture = "fixtures/TL101/bad.py"
    piped = _full(fixture).output
    assert finding_lines(piped) == piped.splitlines()[: len(finding_lines(piped))]  # concise
    monkeypatch.setenv("CI", "true")
    plain = _full(fixture).output
    assert " | " in plain and "\x1b[" not in plain
    monkeypatch.setenv("FORCE_COLOR", "1")
    painted = _full(fixture).output
    assert "\x1b[" in painted and ANSI.sub("", painted) == plain
    assert "\x1b[" not in _full("--color", "never", fixture).output
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in _full(fixture).output
    assert ANSI.sub("", _full("--color", "always", fixture).output) == plain
    assert _full("--output-format", "concise", fixture).output == piped


def test_statistics_are_the_same_in_both_styles():
    full = _full("--statistics", "--output-format", "full", "fixtures/TL101")
    concise = _full("--statistics", "--output-format", "concise", "fixtures/TL101")
    assert full.output == concise.output


def test_config_key_and_its_validation(tmp_path):
    (tmp_path / "k.py").write_text((REPO / "fixtures/TL101/bad.py").read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.triton-lint]\noutput-format = "full"\n')
    result = run("--no-cache", "k.py", cwd=tmp_path)
    assert "^^^ TL101 unmasked-load" in result.output
    result = run("--no-cache", "--output-format", "concise", "k.py", cwd=tmp_path)
    assert " | " not in result.output
    (tmp_path / "pyproject.toml").write_text('[tool.triton-lint]\noutput-format = "long"\n')
    result = run("--no-cache", "k.py", cwd=tmp_path)
    assert result.exit_code == 2 and "`output-format` must be one of" in result.output


def _hook(environ: dict[str, str], terminal: bool) -> str:
    """Run the hook's entry on a fixture as pre-commit does: on a pipe, or on a terminal (a
    pty) when pre-commit shows colour."""
    hook = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())[0]
    assert hook["entry"] == "triton-lint"
    assert hook["minimum_pre_commit_version"] == "2.5.0"  # the first to set PRE_COMMIT
    command = [sys.executable, "-m", "triton_lint", "--no-cache", "fixtures/TL101/bad.py"]
    env = {**os.environ, **environ}
    if not terminal:
        return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True).stdout
    return run_on_pty(command, stdout_too=True, cwd=REPO, env=env).decode().replace("\r\n", "\n")


def test_pre_commit_hook_output_is_full():
    """pre-commit sets PRE_COMMIT=1 for its hooks and runs them on a pipe, or on a pty when it
    colours its output: both get the full format, and only the terminal gets colour."""
    piped = _hook({"PRE_COMMIT": "1"}, terminal=False)
    assert "^^^ TL101 unmasked-load" in piped and "\x1b[" not in piped
    on_terminal = _hook({"PRE_COMMIT": "1", "TERM": "xterm"}, terminal=True)
    assert "\x1b[" in on_terminal and ANSI.sub("", on_terminal) == piped
    assert "^^^" not in _hook({}, terminal=False)  # piped outside pre-commit: concise


def test_strange_files_render_without_a_traceback(tmp_path):
    """Undecodable bytes, a PEP 263 cookie, a BOM with CRLF, a NUL byte: each finding prints,
    with its source where the file decodes, and the run exits 1."""
    files = {
        "bad_utf8.py": b"import triton\n@triton.jit\ndef k(:\n\xff\xfe\n",
        "latin.py": b"# -*- coding: latin-1 -*-\nimport triton\n@triton.jit\ndef k(x, n):\n"
        b'    s = "\xe9\xe9"; tl.store(x + tl.arange(0, 3), 1)\n',
        "bom.py": b"\xef\xbb\xbfimport triton\r\n@triton.jit\r\ndef k(:\r\n",
        "nul.py": b"import triton\n@triton.jit\ndef k(x):\n    y = 1\x00\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    command = [sys.executable, "-m", "triton_lint", "--no-cache", "--isolated"]
    proc = subprocess.run(
        [*command, "--output-format", "full", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(finding_lines(proc.stdout)) == 4
    assert '5 |     s = "éé"; tl.store(x + tl.arange(0, 3), 1)' in proc.stdout
    assert f"  | {' ' * 27}{'^' * 15} TL201 " in proc.stdout
    assert "3 | def k(:" in proc.stdout and "\r" not in proc.stdout
