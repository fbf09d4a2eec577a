"""pytest-xdist over stress cases: `-n 2` reports what one process reports; on a GPU each worker
pins its children to one GPU (worker k: GPU k mod the GPU count). With one GPU the two workers
share it, which still shows the pinning. Under the interpreter the same run checks the findings
only."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points

import pytest

pytest.importorskip("xdist")
torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from .test_pytest_plugin import KERNELS  # noqa: E402

pytest_plugins = ["pytester"]
GPU = os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available()


def results(path) -> dict[str, tuple[str, dict[str, str]]]:
    """testcase name -> (failure text or "passed", its properties)."""
    out = {}
    for case in ET.parse(path).iter("testcase"):
        failure = case.find("failure")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        text = failure.get("message", "") if failure is not None else "passed"
        out[f"{case.get('classname')}::{case.get('name')}"] = (text, props)
    return out


@pytest.mark.parametrize(
    "device",
    [
        "interpreter",
        pytest.param("cuda", marks=pytest.mark.skipif(not GPU, reason="needs a CUDA GPU")),
    ],
)
def test_two_workers_report_the_same_findings_each_on_its_gpu(pytester, device: str) -> None:
    other = KERNELS.replace("def copy_clean", "def other_clean")
    pytester.makepyfile(
        stress_a=KERNELS, stress_b=other.replace("def copy_unmasked", "def other_unmasked")
    )
    args = ["--triton-stress", "--triton-stress-device", device, "-p", "no:cacheprovider"]
    args += ["--dist", "loadfile"]  # a file's cases share one child: keep them on one worker
    if not any(ep.value.startswith("triton_lint") for ep in entry_points(group="pytest11")):
        args += ["-p", "triton_lint.pytest_plugin"]
    pytester.runpytest_subprocess(*args, "--junitxml", "one.xml")
    pytester.runpytest_subprocess(*args, "-n", "2", "--junitxml", "two.xml")
    one, two = results(pytester.path / "one.xml"), results(pytester.path / "two.xml")
    assert len(one) == 4
    assert {k: v[0] for k, v in one.items()} == {k: v[0] for k, v in two.items()}
    assert sum("TL901" in text for text, _ in one.values()) == 2  # the two unmasked loads
    if device == "cuda":
        gpus = torch.cuda.device_count()
        workers = {props["worker"] for _text, props in two.values()}
        assert workers == {"gw0", "gw1"}
        for _text, props in two.values():
            assert int(props["gpu"]) == int(props["worker"].removeprefix("gw")) % gpus
