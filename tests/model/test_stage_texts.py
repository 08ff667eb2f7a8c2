"""One idea per stage, in words a reader takes in: every built-in case's and example's stage has a
``short`` change of at most 15 words (the first screen's ladder table) and a ``change`` of at
most 60 words (its section; longer design notes go to ``notes``, shown folded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler_report.model.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted([*ROOT.glob("kernels/*/stages.toml"), *ROOT.glob("examples/*/stages.toml"),
                    ROOT / "templates" / "new_case" / "stages.toml"])


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_stage_says_its_one_change_briefly(path):
    stages = load_manifest(path).stages
    assert stages
    for st in stages:
        assert st.short and len(st.short.split()) <= 15, (st.id, st.short)
        assert st.change and len(st.change.split()) <= 60, (st.id, len(st.change.split()))
