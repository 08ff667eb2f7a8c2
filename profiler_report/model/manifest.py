"""A case's stage manifest (``kernels/<case>/stages.toml``) as data: :class:`Manifest` holds the
kernel source, the stages in report order (:class:`Stage`: kernel, launch kind, template
arguments, expected effects as :class:`Expectation`), the ceiling and the claims to judge
(:class:`Claim`); :func:`load_manifest` reads and checks one, every fault one InputError line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.errors import InputError
from profiler_report.model.manifest_checks import (
    MANIFEST_PATH,
    block_pair,
    check_expectation,
    ids_once,
    kernel_source,
    positive_int,
)


def fix_in(hint: str | None, path: Path | str) -> str:
    """``hint`` with the generic manifest path replaced by ``path`` (a case folder's file, an
    ``--expect`` file); "" for no hint."""
    return (hint or "").replace(MANIFEST_PATH, str(path))


@dataclass(frozen=True)
class Expectation:
    """One expected metric movement of a stage, relative to the stage before it."""

    metric: str
    direction: str  # "down" or "up"
    text: str
    factor: float | None = None
    to: float | None = None


@dataclass(frozen=True)
class Stage:
    """One kernel of the manifest: a stage, the ceiling copy or the regression build."""

    id: str
    kernel: str
    title: str
    change: str = ""
    #: The change in at most ~15 words: the ladder table's "change" column (``short`` in stages.toml).
    short: str = ""
    #: Longer design notes, shown folded under the stage's "what changed" (``notes`` in stages.toml).
    notes: str = ""
    launch: str = "tile"  # "tile": 32x8 threads per 32x32 tile; "vec": 256 threads, 16-byte chunks
    expect: tuple[Expectation, ...] = ()
    op: str = "transpose"  # "transpose" or "copy" (the ceiling: out has the input's shape)
    #: Template arguments after the element type, e.g. ("16", "16", "256") for vec_tuned's tile
    #: shape (micro-block rows, micro-block columns, threads per block).
    targs: tuple[str, ...] = ()
    #: A Python stage (``function = "NAME"`` in stages.toml): the function of the case's
    #: ``stages.py`` that runs it; "" for a CUDA kernel stage (``kernel`` then names the kernel).
    function: str = ""

    def name_expression(self, ctype: str) -> str:
        """The C++ instantiation NVRTC compiles, e.g. ``transpose_vec_tuned<float,16,16,256>``."""
        return f"{self.kernel}<{','.join((ctype, *self.targs))}>"


@dataclass(frozen=True)
class Claim:
    """A source article's claim, judged on the measurements (``[[claims]]`` of stages.toml).

    ``metric`` is a summary column (:mod:`profiler_report.metrics`), ``"speedup"`` (the time of
    stage ``over`` / the time of ``at``: event-timed when timed, else ncu's duration), or ``""``
    when nothing Nsight Compute measures stands for it (then ``why_not`` says why, and the claim
    is "not measurable here"). ``at`` is a stage id, or ``<experiment>/<point>`` for a point of
    one of the case's experiments. The prediction is ``equals`` (within 10 %; 0 means below 0.5),
    ``above``/``below`` (strict) or ``min``..``max`` (inclusive); ``replaces`` names the metric the
    article used when it is not the ncu one (an nvprof metric).
    """

    source: str
    says: str
    predicts: str
    metric: str = ""
    at: str = ""
    over: str = ""
    equals: float | None = None
    above: float | None = None
    below: float | None = None
    min: float | None = None
    max: float | None = None
    replaces: str = ""
    why_not: str = ""


_CLAIM_BOUNDS = ("equals", "above", "below", "min", "max")


def _claim(raw: dict[str, Any]) -> Claim:
    """One ``[[claims]]`` entry, checked.

    Raises:
        InputError: a required key is missing, a bound is not a number, a measurable claim names no
            stage or bound, a speedup no ``over`` stage, or an unmeasurable one no ``why_not``.
    """
    fix = f"fix [[claims]] in {MANIFEST_PATH} (keys: source, says, predicts, metric, at, bounds)"
    missing = [k for k in ("source", "says", "predicts") if not isinstance(raw.get(k), str) or not raw.get(k)]
    if missing:
        raise InputError(f"claim {raw.get('says', raw)!r} lacks {', '.join(missing)}", fix)
    bounds = {k: raw[k] for k in _CLAIM_BOUNDS if k in raw}
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in bounds.values()):
        raise InputError(f"claim {raw['says']!r}: bounds must be numbers, got {bounds}", fix)
    metric = str(raw.get("metric", ""))
    if metric and (not raw.get("at") or not bounds):
        raise InputError(f"claim {raw['says']!r} names metric {metric} but no `at` stage or no bound", fix)
    if metric == "speedup" and not raw.get("over"):
        raise InputError(f"claim {raw['says']!r}: a speedup needs `over` (the stage it is faster than)", fix)
    if not metric and not raw.get("why_not"):
        raise InputError(f"claim {raw['says']!r} has no metric and no `why_not`", fix)
    unknown = set(raw) - {f for f in Claim.__dataclass_fields__}
    if unknown:
        raise InputError(f"claim {raw['says']!r} has unknown keys {', '.join(sorted(unknown))}", fix)
    values: dict[str, Any] = {k: (float(v) if k in _CLAIM_BOUNDS else str(v)) for k, v in raw.items()}
    return Claim(**values)


@dataclass(frozen=True)
class Manifest:
    source: Path
    stages: tuple[Stage, ...]
    ceiling: Stage
    regression: Stage | None = None
    tile: int = 32
    block: tuple[int, int] = (32, 8)
    #: Top-level keys the generic loader does not read: the case's own launch settings (a
    #: reduction's threads per block and blocks per SM).
    params: dict[str, Any] = field(default_factory=dict)
    #: The source articles' claims to judge (``[[claims]]``); () when the case has none.
    claims: tuple[Claim, ...] = ()
    #: Peer implementations timed beside the stages (``[[peer]]``: Python stages' functions, such
    #: as a library's own softmax); () when the case lists none. Never profiled nor judged.
    peers: tuple[Stage, ...] = ()

    def stage(self, stage_id: str) -> Stage:
        for s in (*self.stages, self.ceiling, *( [self.regression] if self.regression else [])):
            if s.id == stage_id:
                return s
        raise InputError(f"unknown stage {stage_id!r}", f"use one of {', '.join(self.stage_ids())}")

    def stage_ids(self) -> list[str]:
        return [s.id for s in self.stages]

    def run_stages(self, ids: list[str]) -> list[Stage]:
        """The stages a live run's ``--stages`` names, in its order (none named: every stage).

        Raises:
            InputError: an unknown id, one named twice, or the ceiling (every run validates and
                times it already: it would be reported twice).
        """
        if not ids:
            return list(self.stages)
        twice = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
        if twice is not None:
            raise InputError(f"--stages names {twice} twice", "name each stage once")
        if self.ceiling.id in ids:
            raise InputError(f"--stages names {self.ceiling.id}, the ceiling: every run times it",
                             f"leave {self.ceiling.id} out of --stages")
        return [self.stage(i) for i in ids]

    def source_text(self) -> str:
        return self.source.read_text()


def _stage(raw: Any, what: str = "[[stage]]") -> Stage:
    """One stage table, checked: its shape first (what is wrong in the file, not a Python error)."""
    fix = f"see the stage entries of {MANIFEST_PATH}: id, kernel, title, change, launch, expect = [...]"
    if not isinstance(raw, dict):
        raise InputError(f"a {what} entry must be a table (id = ..., kernel = ...), got {raw!r:.60}", fix)
    # A library's call as the ceiling (cuBLAS), or a Python stage's function: no kernel of ours.
    no_kernel = raw.get("launch") == "library" or isinstance(raw.get("function"), str)
    for key in ("id",) if no_kernel else ("id", "kernel"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            of = f" of stage {raw['id']!r}" if key == "kernel" else ""
            got = f"{raw[key]!r:.60}" if key in raw else "none"
            raise InputError(f"a {what} entry{of} needs `{key}` as a non-empty string, got {got}", fix)
    for key in ("title", "change", "launch", "op"):
        if key in raw and not isinstance(raw[key], str):
            raise InputError(f"stage {raw['id']}: `{key}` must be a string, got {raw[key]!r:.60}", fix)
    entries = raw.get("expect", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise InputError(f"stage {raw['id']}: `expect` must be a list of tables, got {entries!r:.60}", fix)
    expect = tuple(
        Expectation(
            metric=e.get("metric"),  # checked just below
            direction=e.get("direction"),
            text=e.get("text", ""),
            factor=e.get("factor"),
            to=e.get("to"),
        )
        for e in entries
    )
    for e in expect:
        check_expectation(raw["id"], e)
    template = raw.get("template", [])
    if not isinstance(template, list):
        raise InputError(f"stage {raw['id']}: template must be a list, got {template!r}",
                         f"write it as [rows, cols, threads] in {MANIFEST_PATH}")
    if raw.get("launch") in _TILE_RULE:  # the launch kinds whose kernels static_assert a tile shape
        _check_tile_shape(raw["id"], template, launch=raw.get("launch", "tile"))
    targs = tuple(str(a) for a in template)
    function = raw.get("function", "")
    if not isinstance(function, str):
        raise InputError(f"stage {raw['id']}: function must be the name of a function in stages.py, got {function!r}",
                         f"write function = \"NAME\" in {MANIFEST_PATH}")
    return Stage(
        id=raw["id"],
        kernel=raw["kernel"] if "kernel" in raw or not function else function,
        title=raw["title"] if "title" in raw else raw["id"],
        change=raw.get("change", ""),
        short=raw.get("short", ""),
        notes=raw.get("notes", ""),
        launch=raw.get("launch", "tile"),
        expect=expect,
        op=raw.get("op", "transpose"),
        targs=targs,
        function=function,
    )


#: What a valid ``template`` is, per launch kind (the kernels' static_asserts), for the fix text.
_TILE_RULE = {
    "vec_tuned": "[rows, cols, threads], rows and cols multiples of 8, threads (at most 1024) a multiple of "
                 "32, of rows and of cols, dividing rows x cols, e.g. [16, 16, 256]",
    "vec_peeled": "[32, cols, threads], cols 8, 16 or 32, threads a multiple of 256 dividing 32 x cols, "
                  "e.g. [32, 16, 512]",
    "vec_realigned": "[rows, cols, threads] or [rows, cols, threads, tiles], rows 16 or 32, cols 8, 16 or 32, "
                     "threads 32 x cols or 16 x cols (at most 1024), tiles per block 1 to 8, e.g. [32, 16, 512], "
                     "[16, 8, 256] or [32, 16, 512, 2]",
}


def _check_tile_shape(stage_id: str, template: list[Any], launch: str = "vec_tuned") -> None:
    """A vec_tuned, vec_peeled or vec_realigned ``template`` is [micro-block rows, micro-block
    columns, threads]: the kernel's static_assert, checked before NVRTC so a bad manifest fails
    with a one-line message. vec_peeled needs 32 chunk rows (a warp per output row), at most 32
    chunk columns (its input shuffles stay in a warp) and threads a multiple of 256;
    vec_realigned 16 or 32 chunk rows, at most 32 chunk columns and threads = 32 or 16 x columns (a
    warp per V output rows, once or twice), and optionally a fourth: tiles per block, 1 to 8 (above
    1 double-buffered)."""
    fix = f"set `template` in {MANIFEST_PATH} to " + _TILE_RULE.get(launch, _TILE_RULE["vec_tuned"])
    sizes = (3, 4) if launch == "vec_realigned" else (3,)
    if len(template) not in sizes or not all(isinstance(a, int) and not isinstance(a, bool) for a in template):
        what = "three or four integers" if len(sizes) > 1 else "three integers"
        raise InputError(f"stage {stage_id}: template must be {what}, got {template}", fix)
    trc, tcc, nt = template[:3]
    if launch == "vec_realigned":  # a warp per V output rows: its own rule
        tiles = template[3] if len(template) > 3 else 1
        if not 1 <= tiles <= 8:
            raise InputError(f"stage {stage_id}: tiles per block (the fourth template value) must be 1 to 8, "
                             f"got {tiles}", fix)
        valid = trc in (16, 32) and tcc in (8, 16, 32) and nt in (16 * tcc, 32 * tcc)
    else:
        valid = (trc % 8 == tcc % 8 == 0 and trc > 0 and tcc > 0 and nt % 32 == 0 and 0 < nt <= 1024
                 and nt % trc == 0 and nt % tcc == 0 and trc * tcc >= nt and trc * tcc % nt == 0
                 and (launch != "vec_peeled" or (trc == 32 and tcc <= 32 and nt % 256 == 0)))
    if not valid:
        raise InputError(f"stage {stage_id}: tile shape {trc}x{tcc} with {nt} threads is not valid", fix)


def load_manifest(path: Path) -> Manifest:
    """Read a stage manifest (a case's ``kernels/<case>/stages.toml``, or a case folder's).

    Raises:
        InputError: the file is missing, is not TOML (or nests too deeply to read), lacks a
            required key, holds a value of the wrong type, names one stage id twice, or names a
            ``source`` outside its folder.
    """
    try:
        raw = tomllib.loads(path.read_text())
        stages = raw.get("stage")
        if not isinstance(stages, list) or not stages:
            raise InputError("it needs [[stage]] tables, one per stage in report order", f"fix {MANIFEST_PATH}")
        manifest = Manifest(
            source=kernel_source(path, raw.get("source")),
            stages=tuple(_stage(s) for s in stages),
            ceiling=_stage(raw.get("ceiling"), "[ceiling]"),
            regression=_stage(raw["regression"], "[regression]") if "regression" in raw else None,
            tile=positive_int(raw.get("tile", 32), "tile"),
            block=block_pair(raw.get("block", [32, 8])),
            params={k: v for k, v in raw.items() if k not in _GENERIC_KEYS},
            claims=_claims(raw.get("claims", [])),
            peers=tuple(_stage({"op": "peer", **p}) for p in raw.get("peer", [])),
        )
        ids_once(manifest)
        return manifest
    except InputError as exc:
        raise InputError(f"bad stage manifest {path}: {exc.message}", exc.hint) from exc
    except RecursionError as exc:
        raise InputError(f"bad stage manifest {path}: its values nest too deeply to read",
                         f"fix {MANIFEST_PATH}: a manifest nests at most a few levels") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"bad stage manifest {path}: {exc}", f"fix {MANIFEST_PATH}") from exc


def _claims(value: Any) -> tuple[Claim, ...]:
    if not isinstance(value, list) or not all(isinstance(c, dict) for c in value):
        raise InputError(f"`claims` must be [[claims]] tables, got {value!r:.60}",
                         f"fix [[claims]] in {MANIFEST_PATH}")
    return tuple(_claim(c) for c in value)


_GENERIC_KEYS = frozenset({"source", "stage", "ceiling", "regression", "tile", "block", "claims", "peer"})
def load_expectations(path: Path) -> tuple[Stage, ...]:
    """The ``[[stage]]`` entries of a stages.toml-format file (``--expect FILE``), for a capture
    made elsewhere: each needs an ``id`` (the stage label of the capture) and may have ``title``,
    ``change`` and ``expect``; ``kernel``, ``source`` and ``[ceiling]`` are not needed.

    Raises:
        InputError: the file is missing, is not TOML, or a stage lacks its id or is malformed.
    """
    try:
        raw = tomllib.loads(path.read_text())
        entries = raw.get("stage", [])
        if not isinstance(entries, list) or not entries:
            raise InputError("it has no [[stage]] entries", "write [[stage]] entries with id = \"LABEL\" and "
                             "expect = [{ metric = ..., direction = \"down\" }] (the stages.toml format)")
        return tuple(_stage({"kernel": e.get("id", ""), **e} if isinstance(e, dict) else e) for e in entries)
    except InputError as exc:  # a malformed stage entry: name this file, keep the entry's own fix
        raise InputError(f"bad --expect file {path}: {exc.message}",
                         fix_in(exc.hint, path) or None) from exc
    except RecursionError as exc:
        raise InputError(f"bad --expect file {path}: its values nest too deeply to read",
                         "write [[stage]] entries (the stages.toml format)") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"bad --expect file {path}: {exc}",
                         "write [[stage]] entries with id = \"LABEL\" and expect = [{ metric = ..., direction = "
                         "\"down\" }] (the stages.toml format)") from exc


_STAGE_RE = re.compile(r"^// stage: (\w+)\s*$(.*?)^// end stage\s*$", re.M | re.S)


def stage_sources(source_text: str) -> dict[str, str]:
    """Map stage id -> the kernel source between its ``// stage:`` and ``// end stage`` markers."""
    return {m.group(1): m.group(2).strip("\n") for m in _STAGE_RE.finditer(source_text)}
