"""TL203's test that a constexpr argument changes only with what already selects the compiled
binary (dtype information, the launch's other constexpr arguments, module-level constants):
such a value adds no compilation of its own."""

from __future__ import annotations

import re

import libcst as cst

from triton_lint.model.evaluate import evaluate
from triton_lint.model.host import dimension_axis, is_shape, is_size_call
from triton_lint.model.host_tests import equality_sides
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.rules._host_sizes import is_model_tensor

#: Largest/smallest finite values of the narrow types quantization kernels clamp to: float8
#: e4m3fn (448), e4m3fnuz (240, or 224 as vLLM uses on ROCm), e5m2 (57344), fp4 e2m1 (6),
#: int8 (127, -128), uint8 (255), float16 (65504), bfloat16 and float32.
_DTYPE_LIMITS = {448.0, 240.0, 224.0, 57344.0, 6.0, 127.0, 128.0, 255.0, 65504.0}
_DTYPE_LIMITS |= {3.3895313892515355e38, 3.4028234663852886e38}
#: Host calls whose result depends only on a dtype.
_DTYPE_CALLS = {"finfo", "iinfo"}
#: Host calls whose result depends on their arguments alone (``table.get(key)``, ``math.ceil``).
PURE_CALLS = {"float", "int", "abs", "min", "max", "round", "ceil", "floor", "get", "cdiv", "str"}
PURE_CALLS |= {"next_power_of_2", "split", "rsplit", "replace", "lower", "upper", "strip"}
PURE_CALLS |= {"removeprefix", "ceil_div"}


#: What a launch argument is computed from: constants, values already in the compile key
#: (dtype information, other constexpr arguments of the launch), or anything else.
_CONST, _KEYED, _OTHER = 0, 1, 2


def compile_key_constant(kernel: Kernel, param: Param) -> bool:
    """Every launch in the file passes a value derived from what already selects the binary
    (dtype information, the launch's other constexpr arguments) or from module-level
    constants; with no launch passing it, a range-bound name whose default is a dtype limit."""
    passing = [site for site in kernel.launches if param.name in site.bound_arguments(kernel)]
    if passing:
        return all(
            _HostOrigin(kernel, site, param.name).of_argument() <= _KEYED for site in passing
        )
    if param.default is None or not re.search("max|min", param.name, re.IGNORECASE):
        return False
    value = evaluate(param.default)
    return isinstance(value, float) and abs(value) in _DTYPE_LIMITS


class _HostOrigin:
    """What a launch argument is computed from: constants (literals, module-level names), values
    in the compile key (dtype information, the launch's other constexpr arguments), or anything
    else (parameters, shapes, unknown calls), following the host function's single
    assignments."""

    def __init__(self, kernel: Kernel, site: LaunchSite, param: str) -> None:
        self.kernel = kernel
        self.site = site
        self.bound = site.bound_arguments(kernel)
        self.argument = self.bound[param]
        # Arguments of the other constexpr parameters: a value chosen by one of them adds no
        # compilation of its own.
        module = kernel.module.module
        self.flags = {
            module.code_for_node(expr)
            for name, expr in self.bound.items()
            if name != param and kernel.params_by_name[name].is_constexpr
        }
        self.visiting: set[str] = set()

    def of_argument(self) -> int:
        return self.of(self.argument)

    def of(self, node: cst.CSTNode) -> int:
        if self.kernel.module.module.code_for_node(node) in self.flags:
            return _KEYED  # also passed as another constexpr: `NT_GRID = cdiv(NT, MAX)`
        if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString):
            return _CONST
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if self._model_dimension(node):
            return _CONST  # `_, width = weight.shape`: one value per model
        if isinstance(node, cst.Attribute):
            return _KEYED if node.attr.value == "dtype" else self.of(node.value)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.Subscript):
            parts = [self.of(node.value)]
            for element in node.slice:
                index = element.slice
                if isinstance(index, cst.Index):
                    parts.append(self.of(index.value))
                else:
                    parts.extend(self.of(p) for p in (index.lower, index.upper, index.step) if p)
            return max(parts)
        if isinstance(node, cst.IfExp):
            return max(self.of(node.test), self.of(node.body), self.of(node.orelse))
        if isinstance(node, cst.UnaryOperation):
            return self.of(node.expression)
        if isinstance(node, cst.BinaryOperation | cst.BooleanOperation):
            return max(self.of(node.left), self.of(node.right))
        if isinstance(node, cst.Comparison):
            return max([self.of(node.left), *(self.of(c.comparator) for c in node.comparisons)])
        if isinstance(node, cst.Tuple | cst.List):
            return max([_CONST, *(self.of(el.value) for el in node.elements)])
        return _OTHER

    def _name(self, name: str) -> int:
        if name in ("True", "False", "None"):
            return _CONST
        site = self.site
        if name in self.visiting:
            return _OTHER
        self.visiting.add(name)
        try:
            if self._asserted_keyed(name):
                return _KEYED  # `assert HC * HC + 2 * HC == M`: M changes only with HC
            if name in site.host_definitions:
                return self.of(site.host_definitions[name])
            if name in site.host_alternatives:  # assigned in each arm of an `if`
                return max(self.of(value) for value in site.host_alternatives[name])
        finally:
            self.visiting.discard(name)
        if name in site.host_locals:
            # A parameter or reassigned local: only its name can tell it holds a dtype.
            return _KEYED if name.lower().endswith("dtype") else _OTHER
        if name in self.kernel.module.module_names:
            return _CONST  # a module-level constant: one value per process
        return _OTHER

    def _model_dimension(self, node: cst.CSTNode) -> bool:
        """``weight.shape``, ``weight.shape[1]`` or ``weight.size(1)`` of a tensor that is, or
        has the shape of, a model parameter: fixed for the model, like a module constant."""
        if is_shape(node):
            assert isinstance(node, cst.Attribute)
            tensor = node.value
        elif isinstance(node, cst.BaseExpression) and dimension_axis(node) is not None:
            owner = node.value if isinstance(node, cst.Subscript) else node.func
            assert isinstance(owner, cst.Attribute)
            tensor = owner.value
        elif isinstance(node, cst.Call) and is_size_call(node) and not node.args:
            assert isinstance(node.func, cst.Attribute)
            tensor = node.func.value
        else:
            return False
        return is_model_tensor(self.site, tensor)

    def _asserted_keyed(self, name: str) -> bool:
        """The host asserts ``name`` equal to a value in the compile key (an expression of
        the launch's other constexpr arguments, of dtypes or of constants)."""
        for test in self.site.holding_tests():
            sides = equality_sides(test)
            if sides is None:
                continue
            left, right = sides
            for this, other in ((left, right), (right, left)):
                if isinstance(this, cst.Name) and this.value == name and self.of(other) <= _KEYED:
                    return True
        return False

    def _call(self, node: cst.Call) -> int:
        func = node.func
        if isinstance(func, cst.Attribute):
            callee = func.attr.value
        elif isinstance(func, cst.Name):
            callee = func.value
        else:
            return _OTHER
        if callee in _DTYPE_CALLS or callee.lower().endswith("dtype"):
            return _KEYED  # torch.finfo(x.dtype), current_platform.fp8_dtype()
        if callee not in PURE_CALLS:
            return _OTHER
        parts = [self.of(arg.value) for arg in node.args]
        if isinstance(func, cst.Attribute):
            parts.append(self.of(func.value))  # the table of `table.get(key)`
        return max([_CONST, *parts])
