"""Child process: import one user module under the interpreter, run its stress cases, emit findings.

Run as `python -m triton_lint.dynamic.child --file F --out O [--only NAME]... [--skip K]`.
`TRITON_INTERPRET=1` is set here before triton can be imported. Results are appended to `O`
as JSON lines (`cases`, `start`, `done`) so the parent can tell which case crashed or hung.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import importlib.util
import json
import linecache
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from triton_lint import stress
from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic.inputs import NONFINITE_PATTERNS, Combo, combos, make_args
from triton_lint.dynamic.sanitizer import Sanitizer, Site
from triton_lint.finding import Finding, RelatedLocation, Span

POISONS = ("inf", "seven", "nan", "neginf")
_LIB_DIRS = (
    os.path.dirname(torch.__file__),
    os.path.dirname(os.path.dirname(__file__)),
    os.path.dirname(os.path.abspath(importlib.util.find_spec("triton").origin or "")),  # type: ignore[union-attr]
)

# Default tolerances per output dtype: (rtol, atol before scaling by the data's magnitude).
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-7, 1e-9),
}


def _fill_value(dtype: torch.dtype, alt: bool) -> float | int | None:
    """What `torch.empty*` is filled with during a run (two fills prove unwritten)."""
    if dtype.is_floating_point:
        return 1357.0 if alt else float("nan")
    if dtype == torch.bool:
        return None
    info = torch.iinfo(dtype)
    return info.min + 3 if alt else info.max - 3


@dataclass
class RunResult:
    """What one call of the wrapper produced, and what the sanitizer saw meanwhile."""

    outputs: list[torch.Tensor] = field(default_factory=list)
    error: BaseException | None = None
    tb: list[traceback.FrameSummary] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    masked_loads: dict[Site, int] = field(default_factory=dict)
    alloc_sites: dict[int, Site] = field(default_factory=dict)
    output_sites: list[Site | None] = field(default_factory=list)
    first_nonfinite: dict[str, Any] | None = None
    stores: list[Any] | None = None
    launches: list[tuple[str, Site]] = field(default_factory=list)


def _user_site(skip_frames: int = 2) -> Site:
    """The innermost frame outside torch and triton_lint (the allocation line in the wrapper)."""
    f = sys._getframe(skip_frames)
    while f is not None:
        if not f.f_code.co_filename.startswith(_LIB_DIRS):
            return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return ("<unknown>", 0, "?")


@contextmanager
def _filled_empty(alt: bool, sites: dict[int, Site]) -> Iterator[None]:
    """Make `torch.empty*` return NaN/sentinel-filled tensors so unwritten output is visible."""
    originals = {
        "empty": torch.empty,
        "empty_like": torch.empty_like,
        "empty_strided": torch.empty_strided,
    }
    orig_new_empty = torch.Tensor.new_empty

    def fill(t: torch.Tensor) -> torch.Tensor:
        if isinstance(t, torch.Tensor) and t.numel():
            v = _fill_value(t.dtype, alt)
            if v is not None:
                t.fill_(v)
            sites[t.untyped_storage().data_ptr()] = _user_site(3)
        return t

    def wrap(orig: Callable[..., Any]) -> Callable[..., Any]:
        def w(*a: Any, **k: Any) -> Any:
            return fill(orig(*a, **k))

        return w

    for name, orig in originals.items():
        setattr(torch, name, wrap(orig))
    torch.Tensor.new_empty = wrap(orig_new_empty)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, orig in originals.items():
            setattr(torch, name, orig)
        torch.Tensor.new_empty = orig_new_empty  # type: ignore[method-assign]


def _flatten(value: Any, args: list[Any]) -> list[torch.Tensor]:
    """Tensors of a wrapper/reference result: `None` means in-place arguments."""
    if value is None:
        return [a for a in args if isinstance(a, torch.Tensor)]
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        out: list[torch.Tensor] = []
        for v in value:
            out.extend(_flatten(v, []) if v is not None else [])
        return out
    if isinstance(value, (int, float)):
        return [torch.tensor(value)]
    return []


class CaseRunner:
    """Runs every combo of one case and turns what it sees into findings."""

    def __init__(
        self,
        san: Sanitizer,
        case: stress.Case,
        emit: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.san = san
        self.case = case
        self.emit = emit
        self.findings: dict[tuple[Any, ...], Finding] = {}
        self.tl905_done: set[int] = set()
        self.tl904_done: set[Any] = set()
        #: Codes found while running the current combo (for its stress-matrix cell).
        self.combo_codes: set[str] = set()
        self.combo_kernels: list[str] = []
        #: Launches of the current combo's first run (related locations of its findings).
        self.main_launches: list[tuple[str, Site]] = []

    # -- running -------------------------------------------------------------------------

    def call(
        self,
        combo: Combo,
        *,
        alt_fill: bool = False,
        poison: tuple[str, set[int] | None] | None = None,
        reverse: bool = False,
        trace: bool = False,
    ) -> RunResult:
        san = self.san
        san.reset()
        san.poison = poison
        san.reverse_grid = reverse
        if trace:
            san.set_trace(True)
        res = RunResult()
        args = make_args(self.case, combo)
        try:
            with _filled_empty(alt_fill, res.alloc_sites):
                out = self.case.fn(*args)
            flat = _flatten(out, args)
            res.output_sites = [res.alloc_sites.get(t.untyped_storage().data_ptr()) for t in flat]
            # Trace runs keep the real tensors: their addresses are matched against the store log.
            res.outputs = [t.detach() if trace else t.detach().clone() for t in flat]
        except Exception as e:
            res.error = e
            # The kernel line of an InterpreterError is in its cause's traceback.
            res.tb = traceback.extract_tb(e.__traceback__)
            if e.__cause__ is not None:
                res.tb += traceback.extract_tb(e.__cause__.__traceback__)
        finally:
            res.events = list(san.events)
            res.masked_loads = dict(san.masked_loads)
            res.first_nonfinite = san.first_nonfinite
            res.stores = san.stores
            res.launches = list(san.launches)
            for kernel, _site in res.launches:
                if kernel not in self.combo_kernels:
                    self.combo_kernels.append(kernel)
            if trace:
                san.set_trace(False)
            san.poison = None
            san.reverse_grid = False
        return res

    def reference(self, combo: Combo) -> tuple[list[torch.Tensor] | None, list[Any]]:
        args = make_args(self.case, combo)
        try:
            out = self.case.reference(*args)
        except Exception:
            return None, args
        return [t.detach() for t in _flatten(out, args)], args

    def run(self) -> list[Finding]:
        """Run every combo; with `emit`, report each one (`combo_start`, `combo`) as it goes."""
        for combo in combos(self.case):
            cell = {"variant": combo.variant(), "pattern": combo.pattern}
            if self.emit is not None:
                self.emit({"event": "combo_start", **cell})
            self.combo_codes = set()
            self.combo_kernels = []
            status = self.run_combo(combo)
            if status is None:
                status = (
                    "error"
                    if "TL908" in self.combo_codes
                    else "fail"
                    if self.combo_codes
                    else "pass"
                )
            if self.emit is not None:
                self.emit(
                    {
                        "event": "combo",
                        **cell,
                        "kernel": ", ".join(self.combo_kernels),
                        "status": status,
                        "codes": sorted(self.combo_codes),
                    }
                )
        return list(self.findings.values())

    def run_combo(self, combo: Combo) -> str | None:
        """Run one combo; returns "skip" when it was not checked, else None (status by codes)."""
        res = self.call(combo)
        self.main_launches = res.launches
        if res.error is not None:
            if combo.layout != "contiguous":
                return "skip"  # the wrapper does not accept this layout: fine
            self.report_error(res, combo)
            return None
        self.report_events(res.events, combo)
        ref, ref_args = self.reference(combo)
        if ref is None:
            return None  # the sanitizer's checks ran; there is nothing to compare against
        self.compare(res, ref, ref_args, combo)
        if (
            res.masked_loads
            and combo.layout == "contiguous"
            and combo.pattern == (self.case.patterns or ["normal"])[0]
        ):
            self.check_masked_lanes(res, combo)
        key = combo.dtypes
        if key not in self.tl904_done and combo.layout == "contiguous":
            self.tl904_done.add(key)
            self.check_determinism(res, combo)
        return None

    # -- checks --------------------------------------------------------------------------

    def compare(
        self, res: RunResult, ref: list[torch.Tensor], ref_args: list[Any], combo: Combo
    ) -> None:
        if len(ref) != len(res.outputs):
            self.add(
                "TL903",
                self.case_site(),
                f"wrapper returned {len(res.outputs)} tensor(s), reference {len(ref)} "
                f"{combo.short()}",
                combo,
                {},
            )
            return
        # Near-max inputs overflow legitimately: once the case has a mismatch, an overflow there is
        # a consequence of the wrong values (TL903), not a numerics bug of its own.
        has_mismatch = any(k[0] == "TL903" for k in self.findings)
        inputs_finite = (
            combo.pattern not in NONFINITE_PATTERNS
            and not (combo.pattern == "near_max" and has_mismatch)
            and combo.layout == "contiguous"  # gaps of sliced inputs hold NaN on purpose
        )
        for k, (out, exp) in enumerate(zip(res.outputs, ref, strict=False)):
            if tuple(out.shape) != tuple(exp.shape):
                self.add(
                    "TL903",
                    self.case_site(),
                    f"output {k} has shape {tuple(out.shape)}, reference {tuple(exp.shape)} "
                    f"{combo.short()}",
                    combo,
                    {"output": k},
                )
                continue
            bad, err = self.mismatch(out, exp, ref_args)
            if not bad.any():
                continue
            o = (
                out.detach().to(torch.float64).numpy()
                if out.dtype.is_floating_point
                else out.numpy()
            )
            e = (
                exp.detach().to(torch.float64).numpy()
                if exp.dtype.is_floating_point
                else exp.numpy()
            )
            # TL906: elements equal to the empty-fill value in two runs with different fills.
            fill = _fill_value(out.dtype, False)
            filled = bad & (np.isnan(o) if out.dtype.is_floating_point else (o == fill))
            if filled.any():
                alt = self.call(combo, alt_fill=True)
                if alt.error is None and k < len(alt.outputs):
                    ao = alt.outputs[k].detach().to(torch.float64).numpy()
                    alt_fill = float(_fill_value(out.dtype, True) or 0)
                    unwritten = filled & (
                        ao == float(torch.tensor(alt_fill, dtype=out.dtype).double())
                    )
                    if unwritten.any():
                        self.report_unwritten(res, out, unwritten, k, combo)
                        bad = bad & ~unwritten
                        if not bad.any():
                            continue
            nonfinite = bad & ~np.isfinite(o) & np.isfinite(e)
            if inputs_finite and nonfinite.any() and _args_finite(ref_args):
                self.report_nonfinite(combo, k, nonfinite, o, e)
                continue
            self.report_mismatch(combo, k, bad, err, o, e)

    def mismatch(
        self, out: torch.Tensor, exp: torch.Tensor, args: list[Any]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Boolean mask of elements beyond tolerance, and |error|."""
        if not out.dtype.is_floating_point and not exp.dtype.is_floating_point:
            o, e = out.numpy().astype(np.int64), exp.numpy().astype(np.int64)
            bad = o != e
            return bad, np.abs(o - e).astype(np.float64)
        o = out.detach().to(torch.float64).numpy()
        e = exp.detach().to(torch.float64).numpy()
        rtol, atol = TOLERANCES.get(out.dtype, (1e-4, 1e-5))
        if self.case.rtol is not None:
            rtol = self.case.rtol
        if self.case.atol is not None:
            atol = self.case.atol
        else:
            scale = _finite_scale([e] + [a for a in args if isinstance(a, torch.Tensor)])
            atol = atol * max(scale, 1e-3)
        with np.errstate(invalid="ignore", over="ignore"):
            # Where the reference is NaN any output is accepted: NaN propagation legitimately
            # differs between max/min flavours (maximum vs maxnum) on non-finite inputs.
            close = np.isclose(o, e, rtol=rtol, atol=atol, equal_nan=True) | np.isnan(e)
            err = np.abs(o - e)
        err = np.where(np.isnan(err), np.inf, err)
        return ~close, err

    def check_masked_lanes(self, res: RunResult, combo: Combo) -> None:
        """TL905: poison masked-off lanes of loads without `other=`; watch the output."""
        lines = {site[1] for site in res.masked_loads} - self.tl905_done
        if not lines:
            return
        for kind in POISONS:
            p = self.call(combo, poison=(kind, None))
            if p.error is not None or _same(p.outputs, res.outputs):
                continue
            for site in sorted(res.masked_loads, key=lambda s: s[1]):
                if site[1] not in lines:
                    continue
                q = self.call(combo, poison=(kind, {site[1]}))
                if q.error is None and not _same(q.outputs, res.outputs):
                    self.tl905_done.add(site[1])
                    self.add(
                        "TL905",
                        site,
                        "output changes when masked-off lanes of this load (no `other=`) hold "
                        f"{kind}; "
                        f"the kernel depends on undefined values {combo.short()}",
                        combo,
                        {"poison": kind},
                    )
            return

    def check_determinism(self, res: RunResult, combo: Combo) -> None:
        """TL904: run again with the programs in reverse order; outputs must be bitwise equal."""
        again = self.call(combo, reverse=True)
        if again.error is None and not _same(again.outputs, res.outputs):
            self.add(
                "TL904",
                self.case_site(),
                "two runs with the same inputs differ bitwise (second run executed programs in "
                "reverse order) "
                f"{combo.short()}",
                combo,
                {},
            )

    # -- reporting -----------------------------------------------------------------------

    def case_site(self) -> Site:
        return (self.case.path, self.case.line, self.case.fn.__name__)

    def related(self, site: Site, launch: Site | None) -> tuple[RelatedLocation, ...]:
        """The launch site of the kernel holding `site` and the case's wrapper, where different."""
        if launch is None:
            by_name = [s for k, s in self.main_launches if k == site[2]]
            launch = (by_name or [s for _k, s in self.main_launches] or [None])[0]
        out: list[RelatedLocation] = []
        seen = {(site[0], site[1])}
        if launch is not None and launch[1] > 0 and (launch[0], launch[1]) not in seen:
            seen.add((launch[0], launch[1]))
            out.append(_location(launch, f"kernel launched here (in `{launch[2]}`)"))
        wrapper = self.case_site()
        if (wrapper[0], wrapper[1]) not in seen:
            out.append(_location(wrapper, f"stress case `{self.case.name}` (host wrapper)"))
        return tuple(out)

    def add(
        self,
        code: str,
        site: Site,
        message: str,
        combo: Combo | None,
        props: dict[str, Any],
        dedup: Any = None,
        launch: Site | None = None,
    ) -> None:
        self.combo_codes.add(code)
        key = (code, site[0], site[1], dedup)
        if key in self.findings:
            self.findings[key].properties["occurrences"] += 1
            return
        meta = CODES[code]
        text = linecache.getline(site[0], site[1]).rstrip("\n")
        properties = {"case": self.case.name, "occurrences": 1, **props}
        if combo is not None:
            properties.update(combo.describe())
            # The witness: everything needed to reproduce the finding in one place.
            properties["witness"] = {
                **combo.describe(),
                **{k: v for k, v in props.items() if k in _WITNESS_KEYS and v is not None},
            }
        self.findings[key] = Finding(
            path=site[0],
            span=Span(site[1], 1, site[1], max(len(text), 0) + 1),
            code=code,
            name=meta.name,
            severity=meta.severity,
            category=meta.category,
            message=message,
            kernel=site[2] if site[2] not in ("?", "<module>") else None,
            properties=properties,
            related=self.related(site, launch),
        )

    def report_events(self, events: list[dict[str, Any]], combo: Combo) -> None:
        for ev in events:
            site = tuple(ev["site"])
            kind = ev["kind"]
            if kind == "oob":
                shape = ev.get("arg_shape")
                msg = (
                    f"out-of-bounds {ev['op']} of `{ev['arg']}` (shape "
                    f"{tuple(shape) if shape else '?'}, "
                    f"{ev.get('arg_dtype')}) in program {tuple(ev['pid'])}, lane "
                    f"{tuple(ev['lane'])}: element "
                    f"offset(s) {ev['offsets']} outside the tensor; {ev['bad_lanes']} lane(s) "
                    "masked off "
                    f"{combo.short()}"
                )
                props = {
                    k: ev[k]
                    for k in (
                        "op",
                        "arg",
                        "pid",
                        "lane",
                        "offsets",
                        "bad_lanes",
                        "owner_inferred",
                    )
                }
                self.add("TL901", site, msg, combo, props, dedup=ev["arg"], launch=_site(ev))
            elif kind in ("assert", "overflow"):
                code = "TL910" if kind == "overflow" else "TL909"
                where = f"program {tuple(ev['pid'])}, lane {tuple(ev['lane'])}"
                msg = f"{ev['message']} in {where} {combo.short()}"
                props = {"pid": ev["pid"], "lane": ev["lane"]}
                self.add(code, site, msg, combo, props, launch=_site(ev))
            elif kind == "autotune":
                msg = (
                    f"autotune config {ev['config']} gives a different output from "
                    f"{ev['baseline_config']} "
                    f"(output {ev['tensor_index']}, element {ev['element']}) {combo.short()}"
                )
                self.add(
                    "TL911",
                    site,
                    msg,
                    combo,
                    {"config": ev["config"]},
                    dedup=ev["config"],
                    launch=_site(ev),
                )

    def report_error(self, res: RunResult, combo: Combo) -> None:
        err = res.error
        site = self.case_site()
        for fs in reversed(res.tb):
            if not fs.filename.startswith(_LIB_DIRS) and not fs.filename.startswith("<"):
                site = (fs.filename, fs.lineno or 1, fs.name)
                break
        cause = err.__cause__ if err is not None and err.__cause__ is not None else err
        msg = f"case raised {type(err).__name__}: {str(err)[:300]} {combo.short()}"
        self.add(
            "TL908",
            site,
            msg,
            combo,
            {"error": repr(cause)[:500]},
            dedup=type(err).__name__,
        )

    def report_unwritten(
        self,
        res: RunResult,
        out: torch.Tensor,
        unwritten: np.ndarray,
        k: int,
        combo: Combo,
    ) -> None:
        idx = tuple(int(i) for i in np.argwhere(unwritten)[0])
        site = (res.output_sites[k] if k < len(res.output_sites) else None) or self.case_site()
        self.add(
            "TL906",
            site,
            f"{int(unwritten.sum())} of {out.numel()} element(s) of output {k} allocated here "
            "with torch.empty* "
            f"were never written by the kernel (first at index {idx}) {combo.short()}",
            combo,
            {"output": k, "index": list(idx), "unwritten": int(unwritten.sum())},
        )

    def _writer(
        self, combo: Combo, k: int, idx: tuple[int, ...]
    ) -> tuple[RunResult, Site | None, list[int] | None]:
        """Re-run with the op tracer and store log: who wrote element idx."""
        tr = self.call(combo, trace=True)
        if tr.error is not None or k >= len(tr.outputs) or not tr.stores:
            return tr, None, None
        t = tr.outputs[k]
        addr = (
            t.data_ptr()
            + sum(i * s for i, s in zip(idx, t.stride(), strict=False)) * t.element_size()
        )
        for pid, site, addrs in reversed(tr.stores):
            if np.any(addrs == np.uint64(addr)):
                return tr, site, pid
        return tr, None, None

    def report_nonfinite(
        self, combo: Combo, k: int, nonfinite: np.ndarray, o: np.ndarray, e: np.ndarray
    ) -> None:
        idx = tuple(int(i) for i in np.argwhere(nonfinite)[0])
        tr, store_site, pid = self._writer(combo, k, idx)
        first = tr.first_nonfinite
        if first is not None:
            site = tuple(first["site"])
            pid0 = tuple(first["pid"])
            where = f"`{first['op']}` produced the first non-finite value (program {pid0})"
        else:
            site = store_site or self.case_site()
            where = "no traced op produced it from finite inputs (likely a reduction overflowed)"
        self.add(
            "TL902",
            site,  # type: ignore[arg-type]
            f"output {k} has {int(nonfinite.sum())} non-finite element(s) (first {o[idx]} at "
            f"index {idx}, "
            f"reference {e[idx]}) with finite inputs; {where} {combo.short()}",
            combo,
            {
                "output": k,
                "index": list(idx),
                "op": first["op"] if first else None,
                "pid": pid,
            },
        )

    def report_mismatch(
        self,
        combo: Combo,
        k: int,
        bad: np.ndarray,
        err: np.ndarray,
        o: np.ndarray,
        e: np.ndarray,
    ) -> None:
        masked_err = np.where(bad, err, -1.0)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(masked_err)), bad.shape))
        _, store_site, pid = self._writer(combo, k, idx)
        site = store_site or self.case_site()
        hint = ""
        if combo.layout != "contiguous":
            hint = (
                f"; the wrapper accepts a {combo.layout} (non-contiguous) input but ignores its "
                "strides: "
                "pass strides to the kernel or call .contiguous()"
            )
        self.add(
            "TL903",
            site,
            f"output {k}: {int(bad.sum())} of {bad.size} element(s) beyond tolerance; worst at "
            f"index {idx}: "
            f"got {o[idx]}, expected {e[idx]} (written by program "
            f"{tuple(pid) if pid else '?'}){hint} {combo.short()}",
            combo,
            {
                "output": k,
                "index": list(idx),
                "got": float(o[idx]),
                "expected": float(e[idx]),
                "pid": pid,
            },
        )


