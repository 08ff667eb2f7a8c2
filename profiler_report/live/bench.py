"""One benchmark harness for every case: its rows, its peers, the peer loop, the table and the JSON.

A case's benchmark (``cases/<case>/bench.py``) builds a :class:`Point` per size and dtype (the
input/output pairs, the repeats, the L2 size, the bytes a call moves, how an output is checked)
and asks it for rows: :meth:`Point.memcpy`, :meth:`Point.kernel` (a stage or ceiling kernel,
checked, then CUDA-event-timed) and :meth:`Point.peers` (the case's :class:`Peer` entries,
``cases/<case>/peers.py``). A wrong output is a row with NaN times and a note starting "WRONG";
a peer that cannot run here is a "skipped" row saying why; one that raises is a "failed" row.
GPU only (CuPy), except the rows, table and JSON, which read and write ``bench.json`` rows.

bench.json's rows keep the keys the committed reports hold: the dimensions flattened
(``rows``/``cols``, ``n``), the % column under the case's own key (:attr:`BenchRow.PCT_KEY`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol, Self, TypeVar

from profiler_report.analysis.verdicts import slower_beyond_spread
from profiler_report.live.gpu import event_times_us, memcpy_fn, poison
from profiler_report.model.manifest import Stage

#: fn(src, dst): writes its result into dst and returns None, or returns its own result (an array
#: of any DLPack library: peers that allocate their output, or a reduction's 0-d sum).
Fn = Callable[[Any, Any], Any]
Pairs = list[tuple[Any, Any]]

EVENTS, WALL = "cuda-events", "wall-clock"
#: Where a row's sweep point ran (live/fanout.py WHERE_FIELDS).
WHERE = ("host", "gpu_index", "gpu_uuid", "gpu_name", "gpu_driver")


class PeerUnavailable(Exception):  # noqa: N818 (a reason, not a failure: the row is "skipped")
    """A peer that cannot run here (library not installed, dtype it lacks): the message says why."""


def import_peer(module: str) -> Any:
    """The peer library ``module`` (e.g. "torch"), imported.

    Raises:
        PeerUnavailable: it is not installed here (its peers' rows are "skipped").
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerUnavailable(f"{module} not installed ({exc})") from exc


@dataclass(frozen=True)
class Peer:
    """One peer library's version of the case's operation, timed beside the stages.

    ``make(cupy, dtype)`` builds it (imports, compiles; raises :class:`PeerUnavailable` when it
    cannot run here). With ``timing`` :data:`EVENTS` it returns ``fn(src, dst)`` (:data:`Fn`),
    which the harness checks with the point's check (the case's reference) and then CUDA-event-
    times; with :data:`WALL` (a library on a stream of its own, e.g. JAX) it returns
    ``time(point) -> (microseconds per call, note)``, which checks its output first (with the
    point's check, or a stricter one of its own) and returns (None, "WRONG: ...") when it is wrong.
    """

    name: str
    make: Callable[[Any, str], Any]
    note: str = ""
    timing: str = EVENTS


@dataclass
class BenchRow:
    """One timed entry (a stage, a ceiling, a peer, a configuration) at one size and dtype.

    ``dims``: the case's size (``{"rows": R, "cols": C}``, ``{"n": N}``); times in microseconds
    (median and the 10th/90th percentiles of the samples); ``gbps``: the case's bytes per call /
    median; ``pct``: GB/s as a % of the point's reference (memcpy or the case's ceiling kernel,
    written as :attr:`PCT_KEY`); ``timing``: "cuda-events", "wall-clock", "skipped" or "failed";
    ``resident``: "L2" when the bytes fit in L2, else "DRAM". A case adds its own fields in a
    subclass (the transpose's tile and configuration, the reduction's grid).
    """

    #: bench.json's key of :attr:`pct`.
    PCT_KEY: ClassVar[str] = "pct_of_memcpy"
    #: The dimension keys, in bench.json order.
    DIMS: ClassVar[tuple[str, ...]] = ()

    name: str
    kind: str  # "stage", "ceiling", "peer", "config" or "shape"
    dims: dict[str, int]
    dtype: str
    median_us: float
    p10_us: float
    p90_us: float
    gbps: float
    pct: float = float("nan")
    timing: str = EVENTS
    note: str = ""
    resident: str = ""
    chosen: bool = False  # configuration rows: the manifest's (profiled) or the chosen one
    threads: int = 0  # configuration rows: threads per block
    host: str = ""
    gpu_index: str = ""
    gpu_uuid: str = ""
    gpu_name: str = ""
    gpu_driver: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The row as bench.json holds it: dims flattened, ``pct`` under :attr:`PCT_KEY`."""
        d = asdict(self)
        dims = d.pop("dims")
        head = {k: d.pop(k) for k in ("name", "kind")}
        d[self.PCT_KEY] = d.pop("pct")
        return {**head, **{k: dims[k] for k in (self.DIMS or tuple(dims))}, **d}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        """A row back from :meth:`to_dict`'s dict (gathered from a worker, or a JSON file):
        keys this class lacks are left out, missing optional ones take their defaults."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names and k not in ("dims", "pct")}
        kw["dims"] = {k: int(d[k]) for k in cls.DIMS if k in d}
        if cls.PCT_KEY in d:
            kw["pct"] = d[cls.PCT_KEY]
        return cls(**kw)

    def but(self, **changes: Any) -> Self:
        """A copy with ``changes`` (its own dims dict)."""
        return replace(self, dims=dict(self.dims), **changes)


#: check(point, fn, stage) -> "" when fn's output is right on the point's first pair, else what is
#: wrong; ``stage`` is the kernel's stage (None for a peer: the case's operation itself).
Check = Callable[["Point", Fn, Stage | None], str]


@dataclass
class Point:
    """One size and dtype being timed: what every row of it shares (see the module docstring)."""

    cupy: Any
    row_type: type[BenchRow]
    dims: dict[str, int]
    dtype: str
    pairs: Pairs
    nbytes: int  # bytes one call moves: GB/s = nbytes / median
    l2_bytes: int
    check: Check
    repeats: int = 30
    warmup: int = 5
    #: Called after a peer whose check took over a second (it built a kernel: the SMs sat idle).
    after_slow_check: Callable[[], None] = field(default=lambda: None)

    def row(self, name: str, kind: str, us: list[float] | None, timing: str = EVENTS, note: str = "") -> BenchRow:
        """A row from the samples ``us`` (None or all NaN: untimed, NaN times): median, p10/p90,
        GB/s of the point's bytes, and where those bytes were (L2 or DRAM)."""
        resident = "L2" if self.nbytes <= self.l2_bytes else "DRAM"
        nan = float("nan")
        if not us or all(u != u for u in us):
            return self.row_type(name, kind, dict(self.dims), self.dtype, nan, nan, nan, nan, timing=timing,
                                 note=note, resident=resident)
        med, q = statistics.median(us), statistics.quantiles(us, n=10)
        return self.row_type(name, kind, dict(self.dims), self.dtype, med, q[0], q[-1], self.nbytes / (med * 1e3),
                             timing=timing, note=note, resident=resident)

    def timed(self, fn: Fn) -> list[float]:
        return event_times_us(fn, self.pairs, self.repeats, self.warmup)

    def memcpy(self, note: str = "cudaMemcpyAsync device-to-device", pairs: Pairs | None = None) -> BenchRow:
        """cudaMemcpyAsync device-to-device of the inputs (into ``pairs``' outputs, by default the point's)."""
        return self.row("memcpy", "ceiling", event_times_us(memcpy_fn(self.cupy), pairs or self.pairs, self.repeats,
                                                            self.warmup), note=note)

    def kernel(self, name: str, kind: str, launch: Callable[[Any, Any], None], stage: Stage) -> BenchRow:
        """One kernel checked, then event-timed; a wrong one gets NaN times and a WRONG note."""
        bad = self.check(self, launch, stage)
        if bad:
            return self.row(name, kind, None, note="WRONG: " + bad)
        return self.row(name, kind, self.timed(launch))

    def peers(self, peers: Iterable[Peer]) -> list[BenchRow]:
        """A row per peer (see :class:`Peer`); a peer library failing never stops the benchmark."""
        return [self.peer(p) for p in peers]

    def peer(self, p: Peer) -> BenchRow:
        try:
            made = p.make(self.cupy, self.dtype)
        except PeerUnavailable as exc:
            return self.row(p.name, "peer", None, "skipped", str(exc))
        except Exception as exc:  # a peer library failing must not stop the benchmark
            return self.row(p.name, "peer", None, "failed", _failure(exc))
        try:
            if p.timing == WALL:
                us, note = made(self)
                return self.row(p.name, "peer", us, WALL if us or note.startswith("WRONG") else "skipped", note)
            t0 = time.perf_counter()
            bad = self.check(self, made, None)
            if time.perf_counter() - t0 > 1:
                self.after_slow_check()
            if bad:
                return self.row(p.name, "peer", None, note="WRONG: " + bad)
            return self.row(p.name, "peer", self.timed(made), note=p.note)
        except Exception as exc:  # as above
            return self.row(p.name, "peer", None, "failed", _failure(exc))


def warm_peers(cupy: Any, peers: Iterable[Peer], dtype: str, src: Any, dst: Any) -> None:
    """Build each of ``peers`` and run it once on ``src``/``dst``, untimed: the compiles and library
    starts that would otherwise fall inside the timed step (see
    :mod:`profiler_report.live.peers_process`). A peer timed by wall clock is given a point of that
    one pair and no timed repeats (it checks its output and warms up, and times nothing). A peer
    that fails here is left to :meth:`Point.peer` to report."""
    point = Point(cupy, BenchRow, {}, dtype, [(src, dst)], 0, 0, lambda p, fn, st: "", repeats=0, warmup=0)
    for p in peers:
        try:
            made = p.make(cupy, dtype)
            if p.timing == WALL:
                made(point)
            else:
                made(src, dst)
        except Exception:  # noqa: BLE001,S112 (reported where it is timed)
            continue
    cupy.cuda.runtime.deviceSynchronize()


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:160]}"


