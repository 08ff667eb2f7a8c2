"""The ncu / compute-sanitizer target's --configs: the configuration run chose for the shape is
the one compiled and launched (under the stage's own id and NVTX range)."""

from __future__ import annotations

import json

from profiler_report.live import ncu, sanitizer, target


def test_configs_replace_the_stages_template_arguments(monkeypatch):
    seen = {}

    def compile_module(case, dtype, extra=()):
        seen["extra"] = [(s.id, s.targs) for s in extra]
        return None, {}

    def launches(kernels, stages, size, validated=False):
        seen["stages"] = [(s.id, s.targs) for s in stages]
        seen["validated"] = validated
        return []

    monkeypatch.setattr(target, "compile_module", compile_module)
    monkeypatch.setattr(target, "profile_launches", launches)
    argv = ncu.target_command("transpose", {"rows": 64, "cols": 64}, "float16", ["naive", "vec_realigned"],
                              {"vec_realigned": ("32", "16", "512", "2")})[3:]
    assert target.main(argv) == 0
    assert seen["stages"] == [("naive", ()), ("vec_realigned", ("32", "16", "512", "2"))]
    assert seen["extra"] == [("vec_realigned", ("32", "16", "512", "2"))]
    assert seen["validated"] is False  # validated here unless the run says it did
    assert target.main([*argv, "--validated"]) == 0 and seen["validated"] is True


def test_no_configs_no_option():
    assert "--configs" not in ncu.target_command("transpose", {"rows": 8}, "float32", ["naive"])
    child = sanitizer.child_command("transpose", {"rows": 8}, "float32", ["naive"], {"vec_tuned": ("8", "8", "64")})
    assert json.loads(child[child.index("--configs") + 1]) == {"vec_tuned": ["8", "8", "64"]}
