"""Comparisons reduce where the tensors live: a verdict and a witness come back, never a whole
tensor. On the CPU this runs the very code a native GPU run uses; the watcher below fails the
test if any step copies a whole tensor to host memory (`.cpu()`, `.numpy()`, `.tolist()`,
`np.asarray`, `.to("cpu")` from another device). Scalars (`.item()`, `float(t)`) may cross."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from triton_lint.dynamic.backend import RunResult, Writer  # noqa: E402
from triton_lint.dynamic.case_findings import FindingLog  # noqa: E402
from triton_lint.dynamic.compare import (  # noqa: E402
    args_finite,
    finite_scale,
    first_index,
    mismatch,
    same,
    spread,
    worst_index,
)
from triton_lint.dynamic.inputs import Combo  # noqa: E402
from triton_lint.dynamic.output_check import OutputCheck  # noqa: E402
from triton_lint.stress import Case, tensor  # noqa: E402

SHAPE = (64, 64)


def wrapper(x):
    return x


class HostCopies:
    """Every whole-tensor copy to the host made while installed (numel > 1)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[str] = []
        for name in ("cpu", "numpy", "tolist", "__array__"):
            self._watch(monkeypatch, name)
        original_to = torch.Tensor.to

        def to(t: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            target = [
                a for a in (*args, kwargs.get("device")) if isinstance(a, (str, torch.device))
            ]
            to_host = bool(target) and torch.device(target[0]).type == "cpu"
            if t.numel() > 1 and to_host and t.device.type != "cpu":
                self.seen.append(f"to(cpu) of {tuple(t.shape)}")
            return original_to(t, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, "to", to)

    def _watch(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        original = getattr(torch.Tensor, name)

        def watched(t: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if t.numel() > 1:
                self.seen.append(f"{name} of {tuple(t.shape)}")
            return original(t, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, watched)


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Iterator[HostCopies]:
    yield HostCopies(monkeypatch)


def test_the_watcher_sees_a_whole_tensor_copied_to_the_host(host: HostCopies) -> None:
    # The comparison as it was: whole outputs through `.cpu().numpy()`. The watcher must see it,
    # or the tests below prove nothing.
    import numpy as np

    t = torch.ones(SHAPE)
    np.isclose(t.cpu().numpy(), t.numpy())
    assert host.seen == ["cpu of (64, 64)", "numpy of (64, 64)", "numpy of (64, 64)"]
    host.seen.clear()
    float(t.sum())
    t[3, 4].item()
    assert host.seen == []


def test_mismatch_and_friends_reduce_without_copying_tensors(host: HostCopies) -> None:
    exp = torch.linspace(-2.0, 2.0, SHAPE[0] * SHAPE[1]).reshape(SHAPE)
    out = exp.clone()
    out[5, 7] += 0.5
    out[9, 1] += 3.0
    bad, err = mismatch(out, exp, [exp])
    assert isinstance(bad, torch.Tensor) and bad.device == out.device
    assert int(bad.sum()) == 2
    assert first_index(bad) == (5, 7)
    assert worst_index(bad, err) == (9, 1)
    assert finite_scale([exp, torch.tensor([float("inf"), -7.0])]) == 7.0
    assert args_finite([exp, 3]) and not args_finite([torch.tensor([1.0, float("nan")])])
    assert same([exp], [exp.clone()]) and not same([out], [exp])
    assert spread([out], [exp]) == pytest.approx(3.0)
    ints = torch.arange(100, dtype=torch.int32)
    assert int(mismatch(ints, ints + (ints == 42), [])[0].sum()) == 1
    assert host.seen == []


def _check(outputs: list[torch.Tensor]) -> FindingLog:
    case = Case(fn=wrapper, reference=wrapper, inputs=[tensor("M", "N")])
    log = FindingLog(case, "cuda")

    class Backend:
        device = "cuda"

        def writer(self, rerun: Any, res: RunResult, k: int, idx: tuple[int, ...]) -> Writer:
            return Writer(("kern.py", 12, "kern"), [3, 0, 0])

    def rerun(combo: Combo, mode: Any) -> RunResult:
        # The TL906 run with the other empty-fill: a NaN the kernel wrote stays NaN.
        assert mode.alt_fill
        return RunResult(outputs=outputs)

    check = OutputCheck(case, log, Backend(), rerun)  # type: ignore[arg-type]
    combo = Combo({"M": SHAPE[0], "N": SHAPE[1]}, (torch.float32,), "normal", "contiguous")
    ref = torch.ones(SHAPE)
    check.compare(RunResult(outputs=outputs), [ref], [ref], combo)
    return log


def test_a_mismatch_brings_back_only_its_witness(host: HostCopies) -> None:
    out = torch.ones(SHAPE)
    out[2, 3] = 1.5
    out[40, 41] = 9.0
    log = _check([out])
    assert host.seen == []
    (f,) = log.findings.values()
    assert (f.code, f.line) == ("TL903", 12)
    assert "output 0: 2 of 4096 element(s) beyond tolerance; worst at index (40, 41): " in (
        f.message
    )
    assert "got 9.0, expected 1.0 (written by program (3, 0, 0))" in f.message
    assert f.properties["index"] == [40, 41] and f.properties["got"] == 9.0


def test_non_finite_output_from_finite_inputs_names_the_first_element(host: HostCopies) -> None:
    out = torch.ones(SHAPE)
    out[7, 0] = float("inf")
    out[8, 0] = float("nan")
    log = _check([out])
    assert host.seen == []
    (f,) = log.findings.values()
    assert f.code == "TL902"
    assert "output 0 has 2 non-finite element(s) (first inf at index (7, 0), reference 1.0)" in (
        f.message
    )