def checked_output(cupy: Any, fn: Fn, pairs: Pairs) -> tuple[Any, Any]:
    """(what ``fn`` produced on the first pair: its result or its written output, the input):
    the output poisoned first (NaN bytes), so that an unwritten element never matches."""
    src, dst = pairs[0]
    poison(cupy, dst)
    res = fn(src, dst)
    cupy.cuda.runtime.deviceSynchronize()
    return (dst if res is None else res), src


def relative_to(rows: list[BenchRow], base: float) -> None:
    """Set every row's ``pct`` to its GB/s as a % of ``base`` GB/s."""
    for r in rows:
        r.pct = 100 * r.gbps / base


def best_peer_gbps(rows: list[BenchRow]) -> dict[tuple[tuple[int, ...], str], float]:
    """(dims values, dtype) -> GB/s of the fastest peer that ran there."""
    best: dict[tuple[tuple[int, ...], str], float] = {}
    for r in rows:
        if r.kind == "peer" and r.gbps == r.gbps:
            key = (tuple(r.dims.values()), r.dtype)
            best[key] = max(best.get(key, 0.0), r.gbps)
    return best


def table(rows: list[BenchRow], pct_label: str = "% memcpy") -> str:
    """Fixed-width text table: name (``(chosen)`` marked), kind, size, dtype, where, median us,
    p10-p90, GB/s, ``pct_label``, and the ratio to the fastest peer at the same size and dtype
    (nan where no peer ran)."""
    best = best_peer_gbps(rows)
    lines = [f"{'name':<36} {'kind':<8} {'size':>12} {'dtype':<8} {'where':<5} {'median us':>10} "
             f"{'p10-p90 us':>17} {'GB/s':>8} {pct_label:>9} {'x best peer':>11}  note"]
    for r in rows:
        ratio = r.gbps / best.get((tuple(r.dims.values()), r.dtype), float("nan"))
        name = r.name + (" (chosen)" if r.chosen and r.kind == "config" else "")
        size = "x".join(str(v) for v in r.dims.values())
        lines.append(f"{name:<36} {r.kind:<8} {size:>12} {r.dtype:<8} {r.resident:<5} {r.median_us:10.1f} "
                     f"{f'{r.p10_us:.1f}-{r.p90_us:.1f}':>17} {r.gbps:8.0f} {r.pct:8.1f}% {ratio:10.3f}x  {r.note}")
    return "\n".join(lines)


