"""cases.python_case and the live side of Python stages, without a GPU: a ladder made by
`new-case --python`, its functions swapped for numpy ones (``array = "cupy"``: no torch here),
run through the tool's own validation, timing, peers and report code.

The GPU is the CPU stand-in of tests/fakes.py (numpy arrays; event times are test values, never
measurements).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import install_numpy_gpu

from profiler_report.errors import CaseError, KernelIncorrectError
from profiler_report.live.config import RunConfig
from profiler_report.live.session import live_run
from profiler_report.model.python_case import function_source, top_level
from profiler_report.model.registry import get_case
from profiler_report.model.scaffold import PYTHON_SCAFFOLD_FILES, new_case

ROOT = Path(__file__).resolve().parents[2]

#: The scaffold's stages in numpy: the eager one writes its output, the peer returns it.
NUMPY_STAGES = '''
import numpy


def eager(x, out):
    numpy.multiply(numpy.maximum(x, 0), 2, out=out)


def fused(x, out):
    out[:] = numpy.maximum(x, 0) * 2


def compiled(x, out):
    return numpy.maximum(x, 0) * 2


def copy(x, out):
    out[:] = x
'''


@pytest.fixture
def folder(tmp_path) -> Path:
    dest = tmp_path / "py-ladder"
    new_case(dest, python=True)
    (dest / "stages.py").write_text(NUMPY_STAGES)
    case_py = dest / "case.py"
    case_py.write_text(case_py.read_text().replace('array = "torch"', 'array = "cupy"'))
    return dest


def _cfg(folder: Path) -> RunConfig:
    return RunConfig(case=str(folder), size={"n": 4099}, counters=False, sanitize=False)


def test_new_case_python_writes_the_python_ladder(tmp_path):
    files = new_case(tmp_path / "mine", python=True)
    assert [f.name for f in files] == list(PYTHON_SCAFFOLD_FILES)
    case = get_case(str(tmp_path / "mine"))
    assert case.name == "mine" and not case.compiles_cuda and case.source_language == "python"
    assert [s.function for s in case.manifest.stages] == ["eager", "fused"]
    assert [p.id for p in case.manifest.peers] == ["compiled"] and case.has_peers
    sources = case.stage_sources()
    assert "def relu2_kernel" in sources["fused"] and "def fused" in sources["fused"]  # the kernel it launches
    assert "relu2_kernel" not in sources["eager"]


def test_a_python_ladder_is_validated_timed_and_its_peers_benched(folder, tmp_path, monkeypatch):
    from profiler_report.report.build import render_timings_only

    install_numpy_gpu(monkeypatch, {})
    dest = tmp_path / "report"
    monkeypatch.chdir(tmp_path)
    live_run(_cfg(folder), dest, render=lambda out: render_timings_only(out, case=get_case(str(folder))),
             peers=True)
    validation = json.loads((dest / "validation.json").read_text())
    assert [(v["stage"], v["correct"]) for v in validation] == [("eager", True), ("fused", True), ("copy", True)]
    timed = json.loads((dest / "timings.json").read_text())["timings"]
    assert [t["name"] for t in timed] == ["memcpy", "eager", "fused", "copy"]
    bench = json.loads((dest / "bench.json").read_text())["rows"]
    assert [(r["name"], r["kind"]) for r in bench] == [("memcpy", "ceiling"), ("eager", "stage"), ("fused", "stage"),
                                                        ("copy", "ceiling"), ("compiled", "peer")]
    assert all(r["timing"] == "cuda-events" for r in bench)  # the returning peer was validated, then timed
    prov = json.loads((dest / "provenance.json").read_text())
    assert prov["sanitizer"].startswith("not run: a Python ladder")
    assert "2 * relu(x)" in (dest / "index.html").read_text()


def test_a_wrong_python_stage_is_reported_wrong_never_fast(folder, tmp_path, monkeypatch):
    stages = folder / "stages.py"
    stages.write_text(stages.read_text().replace("    out[:] = numpy.maximum(x, 0) * 2",
                                                 "    out[: len(out) // 2] = numpy.maximum(x, 0)[: len(out) // 2] * 2"))
    install_numpy_gpu(monkeypatch, {})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KernelIncorrectError) as exc:
        live_run(_cfg(folder), tmp_path / "r", render=None)
    assert "stage fused" in exc.value.message and "stages.py" in exc.value.message
    timed = json.loads((tmp_path / "r" / "timings.json").read_text())["timings"]
    assert "fused" not in [t["name"] for t in timed]


def test_a_returned_output_of_the_wrong_shape_is_one_line(folder, tmp_path, monkeypatch):
    stages = folder / "stages.py"
    stages.write_text(stages.read_text().replace("    out[:] = x\n", "    return x[:-1]\n"))
    install_numpy_gpu(monkeypatch, {})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError, match=r"stage copy: copy\(\) returned shape \(4098,\)"):
        live_run(_cfg(folder), tmp_path / "r", render=None)


def test_a_function_that_raises_names_its_line_in_stages_py(folder, tmp_path, monkeypatch):
    stages = folder / "stages.py"
    raising = "def eager(x, out):\n    raise ValueError('no')\n"
    stages.write_text(stages.read_text().replace("def eager(x, out):\n", raising))
    install_numpy_gpu(monkeypatch, {})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError, match=r"stages\.py:\d+: eager\(\) for stage eager raised ValueError: no"):
        live_run(_cfg(folder), tmp_path / "r", render=None)


def test_a_stage_without_its_function_is_refused_before_any_gpu_work(tmp_path):
    new_case(tmp_path / "f", python=True)
    (tmp_path / "f" / "stages.py").write_text("def eager(x, out):\n    pass\n")
    with pytest.raises(CaseError, match=r"no top-level function fused for stage fused"):
        get_case(str(tmp_path / "f"))


def test_stages_py_that_does_not_parse_names_its_line(tmp_path):
    new_case(tmp_path / "g", python=True)
    (tmp_path / "g" / "stages.py").write_text("def eager(x, out):\n    return (\n")
    with pytest.raises(CaseError, match=r"stages\.py:\d+: stages\.py does not parse"):
        get_case(str(tmp_path / "g"))


def test_function_source_takes_what_the_function_uses_in_file_order():
    text = ("import triton\n\n@triton.jit\ndef k(x):\n    pass\n\n\nunused = 1\nrate = 2\n\n"
            "def stage(x, out):\n    k[(1,)](x, rate)\n")
    src = function_source(text, "stage")
    assert src.splitlines()[0] == "@triton.jit" and "rate = 2" in src and "unused" not in src
    assert src.index("def k") < src.index("rate = 2") < src.index("def stage")
    assert function_source(text, "missing") == "" and set(top_level(text)) == {"k", "unused", "rate", "stage"}


def test_the_softmax_example_loads_and_shows_python_sources():
    case = get_case(str(ROOT / "examples" / "softmax"))
    assert case.name == "softmax" and case.dtypes == ("float32", "bfloat16")
    assert [s.id for s in case.manifest.stages] == ["eager", "compiled", "triton_row", "triton_tuned"]
    sources = case.stage_sources()
    assert "torch.compile(softmax_decomposed" in sources["compiled"]
    assert "def softmax_row_kernel" in sources["triton_tuned"] and "triton.autotune" in sources["triton_tuned"]
    assert case.normalize_source(sources["triton_row"], "triton_row").count("def stage(") == 1
