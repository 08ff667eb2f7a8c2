"""What a live run's results depend on (their cache keys), and the run's reuse of them.

Each key names everything its result depends on (the store: :mod:`profiler_report.util.result_cache`):

- a stage's capture and validation: the stage's kernel source (its marked block, the blocks that
  name its kernel and the source outside every block, hashed), the NVRTC options, the kernel
  name, template arguments and launch configuration, the size and dtype, the code that builds
  and launches it (the case's Python files, the tool's launch and target modules), the GPU,
  driver, CUDA and CuPy versions; a capture also the ncu version, section set and clock control;
- the sanitizer's verdict on a stage: the same stage facts at the sanitizer's size, and the tool's
  version;
- the peers' timings: each peer library's version, the bench code, GPU, driver, size, dtype;
- an experiment (the padding sweep): every file of the case's kernel folder, the case's code,
  the machine facts, ncu's version and options.

The key functions are pure (tested on CPU); :class:`RunCache` is the run's view of the store:
lookups, writes (best effort: a cache that cannot be written never fails a run) and the marks
the report shows for every reused result (``reuse.json``: :data:`REUSE_SCHEMA`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_report.model.base import Case
from profiler_report.model.manifest import Stage
from profiler_report.util.result_cache import ResultCache, digest, files_hash
from profiler_report.util.timer import log

#: NVRTC options every stage is compiled with (live/kernels.py compile_module); the case adds its own.
COMPILE_OPTIONS = ("-std=c++17", "-lineinfo")
#: The tool's modules whose change changes how a stage is built, launched, validated or profiled.
TOOL_MODULES = ("kernels.py", "target.py", "gpu.py", "ncu.py", "sanitizer.py")
#: Machine facts every key holds (from gpu.device_info() and nvidia-smi's driver).
MACHINE_FIELDS = ("gpu", "compute_capability", "driver", "cuda_driver_api", "cuda_runtime", "cupy")
REUSE_SCHEMA = "profiler-report.reuse/1"


def compile_options(case: Case, extra_options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The NVRTC options of ``case``'s source: :data:`COMPILE_OPTIONS`, the case's own
    (:attr:`Case.nvrtc_options`: an architecture-specific target such as ``-arch=sm_90a``, which
    NVRTC takes over the plain ``-arch`` CuPy adds for the device), then ``extra_options``."""
    return (*COMPILE_OPTIONS, *case.nvrtc_options, *extra_options)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def stage_source_hash(source_text: str, stage: Stage) -> str:
    """Hash of what ``stage``'s kernel is compiled from: the text outside every ``// stage:``
    block (shared helpers), the stage's own block, and every block that names its kernel. An
    edit anywhere else in the file leaves it unchanged; a file without markers hashes whole."""
    import re

    blocks = list(re.finditer(r"^// stage: (\w+)\s*$(.*?)^// end stage\s*$", source_text, re.M | re.S))
    if not blocks:
        return text_hash(source_text)
    shared, last = [], 0
    for m in blocks:
        shared.append(source_text[last:m.start()])
        last = m.end()
    shared.append(source_text[last:])
    word = re.compile(rf"\b{re.escape(stage.kernel)}\b")
    mine = [m.group(0) for m in blocks if m.group(1) == stage.id or word.search(m.group(2))]
    return text_hash("\0".join(["".join(shared), *mine]))


def case_code_files(case: Case) -> list[Path]:
    """The Python files that define ``case`` (its package's, or a user's case.py)."""
    if case.user_folder is not None:
        return sorted(case.user_folder.glob("*.py"))
    src = inspect.getsourcefile(type(case))
    return sorted(Path(src).parent.glob("*.py")) if src else []


def tool_code_hash() -> str:
    here = Path(__file__).resolve().parent
    return files_hash([here / m for m in TOOL_MODULES])


def machine_facts(device: dict[str, Any], driver: str) -> dict[str, str]:
    """The GPU, driver, CUDA and CuPy facts a key holds (``device``: gpu.device_info())."""
    return {k: str({**device, "driver": driver}.get(k, "")) for k in MACHINE_FIELDS}


