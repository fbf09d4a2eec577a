"""Bounds checks compiled into native kernels (child only, CUDA backend).

Red zones see an out-of-bounds read only when its values reach an output; a read whose lanes a
masked store later drops changes nothing. So every `tl.load`, `tl.store` and `tl.atomic_*` is
rewrapped at compile time, as `poison` does for masked loads: before the access, each active
lane's address is checked against the allocation of the tensor its pointer derives from (when
the kernel's source names exactly one pointer parameter behind the access) or else against
every tensor the launch received. Lanes outside are recorded in a device buffer (site, program,
lane, address, launch) and turned off, so the access never touches foreign memory and the launch
goes on. The host reads the buffer after the run (`BoundsChecker.events`) and names, per
violation, the allocation the address lies in: another tensor's (provable: it is inside that
tensor) or none (outside every live allocation).

The allocation table is written before every launch (`on_launch`); its address and the record
buffer's are constants in the compiled code, so compiled kernels are kept in a cache directory
of their own per process (`kernel_cache`). Tensor descriptors are checked too
(`bounds_descriptors`); block pointers are not instrumented.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass
from typing import Any

import torch

from triton_lint.dynamic import bounds_descriptors
from triton_lint.dynamic.backend import Site
from triton_lint.dynamic.bounds_records import (
    CAPACITY,
    FIELDS,
    HEADER,
    OPS,
    SLOTS,
    Home,
    LaunchInfo,
    Slot,
    decode,
    pack_meta,
)
from triton_lint.dynamic.kernel_source import access_names, python_function
from triton_lint.dynamic.redzone import Arena


@dataclass
class CompileSite:
    """An access being compiled: where it is, and the parameter slot it must stay inside."""

    path: str
    line: int
    col: int
    function: str
    home: Home
    nparams: int


def _generators() -> list[Any]:
    """The code generators on the stack, innermost first (helpers before their kernel)."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        gen = f.f_locals.get("self")
        if hasattr(gen, "cur_node") and hasattr(gen, "begin_line") and gen not in out:
            out.append(gen)
        f = f.f_back
    return out


def _compile_site(op: str, base_arg: bool = False) -> CompileSite | None:
    """The access being compiled; with `base_arg`, its home is the parameter the call's first
    argument (a descriptor's base pointer) names, not the pointer expression's."""
    gens = _generators()
    if not gens:
        return None
    gen, top = gens[0], gens[-1]
    node = gen.cur_node
    if node is None or not hasattr(node, "lineno"):
        return None
    fn = python_function(getattr(gen, "jit_fn", None))
    line = int(gen.begin_line) + int(node.lineno)
    params = list(getattr(getattr(top, "jit_fn", None), "arg_names", []) or [])
    col = int(node.col_offset) + 1
    names = _call_base_names(node) if base_arg else access_names(fn, line, col)
    home = _home(gen, names, params) if gen is top else None
    name = getattr(fn, "__name__", "?")
    return CompileSite(str(gen.file_name), line, col, name, home, len(params))


def _call_base_names(node: Any) -> set[str]:
    """The names in a call's first argument (or its `base=`)."""
    args = list(getattr(node, "args", []) or [])
    args += [k.value for k in getattr(node, "keywords", []) or [] if k.arg == "base"]
    return {n.id for n in ast.walk(args[0]) if isinstance(n, ast.Name)} if args else set()


def _home(gen: Any, names: set[str], params: list[str]) -> Home:
    """The one pointer parameter among `names` (what the access derives from), if only one."""
    scope = getattr(gen, "lscope", {}) or {}
    pointers = [
        i
        for i, p in enumerate(params)
        if p in names and getattr(getattr(scope.get(p), "type", None), "is_ptr", lambda: False)()
    ]
    return pointers[0] if len(pointers) == 1 and pointers[0] < SLOTS else None


