"""TL203 on a batch that every caller asserts is 1 (`triton_lint.model.unit_batch`): a
constexpr filled from the leading dimension of the launching function's tensor parameter is
information when every call path of that function is followed by ``assert out.shape[0] ==
1`` (or ``out.size(0)``, or ``if ...: raise``) on what the call returns, through the callers
the project index follows (an autograd function's ``forward`` through ``apply``); a warning
when one path lacks it, when the callers are unknown, or for any other dimension."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst

from tests.project_files import project_index
from triton_lint.finding import Severity
from triton_lint.model.host import bind_call
from triton_lint.run import RunOptions, lint_paths
from triton_lint.selection import Layer

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "project"


def _findings(case: Path) -> set[tuple[str, int, str, Severity]]:
    options = RunOptions(cli_layer=Layer(select=["TL203"]), jobs=1)
    result = lint_paths([case], options)
    assert not result.crashes
    return {(Path(f.path).name, f.line, f.code, f.severity) for f in result.findings}


def _messages(case: Path) -> list[str]:
    options = RunOptions(cli_layer=Layer(select=["TL203"]), jobs=1)
    return sorted(f.message for f in lint_paths([case], options).findings)


def _copy(tmp_path: Path, name: str) -> Path:
    case = tmp_path / name
    shutil.copytree(CASES / name, case)
    return case


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_every_caller_asserting_the_batch_makes_it_information():
    case = CASES / "tl203_unit_batch_good"
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.INFO)}
    (message,) = _messages(case)
    model = case / "lin" / "model.py"
    assert f"every caller asserts the batch is 1: {model}:8, {model}:14," in message


def test_one_caller_without_the_assert_keeps_the_warning():
    case = CASES / "tl203_unit_batch_bad"
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.WARNING)}
    assert "asserts the batch" not in _messages(case)[0]


def test_another_dimension_stays_a_warning(tmp_path):
    case = _copy(tmp_path, "tl203_unit_batch_good")
    _edit(case / "lin" / "kernels.py", "n, BLOCK", "n, seq_len: tl.constexpr, BLOCK")
    _edit(case / "lin" / "ops.py", "n * d, BLOCK", "n * d, q.shape[2], BLOCK")
    assert _findings(case) == {
        ("kernels.py", 6, "TL203", Severity.INFO),
        ("kernels.py", 6, "TL203", Severity.WARNING),
    }
    info, warning = _messages(case)
    assert info.startswith("`b`") and "asserts the batch is 1" in info
    assert warning.startswith("`seq_len`") and "asserts" not in warning


def test_an_assert_on_another_dimension_is_no_evidence(tmp_path):
    case = _copy(tmp_path, "tl203_unit_batch_good")
    _edit(case / "lin" / "model.py", "output.shape[0] == 1", "output.shape[1] == 1")
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.WARNING)}


def test_an_assert_on_what_the_call_does_not_return_is_no_evidence(tmp_path):
    case = _copy(tmp_path, "tl203_unit_batch_good")
    _edit(case / "lin" / "model.py", "assert output.shape[0] == 1", "assert q.shape[0] == 1")
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.WARNING)}


def test_a_launching_function_without_known_callers_keeps_the_warning(tmp_path):
    case = _copy(tmp_path, "tl203_unit_batch_good")
    (case / "lin" / "model.py").unlink()
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.WARNING)}


def test_a_caller_that_returns_a_part_the_launch_does_not_reach_is_no_evidence(tmp_path):
    case = _copy(tmp_path, "tl203_unit_batch_good")
    _edit(case / "lin" / "ops.py", "return output, kv", "return q, kv")
    assert _findings(case) == {("kernels.py", 6, "TL203", Severity.WARNING)}


def test_the_batch_of_an_autograd_function_is_read_through_apply():
    good = CASES / "tl203_unit_batch_apply_good"
    assert _findings(good) == {("kernels.py", 7, "TL203", Severity.INFO)}
    (message,) = _messages(good)
    assert f"a caller asserts the batch is 1: {good / 'lattn' / 'model.py'}:8," in message
    bad = CASES / "tl203_unit_batch_apply_bad"
    assert _findings(bad) == {("kernels.py", 7, "TL203", Severity.WARNING)}


def test_the_index_follows_forward_through_apply_and_its_aliases(tmp_path):
    case = CASES / "tl203_unit_batch_apply_good" / "lattn"
    files = {f"lattn/{p.name}": p.read_text() for p in case.glob("*.py")}
    files["lattn/direct.py"] = (
        "from lattn.kernels import _Attention\n\n\n"
        "def direct(q, kv):\n    return _Attention.apply(q, kv)\n"
    )
    context = project_index(tmp_path, files).context_for("lattn/kernels.py")
    assert context is not None
    assert context.callers[("lattn/kernels.py", "_Attention.forward")] == {
        "lattn/kernels.py": ("attention_",),
        "lattn/direct.py": ("_Attention.apply",),
    }
    assert context.callers[("lattn/kernels.py", "attention")] == {"lattn/model.py": ("attention",)}


def test_apply_binds_the_arguments_after_ctx():
    forward = cst.parse_statement("@staticmethod\ndef forward(ctx, q, kv):\n    return q\n")
    assert isinstance(forward, cst.FunctionDef)

    def bound(call: str) -> dict[str, str]:
        expr = cst.parse_expression(call)
        assert isinstance(expr, cst.Call)
        return {k: cst.Module([]).code_for_node(v) for k, v in bind_call(forward, expr).items()}

    assert bound("attention_(q1, state)") == {"q": "q1", "kv": "state"}
    assert bound("Attention.apply(q1, state)") == {"q": "q1", "kv": "state"}
    assert bound("Attention.forward(c, q1, state)") == {"ctx": "c", "q": "q1", "kv": "state"}
