"""A capture made elsewhere shows the source it embeds: each stage's kernel out of the file ncu
embedded (shown as the capture's, with its file name), as a diff from the stage before it where
both have source. On the committed foreign captures (cuda-samples style transposes, nvcc -lineinfo,
ncu --import-source yes)."""

from __future__ import annotations

from pathlib import Path

from conftest import load_run_once

from profiler_report.analysis.embedded import embedded_sources
from profiler_report.analysis.run import load_run
from profiler_report.report.build import _inputs
from profiler_report.report.page import build_page

FOREIGN = Path(__file__).resolve().parents[1] / "data" / "foreign"
LADDER = [FOREIGN / "ladder" / f"{k}.ncu-rep" for k in ("copy", "naive", "coalesced", "conflict_free")]


def test_each_stage_gets_its_own_kernel_from_the_embedded_file():
    run = load_run_once(FOREIGN / "all_4096.ncu-rep")
    src = embedded_sources(run.capture, run.summary)
    assert list(src) == ["copy", "transposeNaive", "transposeCoalesced", "transposeNoBankConflicts"]
    for stage, s in src.items():
        lines = s.text.splitlines()
        assert s.name == "transpose_samples.cu" and lines[0].startswith(f"__global__ void {stage}(")
        assert lines[-1] == "}" and sum("__global__" in ln for ln in lines) == 1  # one function, whole
        embedded = run.capture.source_files[s.file].splitlines()
        assert embedded[s.first_line - 1] == lines[0]


def test_a_foreign_ladder_shows_the_capture_s_source_as_diffs():
    page = build_page(_inputs(load_run(LADDER), False, None))
    by = {s.id: s for s in page.stages}
    assert by["copy"].code_note == "the capture's source: transpose_samples.cu from line 19"
    assert "source not available" not in " ".join(s.code_note for s in page.stages)
    free = by["conflict_free"]
    assert free.code_note.startswith("diff from coalesced, the capture's source: transpose_samples.cu from line 49")
    # The one change of the stage: the padded tile; the kernel's new name is no change.
    assert "TILE_DIM + 1" in free.code_html and "+++ conflict_free" in free.code_html.replace("&#43;", "+")
    assert "transposeCoalesced" not in free.code_html
