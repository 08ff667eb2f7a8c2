"""The files a live run writes beside its capture (timings.json, validation.json, provenance.json,
bench.json, sweep.json, sanitizer.json), read and checked before use: :class:`Sidecars`; an
entry of the wrong shape or type is one InputError line naming the file and the key.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler_report.errors import InputError


@dataclass
class Sidecars:
    """Optional files recorded beside a capture by a live run."""

    timings: list[dict[str, Any]] | None = None
    validation: list[dict[str, Any]] | None = None
    provenance: dict[str, Any] | None = None
    bench: list[dict[str, Any]] | None = None  # bench.json rows: stages and peers at the run's size
    sweep: list[dict[str, Any]] | None = None  # sweep.json rows: sizes and dtypes
    sanitizer: dict[str, Any] | None = None  # sanitizer.json: compute-sanitizer per stage (live/sanitizer.py)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a live run writes here")


def _load_json(path: Path, finite: bool = False) -> Any:
    """The JSON in ``path``; ``finite``: NaN and Infinity are refused (files whose numbers are
    never untimed: the summary writes them on as strict JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, parse_constant=_no_constant) if finite else json.loads(text)
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, bad UTF-8, or a refused constant
        raise InputError(f"cannot read {path}: {exc}", "delete or regenerate the file") from exc
    except RecursionError as exc:  # nested deeper than Python's decoder goes: no file the tool writes
        raise InputError(f"cannot read {path}: nested too deeply to parse", "delete or regenerate the file") from exc


#: Keys each entry of a sidecar list must have, with the type of their value.
_ENTRY_KEYS: dict[str, dict[str, tuple[type, ...]]] = {
    "timings.json": {"name": (str,), "median_us": (int, float), "p10_us": (int, float), "p90_us": (int, float),
                     "gbps": (int, float)},
    "validation.json": {"stage": (str,), "correct": (bool,), "dtype": (str,)},
    "bench.json": {"name": (str,), "kind": (str,), "dtype": (str,)},
    "sweep.json": {"name": (str,), "kind": (str,), "dtype": (str,)},
}
#: A sidecar entry's size: the transpose's rows and cols, or a case's ``size`` text (bench and
#: sweep rows) or its dimensions (validation entries: every other integer key is a dimension).
_SIZE_KEYS = ("rows", "cols")


def _entries(path: Path, data: Any, key: str | None, kind: str | None = None) -> list[dict[str, Any]]:
    """The list of entries of a sidecar file (``kind``: which one, default its file name),
    checked entry by entry.

    Raises:
        InputError: the file does not have the shape a live run writes.
    """
    kind = kind or path.name
    items = data.get(key) if key and isinstance(data, dict) else (data if key is None else None)
    if not isinstance(items, list):
        raise InputError(f"{path} is not a {kind} written by profiler-report (no list"
                         f"{' under ' + repr(key) if key else ''})", "delete or regenerate the file")
    want = _ENTRY_KEYS[kind]
    for i, item in enumerate(items):
        bad = [k for k, types in want.items() if not isinstance(item, dict) or not _typed(item.get(k), types)]
        if not bad:
            bad = _bad_size(kind, item) + _bad_optional(kind, item) + _bad_timing(kind, item)
        if bad:
            raise InputError(f"{path}: entry {i} lacks or mistypes {', '.join(bad)}", "delete or regenerate the file")
    return items


_NUMBER = (int, float)


#: Keys a bench.json / sweep.json entry may hold, with their types; a timed value (a number) may
#: also be null or NaN (a skipped or wrong entry), never infinite or negative; text is never null.
_BENCH_OPTIONAL: dict[str, tuple[type, ...]] = {
    "gbps": _NUMBER, "pct_of_memcpy": _NUMBER, "median_us": _NUMBER, "p10_us": _NUMBER, "p90_us": _NUMBER,
    "note": (str,), "timing": (str,), "resident": (str,), "tile": (str,), "threads": (int,), "per_thread": (int,),
    "chosen": (bool,), "pct_of_ceiling": _NUMBER, "size": (str,), "n": (int,), "blocks": (int,),
    # The transpose sweep's per-point ceiling and chosen configuration (cases/transpose/bench.py).
    "ceiling": (str,), "pct_of_point_ceiling": _NUMBER, "config": (str,),
    # Where the row's sweep point ran (live/fanout.py WHERE_FIELDS).
    "host": (str,), "gpu_index": (str,), "gpu_uuid": (str,), "gpu_name": (str,), "gpu_driver": (str,),
}


