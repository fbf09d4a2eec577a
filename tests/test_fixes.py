"""The fix machinery (selection, application, re-lint loop, safe writing) and TL401's fix."""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from triton_lint.cli import cli
from triton_lint.engine import lint_text
from triton_lint.finding import Applicability, Category, Edit, Finding, Fix, Severity, Span
from triton_lint.fixes import (
    MAX_ITERATIONS,
    FixError,
    apply_fixes,
    fix_text,
    unified_diff,
    write_fixed,
)
from triton_lint.rules import all_rules, rules_by_code

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "TL401" / "bad_fixable.py"

FIXED = """\
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # show the input
    if factor > 1:
        pass  # <- TL401
    if pid == 0: pass  # <- TL401
    tl.store(y_ptr + offs, x * factor, mask=mask)
""" + FIXTURE.read_text(encoding="utf-8").split("x * factor, mask=mask)\n", 1)[1]


def _run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def _finding(span: Span, fix: Fix | None, code: str = "TL999") -> Finding:
    return Finding(
        "k.py", span, code, "synthetic", Severity.WARNING, Category.CORRECTNESS, "m", "k", fix=fix
    )


def _fix(applicability: Applicability, *edits: Edit) -> Fix:
    return Fix(applicability, "synthetic", edits)


# -- TL401 on the fixture -------------------------------------------------------------------


def test_fix_removes_debug_prints_and_keeps_formatting(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, "k.py")
    result = _run("k.py", "--isolated", "--fix")
    assert result.exit_code == 0, result.output
    assert "Fixed 4 findings in 1 file (TL401 4)." in result.output
    fixed = Path("k.py").read_text(encoding="utf-8")
    assert fixed == FIXED
    compile(fixed, "k.py", "exec")
    # re-linted clean with every rule
    assert lint_text("k.py", fixed, list(all_rules())).findings == []


def test_diff_prints_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, "k.py")
    before = Path("k.py").read_bytes()
    result = _run("k.py", "--isolated", "--diff")
    assert result.exit_code == 1
    assert Path("k.py").read_bytes() == before
    assert result.stdout.startswith("--- a/k.py\n+++ b/k.py\n")
    assert '-    tl.device_print("x", x)  # <- TL401\n' in result.stdout
    assert "+        pass  # <- TL401\n" in result.stdout
    assert "Would fix 4 findings in 1 file." in result.output


def test_diff_of_a_clean_file_exits_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text(FIXED)
    result = _run("k.py", "--isolated", "--diff")
    assert result.exit_code == 0 and result.stdout == ""


def test_fix_flags_are_validated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _run("-", "--fix", input=FIXTURE.read_text()).exit_code == 2
    assert _run("k.py", "--unsafe-fixes").exit_code == 2


def test_stdin_diff_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run(
        "-", "--isolated", "--diff", "--stdin-filename", "k.py", input=FIXTURE.read_text()
    )
    assert result.exit_code == 1
    assert "--- a/k.py" in result.stdout
    assert not Path("k.py").exists()


def _tl401_fix(source: str) -> Fix | None:
    findings = lint_text("k.py", textwrap.dedent(source), [rules_by_code()["TL401"]]).findings
    assert len(findings) == 1
    return findings[0].fix


def test_tl401_fix_is_unsafe_when_arguments_call_something():
    fix = _tl401_fix(
        """\
        import triton
        import triton.language as tl

        @triton.jit
        def k(p):
            tl.device_print("v", tl.atomic_add(p, 1))
            tl.store(p, 1)
        """
    )
    assert fix is not None and fix.applicability is Applicability.UNSAFE


def test_tl401_no_fix_inside_an_expression_or_a_shared_line():
    assert (
        _tl401_fix(
            """\
            import triton
            import triton.language as tl

            @triton.jit
            def k(p):
                x = 1; tl.device_print("v", x)
            """
        )
        is None
    )


def test_tl401_only_statement_of_kernel_becomes_pass():
    fix = _tl401_fix(
        """\
        import triton
        import triton.language as tl

        @triton.jit
        def k(p):
            # just debugging
            tl.static_print(p)
        """
    )
    assert fix is not None and fix.applicability is Applicability.SAFE
    assert fix.edits[0].content == "pass"


# -- selection and application -------------------------------------------------------------


TEXT = "a = 1\nb = 2\nc = 3\n"


