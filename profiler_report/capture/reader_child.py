"""The child process that reads a ``.ncu-rep`` with NVIDIA's ``ncu_report`` module.

``ncu_report`` runs here, never in the process that imports pandas, matplotlib or CuPy: its SWIG
layer and their native libraries do not share a process reliably, and a child can be stopped at a
timeout. The module picked is :func:`profiler_report.capture.ncu_module.load_reader`'s (the newest
reader on the machine). The result goes back to the parent as a pickle of plain data.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
from collections.abc import Collection
from typing import Any

from profiler_report.capture.ncu_module import load_reader
from profiler_report.capture.units import clean_rule_text, normalize_unit, shared_side, short_kernel_name

#: Launches of a .ncu-rep whose per-instruction values are read (the first ones, in capture order).
SOURCE_LAUNCHES = 100


def _nvtx_ranges(action: Any) -> str:
    try:
        state = action.nvtx_state()
        if state is None:
            return ""
        names: list[str] = []
        for dom_id in state.domains():
            names.extend(state.domain_by_id(dom_id).push_pop_ranges())
        return "/".join(names)
    except Exception:  # ncu_report raises plain RuntimeError subclasses here
        return ""


def _metric_value(m: Any) -> float | None:
    kind = m.kind()
    if kind == m.ValueKind_STRING or not m.has_value():
        return None
    if kind in (m.ValueKind_UINT32, m.ValueKind_UINT64):
        return float(m.as_uint64())
    return float(m.as_double())


def _device(action: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for key, metric in (
        ("gpu", "device__attribute_display_name"),
        ("sm_count", "device__attribute_multiprocessor_count"),
        ("cc_major", "device__attribute_compute_capability_major"),
        ("cc_minor", "device__attribute_compute_capability_minor"),
        ("sm_clock_khz", "device__attribute_clock_rate"),
        ("memory_clock_khz", "device__attribute_memory_clock_rate"),
        ("l2_bytes", "device__attribute_l2_cache_size"),
        ("chip", "device__attribute_chip"),
    ):
        m = action.metric_by_name(metric)
        if m is None:
            continue
        info[key] = m.as_string() if m.kind() == m.ValueKind_STRING else m.value()
    return info


def _rules(action: Any, launch_id: int) -> list[dict[str, Any]]:
    rows = []
    for r in action.rule_results():
        msg = r.rule_message() if r.has_rule_message() else None  # dict: title, message, type
        speed = r.speedup_estimation() if r.has_speedup_estimation() else None  # dict: type, speedup
        if not msg:
            continue
        rows.append({
            "launch_id": launch_id,
            "rule": r.rule_identifier(),
            "section": r.section_identifier(),
            "type": _msg_type(msg.get("type", 0)),
            "title": msg.get("title") or r.name(),
            "message": clean_rule_text(msg.get("message", "")),
            "speedup_pct": float(speed["speedup"]) if speed else math.nan,
            "speedup_type": _speedup_type(speed["type"]) if speed else "",
        })
    return rows


def _msg_type(t: int) -> str:
    return {0: "none", 1: "ok", 2: "warning", 3: "error", 4: "optimization"}.get(int(t), str(t))


def _speedup_type(t: int) -> str:
    return {0: "unknown", 1: "local", 2: "global"}.get(int(t), str(t))


def _action_rows(action: Any, launch_id: int) -> list[dict[str, Any]]:
    demangled = action.name(action.NameBase_DEMANGLED)
    base = {
        "launch_id": launch_id,
        "kernel": short_kernel_name(demangled),
        "demangled": demangled,
        "mangled": _mangled(action),
        "nvtx_range": _nvtx_ranges(action),
        "grid": _dim(action, "launch__grid_dim"),
        "block": _dim(action, "launch__block_dim"),
    }
    rows = []
    for name in action.metric_names():
        m = action.metric_by_name(name)
        v = _metric_value(m)
        if v is None or math.isnan(v):
            continue  # missing stays missing, never 0
        value, unit = normalize_unit(v, m.unit())
        rows.append({**base, "metric": name, "value": value, "unit": unit})
    return rows


def _mangled(action: Any) -> str:
    try:
        return str(action.name(action.NameBase_MANGLED))
    except Exception:  # an ncu_report without NameBase_MANGLED
        return ""


def _dim(action: Any, prefix: str) -> str:
    vals = []
    for axis in "xyz":
        m = action.metric_by_name(f"{prefix}_{axis}")
        vals.append(str(int(m.as_uint64())) if m is not None and m.has_value() else "?")
    return f"({', '.join(vals)})"


#: SOURCE_COLUMNS value column -> the instanced ncu metric (one value per SASS PC) it comes from.
_PER_PC_METRICS = {
    "inst_executed": "inst_executed",
    "shared_wavefronts": "memory_l1_wavefronts_shared",
    "shared_ideal_wavefronts": "memory_l1_wavefronts_shared_ideal",
    "shared_excessive_wavefronts": "derived__memory_l1_wavefronts_shared_excessive",
    "global_sectors": "memory_l2_theoretical_sectors_global",
    "global_ideal_sectors": "memory_l2_theoretical_sectors_global_ideal",
    "global_excessive_sectors": "derived__memory_l2_theoretical_sectors_global_excessive",
}

#: The stall reasons of ``smsp__pcsamp_warps_issue_stalled_<reason>`` (PC sampling, ncu 2025.3,
#: sm_90), without "selected": a warp that issued was not stalled.
STALL_SAMPLE_REASONS = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instructions", "not_selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait", "warpgroup_arrive",
)


#: Instructions kept per launch besides every shared- and global-memory one: the most executed,
#: and the most stalled.
TOP_INSTRUCTIONS = 20


def _per_pc(action: Any, name: str) -> dict[int, float]:
    """PC -> value of an instanced metric whose instances are correlated by PC; {} when absent."""
    m = action.metric_by_name(name)
    if m is None or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    out: dict[int, float] = {}
    for i in range(m.num_instances()):
        out[int(ids.as_uint64(i))] = float(m.as_double(i))
    return out


def source_rows(action: Any, launch_id: int) -> list[dict[str, Any]]:
    """Per-instruction rows (SOURCE_COLUMNS) of one ncu_report action.

    Every instruction with a shared-memory wavefront or a global-memory sector value is kept,
    plus the TOP_INSTRUCTIONS most executed and the TOP_INSTRUCTIONS with the most warp-stall
    samples (``stall_samples``: the sum of ``smsp__pcsamp_warps_issue_stalled_<reason>`` over
    :data:`STALL_SAMPLE_REASONS`; ``top_stall`` the largest reason). ``file``/``line`` come from
    ``action.source_info(pc)``: empty/0 when the kernel was built without line information
    (-lineinfo), and the report then attributes to SASS only. Any failure of the ncu_report calls
    yields [] (the report notes that attribution is missing).
    """
    try:
        values = {col: _per_pc(action, name) for col, name in _PER_PC_METRICS.items()}
        stalls = {r: _per_pc(action, f"smsp__pcsamp_warps_issue_stalled_{r}") for r in STALL_SAMPLE_REASONS}
    except Exception:  # the SWIG layer raises bare RuntimeError on odd reports
        return []
    executed = values["inst_executed"]
    sampled = {pc: sum(v.get(pc, 0.0) for v in stalls.values()) for pc in set().union(*stalls.values())}
    shared_pcs = set(values["shared_wavefronts"]) | set(values["shared_excessive_wavefronts"])
    global_pcs = set(values["global_sectors"]) | set(values["global_excessive_sectors"])
    top = sorted(executed, key=lambda pc: -executed[pc])[:TOP_INSTRUCTIONS]
    most_stalled = sorted(sampled, key=lambda pc: -sampled[pc])[:TOP_INSTRUCTIONS]
    pcs = sorted(shared_pcs | global_pcs | set(top) | set(most_stalled))
    if not pcs:
        return []
    base = min(executed) if executed else min(pcs)
    rows = []
    for pc in pcs:
        try:
            sass = str(action.sass_by_pc(pc) or "").strip()
            info = action.source_info(pc)
        except Exception:
            sass, info = "", None
        side = shared_side(sass)
        if not side and pc in shared_pcs:
            side = "other shared"
        rows.append({
            "launch_id": launch_id, "pc_offset": pc - base, "sass": sass, "side": side,
            "file": str(info.file_name()) if info is not None else "",
            "line": int(info.line()) if info is not None else 0,
            **{col: values[col].get(pc, math.nan) for col in _PER_PC_METRICS},
            "stall_samples": sampled.get(pc, math.nan),
            "top_stall": max(stalls, key=lambda r: stalls[str(r)].get(pc, 0.0)) if sampled.get(pc) else "",
        })
    return rows


def _source_files(action: Any) -> dict[str, str]:
    try:
        return {str(k): str(v) for k, v in dict(action.source_files()).items()}
    except Exception:
        return {}


#: What a child process reads (``--part``). Each part pays its own one-time cost inside ncu_report
#: (~0.3 s the first time metric units are asked for, ~0.7 s to start the disassembler), so two
#: children reading one part each finish sooner than one reading both, given a CPU each (see
#: readahead.split_pays); children reading launches in shards would each pay both costs.
PARTS = ("metrics", "source")
#: ``--part ranges``: only each launch's NVTX ranges (:func:`read_ranges`), to check which stages a
#: live run's report holds.
RANGES = "ranges"


def read_raw(path: str, parts: Collection[str] = PARTS) -> dict[str, Any]:
    """Every launch of the report at ``path`` as plain data (run in the child process).

    ``parts`` picks what is read: "metrics" fills ``rows``, ``rules`` and ``device``; "source"
    fills ``source`` and ``files``; the keys of a part not read stay empty (see :func:`merge_parts`).

    Returns:
        dict with ``rows`` (metric rows), ``rules``, ``source`` (per-instruction rows), ``files``
        (source file name -> text), ``device``, ``version`` (of ncu_report), ``launches``,
        ``reader`` (which ncu_report read it, :meth:`~profiler_report.capture.ncu_module.Reader.describe`),
        ``module_version`` (its release), ``error`` (a message when ncu_report could not load the
        file, else "").
    """
    found = load_reader()
    if found is None:
        return {"error": "no-module"}
    ncu_report, reader = found
    try:
        ctx = ncu_report.load_report(path)
    except Exception as exc:  # the SWIG layer raises bare RuntimeError/ValueError
        return {"error": str(exc).strip()[:200] or type(exc).__name__, "reader": reader.describe(),
                "module_version": reader.version}
    out: dict[str, Any] = {"rows": [], "rules": [], "source": [], "files": {}, "device": {}, "error": ""}
    launch_id = 0
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            action = rng.action_by_idx(ai)
            if action.name(action.NameBase_DEMANGLED) is None:
                # ncu_report 2026.x opens a file cut short and yields its tail's launches without
                # a name or metrics (2025.3 yielded none): refuse it rather than read part of it.
                return {"error": f"launch {launch_id} cannot be read: the file is truncated or corrupt",
                        "reader": reader.describe(), "module_version": reader.version}
            _read_action(action, launch_id, parts, out)
            launch_id += 1
    out["launches"] = launch_id
    try:
        out["version"] = str(ctx.get_version())
    except Exception:
        out["version"] = ""
    out["module_version"] = reader.version
    out["reader"] = reader.describe()
    return out


def read_ranges(path: str) -> dict[str, Any]:
    """The NVTX push/pop ranges of every launch of the report at ``path``, in capture order, and
    nothing else (cheap: no metric is read): ``{"ranges": [...], "launches": n, "error": ""}``;
    ``error`` as in :func:`read_raw`."""
    found = load_reader()
    if found is None:
        return {"error": "no-module"}
    ncu_report, _ = found
    try:
        ctx = ncu_report.load_report(path)
    except Exception as exc:  # the SWIG layer raises bare RuntimeError/ValueError
        return {"error": str(exc).strip()[:200] or type(exc).__name__}
    ranges = [_nvtx_ranges(ctx.range_by_idx(ri).action_by_idx(ai))
              for ri in range(ctx.num_ranges()) for ai in range(ctx.range_by_idx(ri).num_actions())]
    return {"ranges": ranges, "launches": len(ranges), "error": ""}


def _read_action(action: Any, launch_id: int, parts: Collection[str], out: dict[str, Any]) -> None:
    """Add the ``parts`` of one launch to ``out`` (the dict :func:`read_raw` returns)."""
    if "metrics" in parts:
        out["rows"].extend(_action_rows(action, launch_id))
        out["rules"].extend(_rules(action, launch_id))
        if not out["device"]:
            out["device"] = _device(action)
    if "source" in parts:
        if launch_id < SOURCE_LAUNCHES:  # disassembly: ~0.7 s to start, then ~0.01-0.02 s a launch
            out["source"].extend(source_rows(action, launch_id))
        out["files"].update(_source_files(action))


def merge_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The :func:`read_raw` result of a whole report from the results of its parts, given in
    PARTS order: lists are joined, dicts united; the first error found is returned as it is."""
    for part in parts:
        if part.get("error"):
            return part
    out = dict(parts[0])
    for part in parts[1:]:
        for key in ("rows", "rules", "source"):
            out[key] = out[key] + part[key]
        out["files"] = {**out["files"], **part["files"]}
        out["device"] = out["device"] or part["device"]
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m profiler_report.capture.reader_child PATH [--part metrics|source|ranges] [--nice N]``:
    pickle :func:`read_raw` (of every part unless ``--part`` names one; :func:`read_ranges` for
    ``ranges``) to stdout. ``--nice N``: first lower this process's CPU priority by N (where the
    OS has ``nice``), for a read wanted after others (see readahead.PendingRead)."""
    parser = argparse.ArgumentParser(prog="python -m profiler_report.capture.reader_child")
    parser.add_argument("path")
    parser.add_argument("--part", choices=(*PARTS, RANGES), default=None)
    parser.add_argument("--nice", type=int, default=0)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.nice and hasattr(os, "nice"):
        os.nice(args.nice)
    if args.part == RANGES:
        data = read_ranges(args.path)
    else:
        data = read_raw(args.path, PARTS if args.part is None else (args.part,))
    sys.stdout.buffer.write(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
