"""Value provenance: where the values flowing into an expression come from.

Rules ask questions such as "does this pointer offset derive from ``tl.arange``?", "is this
index derived from ``program_id`` or loaded from memory?", "was it widened to int64?", "is
this expression known at compile time?". The answers are flags computed once per expression
and cached. A use of a name gets the union over the definitions that reach it (`reaching`;
loops reassign pointers and offsets, so a union is what is true on some iteration).
"""

from __future__ import annotations

import enum

import libcst as cst

from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.names import TL
from triton_lint.model.reaching import Reaching
from triton_lint.model.tree import iter_nodes, keyword_arg


class Prov(enum.Flag):
    """Facts about the origin of a value."""

    NONE = 0
    LITERAL = enum.auto()  # a Python literal
    CONSTEXPR = enum.auto()  # a tl.constexpr parameter or global, or a static property (x.shape)
    RUNTIME = enum.auto()  # a runtime scalar parameter (sizes, strides, pointers)
    ARANGE = enum.auto()  # lane offsets from tl.arange that may run past the end
    WRAPPED = enum.auto()  # arange lanes wrapped by `%` or clamped by `minimum`: in range
    PROGRAM_ID = enum.auto()  # derived from tl.program_id
    LOADED = enum.auto()  # loaded from memory
    MASKED = enum.auto()  # loaded with a mask (masked-off lanes hold `other` or undefined)
    WIDENED = enum.auto()  # cast to a 64-bit integer type
    LOOP = enum.auto()  # a loop induction variable
    TENSOR = enum.auto()  # a tensor produced by a tl.* call
    BLOCK_PTR = enum.auto()  # a block pointer (tl.make_block_ptr / tl.advance)
    DESCRIPTOR = enum.auto()  # a tensor descriptor
    GLOBAL = enum.auto()  # a module-level name
    CALL = enum.auto()  # the result of calling a non-Triton function (e.g. a jit helper)
    UNKNOWN = enum.auto()  # a name with no visible definition


COMPILE_TIME = Prov.LITERAL | Prov.CONSTEXPR
WIDE_TYPES = {"int64", "uint64"}

# tl.* calls whose result is compile-time when their arguments are.
_CONSTEXPR_FUNCS = {
    "cdiv",
    "constexpr",
    "next_power_of_2",
    "minimum",
    "maximum",
    "static_range",
}
# Value hints that pass their first argument through unchanged.
_PASSTHROUGH = {"multiple_of", "max_contiguous", "max_constancy", "assume"}
# Static attributes of tensors and dtypes.
_STATIC_ATTRS = {
    "shape",
    "dtype",
    "element_ty",
    "numel",
    "type",
    "primitive_bitwidth",
    "ndim",
}
# Reductions that, without an axis, reduce a tensor to a scalar.
_FULL_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "prod"}
_BUILTIN_PASSTHROUGH = {"min", "max", "int", "float", "bool", "abs", "len", "round"}


def is_wide_dtype(path: str | None) -> bool:
    """True for ``tl.int64``/``tl.uint64`` (any spelling that resolves there)."""
    return path is not None and path.startswith(TL + ".") and path.rsplit(".", 1)[1] in WIDE_TYPES


_LITERALS = frozenset(
    {
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.ConcatenatedString,
        cst.FormattedString,
    }
)