def test_safe_only_unless_unsafe_fixes():
    safe = _finding(Span(1, 5, 1, 6), _fix(Applicability.SAFE, Edit(Span(1, 5, 1, 6), "10")))
    unsafe = _finding(Span(2, 5, 2, 6), _fix(Applicability.UNSAFE, Edit(Span(2, 5, 2, 6), "20")))
    text, applied = apply_fixes(TEXT, [safe, unsafe], unsafe=False)
    assert text == "a = 10\nb = 2\nc = 3\n" and applied == [safe]
    text, applied = apply_fixes(TEXT, [safe, unsafe], unsafe=True)
    assert text == "a = 10\nb = 20\nc = 3\n" and applied == [safe, unsafe]


def test_unsafe_fixes_through_the_cli(tmp_path, monkeypatch):
    """A rule attaching an unsafe fix: `--fix` leaves it, `--fix --unsafe-fixes` applies it."""
    from triton_lint.rules.tl401_debug_print import DebugPrint

    def unsafe_check(self, kernel):
        for finding in original(self, kernel):
            if finding.fix is not None:
                finding.fix = Fix(Applicability.UNSAFE, finding.fix.message, finding.fix.edits)
            yield finding

    original = DebugPrint.check_kernel
    monkeypatch.setattr(DebugPrint, "check_kernel", unsafe_check)
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, "k.py")
    result = _run("k.py", "--isolated", "--fix")
    assert result.exit_code == 1
    assert "4 more with `--fix --unsafe-fixes`" in result.output
    assert Path("k.py").read_text() == FIXTURE.read_text()
    result = _run("k.py", "--isolated", "--fix", "--unsafe-fixes")
    assert result.exit_code == 0, result.output
    assert Path("k.py").read_text() == FIXED


def test_multi_edit_fix_and_deletion_to_end_of_file():
    two = _finding(
        Span(1, 1, 1, 2),
        _fix(
            Applicability.SAFE,
            Edit(Span(1, 1, 1, 2), "x"),
            Edit(Span(3, 1, 4, 1), ""),  # delete the last line (end past the file)
        ),
    )
    text, _ = apply_fixes(TEXT, [two], unsafe=False)
    assert text == "x = 1\nb = 2\n"


def test_overlapping_fixes_wait_for_the_next_round():
    first = _finding(Span(1, 1, 1, 6), _fix(Applicability.SAFE, Edit(Span(1, 1, 1, 6), "A")))
    second = _finding(Span(1, 5, 1, 6), _fix(Applicability.SAFE, Edit(Span(1, 5, 1, 6), "B")))
    text, applied = apply_fixes(TEXT, [first, second], unsafe=False)
    assert text == "A\nb = 2\nc = 3\n" and applied == [first]

    rounds: list[str] = []

    def relint(text: str) -> list[Finding]:
        rounds.append(text)
        if "b = 2" in text:  # the rule still fires on line 2 until it is fixed
            edit = Edit(Span(2, 1, 2, 6), "B")
            return [_finding(Span(2, 1, 2, 6), _fix(Applicability.SAFE, edit))]
        return []

    both = [
        first,
        _finding(Span(1, 1, 2, 6), _fix(Applicability.SAFE, Edit(Span(2, 1, 2, 6), "B"))),
    ]
    outcome, remaining = fix_text("k.py", TEXT, both, relint)
    assert outcome.fixed == "A\nB\nc = 3\n"
    assert remaining == []


def test_identical_fixes_are_applied_once():
    edit = Edit(Span(1, 1, 1, 2), "x")
    one = _finding(Span(1, 1, 1, 2), _fix(Applicability.SAFE, edit), code="TL998")
    two = _finding(Span(1, 1, 1, 2), _fix(Applicability.SAFE, edit), code="TL999")
    text, applied = apply_fixes(TEXT, [one, two], unsafe=False)
    assert text == "x = 1\nb = 2\nc = 3\n" and len(applied) == 2


def test_loop_is_bounded():
    def relint(text: str) -> list[Finding]:
        edit = Edit(Span(1, 1, 1, 1), "#")  # a rule that always wants one more change
        return [_finding(Span(1, 1, 1, 2), _fix(Applicability.SAFE, edit))]

    outcome, _ = fix_text("k.py", TEXT, relint(TEXT), relint)
    assert outcome.applied == MAX_ITERATIONS
    assert any("did not converge" in w for w in outcome.warnings)


