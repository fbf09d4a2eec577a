"""TL501: an autotuned kernel accumulates with atomics into a buffer autotune does not reset."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.pointers import pointer_bases
from triton_lint.rules.base import Rule

# Atomics whose result depends on how many times the kernel ran (max/min/and/or/xchg/cas
# give the same result when the benchmark repeats the launch).
_ACCUMULATING = {"atomic_add", "atomic_xor"}


class AutotuneAtomicsWithoutReset(Rule):
    code = "TL501"
    name = "autotune-atomics-without-reset"
    category = Category.CORRECTNESS
    severity = Severity.WARNING
    summary = "Autotuned kernel accumulates with atomics into a buffer not in `reset_to_zero`"
    rationale = """\
To pick a config, `@triton.autotune` runs the kernel many times on the caller's real buffers.
A kernel that accumulates with `tl.atomic_add` (split-K GEMM, histogram, gradient scatter)
adds its result once per benchmark run, so the first call returns a multiple of the right
answer unless the buffer is listed in `reset_to_zero=[...]` (zeroed before each run) or
`restore_value=[...]` (saved and restored)."""
    fix = """\
List the accumulated pointer: `@triton.autotune(configs, key=[...], reset_to_zero=["out_ptr"])`."""
    bad = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})],
    key=["n"],
)
@triton.jit
def histogram(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)  # <- TL501
"""
    good = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})],
    key=["n"],
    reset_to_zero=["hist_ptr"],
)
@triton.jit
def histogram(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        tune = kernel.autotune
        if tune is None or (tune.configs_resolved and len(tune.configs) <= 1):
            return  # a single config is never benchmarked
        if "pre_hook" in kernel.module.text:
            return  # configs or the tuner reset buffers in a hook (e.g. `init_to_zero("C")`)
        protected = set(tune.reset_to_zero) | set(tune.restore_value)
        reported: set[str] = set()
        for access in kernel.accesses:
            if access.op not in _ACCUMULATING or access.pointer is None:
                continue
            for param in pointer_bases(kernel, access.pointer):
                if param.name in protected or param.name in reported:
                    continue
                reported.add(param.name)
                yield self.finding(
                    kernel,
                    access.call,
                    f"`tl.{access.op}` accumulates into `{param.name}`, which autotune's "
                    "benchmark runs do not reset: add it to `reset_to_zero`",
                )
