"""analysis.claims and the [[claims]] of the manifest: parsed, checked, judged."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from profiler_report.analysis.claims import judge_claim, judge_claims
from profiler_report.errors import InputError
from profiler_report.model.manifest import Claim, load_manifest
from profiler_report.model.registry import get_case


def _summary(**cols) -> pd.DataFrame:
    base = {"stage": ["smem", "padded"], "role": ["stage", "stage"], "duration_us": [20.0, 10.0]}
    return pd.DataFrame({**base, **cols})


def test_the_transpose_lists_the_articles_claims():
    claims = get_case("transpose").manifest.claims
    sources = {c.source for c in claims}
    assert {"000", "002", "003"} <= sources
    says = " ".join(c.says for c in claims)
    for words in ("[32][32] tile is conflict-free", "20-50%", "5-15%", "[32][34]", "blockDim.x 16", "bank_size"):
        assert words in says, words
    assert any(c.replaces.startswith("nvprof") for c in claims)


def test_the_reduction_has_no_claims():
    assert get_case("reduction").manifest.claims == ()


def test_equals_within_ten_percent_and_zero_below_half():
    c = Claim("x", "y", "z", metric="m", at="s", equals=1)
    assert judge_claim(c, 1.06)[0] == "confirmed"
    assert judge_claim(c, 32.4) == ("refuted", "32.4: not 1 (within 10%)")
    zero = Claim("x", "y", "z", metric="m", at="s", equals=0)
    assert judge_claim(zero, 0.3)[0] == "confirmed"
    assert judge_claim(zero, 119974.0)[0] == "refuted"


def test_a_range_refutes_beyond_either_end():
    c = Claim("000", "20-50% faster", "1.2-1.5x", metric="speedup", at="padded", over="smem", min=1.2, max=1.5)
    assert judge_claim(c, 1.3)[0] == "confirmed"
    assert judge_claim(c, 1.83) == ("refuted", "1.83x: beyond the claimed 1.50")
    assert judge_claim(c, 1.1) == ("refuted", "1.10x: below the claimed 1.20")


def test_no_metric_is_not_measurable_here_and_nan_is_not_measured():
    c = Claim("002", "bank_size(8)", "fewer conflicts", why_not="no such attribute")
    assert judge_claim(c, math.nan) == ("not measurable here", "no such attribute")
    m = Claim("x", "y", "z", metric="m", at="s", above=1)
    assert judge_claim(m, math.nan)[0] == "not measured"


def test_speedup_uses_the_speed_column_and_points_come_from_experiments():
    claims = [Claim("000", "faster", "2x", metric="speedup", at="padded", over="smem", min=1.9, max=2.1),
              Claim("000", "sweep", "2", metric="shared_wavefronts_per_load", at="padding_sweep/p2", equals=2),
              Claim("000", "absent", "2", metric="shared_wavefronts_per_load", at="padding_sweep/p9", equals=2)]
    out = judge_claims(claims, _summary(), {"padding_sweep/p2": {"shared_wavefronts_per_load": 2.04}})
    assert list(out["verdict"]) == ["confirmed", "confirmed", "not measured"]
    assert "ncu durations" in out["measured"][0]
    assert "not in this report's experiment capture" in out["measured"][2]


def test_a_stage_missing_from_the_capture_is_not_measured():
    out = judge_claims([Claim("003", "y", "z", metric="duration_us", at="naive", above=0)], _summary())
    assert out["verdict"][0] == "not measured" and "naive is not in this capture" in out["measured"][0]


def _manifest(tmp_path: Path, claims: str) -> Path:
    (tmp_path / "k.cu").write_text("")
    path = tmp_path / "stages.toml"
    path.write_text('source = "k.cu"\n[ceiling]\nid = "copy"\nkernel = "c"\n[[stage]]\nid = "a"\nkernel = "a"\n'
                    + claims)
    return path


@pytest.mark.parametrize("claim, words", [
    ('[[claims]]\nsource = "1"\nsays = "s"\n', "lacks predicts"),
    ('[[claims]]\nsource = "1"\nsays = "s"\npredicts = "p"\nmetric = "m"\nat = "a"\n', "no bound"),
    ('[[claims]]\nsource = "1"\nsays = "s"\npredicts = "p"\nmetric = "speedup"\nat = "a"\nmin = 1\n', "needs `over`"),
    ('[[claims]]\nsource = "1"\nsays = "s"\npredicts = "p"\n', "no `why_not`"),
    ('[[claims]]\nsource = "1"\nsays = "s"\npredicts = "p"\nmetric = "m"\nat = "a"\nequals = "one"\n', "numbers"),
    ('[[claims]]\nsource = "1"\nsays = "s"\npredicts = "p"\nwhy_not = "w"\nmetrc = "x"\n', "unknown keys metrc"),
])
def test_bad_claims_are_one_line_input_errors(tmp_path, claim, words):
    with pytest.raises(InputError) as exc:
        load_manifest(_manifest(tmp_path, claim))
    assert words in exc.value.message and "stages.toml" in exc.value.one_line()
    assert "\n" not in exc.value.one_line()


def test_a_user_manifest_may_have_claims(tmp_path):
    m = load_manifest(_manifest(tmp_path, '[[claims]]\nsource = "mine"\nsays = "s"\npredicts = "p"\n'
                                          'metric = "duration_us"\nat = "a"\nbelow = 5\n'))
    assert m.claims == (Claim("mine", "s", "p", metric="duration_us", at="a", below=5.0),)
    assert "claims" not in m.params