#: Where a bench row's input and output were (bench.py BenchRow.resident): the sweep table's label.
_RESIDENT = ("L2", "DRAM", "")  # "": a row written before the label existed

#: Keys a block-shape sweep entry (kind "shape") must hold: the report's verdicts rest on them.
_SHAPE_REQUIRED = ("gbps", "pct_of_memcpy", "median_us", "p10_us", "p90_us")


def _typed(value: Any, types: tuple[type, ...]) -> bool:
    """``value`` is of ``types`` (a bool only where bool is named) and, if a number, not infinite,
    negative or an integer past a float's range (NaN is allowed: it marks an entry not timed)."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        return False
    if isinstance(value, int) and not isinstance(value, bool):
        return 0 <= value <= _FLOAT_MAX
    return not (isinstance(value, float) and (math.isinf(value) or value < 0))


_FLOAT_MAX = int(sys.float_info.max)


def _finite(v: Any) -> bool:
    """A number (not a bool) a float can hold, not NaN or infinite."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    return abs(v) <= _FLOAT_MAX if isinstance(v, int) else math.isfinite(v)


def _bad_size(name: str, item: dict[str, Any]) -> list[str]:
    """The size keys an entry lacks or mistypes: rows and cols, unless a bench/sweep row gives
    ``size`` (text) and a validation entry holds other integer dimensions (``n``)."""
    if name == "timings.json":
        return []
    if name != "validation.json" and isinstance(item.get("size"), str):
        return []
    if name == "validation.json" and not any(k in item for k in _SIZE_KEYS):
        dims = [k for k, v in item.items() if k not in ("mismatches", "elements") and type(v) is int]
        return [] if dims and all(_typed(item[k], (int,)) for k in dims) else ["its size (rows, cols or n)"]
    return [k for k in _SIZE_KEYS if not _typed(item.get(k), (int,))]


def _bad_timing(name: str, item: dict[str, Any]) -> list[str]:
    """A timing that contradicts itself: p10 above the median or the median above p90; in
    timings.json (a live run times only what validated) also a NaN, or a median or GB/s of 0."""
    keys = ("p10_us", "median_us", "p90_us")
    vals = [item.get(k) for k in keys]
    if name == "timings.json" and any(isinstance(v, float) and math.isnan(v) for v in (*vals, item.get("gbps"))):
        return ["a number, not NaN, for median_us, p10_us, p90_us and gbps"]
    if name == "timings.json" and not all(isinstance(item.get(k), int | float) and item[k] > 0
                                          for k in ("median_us", "gbps")):
        return ["a median_us and gbps above 0 (a timed launch takes time and moves bytes)"]
    if all(_finite(v) for v in vals) and not float(vals[0]) <= float(vals[1]) <= float(vals[2]):  # type: ignore[arg-type]
        return [f"p10_us <= median_us <= p90_us (got {vals[0]:g}, {vals[1]:g}, {vals[2]:g})"]
    return []


def _bad_optional(name: str, item: dict[str, Any]) -> list[str]:
    """Optional keys of a bench.json / sweep.json entry that are present with the wrong type."""
    if name not in ("bench.json", "sweep.json"):
        return []
    bad = [k for k, types in _BENCH_OPTIONAL.items()  # only a timed value may be null
           if k in item and (item[k] is not None or types is not _NUMBER) and not _typed(item[k], types)]
    if isinstance(item.get("resident"), str) and item["resident"] not in _RESIDENT and "resident" not in bad:
        bad.append("resident (L2 or DRAM)")
    if item.get("kind") == "shape":
        bad += [k for k in _SHAPE_REQUIRED if item.get(k) is None and k not in bad]
    elif name == "sweep.json" and "resident" not in item:  # the sweep table's L2 / DRAM label
        bad.append("resident")
    return bad