_WITNESS_KEYS = frozenset(
    {
        "pid",
        "lane",
        "offsets",
        "arg",
        "op",
        "index",
        "output",
        "poison",
        "config",
        "got",
        "expected",
    }
)


def _site(ev: dict[str, Any]) -> Site | None:
    launch = ev.get("launch")
    return tuple(launch) if launch else None  # type: ignore[return-value]


def _location(site: Site, message: str) -> RelatedLocation:
    text = linecache.getline(site[0], site[1]).rstrip("\n")
    return RelatedLocation(site[0], Span(site[1], 1, site[1], max(len(text), 0) + 1), message)


def _finite_scale(arrays: list[Any]) -> float:
    m = 0.0
    for a in arrays:
        x = (
            a.detach().to(torch.float64).numpy()
            if isinstance(a, torch.Tensor)
            else np.asarray(a, dtype=np.float64)
        )
        x = x[np.isfinite(x)]
        if x.size:
            m = max(m, float(np.abs(x).max()))
    return m


def _args_finite(args: list[Any]) -> bool:
    return all(
        bool(torch.isfinite(a).all())
        for a in args
        if isinstance(a, torch.Tensor) and a.is_floating_point()
    )


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Bitwise equality (NaN equal to NaN) of two output lists."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=False):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.is_floating_point:
            xs, ys = x.contiguous().view(-1), y.contiguous().view(-1)
            both_nan = torch.isnan(xs) & torch.isnan(ys)
            eq = (xs == ys) | both_nan
            # +0.0 == -0.0 numerically; treat sign-of-zero changes as equal too.
            if not bool(eq.all()):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def _import(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = "_tl_stress_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--skip", type=int, default=0)
    ns = ap.parse_args(argv)
    path = os.path.abspath(ns.file)

    def emit(obj: dict[str, Any]) -> None:
        with open(ns.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    try:
        san = Sanitizer()
        _import(path)
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        line = next(
            (fs.lineno for fs in reversed(tb) if os.path.abspath(fs.filename) == path),
            1,
        )
        emit({"event": "import_error", "error": f"{type(e).__name__}: {e}", "line": line})
        return 0
    cases = [c for c in stress.REGISTRY if os.path.abspath(c.path) == path]
    if ns.only:
        cases = [c for c in cases if c.name in ns.only or c.fn.__name__ in ns.only]
    emit(
        {
            "event": "cases",
            "names": [c.name for c in cases],
            "lines": [c.line for c in cases],
        }
    )
    for i, c in enumerate(cases):
        if i < ns.skip:
            continue
        emit({"event": "start", "index": i, "name": c.name})
        try:
            findings = CaseRunner(san, c, emit).run()
            payload = [f.to_dict() for f in findings]
        except BaseException as e:
            payload = [
                {
                    "path": c.path,
                    "line": c.line,
                    "code": "TL908",
                    "message": f"stress runner failed: {type(e).__name__}: {e}",
                    "properties": {
                        "case": c.name,
                        "error": traceback.format_exc()[-2000:],
                    },
                }
            ]
        emit(
            {
                "event": "done",
                "index": i,
                "name": c.name,
                "findings": _jsonable(payload),
            }
        )
    return 0


def _jsonable(obj: Any) -> Any:
    """Make numpy scalars and tuples JSON-safe."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return str(obj)
    return obj


if __name__ == "__main__":
    sys.exit(main())
