"""The input checks of :mod:`profiler_report.model.manifest`: a stage manifest's scalar values
(``source``, ``tile``, ``block``), its expected effects and its stage ids, each fault one
InputError line whose fix names the manifest."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler_report.errors import InputError

if TYPE_CHECKING:
    from profiler_report.model.manifest import Expectation, Manifest

#: How a fix names the manifest it applies to; :func:`fix_in` puts the real file in its place.
MANIFEST_PATH = "kernels/<case>/stages.toml"


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def check_expectation(stage_id: str, e: Expectation) -> None:
    """An expected effect's fields have the types the judging needs: metric and text strings, a
    direction of up or down, factor and to finite numbers where given."""
    fix = (f"write each expect entry in {MANIFEST_PATH} as {{ metric = \"NAME\", direction = \"down\" "
           "or \"up\", factor = NUMBER or to = NUMBER (optional), text = \"...\" }")
    if not isinstance(e.metric, str) or not isinstance(e.text, str):
        raise InputError(f"stage {stage_id}: expect metric and text must be strings, got {e.metric!r}", fix)
    if e.direction not in ("up", "down"):
        raise InputError(f"stage {stage_id}: expect direction must be 'up' or 'down', not {e.direction!r}", fix)
    for name, value in (("factor", e.factor), ("to", e.to)):
        if value is not None and not _is_number(value):
            raise InputError(f"stage {stage_id}: expect {name} must be a number, got {value!r}", fix)
    if e.factor is not None and e.factor <= 0:
        raise InputError(f"stage {stage_id}: expect factor must be above 0 (the metric moves at least FACTOR "
                         f"times), got {e.factor!r}", fix)


def kernel_source(path: Path, source: Any) -> Path:
    """The kernel source named by ``source``: a file inside the manifest's folder."""
    if not isinstance(source, str) or not source.strip():
        raise InputError(f"`source` must name the kernel file as a string, got {source!r:.60}",
                         f"set source = \"kernels.cu\" in {MANIFEST_PATH}")
    folder = path.parent.resolve()
    where = (folder / source).resolve()
    if not where.is_relative_to(folder):
        raise InputError(f"`source` {source!r} is outside the folder {folder}",
                         f"put the kernel file beside {MANIFEST_PATH} and name it relative to it")
    return path.parent / source


def positive_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"`{key}` must be a positive integer, got {value!r:.60}", f"fix {key} in {MANIFEST_PATH}")
    return value


def block_pair(value: Any) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise InputError(f"`block` must be [x, y] threads, got {value!r:.60}", f"fix block in {MANIFEST_PATH}")
    return positive_int(value[0], "block"), positive_int(value[1], "block")


#: A stage id: it is the ``// stage: ID`` marker of the source and part of the NVTX range.
_STAGE_ID = re.compile(r"^\w+$")


def ids_once(manifest: Manifest) -> None:
    seen: set[str] = set()
    for st in (*manifest.stages, manifest.ceiling, *([manifest.regression] if manifest.regression else [])):
        if not _STAGE_ID.match(st.id):
            raise InputError(f"stage id {st.id!r} is not a word (letters, digits, _): it is the source's "
                             f"`// stage: ID` marker", f"rename the stage in {MANIFEST_PATH}")
        if st.id in seen:
            raise InputError(f"stage id {st.id!r} is given twice", f"give each stage of {MANIFEST_PATH} its own id")
        seen.add(st.id)