def launch_text(case: Case, stage: Stage, size: dict[str, int], dtype: str) -> str:
    """The stage's launch configuration at ``size`` (grid, block, shared bytes), "" where the case
    computes it per step (the steps' launches are then covered by the case's code hash)."""
    try:
        lc = case.launch(stage, size, dtype)
    except Exception:  # a case that launches per step, or a size the stage refuses: no single launch
        return ""
    return f"grid={lc.grid} block={lc.block} smem={lc.shared_bytes} split={lc.extra_blocks is not None}"


def stage_key(case: Case, stage: Stage, size: dict[str, int], dtype: str, machine: dict[str, str],
              code: str, **extra: Any) -> dict[str, Any]:
    """Key of one stage's result at ``size`` and ``dtype`` (``code``: the case's and the tool's code
    hash, :meth:`RunCache.code`); ``extra``: what the result adds (ncu version, section set, ...)."""
    return {"case": case.name, "stage": stage.id, "kernel": stage.kernel, "targs": list(stage.targs),
            "launch": stage.launch, "op": stage.op, "source": stage_source_hash(case.manifest.source_text(), stage),
            "options": list(compile_options(case)), "launch_config": launch_text(case, stage, size, dtype),
            "size": dict(sorted(size.items())), "dtype": dtype, "code": code, "machine": machine, **extra}


def package_versions(names: tuple[str, ...]) -> dict[str, str]:
    """Installed versions of ``names`` ("absent" where not installed): the peers' libraries."""
    from importlib import metadata

    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "absent"
    return out


#: Libraries the peers come from (their versions key the peers' timings).
PEER_PACKAGES = ("cupy-cuda13x", "cupy-cuda12x", "cupy", "torch", "triton", "jax", "jaxlib", "nvidia-cublas")


@dataclass
class Reused:
    """One reused result as the report marks it."""

    what: str  # "profile", "validation", "sanitizer", "peers", an experiment's id
    stage: str  # "" for a whole-run result (peers, experiments)
    date_utc: str
    commit: str
    entry: str  # kind/digest in the cache folder


@dataclass
class RunCache:
    """A live run's view of the store: ``store`` (None: caching off), the run's machine facts and
    code hash, and what was reused (``reused``) and re-timed (``retimed``)."""

    store: ResultCache | None
    machine: dict[str, str]
    commit: str
    case_code: str = ""
    reused: list[Reused] = field(default_factory=list)
    retimed: list[str] = field(default_factory=list)
    fresh: bool = False

    @property
    def code(self) -> str:
        return digest([self.case_code, tool_code_hash()])

    def get(self, kind: str, key: dict[str, Any], stage: str = "", what: str = "", mark: bool = True) -> Any:
        """The entry under ``key`` (None for a miss; a corrupt one is noted on stderr), recorded as
        reused (``mark``) under ``what`` (default: ``kind``)."""
        if self.store is None:
            return None
        before = len(self.store.notes)
        entry = self.store.get(kind, key)
        for note in self.store.notes[before:]:
            log(f"  note: {note}")
        if entry is not None and mark:
            self.reused.append(Reused(what or kind, stage, entry.date_utc, entry.commit, f"{kind}/{entry.digest}"))
        return entry

    def put(self, kind: str, key: dict[str, Any], info: dict[str, Any], files: dict[str, Any] | None = None) -> Any:
        """Store a result; None (and a note) when the cache folder cannot be written."""
        if self.store is None:
            return None
        try:
            return self.store.put(kind, key, info, files, self.commit)
        except OSError as exc:
            log(f"  note: result not cached ({exc.strerror or exc}: {self.store.root})")
            return None

    def notes(self) -> list[str]:
        return list(self.store.notes) if self.store is not None else []

    def document(self) -> dict[str, Any]:
        """reuse.json's content: every reused result, the figures re-timed in this run, the notes."""
        return {"schema": REUSE_SCHEMA, "cache": str(self.store.root) if self.store else "off",
                "fresh": self.fresh, "reused": [r.__dict__ for r in self.reused], "retimed": self.retimed,
                "notes": self.notes()}


def open_cache(fresh: bool, enabled: bool, device: dict[str, Any], driver: str, commit: str,
               case: Case) -> RunCache:
    """The run's cache: off when not ``enabled``; ``fresh`` reads nothing (writes still happen)."""
    store = ResultCache(read=not fresh) if enabled else None
    rc = RunCache(store, machine_facts(device, driver), commit, files_hash(case_code_files(case)), fresh=fresh)
    return rc


def json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True, default=str) + "\n").encode()
