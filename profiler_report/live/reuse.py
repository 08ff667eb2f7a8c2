"""A live run's phases with the result cache (:mod:`profiler_report.live.cache`): each result is
looked up under its key, reused on a hit and stored on a miss.

Reused: compute-sanitizer verdicts, validations, ncu captures (per stage: the stages whose key
matches come from the capture that holds them, the others are profiled again and the report's
ladder is read from every capture that holds one of its stages; ``profile-parts.json`` says which
file holds which stage), the peers' timings, the experiments and the configuration choice. Never
reused: the event timing of the stages and the ceiling, which every run redoes in its own process.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiler_report.capture.parts import PARTS
from profiler_report.live import ncu as prof
from profiler_report.live import sanitizer as san
from profiler_report.live.cache import PEER_PACKAGES, RunCache, json_bytes, package_versions, stage_key
from profiler_report.live.config import RunConfig
from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.fsio import write_json
from profiler_report.util.result_cache import digest, file_sha256, files_hash
from profiler_report.util.timer import StepTimer, log

Configs = dict[str, tuple[str, ...]]


def sanitize(rc: RunCache, cfg: RunConfig, case: Case, stages: list[Stage], exe: str, out: Path,
             timer: StepTimer, configs: Configs) -> dict[str, Any]:
    """sanitizer.json's content: each stage's verdict reused where its key (kernel hash, the
    tool's version, the size) matches, the others (and the ceiling) run under the tools now."""
    size = case.sanitize_size()
    everything = [*stages, case.manifest.ceiling]
    version = prof.ncu_version(exe)  # `--version` parsed as ncu's
    keys = {s.id: stage_key(case, s, size, cfg.dtype, rc.machine, rc.code, sanitizer=version, tools=list(san.TOOLS))
            for s in everything}
    hits = {s.id: e for s in everything if (e := rc.get("sanitizer", keys[s.id], s.id)) is not None}
    todo = [s.id for s in everything if s.id not in hits]
    with timer.step("sanitize"):
        chosen = {k: v for k, v in configs.items() if k in todo}
        job = san.SanitizeJob(exe, case.ref, size, cfg.dtype, todo, cfg.sanitize_timeout_s, chosen)
        doc = san.sanitize(job, case.size_text(size), out, progress=timer.tick) if todo else None
        fresh = {r["stage"]: r for r in (doc or {}).get("stages", [])}
        for sid, rec in fresh.items():
            if rec.get("checked"):  # a tool that timed out or failed left it unchecked: run it again next time
                rc.put("sanitizer", keys[sid], {"record": rec, "other": doc["other"] if doc else [],
                                                "tools": doc["tools"] if doc else [], "version": version})
        first = next(iter(hits.values()), None)
        merged = dict(doc) if doc else {"schema": san.SCHEMA, "tool": exe, "version": version,
                                        "tools": first.info.get("tools", []) if first else [], "size": dict(size),
                                        "size_text": case.size_text(size), "dtype": cfg.dtype}
        merged["stages"] = [{**hits[s.id].info["record"], "reused": f"{hits[s.id].date_utc} ({hits[s.id].commit})"}
                            if s.id in hits else fresh[s.id] for s in everything]
        other = (doc or {}).get("other", []) + [o for e in hits.values() for o in e.info.get("other", [])]
        merged["other"] = list(dict.fromkeys(other))
        for rec in merged["stages"]:
            state = "clean" if rec["correct"] else "WRONG: " + rec["first"]
            log(f"  {rec['stage']:<14} {state}" + (f"  (reused from {rec['reused']})" if rec.get("reused") else ""))
    return merged


def validate(rc: RunCache, cfg: RunConfig, case: Case, stage: Stage, size: dict[str, int],
             run: Callable[[], Any]) -> Any:
    """One stage's validation at the timing size: reused where its key matches, else ``run()``
    (a :class:`~profiler_report.live.kernels.Validation`) and stored."""
    from profiler_report.live.kernels import Validation

    key = stage_key(case, stage, size, cfg.dtype, rc.machine, rc.code, validation="random input, seed 0")
    hit = rc.get("validation", key, stage.id)
    if hit is not None:
        d = dict(hit.info)
        d["first_wrong"] = tuple(d["first_wrong"]) if d.get("first_wrong") is not None else None
        return Validation(**d)
    v = run()
    rc.put("validation", key, {k: getattr(v, k) for k in Validation.__dataclass_fields__})
    return v


def _stage_digests(rc: RunCache, cfg: RunConfig, case: Case, stages: list[Stage]) -> dict[str, str]:
    size = case.size(cfg.size)
    return {s.id: digest(stage_key(case, s, size, cfg.dtype, rc.machine, rc.code)) for s in stages}


def _peers_key(rc: RunCache, cfg: RunConfig, case: Case) -> dict[str, Any]:
    size = case.size(cfg.size)
    return {"case": case.name, "size": size, "dtype": cfg.dtype, "repeats": cfg.repeats, "machine": rc.machine,
            "code": rc.code, "packages": package_versions(PEER_PACKAGES),
            "ceiling": stage_key(case, case.manifest.ceiling, size, cfg.dtype, rc.machine, rc.code)["source"]}


def peers_cached(rc: RunCache, cfg: RunConfig, case: Case) -> bool:
    """Whether :func:`peers` will reuse the peers' timings (looked up, not marked as reused)."""
    return rc.get("peers", _peers_key(rc, cfg, case), mark=False) is not None


def peers(rc: RunCache, cfg: RunConfig, case: Case, good: list[Stage],
          bench: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """bench.json's content: the peers' timings reused where the key (each peer library's version,
    the GPU, driver, size, dtype, the bench code) matches, else ``bench()`` (the peers timed now)
    and stored. A reused file
    keeps the rows of the stages whose kernel is unchanged and drops the others' (they were timed
    with the old kernel; this run's timings.json has the new one's)."""
    key = _peers_key(rc, cfg, case)
    now = _stage_digests(rc, cfg, case, good)
    hit = rc.get("peers", key, what="peers")
    if hit is not None:
        doc = json.loads(hit.path("bench.json").read_text())
        then = hit.info.get("stages", {})
        changed = {sid for sid in set(then) | set(now) if then.get(sid) != now.get(sid)}
        known = set(then) | set(now)
        kept = []
        for row in doc.get("rows", []):
            sid = str(row.get("name", "")).split(" ", 1)[0]
            if row.get("kind") in ("stage", "config") and sid in known and sid in changed:
                continue
            kept.append(row)
        doc["rows"] = kept
        doc["reused"] = {"date_utc": hit.date_utc, "commit": hit.commit,
                         "dropped_stages": sorted(changed & set(then))}
        return doc
    doc = bench()
    rc.put("peers", key, {"stages": now}, {"bench.json": json_bytes(doc)})
    return doc


def profile(rc: RunCache, cfg: RunConfig, case: Case, profiled: list[Stage], ncu: str, out: Path,
            run: Callable[[list[Stage]], None]) -> None:
    """``out/profile.ncu-rep`` for ``profiled``: each stage's capture reused where its key (kernel
    hash, launch, size, dtype, GPU, driver, CUDA, ncu version, section set, clock control) matches;
    the others profiled now by ``run(stages)`` (one ncu process). When the stages come from more
    than one capture, the reused ones are copied in as ``reused-<hash>.ncu-rep`` and
    :data:`PARTS` lists, in ladder order, which file holds which stages."""
    psize = case.size(cfg.profile_size or cfg.size)
    version = prof.ncu_version(ncu, min(60.0, cfg.ncu_timeout_s))
    keys = {s.id: stage_key(case, s, psize, cfg.dtype, rc.machine, rc.code, ncu=version, section_set="full",
                            clock_control=cfg.clock_control, cache_control="all") for s in profiled}
    holder: dict[str, Path] = {}
    for s in profiled:
        ref = rc.get("profile", keys[s.id], s.id, mark=False)
        # A stage's entry names the capture holding it; one evicted since is a miss: profiled again.
        blob = rc.get("capture", ref.info["capture"], s.id, "profile") if ref is not None else None
        if blob is not None:
            holder[s.id] = blob.path("profile.ncu-rep")
    todo = [s for s in profiled if s.id not in holder]
    if todo:
        run(todo)
        cap_key = {"sha256": file_sha256(out / "profile.ncu-rep")}
        if rc.put("capture", cap_key, {}, {"profile.ncu-rep": out / "profile.ncu-rep"}) is not None:
            for s in todo:
                rc.put("profile", keys[s.id], {"capture": cap_key})
    files = {s.id: holder.get(s.id) for s in profiled}
    distinct = list(dict.fromkeys(p for p in files.values() if p is not None))
    if not todo and len(distinct) == 1:
        shutil.copyfile(distinct[0], out / "profile.ncu-rep")  # one capture holds them all: as a cold run
        return
    names = {p: f"reused-{p.parent.name[:12]}.ncu-rep" for p in distinct}
    for p, name in names.items():
        shutil.copyfile(p, out / name)
    parts: list[dict[str, Any]] = []
    for s in profiled:
        name = names[files[s.id]] if files[s.id] is not None else "profile.ncu-rep"  # type: ignore[index]
        if parts and parts[-1]["file"] == name:
            parts[-1]["stages"].append(s.id)
        else:
            parts.append({"file": name, "stages": [s.id]})
    write_json(out / PARTS, {"parts": parts})


def experiment(rc: RunCache, cfg: RunConfig, case: Case, exp: Any, ncu: str, out: Path,
               run: Callable[[], None]) -> bool:
    """One experiment's files (``<id>.ncu-rep``, ``<id>.json``, ``<id>.log``): reused where the key
    (its kernel files, the case's code, the machine, ncu's version and options)
    matches, else ``run()`` and stored (unless it failed). Returns whether it was run."""
    # Its own kernel files where it names them (an edit of a ladder stage leaves it valid), else
    # every file of the case's kernel folder.
    sources = list(getattr(exp, "source_files", ())) or sorted(case.folder.glob("*"))
    key = {"case": case.name, "experiment": exp.id, "kernels": files_hash(sources),
           "code": rc.code, "machine": rc.machine, "ncu": prof.ncu_version(ncu, 60.0),
           "options": list(exp.ncu_options), "clock_control": cfg.clock_control}
    names = [f"{exp.id}.ncu-rep", f"{exp.id}.json", f"{exp.id}.log"]
    hit = rc.get("experiment", key, what=exp.id)
    if hit is not None:
        for n in names:
            if hit.path(n).is_file():
                shutil.copyfile(hit.path(n), out / n)
        return False
    run()
    result = json.loads((out / f"{exp.id}.json").read_text()) if (out / f"{exp.id}.json").is_file() else {}
    if not result.get("error") and (out / names[0]).is_file():
        rc.put("experiment", key, {}, {n: out / n for n in names if (out / n).is_file()})
    return True


#: In a report folder: what was reused and re-timed (:data:`~profiler_report.live.cache.REUSE_SCHEMA`).
REUSE = "reuse.json"


def _steps_key(rc: RunCache, cfg: RunConfig, case: Case) -> dict[str, Any]:
    return {"case": case.name, "size": case.size(cfg.size), "profile_size": case.size(cfg.profile_size or cfg.size),
            "dtype": cfg.dtype, "counters": cfg.counters, "stages": list(cfg.stages), "machine": rc.machine}


def last_steps(rc: RunCache, cfg: RunConfig, case: Case) -> dict[str, float]:
    """Seconds each step took in the last run of this case, size and dtype on this GPU ({} when
    none): the progress line's estimate. Read even under ``--fresh`` (an estimate, not a result)."""
    if rc.store is None:
        return {}
    from profiler_report.util.result_cache import ResultCache

    entry = ResultCache(rc.store.root, rc.store.limit).get("steps", _steps_key(rc, cfg, case))
    return {str(k): float(v) for k, v in (entry.info.get("steps", []) if entry else [])}


def save_steps(rc: RunCache, cfg: RunConfig, case: Case, timer: StepTimer) -> None:
    rc.put("steps", _steps_key(rc, cfg, case), {"steps": [[n, round(s, 2)] for n, s in timer.steps]})


def choose(rc: RunCache, cfg: RunConfig, case: Case, stages: list[Stage],
           timer: StepTimer) -> tuple[Configs, list[dict[str, Any]]]:
    """The configuration each stage with candidates runs in at this shape: the case's choice
    (:meth:`~profiler_report.model.base.Case.choose_configs`: the candidates timed, the manifest's
    default kept within the spread), reused per GPU, shape and dtype. Returns (stage id ->
    template arguments, one record per choice: chosen, runner-up, their times)."""
    wanted = [s for s in stages if case.has_config_candidates(s, cfg.dtype)] if cfg.choose else []
    if not wanted:
        return {}, []
    size = case.size(cfg.size)
    records = []
    with timer.step("choose"):
        for s in wanted:
            key = stage_key(case, s, size, cfg.dtype, rc.machine, rc.code, choice="median, default within spread",
                            repeats=cfg.repeats)
            hit = rc.get("choice", key, s.id, "configuration choice")
            rec = dict(hit.info) if hit is not None else case.choose_configs(size, cfg.dtype, cfg.repeats, s)
            if rec is None:
                continue
            if hit is None:
                rc.put("choice", key, rec)
            else:
                rec["reused"] = f"{hit.date_utc} ({hit.commit})"
            records.append(rec)
            runner = f"{rec['runner_up']} ({rec['runner_up_us']:.1f} us)" if rec.get("runner_up") else "none"
            log(f"  {s.id:<14} {rec['chosen']} ({rec['chosen_us']:.1f} us); runner-up {runner}")
    return {r["stage"]: tuple(r["targs"]) for r in records}, records


def document(rc: RunCache, choices: list[dict[str, Any]]) -> dict[str, Any]:
    """reuse.json: the cache's marks (:meth:`RunCache.document`) and the configuration choices."""
    return {**rc.document(), "choices": choices}
