"""live/profiled.py and `sweep`: the profiled sweep, in-process and on a CPU Dask LocalCluster of
worker processes (2 workers, 1 thread each), with the fake ncu of tests/fakes.py (it copies the
real committed H200 captures; no GPU). The headline metrics are read from those captures by the
tool's own child-process reader, on the workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakes
import pytest
from click.testing import CliRunner

from profiler_report.errors import InputError
from profiler_report.live import fanout, profiled
from profiler_report.live.fanout import PointResult
from profiler_report.model.registry import get_case

distributed = pytest.importorskip("distributed", reason="needs Dask's distributed (the test extra installs it)")

DATA = Path(__file__).parents[1] / "data"
STAGES = "unrolled,vec_deep"


@pytest.fixture
def client(cluster: Any, control: Path) -> Iterator[Any]:
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=30)
        yield c


@pytest.fixture
def ncu(control: Path, tmp_path: Path) -> str:
    for f in control.iterdir():
        f.unlink()
    return str(fakes.fake_sweep_ncu(tmp_path / "bin"))


def points(*dtypes: str, rows: int = 4096) -> list[fanout.SweepPoint]:
    return profiled.sweep_points(get_case("transpose"), STAGES.split(","), [{"rows": rows, "cols": rows}],
                                 list(dtypes))


def without_where(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in fanout.WHERE_FIELDS} for r in rows]


def test_points_are_sizes_by_dtypes_with_the_stages_and_the_ceiling() -> None:
    case = get_case("transpose")
    pts = profiled.sweep_points(case, ["vec_deep"], [{"rows": 4096}, {"rows": 8192, "cols": 4096}],
                                ["float32", "float16"])
    assert [profiled.capture_name(p) for p in pts] == ["4096x8192-float32", "4096x8192-float16",
                                                        "8192x4096-float32", "8192x4096-float16"]
    assert {p.unit for p in pts} == {profiled.UNIT} and len({p.key() for p in pts}) == 4
    assert profiled.profiled_ids(case, pts[0]) == ["vec_deep", "copy"]
    every = profiled.profiled_ids(case, profiled.sweep_points(case, [], [{}], ["float32"])[0])
    assert every == [s.id for s in case.manifest.stages] + ["copy"]  # no stages given: the whole ladder
    with pytest.raises(InputError, match="no_such"):
        profiled.sweep_points(case, ["no_such"], [{}], ["float32"])


def sweep_cli(out: Path, ncu: str, *extra: str) -> Any:
    from profiler_report import cli

    return CliRunner().invoke(cli.main, ["sweep", "--case", "transpose", "--stages", STAGES, "--size",
                                         "rows=4096,cols=4096", "--dtype", "float32", "--dtype", "float64",
                                         "--ncu", ncu, "--out", str(out), *extra])


def test_a_sweep_through_a_scheduler_writes_what_in_process_writes(client: Any, ncu: str, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    r1 = sweep_cli(a, ncu)
    here = {pid for _, pid in fakes.sweep_ncu_runs()}
    r2 = sweep_cli(b, ncu, "--scheduler", client.scheduler.address)
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    workers = {pid for _, pid in fakes.sweep_ncu_runs()} - here
    assert here == {os.getpid()} and len(workers) == 2 and os.getpid() not in workers  # one point per worker
    ja, jb = (json.loads((d / "sweep.json").read_text()) for d in (a, b))
    assert ja["rows"] and without_where(ja["rows"]) == without_where(jb["rows"])
    assert [r["stage"] for r in ja["rows"]] == ["unrolled", "vec_deep", "copy"] * 2
    engines = (ja["sweep"]["engine"], jb["sweep"]["engine"])
    assert engines == ("in-process", f"dask scheduler {client.scheduler.address}")
    assert [p["key"] for p in ja["sweep"]["points"]] == [p["key"] for p in jb["sweep"]["points"]]
    assert all(p["status"] == "ok" and p["wall_s"] >= p["seconds"] > 0 for p in jb["sweep"]["points"])
    for d in (a, b):  # the capture bytes came back unchanged
        assert (d / "captures" / "4096x4096-float64.ncu-rep").read_bytes() == \
            (DATA / "h200_f64_2048" / "profile.ncu-rep").read_bytes()
    sa, sb = (json.loads((d / "report" / "summary.json").read_text()) for d in (a, b))
    # The report is the points' captures as one ladder, each launch named by its point (the fake's
    # captures hold every stage: a real ncu's NVTX filter keeps only the profiled ones).
    assert sa["stages"] == sb["stages"] and len(sa["stages"]) == 18
    names = [s["stage"] for s in sa["stages"] if s["role"] == "ceiling"]
    assert names == ["copy (4096x4096-float32)", "copy (4096x4096-float64)"]
    assert "vec_deep (4096x4096-float64)" in [s["stage"] for s in sa["stages"]]
    # scripts/compare_sweep.py: the two match; a changed instruction count is named.
    script = Path(__file__).parents[2] / "scripts" / "compare_sweep.py"
    same = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "overhead per point" in same.stdout, same.stdout + same.stderr
    jb["rows"][1]["instructions_executed"] += 1
    (b / "sweep.json").write_text(json.dumps(jb))
    moved = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True, text=True, timeout=60)
    assert moved.returncode == 1 and "vec_deep: instructions_executed" in moved.stdout, moved.stdout


def test_the_workers_write_into_a_shared_folder(client: Any, ncu: str, tmp_path: Path) -> None:
    res = sweep_cli(tmp_path / "s", ncu, "--scheduler", client.scheduler.address, "--shared", "--no-report")
    assert res.exit_code == 0, res.output
    caps = tmp_path / "s" / "captures"
    assert sorted(f.name for f in caps.iterdir()) == ["4096x4096-float32.ncu-rep", "4096x4096-float32.ncu.log",
                                                      "4096x4096-float64.ncu-rep", "4096x4096-float64.ncu.log"]
    assert not (tmp_path / "s" / "report").exists()


@pytest.mark.parametrize("where", ["in-process", "cluster"])
def test_a_failed_point_is_retried_once_then_recorded(where: str, ncu: str, control: Path, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    c = request.getfixturevalue("client") if where == "cluster" else None
    pts = points("float32", "float64")
    (control / "ncu-fail-once-4096x4096-float32").touch()
    (control / "ncu-fail-always-4096x4096-float64").touch()
    res = profiled.run_profiled_sweep(pts, tmp_path, profiled.ProfileSettings(ncu), "abc", client=c)
    assert [(r.status, r.attempts) for r in res] == [("ok", 2), ("failed", 2)]
    assert res[1].reason.startswith("PointFailed: error: ncu exited with status 1: ") and \
        fakes.NCU_APP_FAILED in res[1].reason
    assert [n for n, _ in fakes.sweep_ncu_runs()].count("4096x4096-float64") == 2  # once, then the one retry
    assert sorted(f.name for f in (tmp_path / "captures").glob("*.ncu-rep")) == ["4096x4096-float32.ncu-rep"]
    assert len(list((tmp_path / "points").iterdir())) == 1  # a failed point is not kept: a rerun retries it


def test_a_lost_worker_loses_no_other_point_and_the_retry_brings_it_back(client: Any, ncu: str, control: Path,
                                                                         tmp_path: Path) -> None:
    pts = points("float32", "float64")
    (control / "ncu-die-once-4096x4096-float32").touch()
    res = profiled.run_profiled_sweep(pts, tmp_path, profiled.ProfileSettings(ncu), "abc", client=client)
    assert [r.status for r in res] == ["ok", "ok"] and res[0].attempts == 2 and all(r.rows for r in res)
    killed = fakes.sweep_ncu_runs()[0][1]
    # The retry ran in another worker process (a busy machine may also see Dask re-run it where it was).
    assert {pid for _, pid in fakes.sweep_ncu_runs()[1:] if _ == "4096x4096-float32"} - {killed}
    client.wait_for_workers(2, timeout=30)  # the nanny restarts the worker


def test_an_interrupted_sweep_resumes_and_reruns_a_point_whose_capture_is_gone(client: Any, ncu: str,
                                                                               tmp_path: Path) -> None:
    pts, settings = points("float32", "float64"), profiled.ProfileSettings(ncu)
    seen: list[PointResult] = []

    def stop_after_one(res: PointResult) -> None:
        seen.append(res)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        profiled.run_profiled_sweep(pts, tmp_path, settings, "abc", progress=stop_after_one)
    assert len(list((tmp_path / "points").iterdir())) == 1
    res = profiled.run_profiled_sweep(pts, tmp_path, settings, "abc", client=client)
    assert [n for n, _ in fakes.sweep_ncu_runs()] == ["4096x4096-float32", "4096x4096-float64"]  # no rerun
    assert [r.status for r in res] == ["ok", "ok"] and without_where(res[0].rows) == without_where(seen[0].rows)
    (tmp_path / "captures" / "4096x4096-float32.ncu-rep").unlink()
    profiled.run_profiled_sweep(pts, tmp_path, settings, "abc")
    assert [n for n, _ in fakes.sweep_ncu_runs()][2:] == ["4096x4096-float32"]
    assert (tmp_path / "captures" / "4096x4096-float32.ncu-rep").is_file()


@pytest.mark.gpu
def test_one_point_profiled_on_the_gpu(tmp_path: Path) -> None:
    from profiler_report import cli

    res = CliRunner().invoke(cli.main, ["sweep", "--case", "transpose", "--stages", "vec_deep", "--size",
                                        "rows=1024,cols=1024", "--dtype", "float32", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "sweep.json").read_text())
    assert [r["stage"] for r in data["rows"]] == ["vec_deep", "copy"]  # ncu's NVTX filter kept only these
    assert data["rows"][0]["gpu_name"] and data["rows"][0]["duration_us"] > 0
    assert (tmp_path / "captures" / "1024x1024-float32.ncu-rep").is_file()
    assert (tmp_path / "report" / "index.html").is_file()