def as_json(rows: list[BenchRow], provenance: dict[str, Any], pct_label: str | None = None) -> dict[str, Any]:
    """bench.json's content: the provenance, the % column's label where the case names one, the rows."""
    head: dict[str, Any] = {"provenance": provenance}
    if pct_label is not None:
        head["pct_label"] = pct_label
    return {**head, "rows": [r.to_dict() for r in rows]}


@dataclass(frozen=True)
class Harness:
    """What a case's benchmark gives the commands: its row type, how its table and JSON are labelled
    and any verdict lines of its own after the table."""

    row_type: type[BenchRow]
    table_label: str = "% memcpy"
    json_label: str | None = None
    verdicts: Callable[[list[BenchRow]], list[str]] = field(default=lambda rows: [])

    def rows(self, dicts: list[dict[str, Any]]) -> list[BenchRow]:
        return [self.row_type.from_dict(d) for d in dicts]

    def table(self, rows: list[BenchRow]) -> str:
        return "\n".join([table(rows, self.table_label), *self.verdicts(rows)])

    def as_json(self, rows: list[BenchRow], provenance: dict[str, Any]) -> dict[str, Any]:
        return as_json(rows, provenance, self.json_label)


class Candidate(Protocol):
    """A timed configuration row (any case's bench row type): its median, p10 and p90 in
    microseconds, its configuration as "[a,b,...]" and its note ("WRONG: ..." when its output was
    wrong)."""

    median_us: float
    p10_us: float
    p90_us: float
    config: str
    note: str


