"""pytest-xdist over stress cases on a GPU: each worker pins its children to one GPU and the
findings are those of one process (skipped without a GPU or pytest-xdist). With one GPU the
two workers share it, which still shows the pinning (GPU = worker mod GPUs)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("xdist")
if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and no TRITON_INTERPRET)", allow_module_level=True)

from .test_pytest_plugin import KERNELS  # noqa: E402

pytest_plugins = ["pytester"]


def results(path) -> dict[str, tuple[str, dict[str, str]]]:
    """testcase name -> (failure text or "passed", its properties)."""
    out = {}
    for case in ET.parse(path).iter("testcase"):
        failure = case.find("failure")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        text = failure.get("message", "") if failure is not None else "passed"
        out[f"{case.get('classname')}::{case.get('name')}"] = (text, props)
    return out


def test_two_workers_pin_a_gpu_each_and_report_the_same_findings(pytester) -> None:
    pytester.makepyfile(stress_a=KERNELS, stress_b=KERNELS.replace("def copy_", "def other_"))
    args = ["--triton-stress", "--triton-stress-device", "cuda", "-p", "no:cacheprovider"]
    args += ["--dist", "loadfile"]  # a file's cases share one child: keep them on one worker
    if not any(ep.value.startswith("triton_lint") for ep in entry_points(group="pytest11")):
        args += ["-p", "triton_lint.pytest_plugin"]
    pytester.runpytest_subprocess(*args, "--junitxml", "one.xml")
    pytester.runpytest_subprocess(*args, "-n", "2", "--junitxml", "two.xml")
    one, two = results(pytester.path / "one.xml"), results(pytester.path / "two.xml")
    assert len(one) == 4
    assert {k: v[0] for k, v in one.items()} == {k: v[0] for k, v in two.items()}
    assert sum("TL901" in text for text, _ in one.values()) == 2  # the two unmasked loads
    gpus = torch.cuda.device_count()
    workers = {props["worker"] for _text, props in two.values()}
    assert workers == {"gw0", "gw1"}
    for _text, props in two.values():
        assert int(props["gpu"]) == int(props["worker"].removeprefix("gw")) % gpus
