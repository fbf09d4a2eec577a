"""One walk over a kernel body: its definitions, calls and memory accesses, with the branches
each sits in. `build` runs it on every kernel once; everything else reads what it recorded."""

from __future__ import annotations

from typing import Literal

import libcst as cst

from triton_lint.model.kernel import (
    AccessKind,
    Branch,
    CallSite,
    Definition,
    Kernel,
    MemoryAccess,
)
from triton_lint.model.names import dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.tree import iter_children

# Positional parameter order of Triton's memory functions (after the pointer).
_LOAD_PARAMS = ("pointer", "mask", "other", "boundary_check", "padding_option")
_STORE_PARAMS = ("pointer", "value", "mask", "boundary_check")
_ATOMIC_PARAMS = ("pointer", "val", "mask", "sem", "scope")
_ATOMIC_CAS_PARAMS = ("pointer", "cmp", "val", "sem", "scope")
_ATOMIC_OPS = {
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
}


_NOT_KERNEL_CODE = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def walk_kernel(kernel: Kernel) -> None:
    """Record the kernel's definitions and calls, then classify its memory accesses."""
    walker = _KernelWalker(kernel)
    walker.walk(kernel.node.body)
    walker.record_accesses()


class _KernelWalker:
    """Walks a kernel body once, recording definitions, calls and memory accesses."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.branches: tuple[Branch, ...] = ()
        self.order = 0

    def walk(self, suite: cst.BaseSuite) -> None:
        self._walk(suite)

    def _define(
        self,
        target: cst.BaseExpression,
        node: cst.CSTNode,
        value: cst.BaseExpression | None,
        kind: Literal["assign", "augassign", "for", "unpack", "walrus"],
    ) -> None:
        if isinstance(target, cst.Name):
            self.order += 1
            definition = Definition(target.value, node, value, kind, self.branches, self.order)
            self.kernel.definitions.setdefault(target.value, []).append(definition)
        elif isinstance(target, cst.Tuple | cst.List):
            elements = [el.value for el in target.elements]
            values: list[cst.BaseExpression | None]
            if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(elements):
                values = [el.value for el in value.elements]
            else:
                values = [value] * len(elements)
            for element, element_value in zip(elements, values, strict=True):
                if isinstance(element, cst.StarredElement):
                    element = element.value
                self._define(element, node, element_value, "unpack" if kind != "for" else kind)

    def _walk(self, node: cst.CSTNode) -> None:
        # `type(...) is` on these concrete node classes: `isinstance` against libcst's
        # ABCMeta classes costs several times more, on every node of every kernel.
        kind = type(node)
        if kind in _NOT_KERNEL_CODE:
            return  # unsupported inside kernels (TL204); their names are not kernel locals
        if kind is cst.If or kind is cst.IfExp:
            self._walk(node.test)
            self._walk_arm(node, "body", node.body)
            if node.orelse is not None:
                self._walk_arm(node, "orelse", node.orelse)
            return
        if kind is cst.Call:
            self._record_call(node)
        elif kind is cst.Assign:
            for target in node.targets:
                self._define(target.target, node, node.value, "assign")
        elif kind is cst.AnnAssign:
            if node.value is not None:
                self._define(node.target, node, node.value, "assign")
        elif kind is cst.AugAssign:
            self._define(node.target, node, node.value, "augassign")
        elif kind is cst.For:
            self._define(node.target, node, node.iter, "for")
        elif kind is cst.NamedExpr:
            self._define(node.target, node, node.value, "walrus")
        for child in iter_children(node):
            self._walk(child)

    def _walk_arm(
        self,
        node: cst.If | cst.IfExp,
        arm: Literal["body", "orelse"],
        child: cst.CSTNode,
    ) -> None:
        saved = self.branches
        self.branches = (*saved, Branch(node, arm))
        self._walk(child)
        self.branches = saved

    def _record_call(self, call: cst.Call) -> None:
        kernel = self.kernel
        path = kernel.module.aliases.resolve(call.func)
        name = dotted_name(call.func)
        kernel.calls.append(CallSite(path, name, call, self.branches))

    def record_accesses(self) -> None:
        """Classify calls as memory accesses once every definition is known.

        ``tl.*`` accesses come first: descriptor accesses are recognised through provenance,
        which itself asks whether a load is masked.
        """
        kernel = self.kernel
        for site in kernel.calls:
            access = self._tl_access(site)
            if access is not None:
                kernel.add_access(access)
        for site in kernel.calls:
            if kernel.access_for_call(site.node) is None:
                access = self._descriptor_method_access(site)
                if access is not None:
                    kernel.add_access(access)

    def _tl_access(self, site: CallSite) -> MemoryAccess | None:
        call = site.node
        tl_name = site.tl_name
        if tl_name in ("load", "store") or (tl_name in _ATOMIC_OPS):
            assert tl_name is not None
            names = {
                "load": _LOAD_PARAMS,
                "store": _STORE_PARAMS,
                "atomic_cas": _ATOMIC_CAS_PARAMS,
            }.get(tl_name, _ATOMIC_PARAMS)
            args = _bind(call, names)
            kind: AccessKind = (
                "load" if tl_name == "load" else "store" if tl_name == "store" else "atomic"
            )
            return MemoryAccess(
                kind=kind,
                op=tl_name,
                call=call,
                pointer=args.get("pointer"),
                value=args.get("value") or args.get("val"),
                mask=_real(args.get("mask")),
                other=_real(args.get("other")),
                boundary_check=args.get("boundary_check"),
                branches=site.branches,
            )
        if tl_name in ("load_tensor_descriptor", "store_tensor_descriptor"):
            kind = "load" if tl_name.startswith("load") else "store"
            return _descriptor_access(site, kind, f"descriptor.{kind}")
        return None

    def _descriptor_method_access(self, site: CallSite) -> MemoryAccess | None:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _DESCRIPTOR_METHODS:
            return None
        if Prov.DESCRIPTOR not in self.kernel.facts(Provenance).of(func.value):
            return None
        method = func.attr.value
        return _descriptor_access(site, _DESCRIPTOR_METHODS[method], f"descriptor.{method}")


_DESCRIPTOR_METHODS: dict[str, AccessKind] = {
    "load": "load",
    "gather": "load",
    "store": "store",
    "scatter": "store",
    "atomic_add": "atomic",
}


def _descriptor_access(site: CallSite, kind: AccessKind, op: str) -> MemoryAccess:
    """Tensor-descriptor accesses are bounds-checked by the hardware copy engine."""
    return MemoryAccess(
        kind=kind,
        op=op,
        call=site.node,
        pointer=None,
        value=None,
        mask=None,
        other=None,
        boundary_check=None,
        branches=site.branches,
        via_descriptor=True,
    )


def _bind(call: cst.Call, names: tuple[str, ...]) -> dict[str, cst.BaseExpression]:
    bound: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        elif not arg.star and position < len(names):
            bound[names[position]] = arg.value
            position += 1
    return bound


def _real(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``mask=None`` is the same as no mask."""
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    return expr