C = TypeVar("C", bound=Candidate)


def choose_config(candidates: Iterable[C], default: str) -> C | None:
    """The configuration that runs at a point: the candidate with the best (lowest) median, unless
    the manifest's ``default`` ("[16,16,256]") is within the run-to-run spread of it (the default's
    median not above the best's p90: :func:`~profiler_report.analysis.verdicts.slower_beyond_spread`
    at the default's median), in which case the default is kept. The default's median, not its p10:
    at float16 8191x8193 a default 3.2 % slower by median had a p10 below the best's p90 and was kept
    (reports/h200/sweep.json at eb9d1c2). Wrong or untimed candidates never win; None if none ran.
    The sweeps and ``run`` of every case with configuration candidates choose by this one rule."""
    timed = [r for r in candidates if r.median_us == r.median_us and not r.note.startswith("WRONG")]
    if not timed:
        return None
    best = min(timed, key=lambda r: r.median_us)
    dflt = next((r for r in timed if r.config == default), None)
    return dflt if dflt is not None and not slower_beyond_spread(dflt.median_us, best.p90_us) else best


def choice_record(stage: Stage, timed: list[Any], chosen: Any, size: dict[str, int], dtype: str,
                  how: str) -> dict[str, Any]:
    """``run``'s record of one configuration choice (see
    :meth:`~profiler_report.model.base.Case.choose_configs`): ``chosen`` among the ``timed``
    :class:`Candidate` rows, the fastest other one as the runner-up, the manifest's default and
    their times in microseconds; ``how`` says why (the rule's note)."""
    runner = min((r for r in timed if r is not chosen), key=lambda r: r.median_us, default=None)
    default = f"[{','.join(stage.targs)}]"
    dflt = next((r for r in timed if r.config == default), None)
    return {"stage": stage.id, "chosen": chosen.config, "targs": chosen.config.strip("[]").split(","),
            "chosen_us": chosen.median_us, "chosen_p10_us": chosen.p10_us, "chosen_p90_us": chosen.p90_us,
            "runner_up": runner.config if runner else "", "runner_up_us": runner.median_us if runner else None,
            "default": default, "default_us": dflt.median_us if dflt else None,
            "candidates": len(timed), "how": how, "size": dict(size), "dtype": dtype}
