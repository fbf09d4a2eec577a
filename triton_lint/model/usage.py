"""Where a kernel's names are used: compile-time positions, reads, conditions, boolean operators.

Built lazily (``kernel.usage``) from one walk of the kernel body. The facts:

- ``compile_time_params``: the parameters that reach a position Triton must know when it
  compiles the kernel (``tl.arange`` bounds, tensor shapes, ``tl.static_range``, ``if`` and
  ternary tests, compile-time keyword arguments such as ``dtype=``/``num_stages=``/
  ``eviction_policy=``, the constexpr parameters of called ``@triton.jit`` functions,
  ``tl.static_assert``), directly or through local arithmetic feeding them;
- ``names_read``: every name the body reads (loads, not assignment targets);
- ``triton_refs``: every ``tl.*``-style reference with its canonical path and the call it heads;
- ``bool_ops``: every ``and``/``or`` chain and ``not`` with its operands and whether it sits in
  an ``if``/``while`` test;
- ``loop_bound_exprs``: arguments of ``range``/``tl.range``/``tl.static_range`` loops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from triton_lint.api import load_table
from triton_lint.model.names import TL, dotted_name
from triton_lint.model.provenance import Prov

if TYPE_CHECKING:
    from triton_lint.model.kernel import Kernel, Param

#: Parameter names of Triton functions and tensor methods that must be compile-time values.
COMPILE_TIME_ARGS = frozenset(
    {
        "shape",
        "dtype",
        "axis",
        "dim",
        "dims",
        "keep_dims",
        "num_stages",
        "loop_unroll_factor",
        "disallow_acc_multi_buffer",
        "flatten",
        "warp_specialize",
        "disable_licm",
        "eviction_policy",
        "cache_modifier",
        "volatile",
        "input_precision",
        "allow_tf32",
        "out_dtype",
        "max_num_imprecise_acc",
        "sem",
        "scope",
        "padding_option",
        "boundary_check",
        "return_indices",
        "return_indices_tie_break_left",
        "reverse",
        "descending",
        "can_reorder",
        "is_pure",
        "pack",
        "fp_downcast_rounding",
        "bitcast",
        "propagate_nan",
        "sanitize_overflow",
        "block_shape",
        "order",
        "combine_fn",
        "k",
        "msg",
        "prefix",
        "values",
        "asm",
        "constraints",
        "lhs_format",
        "rhs_format",
        "fast_math",
        "num_bins",
        "n_rounds",
        "hex",
        "element_ty",
        "num_warps",
    }
)
#: Triton functions every argument of which is compile-time.
_ALL_COMPILE_TIME = {"arange", "static_range", "static_assert", "static_print", "constexpr"}
#: Functions whose ``shape`` is a runtime tensor size, not a block shape.
_RUNTIME_SHAPE = {"make_block_ptr", "make_tensor_descriptor"}
_RUNTIME_FLAGS = Prov.RUNTIME | Prov.LOADED | Prov.PROGRAM_ID | Prov.ARANGE | Prov.TENSOR
#: Python builtins whose arguments Triton evaluates at compile time.
_COMPILE_TIME_BUILTINS = {"isinstance", "getattr", "hasattr", "len", "type"}
_LOOP_FUNCS = {"range", f"{TL}.range", f"{TL}.static_range"}


@dataclass
class BoolOp:
    """An ``and``/``or`` chain (flattened as Python's ast does) or a ``not``."""

    node: cst.BooleanOperation | cst.UnaryOperation
    operator: str  # "and", "or", "not"
    operands: list[cst.BaseExpression]
    in_condition: bool  # the test of an ``if``/``while`` (or nested in one's bool ops)


@dataclass
class TritonRef:
    """A ``tl.foo``-style reference: the outermost Name/Attribute chain resolving to Triton."""

    node: cst.BaseExpression
    path: str  # canonical, e.g. "triton.language.math.exp"
    text: str  # the literal dotted text, e.g. "tl.math.exp"
    call: cst.Call | None  # the call this reference is the callee of


@dataclass
class KernelUsage:
    names_read: list[cst.Name] = field(default_factory=list)
    local_names: set[str] = field(default_factory=set)
    compile_time_exprs: list[cst.BaseExpression] = field(default_factory=list)
    triton_refs: list[TritonRef] = field(default_factory=list)
    bool_ops: list[BoolOp] = field(default_factory=list)
    loop_bound_exprs: list[cst.BaseExpression] = field(default_factory=list)
    conditions: list[cst.BaseExpression] = field(default_factory=list)
    compared_names: set[str] = field(default_factory=set)  # names read inside comparisons
    block_memo: dict[int, bool] = field(default_factory=dict)
    _compile_time: set[str] | None = None
    _kernel: Kernel | None = None

    def reads(self, name: str) -> bool:
        """Whether the body reads ``name`` at all."""
        return any(n.value == name for n in self.names_read)

    def compile_time_params(self) -> set[str]:
        """Names of parameters used in a compile-time position (directly or via locals)."""
        if self._compile_time is None:
            assert self._kernel is not None
            found: set[str] = set()
            for expr in self.compile_time_exprs:
                if _dtype_of_value(expr):
                    continue  # `p_y.dtype.element_ty`: the pointer's type, not its offsets
                found.update(p.name for p in self._kernel.params_in(expr))
            self._compile_time = found
        return self._compile_time

    def loop_bound_params(self) -> list[Param]:
        assert self._kernel is not None
        out: dict[str, Param] = {}
        for expr in self.loop_bound_exprs:
            for p in self._kernel.params_in(expr):
                out[p.name] = p
        return list(out.values())


def _dtype_of_value(expr: cst.BaseExpression) -> bool:
    """``x.dtype`` or ``x.dtype.element_ty``: a type, fixed by what ``x`` points to whatever
    the sizes and offsets it was computed from."""
    return isinstance(expr, cst.Attribute) and (
        expr.attr.value == "dtype"
        or (expr.attr.value == "element_ty" and isinstance(expr.value, cst.Attribute))
    )


def build_usage(kernel: Kernel) -> KernelUsage:
    usage = KernelUsage(_kernel=kernel)
    usage.local_names = set(kernel.definitions) | set(kernel.params_by_name)
    visitor = _UsageVisitor(kernel, usage)
    for param in kernel.node.params.params + kernel.node.params.kwonly_params:
        if param.annotation is not None:
            param.annotation.visit(visitor)
    kernel.node.body.visit(visitor)
    return usage


#: Per-call sizes: they change with the batch, so each new value is a new compilation.
_PER_CALL = re.compile(
    r"^(m|t|b|l|s|bs|bsz|n_rows|num_rows|nrows|rows|n_tokens|num_tokens|ntokens|total_tokens|"
    r"seq_?len|seqlen|max_seqlen|n_ctx|batch|batch_size|num_seqs|n_elements|numel|n_elem|"
    r"num_elements|total|size|length|len|num_reqs|m_size|row_count|n_row)$",
    re.IGNORECASE,
)


def is_per_call_size(name: str) -> bool:
    """A size that changes from call to call (rows, tokens, sequence length, batch)."""
    return _PER_CALL.match(name) is not None


def is_flag_like(param: Param) -> bool:
    """A boolean switch: a ``HAS_``/``USE_``/``IS_``-style name or a ``True``/``False`` default."""
    name = param.name.upper()
    if name.startswith(("HAS_", "USE_", "IS_", "ENABLE_", "DO_", "APPLY_", "WITH_", "NEED_")):
        return True
    default = param.default
    return isinstance(default, cst.Name) and default.value in ("True", "False")


class _UsageVisitor(cst.CSTVisitor):
    def __init__(self, kernel: Kernel, usage: KernelUsage) -> None:
        self.kernel = kernel
        self.usage = usage
        self.aliases = kernel.module.aliases
        self.table = load_table(kernel.module.target_version)
        self.condition_depth = 0
        self._handled_bool: set[int] = set()
        self._refs_seen: set[int] = set()

    # -- names ----------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        self.usage.names_read.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._triton_ref(node)
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        self._visit_target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        self._visit_target(node.target)
        node.iter.visit(self)
        if isinstance(node.iter, cst.Call):
            path = self._callee_path(node.iter)
            if path in _LOOP_FUNCS:
                self.usage.loop_bound_exprs.extend(
                    a.value for a in node.iter.args if a.keyword is None
                )
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        self._visit_target(node.target)
        node.iter.visit(self)
        for condition in node.ifs:
            condition.visit(self)
        if node.inner_for_in is not None:
            node.inner_for_in.visit(self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        return False

    def _visit_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.usage.local_names.add(target.value)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._visit_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._visit_target(target.value)
        else:
            target.visit(self)

    def _triton_ref(self, node: cst.BaseExpression, call: cst.Call | None = None) -> None:
        if id(node) in self._refs_seen:
            return
        self._refs_seen.add(id(node))
        path = self.aliases.resolve(node)
        text = dotted_name(node)
        if (
            path is not None
            and text is not None
            and (path == "triton" or path.startswith("triton."))
        ):
            self.usage.triton_refs.append(TritonRef(node, path, text, call))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        for part in (node.left, *(c.comparator for c in node.comparisons)):
            if isinstance(part, cst.Name):
                self.usage.compared_names.add(part.value)

    # -- conditions -----------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self.usage.compile_time_exprs.append(node.test)
        self.usage.conditions.append(node.test)
        self._condition(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.usage.compile_time_exprs.append(node.test)
        self.usage.conditions.append(node.test)
        self._condition(node.test)

    def visit_While(self, node: cst.While) -> None:
        self.usage.conditions.append(node.test)
        self._condition(node.test)

    def _condition(self, test: cst.BaseExpression) -> None:
        self._bool_op(test, in_condition=True)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._bool_op(node, in_condition=False)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._bool_op(node, in_condition=False)

    def _bool_op(self, node: cst.BaseExpression, in_condition: bool) -> None:
        if id(node) in self._handled_bool:
            return
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self._handled_bool.add(id(node))
            self.usage.bool_ops.append(BoolOp(node, "not", [node.expression], in_condition))
            if in_condition:
                self._bool_op(node.expression, in_condition)
            return
        if not isinstance(node, cst.BooleanOperation):
            return
        op = "and" if isinstance(node.operator, cst.And) else "or"
        inner: list[cst.BooleanOperation] = []
        operands = _flatten(node, type(node.operator), inner)
        self._handled_bool.add(id(node))
        self._handled_bool.update(id(n) for n in inner)
        self.usage.bool_ops.append(BoolOp(node, op, operands, in_condition))
        for operand in operands:
            if in_condition:
                self._bool_op(operand, in_condition)

    # -- calls ----------------------------------------------------------------------
    def _callee_path(self, call: cst.Call) -> str | None:
        if isinstance(call.func, cst.Name) and call.func.value == "range":
            return "range"
        return self.aliases.resolve(call.func)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self.usage.compile_time_exprs.append(element.slice.value)

    def visit_Call(self, node: cst.Call) -> None:
        ct = self.usage.compile_time_exprs
        func = node.func
        if isinstance(func, cst.Name | cst.Attribute):
            self._triton_ref(func, node)
        # Keyword arguments that are compile-time wherever they appear.
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in COMPILE_TIME_ARGS:
                ct.append(arg.value)
        path = self.aliases.resolve(func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if path is not None and path.startswith(TL + "."):
            short = path[len(TL) + 1 :]
            module = "language"
            if short.startswith("math."):
                module, short = "math", short[5:]
            if short in _ALL_COMPILE_TIME:
                ct.extend(a.value for a in node.args)
                return
            signature = self.table.signature(module, short) if "." not in short else None
            if signature is None:
                ct.extend(a.value for a in node.args)  # unknown to the table: conservative
                return
            self._bind(node, signature, positional, exclude_shape=short in _RUNTIME_SHAPE)
            return
        if path is not None:
            return  # triton.* host helpers, torch.*, math.*: TL206's business
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.kernel.params_by_name:
                ct.append(func)  # a constexpr function parameter called like a function
                return
            if name in _COMPILE_TIME_BUILTINS:
                ct.extend(a.value for a in node.args)
                return
            if name in ("range", "min", "max", "int", "float", "bool", "abs", "print", "len"):
                return
            callee = self.kernel.module.kernels_by_name.get(name)
            if callee is not None:
                self._bind_jit(node, callee)
                return
            # An unknown helper (imported from another module) may take constexprs; a
            # runtime tensor or scalar argument cannot be one.
            ct.extend(a.value for a in node.args if not self._runtime_value(a.value))
            return
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            signature = self.table.signature("tensor", method)
            if signature is None:
                signature = self.table.signature("tensor_descriptor", method)
            if signature is None:
                if method not in self.table.names("tensor"):
                    ct.extend(a.value for a in node.args)  # unknown object: be conservative
                return
            self._bind(node, signature, positional, exclude_shape=False)

    def _runtime_value(self, expr: cst.BaseExpression) -> bool:
        """A value only known when the kernel runs: loaded, a program id, lanes, a runtime
        argument or anything computed from one."""
        return bool(self.kernel.prov(expr) & _RUNTIME_FLAGS)

    def _bind(self, node, signature, positional, exclude_shape: bool) -> None:
        ct = self.usage.compile_time_exprs
        params = [p for p in signature.params if p.kind != "VAR_KEYWORD"]
        index = 0
        for value in positional:
            if index >= len(params):
                break
            param = params[index]
            if param.name in COMPILE_TIME_ARGS and not (exclude_shape and param.name == "shape"):
                ct.append(value)
            if param.kind != "VAR_POSITIONAL":
                index += 1
        if exclude_shape:
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "shape":
                    ct.remove(arg.value)

    def _bind_jit(self, node: cst.Call, callee: Kernel) -> None:
        ct = self.usage.compile_time_exprs
        positional = [a for a in node.args if a.keyword is None]
        for arg, param in zip(positional, callee.params, strict=False):
            if arg.star or param.is_constexpr:
                ct.append(arg.value)
        for arg in node.args:
            if arg.keyword is not None:
                param = callee.params_by_name.get(arg.keyword.value)
                if param is None or param.is_constexpr:
                    ct.append(arg.value)


def _flatten(
    node: cst.BooleanOperation, operator: type, inner: list[cst.BooleanOperation]
) -> list[cst.BaseExpression]:
    """Operands of an unparenthesised chain ``a and b and c`` (as Python's ast sees them);
    ``inner`` collects the nested binary nodes of the chain."""
    out: list[cst.BaseExpression] = []
    for side in (node.left, node.right):
        if (
            isinstance(side, cst.BooleanOperation)
            and isinstance(side.operator, operator)
            and not side.lpar
        ):
            inner.append(side)
            out.extend(_flatten(side, operator, inner))
        else:
            out.append(side)
    return out


# -- shape and pointer facts ----------------------------------------------------------------

#: tl functions whose result is a scalar whatever their arguments.
_SCALAR_RESULTS = {
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "reduce",
    "xor_sum",
    "reduce_or",
    "program_id",
    "num_programs",
    "cdiv",
}
_BLOCK_SOURCES = {"arange", "zeros", "full", "zeros_like", "full_like", "rand", "randn", "randint"}


def is_block(kernel: Kernel, expr: cst.BaseExpression, _depth: int = 0) -> bool:
    """Whether ``expr`` is (plausibly) a block tensor, not a scalar: it derives from
    ``tl.arange``/``tl.zeros``/... through elementwise operations, and no reduction over
    all axes made it scalar. Reductions with ``axis=`` keep a block when the input is 2-D; they
    are treated as scalar (the conservative answer for rules that warn about blocks)."""
    if _depth > 12:
        return False
    memo: dict[int, bool] = kernel.usage.block_memo
    key = id(expr)
    if key in memo:
        return memo[key]
    memo[key] = False  # a cycle through loop-carried definitions adds nothing
    result = memo[key] = _is_block(kernel, expr, _depth + 1)
    return result


def _is_block(kernel: Kernel, expr: cst.BaseExpression, depth: int) -> bool:
    if isinstance(expr, cst.Name):
        if expr.value in kernel.params_by_name and not kernel.definitions.get(expr.value):
            return False
        return any(
            d.value is not None and d.kind != "for" and is_block(kernel, d.value, depth)
            for d in kernel.definitions.get(expr.value, [])
        )
    if isinstance(expr, cst.Call):
        path = kernel.module.aliases.resolve(expr.func)
        if path is not None and path.startswith(TL + "."):
            short = path.rsplit(".", 1)[-1]
            if short in _SCALAR_RESULTS:
                return False
            if short in _BLOCK_SOURCES:
                shape = expr.args[0].value if expr.args else None
                return not (
                    short in ("zeros", "full")
                    and isinstance(shape, cst.List | cst.Tuple)
                    and not shape.elements
                )  # tl.zeros([]) is a scalar
            args = [a.value for a in expr.args if a.keyword is None]
            if short in ("load", "atomic_add", "atomic_cas", "atomic_xchg"):
                return bool(args) and is_block(kernel, args[0], depth)
            return any(is_block(kernel, a, depth) for a in args)
        if isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in _SCALAR_RESULTS:
                return False
            return is_block(kernel, expr.func.value, depth)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return is_block(kernel, expr.left, depth) or is_block(kernel, expr.right, depth)
    if isinstance(expr, cst.Comparison):
        return is_block(kernel, expr.left, depth) or any(
            is_block(kernel, c.comparator, depth) for c in expr.comparisons
        )
    if isinstance(expr, cst.UnaryOperation):
        return is_block(kernel, expr.expression, depth)
    if isinstance(expr, cst.BooleanOperation):
        return is_block(kernel, expr.left, depth) or is_block(kernel, expr.right, depth)
    if isinstance(expr, cst.Subscript | cst.Attribute):
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("shape", "dtype", "numel"):
            return False
        return is_block(kernel, expr.value, depth)
    if isinstance(expr, cst.IfExp):
        return is_block(kernel, expr.body, depth) or is_block(kernel, expr.orelse, depth)
    return False


def pointer_bases(kernel: Kernel, expr: cst.BaseExpression) -> list[Param]:
    """Runtime parameters that are the base of a pointer expression: the additive terms of
    ``x_ptr + offs`` (through local definitions), not the ones scaled by ``*`` or passed
    through calls (offsets and strides)."""
    found: dict[str, Param] = {}
    seen: set[str] = set()

    def walk(node: cst.BaseExpression, depth: int) -> None:
        if depth > 12:
            return
        if isinstance(node, cst.Name):
            if node.value in seen:
                return
            seen.add(node.value)
            param = kernel.params_by_name.get(node.value)
            if (
                param is not None
                and not param.is_constexpr
                and param.name not in kernel.usage.compared_names
            ):
                found[param.name] = param
            for definition in kernel.definitions.get(node.value, []):
                if definition.value is not None and definition.kind != "for":
                    walk(definition.value, depth + 1)
        elif isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, cst.Add | cst.Subtract
        ):
            walk(node.left, depth + 1)
            if isinstance(node.operator, cst.Add):
                walk(node.right, depth + 1)
        elif isinstance(node, cst.IfExp):
            walk(node.body, depth + 1)
            walk(node.orelse, depth + 1)
        elif isinstance(node, cst.Subscript):
            walk(node.value, depth + 1)
        elif isinstance(node, cst.Call):
            path = kernel.module.aliases.resolve(node.func)
            short = path.rsplit(".", 1)[-1] if path else None
            if short in ("multiple_of", "max_contiguous", "max_constancy", "advance"):
                if node.args:
                    walk(node.args[0].value, depth + 1)
            elif short == "make_block_ptr" and node.args:
                walk(node.args[0].value, depth + 1)
            elif (
                short is None
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("to", "cast")
            ):
                walk(node.func.value, depth + 1)

    walk(expr, 0)
    return list(found.values())


def dereferenced_params(kernel: Kernel) -> dict[str, Param]:
    """Parameters used as the base pointer of a load, store or atomic (or block pointer)."""
    out: dict[str, Param] = {}
    for access in kernel.accesses:
        if access.pointer is not None:
            for param in pointer_bases(kernel, access.pointer):
                out[param.name] = param
    for call in kernel.calls_to("make_block_ptr", "make_tensor_descriptor"):
        args = [a.value for a in call.node.args if a.keyword is None]
        base = args[0] if args else None
        for a in call.node.args:
            if a.keyword is not None and a.keyword.value == "base":
                base = a.value
        if base is not None:
            for param in pointer_bases(kernel, base):
                out[param.name] = param
    return out


def casts_int_to_pointer(kernel: Kernel) -> bool:
    """The kernel builds pointers from integers itself (``x.to(tl.pointer_type(...))``)."""
    return any(True for _ in kernel.calls_to("pointer_type")) or any(
        call.name is not None and call.name.endswith("int_to_ptr") for call in kernel.calls
    )


def literal_key(autotune_call: cst.Call) -> bool:
    """``key=`` of ``@triton.autotune`` is a literal list of strings (so it was read fully)."""
    expr = None
    for index, arg in enumerate(autotune_call.args):
        if (arg.keyword is not None and arg.keyword.value == "key") or (
            arg.keyword is None and index == 1
        ):
            expr = arg.value
    return isinstance(expr, cst.List | cst.Tuple) and all(
        isinstance(e.value, cst.SimpleString) for e in expr.elements
    )