class Provenance:
    """Computes and caches provenance flags for expressions of one kernel.

    Flags are flow-sensitive: a name's use gets the flags of the definitions that reach it
    (and of its value on entry, a parameter, when no definition always runs first), so
    ``T = eos - bos`` in the varlen branch does not make the other branch's ``i_b * T`` a
    product of two loaded values. Definitions are solved together as a fixpoint: every
    definition is evaluated against the current table until nothing changes. Loop-carried
    variables (``acc``, ``m_i``, ``l_i`` of an attention loop) depend on each other; a
    recursive walk over such cycles is exponential, a fixpoint costs a few passes over the
    kernel. Every operation is monotone (flags are only added, and ``%`` always swaps ARANGE
    for WRAPPED), so the iteration converges.
    """

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self._expr_cache: dict[int, tuple[cst.BaseExpression, Prov]] = {}
        self._definitions: dict[int, Prov] | None = None  # id(Definition) -> flags
        self._returns_widened: bool | None = None

    def _initial(self, name: str) -> Prov:
        param = self._kernel.params_by_name.get(name)
        if param is not None:
            if param.is_constexpr:
                return Prov.CONSTEXPR
            annotation = param.node.annotation
            if annotation is not None and is_wide_dtype(
                self._kernel.module.aliases.resolve(annotation.annotation)
            ):
                return Prov.RUNTIME | Prov.WIDENED  # `M: tl.int64` is passed as an i64
            return Prov.RUNTIME
        if name in self._kernel.definitions:
            return Prov.NONE
        if name in self._kernel.module.global_constexprs:
            return Prov.CONSTEXPR | Prov.GLOBAL
        if name in self._kernel.module.globals:
            return Prov.GLOBAL
        return Prov.UNKNOWN

    def _solve(self) -> dict[int, Prov]:
        everything = [d for defs in self._kernel.definitions.values() for d in defs]
        table = {id(d): Prov.NONE for d in everything}
        self._definitions = table  # read by name lookups while solving
        for _ in range(len(table) * len(Prov) + 2):
            self._expr_cache.clear()  # expression values depend on the table being refined
            changed = False
            for definition in everything:
                flags = table[id(definition)] | self._definition_flags(definition)
                if flags != table[id(definition)]:
                    table[id(definition)] = flags
                    changed = True
            if not changed:
                break
        self._expr_cache.clear()
        return table

    def _definition_flags(self, definition: Definition) -> Prov:
        if definition.value is None:
            return Prov.NONE
        flags = self.of(definition.value)
        if definition.kind == "for":
            flags |= Prov.LOOP
        return flags

    def _table(self) -> dict[int, Prov]:
        if self._definitions is None:
            self._definitions = self._solve()
        return self._definitions

    def of_name(self, name: str) -> Prov:
        """Flags of every value ``name`` can hold anywhere in the kernel."""
        table = self._table()
        flags = self._initial(name)
        for definition in self._kernel.definitions.get(name, []):
            flags |= table[id(definition)]
        return flags

    def _use(self, node: cst.Name) -> Prov:
        """Flags of the values that can reach this use of a name."""
        table = self._table()
        reaching, entry = self._kernel.facts(Reaching).reaching_with_entry(node)
        flags = self._initial(node.value) if entry else Prov.NONE
        for definition in reaching:
            flags |= table[id(definition)]
        return flags

    def of(self, node: cst.BaseExpression) -> Prov:
        # The cache holds the node too: a node outside the module tree (a rule's or a test's
        # `cst.parse_expression(...)`) could be freed and its id reused by another node.
        cached = self._expr_cache.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        flags = self._compute(node)
        self._expr_cache[id(node)] = (node, flags)
        return flags

    def is_compile_time(self, node: cst.BaseExpression) -> bool:
        """True when ``node`` is known at compile time (constexprs, literals, static shapes)."""
        flags = self.of(node)
        return bool(flags) and not (flags & ~COMPILE_TIME)

    def returns_widened(self) -> bool:
        """Every ``return`` of this helper gives one value widened to 64 bits (a position
        helper ending in ``.to(tl.int64)``): a caller's products with the result are 64-bit."""
        if self._returns_widened is None:
            self._returns_widened = False  # a recursive call sees "not widened"
            values = [
                node.value
                for node in iter_nodes(self._kernel.node.body, skip=(cst.FunctionDef, cst.Lambda))
                if isinstance(node, cst.Return)
            ]
            self._returns_widened = bool(values) and all(
                value is not None
                and not isinstance(value, cst.Tuple)
                and Prov.WIDENED in self.of(value)
                for value in values
            )
        return self._returns_widened

    def _union(self, nodes: list[cst.BaseExpression]) -> Prov:
        flags = Prov.NONE
        for node in nodes:
            flags |= self.of(node)
        return flags

    def _compute(self, node: cst.BaseExpression) -> Prov:
        kind = type(node)  # `type() is`: node classes are concrete, and ABCMeta is slow
        if kind in _LITERALS:
            return Prov.LITERAL
        if kind is cst.Name:
            if node.value in ("None", "True", "False"):
                return Prov.LITERAL
            return self._use(node)
        if kind is cst.Attribute:
            return self._attribute(node)
        if kind is cst.Call:
            return self._call(node)
        if kind is cst.BinaryOperation:
            left = self.of(node.left)
            if type(node.operator) is cst.Modulo and Prov.ARANGE in left:
                return _wrapped(left) | self.of(node.right)
            return left | self.of(node.right)
        if kind is cst.UnaryOperation:
            return self.of(node.expression)
        if kind is cst.BooleanOperation:
            return self.of(node.left) | self.of(node.right)
        if kind is cst.Comparison:
            return self._union([node.left, *(c.comparator for c in node.comparisons)])
        if kind is cst.Subscript:
            return self._subscript(node)
        if kind is cst.IfExp:
            return self.of(node.body) | self.of(node.orelse)
        if kind is cst.Tuple or kind is cst.List:
            return self._union([el.value for el in node.elements])
        if kind is cst.NamedExpr:
            return self.of(node.value)
        return Prov.NONE

    def _attribute(self, node: cst.Attribute) -> Prov:
        if node.attr.value in _STATIC_ATTRS:
            return Prov.CONSTEXPR
        path = self._kernel.module.aliases.resolve(node)
        if path is not None and path.startswith("triton"):
            return Prov.CONSTEXPR  # tl.float32, tl.int64, ...
        if node.attr.value == "T":
            return self.of(node.value)
        return self.of(node.value)

    def _subscript(self, node: cst.Subscript) -> Prov:
        flags = self.of(node.value)
        if Prov.CONSTEXPR in flags and isinstance(node.value, cst.Attribute):
            return Prov.CONSTEXPR  # x.shape[0]
        return flags

    def _call(self, node: cst.Call) -> Prov:
        kernel = self._kernel
        path = kernel.module.aliases.resolve(node.func)
        args = [arg.value for arg in node.args]
        if path is not None and path.startswith(TL + "."):
            return self._tl_call(node, path[len(TL) + 1 :], args)
        if path is not None and path.startswith("triton."):
            return self._union(args) or Prov.CONSTEXPR  # triton.cdiv and friends
        if isinstance(node.func, cst.Attribute):
            return self._method_call(node, node.func, args)
        if isinstance(node.func, cst.Name) and node.func.value in _BUILTIN_PASSTHROUGH:
            return self._union(args)
        flags = self._union(args) | Prov.CALL
        if isinstance(node.func, cst.Name):
            helper = kernel.module.kernels_by_name.get(node.func.value)
            if (
                helper is not None
                and helper is not kernel
                and helper.facts(Provenance).returns_widened()
            ):
                flags |= Prov.WIDENED
        return flags

    def _tl_call(self, node: cst.Call, name: str, args: list[cst.BaseExpression]) -> Prov:
        short = name.rsplit(".", 1)[-1]
        if short == "arange":
            return Prov.ARANGE | Prov.TENSOR
        if short == "program_id":
            return Prov.PROGRAM_ID
        if short == "num_programs":
            return Prov.RUNTIME
        if short == "load":
            access = self._kernel.access_for_call(node)
            flags = Prov.LOADED | Prov.TENSOR
            if args:
                flags |= self.of(args[0]) & (Prov.ARANGE | Prov.WRAPPED)
            if access is not None and access.mask is not None:
                flags |= Prov.MASKED
            return flags
        if short in ("make_block_ptr", "advance"):
            return Prov.BLOCK_PTR
        if short in ("make_tensor_descriptor", "load_tensor_descriptor"):
            return Prov.DESCRIPTOR
        if short == "cast":
            dtype = node.args[1].value if len(node.args) > 1 else keyword_arg(node, "dtype")
            flags = self.of(args[0]) if args else Prov.NONE
            if dtype is not None and is_wide_dtype(self._kernel.module.aliases.resolve(dtype)):
                flags |= Prov.WIDENED
            return flags
        if short in _PASSTHROUGH:
            return self.of(args[0]) if args else Prov.NONE
        if short in ("minimum", "clamp") and args and Prov.ARANGE in self.of(args[0]):
            return _wrapped(self.of(args[0])) | self._union(args[1:])
        if short == "where" and len(args) == 3:
            return self.of(args[1]) | self.of(args[2]) | Prov.TENSOR
        if short in _CONSTEXPR_FUNCS:
            return self._union(args)
        if short in _FULL_REDUCTIONS and keyword_arg(node, "axis") is None and len(args) < 2:
            # reducing every axis leaves a scalar: no lanes remain to run past the end
            return (self._union(args) & ~(Prov.ARANGE | Prov.WRAPPED)) | Prov.TENSOR
        if short in ("zeros", "full", "zeros_like", "full_like", "empty"):
            return Prov.TENSOR | (self._union(args[1:2]) if short == "full" else Prov.NONE)
        return self._union(args) | Prov.TENSOR

    def _method_call(
        self, node: cst.Call, func: cst.Attribute, args: list[cst.BaseExpression]
    ) -> Prov:
        receiver = self.of(func.value)
        method = func.attr.value
        if method in ("to", "cast"):
            dtype = args[0] if args else keyword_arg(node, "dtype")
            if dtype is not None and is_wide_dtype(self._kernel.module.aliases.resolve(dtype)):
                return receiver | Prov.WIDENED
            return receiver
        if method in ("load", "gather") and Prov.DESCRIPTOR in receiver:
            return Prov.LOADED | Prov.TENSOR
        return receiver | self._union(args)


def _wrapped(flags: Prov) -> Prov:
    """Lanes reduced modulo a size (or clamped) can no longer run past the end."""
    return (flags & ~Prov.ARANGE) | Prov.WRAPPED