def test_a_fix_that_breaks_parsing_is_rolled_back():
    bad = _finding(Span(1, 1, 1, 2), _fix(Applicability.SAFE, Edit(Span(1, 1, 1, 2), "(")))
    outcome, _ = fix_text("k.py", TEXT, [bad], lambda text: [])
    assert outcome.fixed == TEXT and "unparsable" in outcome.warnings[0]


# -- writing: encoding, line endings, concurrent changes ------------------------------------


def _fix_file_with_cli(tmp_path: Path, data: bytes) -> bytes:
    path = tmp_path / "k.py"
    path.write_bytes(data)
    result = _run(str(path), "--isolated", "--fix")
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def test_crlf_file_stays_crlf(tmp_path):
    source = FIXTURE.read_text().replace("\n", "\r\n").encode()
    fixed = _fix_file_with_cli(tmp_path, source)
    assert fixed == FIXED.replace("\n", "\r\n").encode()


def test_bom_and_coding_cookie_are_kept(tmp_path):
    bom = b"\xef\xbb\xbf" + FIXTURE.read_bytes()
    assert _fix_file_with_cli(tmp_path, bom) == b"\xef\xbb\xbf" + FIXED.encode()
    latin = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXTURE.read_text()).encode("latin-1")
    expected = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED).encode("latin-1")
    assert _fix_file_with_cli(tmp_path, latin) == expected


def test_crlf_bom_tabs_and_non_ascii_names_round_trip_apart_from_the_fix(tmp_path):
    """The fixture, re-indented with tabs, with non-ASCII names and comments, CRLF line ends
    and a BOM, fixes to the known fixed text under the same changes, byte for byte."""

    def hostile(text: str) -> bytes:
        text = re.sub(r"^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), text, flags=re.M)
        text = (
            text.replace("factor", "größe")
            .replace("scale", "skalieren_ñ")
            .replace("# show", "# zeige ✓")
        )
        return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()

    assert _fix_file_with_cli(tmp_path, hostile(FIXTURE.read_text())) == hostile(FIXED)


@pytest.mark.parametrize("failing", ["write", "replace", "interrupt"])
def test_a_write_that_fails_midway_leaves_the_original(tmp_path, monkeypatch, failing):
    path = tmp_path / "k.py"
    original = FIXTURE.read_bytes()
    path.write_bytes(original)
    if failing == "write":  # the disk fills up halfway through the temporary file
        real_fdopen = os.fdopen

        def fdopen(*args, **kwargs):
            stream = real_fdopen(*args, **kwargs)
            stream.write = lambda data: (_ for _ in ()).throw(OSError(28, "No space left"))
            return stream

        monkeypatch.setattr(os, "fdopen", fdopen)
        raised: type[BaseException] = OSError
    elif failing == "replace":
        monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(5, "EIO")))
        raised = OSError
    else:  # Ctrl-C just before the rename
        monkeypatch.setattr(shutil, "copymode", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
        raised = KeyboardInterrupt
    with pytest.raises(raised):
        write_fixed(path, original, FIXED)
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]  # no temporary file left


def test_file_mode_is_kept(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(FIXTURE.read_bytes())
    path.chmod(0o640)
    write_fixed(path, FIXTURE.read_bytes(), FIXED)
    assert path.read_text() == FIXED
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]  # no temporary file left


def test_refuses_a_file_that_changed_since_it_was_read(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(FIXTURE.read_text() + "# edited meanwhile\n")
    with pytest.raises(FixError, match="changed since it was read"):
        write_fixed(path, FIXTURE.read_bytes(), FIXED)
    assert path.read_text().endswith("# edited meanwhile\n")


def test_unencodable_fix_is_refused(tmp_path):
    path = tmp_path / "k.py"
    data = b"# -*- coding: ascii -*-\nx = 1\n"
    path.write_bytes(data)
    with pytest.raises(FixError, match="cannot be encoded"):
        write_fixed(path, data, "# -*- coding: ascii -*-\nx = '\u00e9'\n")
    assert path.read_bytes() == data


def test_unified_diff_marks_a_missing_final_newline():
    diff = unified_diff("k.py", "a\nb", "a\n")
    assert "\\ No newline at end of file" in diff