#: Keys of a sanitizer.json stage record besides each tool's result (live/sanitizer.py stage_results).
_SANITIZER_STAGE_KEYS = {"stage": (str,), "correct": (bool,), "first": (str,), "validation": (str,), "checked": (bool,)}


def _sanitizer(path: Path, data: Any) -> dict[str, Any]:
    """sanitizer.json, checked: an object with ``tools`` (at least one, each with a distinct
    ``tool`` name and a ``status``), ``stages`` (at least one, distinct, each with ``stage``,
    ``correct``, ``first`` and every tool's result as text), and the ``size_text``, ``dtype``,
    ``version`` and ``other`` the report states.

    Raises:
        InputError: the file does not have the shape a live run writes.
    """
    d = data if isinstance(data, dict) else {}
    tools: Any = d.get("tools")
    stages: Any = d.get("stages")
    names = [t.get("tool") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    tools_ok = bool(names) and len(names) == len(tools) and all(
        isinstance(n, str) and n not in _SANITIZER_STAGE_KEYS for n in names) and len(set(names)) == len(names) \
        and all(isinstance(t.get("status", ""), str) for t in tools)
    want = {**_SANITIZER_STAGE_KEYS, **{n: (str,) for n in names if isinstance(n, str)}}
    optional = ("validation", "checked")
    stages_ok = isinstance(stages, list) and bool(stages) and all(
        isinstance(r, dict) and all((k in optional and k not in r) or (k in r and _typed(r[k], t))
                                    for k, t in want.items()) for r in stages)
    if stages_ok and len({r["stage"] for r in stages}) != len(stages):
        stages_ok = False
    other = d.get("other", [])
    rest_ok = all(isinstance(d.get(k), str) for k in ("size_text", "dtype")) and isinstance(
        d.get("version", ""), str) and isinstance(other, list) and all(isinstance(o, str) for o in other)
    if not (tools_ok and stages_ok and rest_ok):
        raise InputError(f"{path} is not a sanitizer.json written by profiler-report (stages with stage, correct "
                         "and first and each tool's result as text, each stage once; tools, each with tool and "
                         "status, at least one, no name twice; size_text; dtype)", "delete or regenerate the file")
    return data


def _unique(path: Path, items: list[dict[str, Any]], key: Any) -> None:
    """Each entry of ``items`` once by ``key(entry)``.

    Raises:
        InputError: an entry repeats one before it (the report would show either).
    """
    seen: set[Any] = set()
    for i, item in enumerate(items):
        k = key(item)
        if k in seen:
            raise InputError(f"{path}: entry {i} repeats {k!r}", "delete or regenerate the file")
        seen.add(k)


def _validation_extras(path: Path, items: list[dict[str, Any]]) -> None:
    """validation.json's optional ``message`` (text) and counts (integers), and each stage once per
    dtype and size.

    Raises:
        InputError: one is mistyped or repeated.
    """
    for i, v in enumerate(items):
        if not isinstance(v.get("message", ""), str) or not all(
                _typed(v[k], (int,)) for k in ("mismatches", "elements") if k in v):
            raise InputError(f"{path}: entry {i} mistypes message (text), mismatches or elements (integers)",
                             "delete or regenerate the file")
    _unique(path, items, lambda v: (v["stage"], v["dtype"], tuple(sorted(
        (k, x) for k, x in v.items() if type(x) is int and k not in ("mismatches", "elements")))))


def _sanitizer_matches_the_run(path: Path, san: dict[str, Any], side: Sidecars) -> None:
    """sanitizer.json of the run's dtype, and no stage it marks wrong timed in timings.json (a
    live run times only stages with no finding).

    Raises:
        InputError: it contradicts the other files.
    """
    dtype = (side.provenance or {}).get("dtype")
    if isinstance(dtype, str) and san["dtype"] != dtype:
        raise InputError(f"{path} is of dtype {san['dtype']}, but provenance.json says the run was {dtype}",
                         "the files are of different runs: regenerate them together")
    timed = {t["name"] for t in side.timings or []}
    wrong = [r["stage"] for r in san["stages"] if not r["correct"] and r["stage"] in timed]
    if wrong:
        raise InputError(f"{path} marks {', '.join(wrong)} wrong, but timings.json times it",
                         "the files are of different runs: regenerate them together")


def _on_the_runs_gpu(path: Path, data: Any, rows: list[dict[str, Any]], prov: dict[str, Any], fix: str) -> None:
    """A bench JSON (bench.json or sweep.json) that ran on the run's GPU: its provenance's ``gpu``
    and each row's ``gpu_name`` (where the fan-out recorded it).

    Raises:
        InputError: it ran on another GPU (the page would show its figures as this GPU's).
    """
    gpu = prov.get("gpu")
    theirs = (data.get("provenance") or {}).get("gpu") if isinstance(data, dict) else None
    other = next((g for g in (theirs, *(r.get("gpu_name") for r in rows)) if isinstance(g, str) and g and g != gpu),
                 None)  # "": a row not placed by the fan-out
    if isinstance(gpu, str) and other is not None:
        raise InputError(f"{path} ran on {other}, but provenance.json says the run was on {gpu}", fix)


def _timings_match_the_run(path: Path, timings: list[dict[str, Any]], prov: dict[str, Any]) -> None:
    """Every timings.json entry is of the dtype and the timing size provenance.json gives.

    Raises:
        InputError: one is not (the two files are of different runs).
    """
    dims = prov["dims"] if isinstance(prov.get("dims"), list) else list(_SIZE_KEYS)
    want = {k: prov[k] for k in ("dtype", *dims) if k in prov}
    for i, t in enumerate(timings):
        got = {k: t[k] for k in want if k in t}
        if got != {k: want[k] for k in got}:
            raise InputError(f"{path}: entry {i} ({t.get('name')}) has {got}, but provenance.json says the run "
                             f"timed {want}", "the files are of different runs: regenerate them together")


def read_sweep(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``profiler-report bench`` JSON given as a sweep (``run --sweep``), checked as
    a report's sweep.json is.

    Raises:
        InputError: the file is unreadable or not a bench JSON.
    """
    return _entries(path, _load_json(path), "rows", kind="sweep.json")


def read_sidecars(folder: Path) -> Sidecars:
    """timings.json, validation.json, provenance.json, bench.json, sweep.json, sanitizer.json from
    ``folder``, where present.

    Raises:
        InputError: a file is present but unreadable or not of the shape a live run writes.
    """
    side = Sidecars()
    files = {name: folder / name for name in ("timings.json", "validation.json", "provenance.json",
                                              "bench.json", "sweep.json", "sanitizer.json")}
    if files["timings.json"].is_file():
        side.timings = _entries(files["timings.json"], _load_json(files["timings.json"]), "timings")
    if files["validation.json"].is_file():
        side.validation = _entries(files["validation.json"], _load_json(files["validation.json"], finite=True), None)
    if files["provenance.json"].is_file():
        prov = _load_json(files["provenance.json"], finite=True)
        if not isinstance(prov, dict):
            raise InputError(f"{files['provenance.json']} is not an object", "delete or regenerate the file")
        side.provenance = prov
    if side.timings:
        _unique(files["timings.json"], side.timings, lambda t: t["name"])
    if side.validation:
        _validation_extras(files["validation.json"], side.validation)
    if side.timings and side.provenance:
        _timings_match_the_run(files["timings.json"], side.timings, side.provenance)
    if files["bench.json"].is_file():
        bench = _load_json(files["bench.json"])
        side.bench = _entries(files["bench.json"], bench, "rows")
        if side.provenance:  # the peers at the run's size: same GPU, dtype and size
            _on_the_runs_gpu(files["bench.json"], bench, side.bench, side.provenance,
                             "the files are of different runs: regenerate them together")
            _timings_match_the_run(files["bench.json"], side.bench, side.provenance)
    if files["sweep.json"].is_file():
        sweep = _load_json(files["sweep.json"])
        side.sweep = _entries(files["sweep.json"], sweep, "rows")
        if side.provenance:
            _on_the_runs_gpu(files["sweep.json"], sweep, side.sweep, side.provenance,
                             "include a sweep made on this GPU (profiler-report bench there)")
    if files["sanitizer.json"].is_file():
        side.sanitizer = _sanitizer(files["sanitizer.json"], _load_json(files["sanitizer.json"], finite=True))
        _sanitizer_matches_the_run(files["sanitizer.json"], side.sanitizer, side)
    return side
