"""Cost of one checked launch of a vector add at a stress size and at 2**24 elements (run by
bench/gpu.py).

`plain`: the wrapper alone; `checked`: the same call with the compiled-in bounds checks
(`triton_lint.dynamic.bounds`: the allocation table written before the launch, the violation
count read after it); `whole`: the whole checked run of one combination as the engine does it
(inputs generated on the GPU and placed between guards, the checked run, guards checked, the
reference computed and compared with the outputs on the GPU: one verdict per output comes back);
`whole_host`: the same work with inputs generated on the host and the outputs and reference
copied to the host before the comparison (what the engine did before). Run under
compute-sanitizer, `plain` gives memcheck's cost per launch. Prints one JSON object:
milliseconds per mode and size.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "0")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures" / "dynamic"))

import torch  # noqa: E402
import vector_add  # noqa: E402

from triton_lint.dynamic.backend import RunMode  # noqa: E402
from triton_lint.dynamic.bounds import BoundsChecker  # noqa: E402
from triton_lint.dynamic.case_runner import CaseRunner  # noqa: E402
from triton_lint.dynamic.compare import flatten  # noqa: E402
from triton_lint.dynamic.cuda_backend import CudaBackend  # noqa: E402
from triton_lint.dynamic.inputs import Combo, make_args  # noqa: E402

SIZES = (1030, 2**24)
CALLS = 20


def per_call_ms(fn) -> float:
    """Every call waits for the GPU, as a checking run does before it reads the outputs."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
        torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / CALLS


def checked_call(bounds: BoundsChecker, x: torch.Tensor, y: torch.Tensor) -> None:
    bounds.reset()
    vector_add.add_clean(x, y)
    assert bounds.events(None) == []  # reads the violation count: one device sync


def whole_run(runner: CaseRunner, combo: Combo) -> None:
    """One combination's checked run and its comparison, all on the device."""
    res = runner.call(combo)
    ref, ref_args = runner.reference(combo)
    runner.outputs.compare(res, ref, ref_args, combo)
    assert not runner.findings and not res.events


def whole_run_on_host(runner: CaseRunner, combo: Combo) -> None:
    """The same with host inputs, and the outputs and the reference compared on the host."""
    case = runner.case
    res = runner.backend.call(case, make_args(case, combo), RunMode())
    res.outputs = [t.cpu() for t in res.outputs]
    args = runner.backend.to_device(make_args(case, combo))
    ref = [t.cpu() for t in flatten(case.reference(*args), args)]
    runner.outputs.compare(res, ref, [a.cpu() for a in args], combo)
    assert not runner.findings and not res.events


def main() -> None:
    modes = sys.argv[1:] or ["plain", "checked", "whole", "whole_host"]
    case = vector_add.add_clean.__stress_case__
    out: dict[str, dict[int, float]] = {mode: {} for mode in modes}
    inputs = {n: (torch.randn(n, device="cpu"), torch.randn(n, device="cpu")) for n in SIZES}
    # The checking child's setting (wrappers that allocate without `device=` get the GPU), for
    # the plain calls too: both pay what it costs per torch call.
    torch.set_default_device("cuda")
    if "plain" in modes:  # before any check is installed: the kernel compiles plain
        for n, (x, y) in inputs.items():
            dx, dy = x.cuda(), y.cuda()
            out["plain"][n] = per_call_ms(lambda dx=dx, dy=dy: vector_add.add_clean(dx, dy))
    if {"checked", "whole", "whole_host"} & set(modes):
        backend = CudaBackend(redzones=True)
        backend.recorder.clear_compiled()
        vector_add.add_kernel.device_caches.clear()  # compile again, with the checks
        assert backend.bounds is not None
        for n, (x, y) in inputs.items():
            if "checked" in modes:
                dx, dy = x.cuda(), y.cuda()
                out["checked"][n] = per_call_ms(
                    lambda dx=dx, dy=dy: checked_call(backend.bounds, dx, dy)
                )
            combo = Combo({"N": n}, (torch.float32, torch.float32), "normal", "contiguous")
            runner = CaseRunner(backend, case)
            if "whole" in modes:
                out["whole"][n] = per_call_ms(lambda r=runner, c=combo: whole_run(r, c))
            if "whole_host" in modes:
                out["whole_host"][n] = per_call_ms(
                    lambda r=runner, c=combo: whole_run_on_host(r, c)
                )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
