"""Where a kernel's names are used: compile-time positions, reads, conditions, boolean operators.

Built on first request (``kernel.facts(Usage)``) from one walk of the kernel body. The facts:

- ``compile_time_params``: the parameters that reach a position Triton must know when it
  compiles the kernel (``tl.arange`` bounds, tensor shapes, ``tl.static_range``, ``if`` and
  ternary tests, compile-time keyword arguments such as ``dtype=``/``num_stages=``/
  ``eviction_policy=``, the constexpr parameters of called ``@triton.jit`` functions,
  ``tl.static_assert``), directly or through local arithmetic feeding them;
- ``names_read``: every name the body reads (loads, not assignment targets);
- ``triton_refs``: every ``tl.*``-style reference with its canonical path and the call it heads;
- ``bool_ops``: every ``and``/``or`` chain and ``not`` with its operands and whether it sits in
  an ``if``/``while`` test;
- ``loop_bound_exprs``: arguments of ``range``/``tl.range``/``tl.static_range`` loops, and
  ``loop_steps`` their steps (``S`` of ``range(0, n, S)``: a tile or chunk size).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from triton_lint.api import load_table
from triton_lint.model.kernel import Kernel, Param
from triton_lint.model.names import TL, dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.tree import FieldVisitor

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


class Usage:
    """Where one kernel's names are used, from one walk of its body (on first request)."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        self.names_read: list[cst.Name] = []
        self.local_names: set[str] = set(kernel.definitions) | set(kernel.params_by_name)
        self.compile_time_exprs: list[cst.BaseExpression] = []
        self.triton_refs: list[TritonRef] = []
        self.bool_ops: list[BoolOp] = []
        self.loop_bound_exprs: list[cst.BaseExpression] = []
        self.loop_steps: list[cst.BaseExpression] = []
        self.conditions: list[cst.BaseExpression] = []
        self.compared_names: set[str] = set()  # names read inside comparisons
        self._compile_time: set[str] | None = None
        visitor = _UsageVisitor(kernel, self)
        for param in kernel.node.params.params + kernel.node.params.kwonly_params:
            if param.annotation is not None:
                visitor.walk(param.annotation)
        visitor.walk(kernel.node.body)

    def reads(self, name: str) -> bool:
        """Whether the body reads ``name`` at all."""
        return any(n.value == name for n in self.names_read)

    def compile_time_params(self) -> set[str]:
        """Names of parameters used in a compile-time position (directly or via locals)."""
        if self._compile_time is None:
            found: set[str] = set()
            for expr in self.compile_time_exprs:
                if _dtype_of_value(expr):
                    continue  # `p_y.dtype.element_ty`: the pointer's type, not its offsets
                found.update(p.name for p in self._kernel.params_in(expr))
            self._compile_time = found
        return self._compile_time

    def loop_bound_params(self) -> list[Param]:
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


#: Device-side languages outside ``triton.language`` (Triton's experimental dialects and
#: extensions): what their functions take at compile time is unknown here.
_DEVICE_EXTENSIONS = ("triton.experimental.",)

#: Per-call sizes: they change with the batch, so each new value is a new compilation.
_PER_CALL = re.compile(
    r"^(m|t|b|l|s|bs|bsz|n_rows|num_rows|nrows|rows|n_tokens|num_tokens|ntokens|total_tokens|"
    r"seq|seq_?len|seqlen|max_seqlen|n_ctx|batch|batch_size|num_seqs|n_elements|numel|n_elem|"
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


class _UsageVisitor(FieldVisitor):
    def __init__(self, kernel: Kernel, usage: Usage) -> None:
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
        self.walk(node.value)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        self.walk(node.value)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        self._visit_target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        self._visit_target(node.target)
        self.walk(node.iter)
        if isinstance(node.iter, cst.Call):
            path = self._callee_path(node.iter)
            if path in _LOOP_FUNCS:
                positional = [a.value for a in node.iter.args if a.keyword is None]
                self.usage.loop_bound_exprs.extend(positional)
                self.usage.loop_steps.extend(positional[2:3])
                self.usage.loop_steps.extend(
                    a.value for a in node.iter.args if a.keyword and a.keyword.value == "step"
                )
        self.walk(node.body)
        if node.orelse is not None:
            self.walk(node.orelse)
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        self._visit_target(node.target)
        self.walk(node.iter)
        for condition in node.ifs:
            self.walk(condition)
        if node.inner_for_in is not None:
            self.walk(node.inner_for_in)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        self.walk(node.value)
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
            self.walk(target)

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
        if path is not None and path.startswith(_DEVICE_EXTENSIONS):
            # a device language the table does not know (`tle.distributed_barrier(mesh)`):
            # any argument not computed at run time may have to be a compile-time object
            ct.extend(a.value for a in node.args if not self._runtime_value(a.value))
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
        return bool(self.kernel.facts(Provenance).of(expr) & _RUNTIME_FLAGS)

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
