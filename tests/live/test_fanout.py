"""live/fanout.py: sweeps as points, in-process and on a CPU Dask LocalCluster of worker processes
(2 workers, 1 thread each) with the fake point-runner of tests/fakes.py (test values, no GPU)."""

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

from profiler_report.live import fanout
from profiler_report.live.fanout import PointResult, PointStore, SweepPoint, run_sweep
from profiler_report.model.registry import get_case

distributed = pytest.importorskip("distributed", reason="needs Dask's distributed (the test extra installs it)")


def points(tag: int, count: int = 4) -> list[SweepPoint]:
    """``count`` reduction points, distinct from other tests' (``tag`` goes into repeats)."""
    return [SweepPoint("reduction", "size", (("n", 1000 * (i + 1)),), "float32", repeats=20 + tag)
            for i in range(count)]


@pytest.fixture
def client(cluster: Any, control: Path) -> Iterator[Any]:
    for f in control.iterdir():
        f.unlink()
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=30)
        yield c


def without_where(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in fanout.WHERE_FIELDS} for r in rows]


def test_points_run_in_process_without_importing_dask(tmp_path: Path) -> None:
    code = ("import sys, fakes\n"
            "from profiler_report.live.fanout import SweepPoint, run_sweep\n"
            "res = run_sweep([SweepPoint('reduction', 'size', (('n', 8),), 'float32')], fakes.fake_point_runner)\n"
            "print(res[0].status, len(res[0].rows), 'distributed' in sys.modules)\n")
    env = {**os.environ, "FAKE_FANOUT_DIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.split() == ["ok", "2", "False"], out.stderr


def test_the_cluster_spreads_points_and_gathers_them_as_in_process(client: Any, control: Path) -> None:
    (control / "sleep").write_text("0.3")  # long enough that both workers take points
    pts = points(1, 6)
    remote = run_sweep(pts, fakes.fake_point_runner, client=client)
    pids = {pid for _, pid in fakes.fanout_runs()}
    here = run_sweep(pts, fakes.fake_point_runner)
    assert [r.point for r in remote] == pts  # the points' order, whatever order they finished in
    assert len(pids) == 2 and os.getpid() not in pids
    assert [without_where(r.rows) for r in remote] == [without_where(r.rows) for r in here]
    assert all(r.status == "ok" and r.attempts == 1 and r.wall_s >= r.seconds for r in remote)


@pytest.mark.parametrize("where", ["in-process", "cluster"])
def test_a_failed_point_is_retried_once_then_recorded(where: str, control: Path, request: pytest.FixtureRequest
                                                      ) -> None:
    c = request.getfixturevalue("client") if where == "cluster" else None
    if c is None:
        for f in control.iterdir():
            f.unlink()
    pts = points(2)
    (control / f"fail-once-{pts[1].key()}").touch()
    (control / f"fail-always-{pts[2].key()}").touch()
    res = run_sweep(pts, fakes.fake_point_runner, client=c)
    assert [(r.status, r.attempts) for r in res] == [("ok", 1), ("ok", 2), ("failed", 2), ("ok", 1)]
    assert res[2].reason.startswith("RuntimeError: test double: CUDA error at reduction size n=3000 float32")
    assert res[2].rows == [] and all(r.rows for i, r in enumerate(res) if i != 2)
    assert [k for k, _ in fakes.fanout_runs()].count(pts[2].key()) == 2  # once, then the one retry


def test_a_lost_worker_loses_no_other_point_and_the_retry_brings_it_back(client: Any, control: Path) -> None:
    pts = points(3)
    (control / f"die-once-{pts[0].key()}").touch()
    res = run_sweep(pts, fakes.fake_point_runner, client=client)
    # Tasks queued on the dying worker fail with it (allowed-failures 0): the retry brings them back.
    assert [r.status for r in res] == ["ok"] * 4 and res[0].attempts == 2 and all(r.rows for r in res)
    client.wait_for_workers(2, timeout=30)  # the nanny restarts the worker
    lone = SweepPoint("reduction", "size", (("n", 7),), "int32")
    (control / f"die-always-{lone.key()}").touch()
    [dead] = run_sweep([lone], fakes.fake_point_runner, client=client)
    assert (dead.status, dead.attempts) == ("failed", 2) and dead.reason.startswith("KilledWorker")


def test_an_interrupted_sweep_resumes_from_the_finished_points(client: Any, control: Path, tmp_path: Path) -> None:
    pts, store = points(4, 5), PointStore(tmp_path / "bench.json.points", "abc123")
    seen: list[PointResult] = []

    def stop_after_two(res: PointResult) -> None:
        seen.append(res)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(pts, fakes.fake_point_runner, store=store, progress=stop_after_two)
    assert len(list(store.folder.iterdir())) == 2
    res = run_sweep(pts, fakes.fake_point_runner, client=client, store=store)
    ran = [k for k, _ in fakes.fanout_runs()]
    assert sorted(ran) == sorted(p.key() for p in pts), fakes.fanout_runs()  # the two finished ones did not run again
    assert [r.status for r in res] == ["ok"] * 5 and [r.point for r in res] == pts
    # A failed point is not kept; another commit's results are not reused.
    run_sweep(pts, fakes.fake_point_runner, store=PointStore(store.folder, "def456"))
    assert len(fakes.fanout_runs()) == 10


def test_points_of_one_sweep_on_different_gpus_or_drivers_warn() -> None:
    p = points(5, 2)
    h200 = {"host": "a", "gpu_name": "NVIDIA H200", "gpu_driver": "580.95.05"}
    same = [PointResult(x, where=h200) for x in p]
    assert fanout.mixed_gpus([r.where for r in same]) == ""
    other = [same[0], PointResult(p[1], where={**h200, "gpu_name": "NVIDIA H100 80GB HBM3"})]
    warning = fanout.mixed_gpus([r.where for r in other])
    assert warning.startswith("points of one sweep ran on different GPU models or drivers: "
                              "NVIDIA H100 80GB HBM3 (driver 580.95.05); NVIDIA H200")
    assert fanout.sweep_record(other, "in-process")["warnings"] == [warning]
    other[1].status = "failed"  # a failed point ran nothing to compare
    assert fanout.sweep_record(other, "in-process")["warnings"] == []


def test_sweep_points_are_the_work_units_run_all_runs() -> None:
    red = get_case("reduction").sweep_points("reduction", quick=False, repeats=30)
    assert [(p.unit, p.dims["n"], p.dtype) for p in red[:4]] == [
        ("size", 2**28, "float32"), ("configs", 2**28, "float32"),
        ("size", 2**28, "int32"), ("configs", 2**28, "int32")]
    assert len(red) == 4 + 2 * 7 and len({p.key() for p in red}) == len(red)
    tr = get_case("transpose").sweep_points("transpose", quick=True, repeats=30)
    assert [(p.unit, p.dims, p.peers) for p in tr] == [("size", {"rows": 8192, "cols": 8192}, True),
                                                       ("shapes", {"rows": 8192, "cols": 8192}, True)]


def test_bench_through_a_scheduler_writes_what_in_process_writes(client: Any, control: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from profiler_report import cli

    monkeypatch.setattr(fanout, "run_point", fakes.fake_point_runner)
    fakes.install_fake_gpu(monkeypatch)  # the in-process provenance reads the (fake) device
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r1 = CliRunner().invoke(cli.main, ["bench", "--case", "reduction", "--quick", "--out", str(a)])
    r2 = CliRunner().invoke(cli.main, ["bench", "--case", "reduction", "--quick", "--out", str(b),
                                       "--scheduler", client.scheduler.address])
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    assert without_where(ja["rows"]) == without_where(jb["rows"]) and len(ja["rows"]) == 4
    engines = (ja["sweep"]["engine"], jb["sweep"]["engine"])
    assert engines == ("in-process", f"dask scheduler {client.scheduler.address}")
    assert [p["key"] for p in ja["sweep"]["points"]] == [p["key"] for p in jb["sweep"]["points"]]
    assert (tmp_path / "b.json.points").is_dir()
    # scripts/compare_bench.py: the two match; a row moved out of its spread is named.
    script = Path(__file__).parents[2] / "scripts" / "compare_bench.py"
    same = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "overhead per point" in same.stdout, same.stdout + same.stderr
    jb["rows"][1].update(p10_us=50.0, p90_us=60.0)
    b.write_text(json.dumps(jb))
    moved = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True, text=True, timeout=60)
    assert moved.returncode == 1 and "bands do not overlap" in moved.stdout, moved.stdout


@pytest.mark.parametrize("args, message", [
    (["--cluster", "local"], "dask-cuda cannot be imported"),
    (["--cluster", "local", "--scheduler", "tcp://x:1"], "--cluster and --scheduler both given"),
])
def test_bench_cluster_options_refuse_bad_use(args: list[str], message: str, tmp_path: Path) -> None:
    from profiler_report import cli
    from profiler_report.errors import InputError

    if "dask-cuda" in message and fanout_has_dask_cuda():
        pytest.skip("dask-cuda is installed here")
    res = CliRunner().invoke(cli.main, ["bench", "--case", "reduction", "--quick", "--out", str(tmp_path / "x.json"),
                                        *args])
    assert isinstance(res.exception, InputError) and str(res.exception).startswith(message), res.output
    assert not (tmp_path / "x.json").exists()


def fanout_has_dask_cuda() -> bool:
    try:
        import dask_cuda  # noqa: F401
    except ImportError:
        return False
    return True


def test_the_report_names_the_gpus_the_rows_ran_on_and_warns_when_they_differ() -> None:
    from profiler_report.report.tables import where_notes

    row = {"name": "memcpy", "host": "node1", "gpu_index": "0", "gpu_uuid": "GPU-a", "gpu_name": "NVIDIA H200",
           "gpu_driver": "580.95.05"}
    assert where_notes([row, row]) == [] and where_notes([{"name": "memcpy"}]) == []
    two = [row, {**row, "gpu_index": "1", "gpu_uuid": "GPU-b"}]
    assert where_notes(two) == ["the benchmark rows ran on 2 GPUs: node1 GPU 0 (GPU-a), node1 GPU 1 (GPU-b)"]
    mixed = [row, {**row, "host": "node2", "gpu_driver": "575.57.08"}]
    notes = where_notes(mixed)
    assert len(notes) == 2 and notes[1].startswith("warning: points of one sweep ran on different GPU models")