class BoundsChecker:
    """Installs the access wrappers, fills the table per launch, decodes violations."""

    def __init__(self, device: torch.device) -> None:
        import triton.language as tl
        import triton.language.core as core

        self.device = device
        self.table = torch.zeros(2 + 2 * SLOTS, dtype=torch.int64, device=device)
        self.records = torch.zeros(HEADER + CAPACITY * FIELDS, dtype=torch.int64, device=device)
        #: Every table written in this process, by the number the kernel records with.
        self.launches: list[LaunchInfo] = []
        self._written: tuple[Any, ...] | None = None
        self._unread = False  # a launch ran since the count was last read
        self.enabled = True
        #: TL901 events found on the host before a launch (`TensorDescriptor` arguments).
        self.host_found: list[dict[str, Any]] = []
        #: An access without a check was compiled (block pointer, tensor descriptor).
        self.blind = False
        self.core = core
        #: Every access compiled with a check (tests and diagnostics read it).
        self.sites: list[CompileSite] = []
        self.originals: dict[str, Any] = {}
        #: Class attributes replaced (a descriptor's `load`/`store`): (class, name, original).
        self.restore: list[tuple[Any, str, Any]] = []
        for name in OPS:
            orig = getattr(core, name, None)
            if orig is None:
                continue
            self.originals[name] = orig
            wrapped = self._wrap(name, orig)
            setattr(core, name, wrapped)
            setattr(tl, name, wrapped)
        bounds_descriptors.install(self, core, tl)

    def uninstall(self) -> None:
        """Put the original `tl` functions back."""
        import triton.language as tl

        for name, orig in self.originals.items():
            setattr(self.core, name, orig)
            setattr(tl, name, orig)
        for cls, name, orig in self.restore:
            setattr(cls, name, orig)

    # -- host side -----------------------------------------------------------------------

    def reset(self) -> None:
        """A new run: the violation count is zero (`events` clears it after reading one; a run
        that failed before `events` leaves it for this)."""
        self.host_found = []
        if self._unread:
            self.records[:1].zero_()
            self._unread = False
        if len(self.launches) > 4096:
            self.launches, self._written = [], None  # the next launch writes its table again

    def on_launch(self, kernel: Any, names: list[str], values: dict[str, Any], site: Site) -> None:
        """Write the launch's allocation table (one slot per tensor parameter) to the device."""
        self._unread = True
        self.host_found += bounds_descriptors.host_events(kernel, names, values, site)
        slots: list[Slot | None] = []
        words = [0, 1]
        for i, name in enumerate(names[:SLOTS]):
            v = values.get(name)
            if isinstance(v, torch.Tensor) and v.numel():
                lo = int(v.data_ptr())
                span = sum((s - 1) * st for s, st in zip(v.shape, v.stride(), strict=False))
                hi = lo + (span + 1) * v.element_size()
                dtype = str(v.dtype).replace("torch.", "")
                slots.append(Slot(name, lo, hi, list(v.shape), dtype))
            else:
                slots.append(None)
                lo = hi = 0
                if i < len(names) and _looks_like_pointer(v):
                    words[1] = 0  # a pointer we cannot bound: no "outside all" check
            words += [lo, hi]
        words += [0, 0] * (SLOTS - len(slots))
        key = (id(kernel), site, tuple(words))
        if key == self._written:
            return  # the table on the device already describes this launch
        self._written = key
        words[0] = len(self.launches)
        self.launches.append(LaunchInfo(kernel, slots, site))
        self.table.copy_(torch.tensor(words, dtype=torch.int64, device="cpu"))

    def events(self, arena: Arena | None) -> list[dict[str, Any]]:
        """TL901 events of the run (`bounds_records.decode`); one device sync when clean."""
        host, self.host_found = self.host_found, []
        count = int(self.records[0].item())
        self._unread = False
        if count == 0:
            return host
        self.records[:1].zero_()
        n = min(count, CAPACITY)
        rows = self.records[HEADER : HEADER + n * FIELDS].view(n, FIELDS).tolist()
        return decode(rows, self.launches, arena) + host

    # -- compile side --------------------------------------------------------------------

    def _wrap(self, name: str, orig: Any) -> Any:
        checker = self

        if name == "load":

            @functools.wraps(orig)
            def load(pointer: Any, mask: Any = None, other: Any = None, *a: Any, **kw: Any) -> Any:
                poisoned = kw.pop("_tl_poisoned", False)
                sem = kw.get("_semantic")
                if checker.enabled and sem is not None:
                    checked = checker.check(sem, "load", pointer, mask)
                    if checked is not None:
                        mask, bad = checked
                        if poisoned and other is not None:
                            zero = checker.core.full([], 0, _element(pointer), _semantic=sem)
                            other = checker.core.where(bad, zero, other, _semantic=sem)
                return orig(pointer, mask, other, *a, **kw)

            load._tl_bounds = True  # type: ignore[attr-defined]
            load._tl_original = orig  # type: ignore[attr-defined]
            return load

        if name == "atomic_cas":

            @functools.wraps(orig)
            def cas(pointer: Any, cmp: Any, val: Any, *a: Any, **kw: Any) -> Any:
                sem = kw.get("_semantic")
                if checker.enabled and sem is not None:
                    checker.check(sem, "atomic_cas", pointer, None)
                return orig(pointer, cmp, val, *a, **kw)

            return cas

        @functools.wraps(orig)
        def access(pointer: Any, value: Any, mask: Any = None, *a: Any, **kw: Any) -> Any:
            sem = kw.get("_semantic")
            if checker.enabled and sem is not None:
                checked = checker.check(sem, name, pointer, mask)
                if checked is not None:
                    mask = checked[0]
            return orig(pointer, value, mask, *a, **kw)

        return access

    def compile_site(self, op: str) -> CompileSite | None:
        """The descriptor being made: its site, homed at the parameter its base names."""
        return _compile_site(op, base_arg=True)

    def check(
        self, sem: Any, op: str, pointer: Any, mask: Any, home: Home | str = "source"
    ) -> tuple[Any, Any] | None:
        """Emit the check before an access: (the mask with bad lanes off, the bad lanes). The
        access's home is the parameter its source names, unless `home` gives it."""
        core = self.core
        pointer = core._unwrap_if_constexpr(pointer)
        mask = core._unwrap_if_constexpr(mask)
        ty = getattr(pointer, "type", None)
        if ty is None or not ty.scalar.is_ptr():
            return None
        if not ty.is_block() and ty.element_ty.is_block():
            self.blind = True  # a block pointer: not instrumented
            return None
        site = _compile_site(op)
        if site is None:
            return None
        if home != "source":
            site.home = home if isinstance(home, int) else None
        self.sites.append(site)
        e = _Emit(sem, core)
        elt = ty.scalar.element_ty
        size = max(1, int(elt.primitive_bitwidth) // 8)
        shape = [int(s) for s in pointer.shape] if ty.is_block() else []
        addr = pointer.to(core.int64, bitcast=True, _semantic=sem)
        end = e.add(addr, size)
        table = e.pointer(self.table.data_ptr())
        load = self.originals["load"]

        def word(k: int) -> Any:
            return load(e.add(table, k), _semantic=sem)

        if site.home is not None:
            lo, hi = word(2 + 2 * site.home), word(3 + 2 * site.home)
            outside = e.or_(e.lt(addr, lo), e.gt(end, hi))
            bad = e.and_(outside, e.ne(hi, 0))
        else:
            inside = None
            for k in range(min(site.nparams, SLOTS)):
                lo, hi = word(2 + 2 * k), word(3 + 2 * k)
                here = e.and_(e.ge(addr, lo), e.le(end, hi))
                inside = here if inside is None else e.or_(inside, here)
            if inside is None:
                return None
            bad = e.and_(e.not_(inside), e.ne(word(1), 0))
        if mask is not None:
            if not isinstance(mask, core.tensor):
                mask = core.full([], bool(mask), core.int1, _semantic=sem)
            if mask.dtype != core.int1:
                mask = e.ne(mask, 0)
            bad = e.and_(bad, mask)
        lane = e.full(shape, 0)
        for d, n in enumerate(shape):
            r = core.arange(0, n, _semantic=sem).to(core.int64, _semantic=sem)
            for other in range(len(shape)):
                if other != d:
                    r = core.expand_dims(r, other, _semantic=sem)
            lane = e.add(lane, e.shl(r, 16 * d) if d else r)
        self._record(e, site, op, size, len(shape), bad, lane, addr, word(0))
        keep = e.not_(bad)
        return (keep if mask is None else e.and_(mask, keep)), bad

    def _record(
        self,
        e: Any,
        site: CompileSite,
        op: str,
        size: int,
        ndim: int,
        bad: Any,
        lane: Any,
        addr: Any,
        launch: Any,
    ) -> None:
        core, sem = self.core, e.sem
        meta = pack_meta(site.path, site.line, site.col, op, size, ndim, site.home)
        counter = e.add(e.pointer(self.records.data_ptr()), e.mul(lane, 0))
        slot = self.originals["atomic_add"](counter, 1, mask=bad, sem="relaxed", _semantic=sem)
        ok = e.and_(bad, e.lt(slot, CAPACITY))
        base = e.add(e.pointer(self.records.data_ptr() + 8 * HEADER), e.mul(slot, FIELDS))
        pid = [core.program_id(a, _semantic=sem).to(core.int64, _semantic=sem) for a in range(3)]
        fields = [e.full([], meta), pid[0], e.or_(e.shl(pid[1], 32), pid[2]), lane, addr, launch]
        store = self.originals["store"]
        for k, value in enumerate(fields):
            store(e.add(base, k), value, mask=ok, _semantic=sem)


class _Emit:
    """Tensor ops at compile time (the code generator's `_semantic` passed explicitly)."""

    def __init__(self, sem: Any, core: Any) -> None:
        self.sem, self.core = sem, core

    def full(self, shape: list[int], value: int) -> Any:
        return self.core.full(shape, value, self.core.int64, _semantic=self.sem)

    def pointer(self, address: int) -> Any:
        ptr = self.core.pointer_type(self.core.int64)
        return self.full([], address).to(ptr, bitcast=True, _semantic=self.sem)

    def add(self, a: Any, b: Any) -> Any:
        return a.__add__(b, _semantic=self.sem)

    def mul(self, a: Any, b: Any) -> Any:
        return a.__mul__(b, _semantic=self.sem)

    def shl(self, a: Any, b: int) -> Any:
        return a.__lshift__(b, _semantic=self.sem)

    def lt(self, a: Any, b: Any) -> Any:
        return a.__lt__(b, _semantic=self.sem)

    def le(self, a: Any, b: Any) -> Any:
        return a.__le__(b, _semantic=self.sem)

    def gt(self, a: Any, b: Any) -> Any:
        return a.__gt__(b, _semantic=self.sem)

    def ge(self, a: Any, b: Any) -> Any:
        return a.__ge__(b, _semantic=self.sem)

    def ne(self, a: Any, b: Any) -> Any:
        return a.__ne__(b, _semantic=self.sem)

    def and_(self, a: Any, b: Any) -> Any:
        return a.__and__(b, _semantic=self.sem)

    def or_(self, a: Any, b: Any) -> Any:
        return a.__or__(b, _semantic=self.sem)

    def not_(self, a: Any) -> Any:
        return a.__xor__(True, _semantic=self.sem)


def _element(pointer: Any) -> Any:
    return pointer.type.scalar.element_ty


def _looks_like_pointer(v: Any) -> bool:
    return hasattr(v, "data_ptr") and not isinstance(v, torch.Tensor)
