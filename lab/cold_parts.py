"""Where a cold transpose run's seconds go, part by part, each in a fresh process with empty
compiler caches (CuPy, Triton, TorchInductor): the driver and tool version queries, CuPy's start,
NVRTC compiles of the case's module (whole, per kernel in threads, again from the disk cache),
each peer's build and first call (cold, then with the caches the cold process left), each
compute-sanitizer tool alone, and ncu ``--set full`` on one stage against four (fixed cost and
cost per kernel).

    python3 lab/cold_parts.py OUT.json [PART...]   # on the GPU machine, from the repository root

PART: versions, compile, peers, imports, sanitize, ncu, minimal (default: all).

Prints a table (part, seconds) and writes it as JSON. Nothing here is part of the tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from profiler_report.live.ncu import NcuCommand

ROOT = Path(__file__).resolve().parent.parent
SIZE = {"rows": 8192, "cols": 8192}

COMPILE = r"""
import sys, time, json
from concurrent.futures import ThreadPoolExecutor
t0 = time.monotonic()
import cupy
cupy.zeros(1); cupy.cuda.runtime.deviceSynchronize()
t_cupy = time.monotonic() - t0
from profiler_report.model.registry import get_case
from profiler_report.live.kernels import _names, module_source
from profiler_report.live.cache import compile_options
case = get_case("transpose")
names = list(_names(case, "float32").values())
src, opts = module_source(case), tuple(compile_options(case, ()))
mode = sys.argv[1]
t0 = time.monotonic()
if mode == "whole":
    m = cupy.RawModule(code=src, options=opts, name_expressions=names)
    for n in names: m.get_function(n)
elif mode == "threads":
    def one(n):
        m = cupy.RawModule(code=src, options=opts, name_expressions=[n]); m.get_function(n); return m
    with ThreadPoolExecutor(len(names)) as pool: list(pool.map(one, names))
elif mode == "twice":  # the same module twice in one process (CuPy's memo)
    m = cupy.RawModule(code=src, options=opts, name_expressions=names)
    m2 = cupy.RawModule(code=src, options=opts, name_expressions=names)
    for n in names: m2.get_function(n)
print(json.dumps({"cupy_start": t_cupy, "compile": time.monotonic() - t0}))
"""

PEER = r"""
import sys, time, json, os
t0 = time.monotonic()
import cupy
cupy.zeros(1)
from profiler_report.cases.transpose.peers import PEERS
from profiler_report.live.bench import WALL
name = sys.argv[1]
p = next(p for p in PEERS if p.name == name)
src = cupy.random.random((8192, 8192), dtype=cupy.float32); dst = cupy.empty((8192, 8192), cupy.float32)
t1 = time.monotonic()
made = p.make(cupy, "float32")
t2 = time.monotonic()
if p.timing != WALL:
    made(src, dst); cupy.cuda.runtime.deviceSynchronize()
t3 = time.monotonic()
print(json.dumps({"start": t1 - t0, "make": t2 - t1, "first_call": t3 - t2}))
"""


def timed(argv: list[str], env: dict[str, str] | None = None, timeout: float = 240) -> tuple[float, str, int]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=ROOT,
                           timeout=timeout)
        return time.monotonic() - t0, p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        return time.monotonic() - t0, "timeout", -1


def last_json(text: str) -> dict:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return {"tail": text[-400:]}


def main() -> int:
    out = Path(sys.argv[1])
    only = set(sys.argv[2:])  # e.g. "sanitize": that part alone
    rows: list[dict] = []
    tmp = Path(tempfile.mkdtemp(prefix="cold-parts-"))

    def add(part: str, secs: float, **more: object) -> None:
        rows.append({"part": part, "s": round(secs, 2), **more})
        print(f"{part:<48} {secs:7.2f} s  {json.dumps(more)[:200] if more else ''}", flush=True)

    def part(name: str) -> bool:
        return not only or name in only

    for argv in () if not part("versions") else (["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                 ["ncu", "--version"], ["compute-sanitizer", "--version"]):
        s, _, rc = timed(argv)
        add(" ".join(argv[:2]), s, rc=rc)
    py = sys.executable
    for mode in ("whole", "threads", "twice") if part("compile") else ():
        cache = tmp / f"cupy-{mode}"
        s, text, rc = timed([py, "-c", COMPILE, mode], {"CUPY_CACHE_DIR": str(cache)})
        add(f"compile {mode} (fresh CUPY_CACHE_DIR)", s, rc=rc, **last_json(text))
    cache = tmp / "cupy-shared"
    for n in ("first", "second"):  # also fills the cache the later parts load from
        s, text, rc = timed([py, "-c", COMPILE, "whole"], {"CUPY_CACHE_DIR": str(cache)})
        add(f"compile whole, shared cache ({n})", s, rc=rc, **last_json(text))
    peer_env = {"TRITON_CACHE_DIR": str(tmp / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor"),
                "CUPY_CACHE_DIR": str(tmp / "cupy-peers"), "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    peers = ("cupy a.T.copy()", "cupy.cublas.geam", "torch t().contiguous()", "torch.compile t().contiguous()",
             "triton transpose", "jax.jit transpose")
    for name in peers if part("peers") else ():
        for n in ("cold", "warm"):
            s, text, rc = timed([py, "-c", PEER, name], peer_env)
            add(f"peer {name} ({n})", s, rc=rc, **last_json(text))
    for mod in ("torch", "jax", "triton", "torch._inductor.compile_fx") if part("imports") else ():
        s, _, rc = timed([py, "-c", f"import {mod}"])
        add(f"import {mod}", s, rc=rc)
    stages = "naive,smem,padded,unrolled,vec_padded,vec_swizzled,vec_deep,vec_colwalk,vec_tuned,vec_peeled," \
             "vec_realigned,copy"
    small = json.dumps({"rows": 67, "cols": 133})
    child = [py, "-m", "profiler_report.live.target", "sanitize", "--case", "transpose", "--size", small,
             "--dtype", "float32"]
    cache_env = {"CUPY_CACHE_DIR": str(tmp / "cupy-shared")}
    s, _, rc = timed([*child, "--stages", stages], cache_env)
    add("sanitize target alone, 12 stages", s, rc=rc)
    for tool in ("memcheck", "racecheck", "synccheck") if part("sanitize") else ():
        for st in (stages, "naive"):
            s, text, rc = timed(["compute-sanitizer", "--tool", tool, "--report-api-errors", "no", *child,
                                 "--stages", st], cache_env)
            add(f"{tool} {len(st.split(','))} stage(s)", s, rc=rc)
    memo = [py, "lab/sanitize_inputs.py", *child[3:]]
    for n in ("made once", "made once, again") if part("sanitize") else ():
        s, _, rc = timed(["compute-sanitizer", "--tool", "memcheck", "--report-api-errors", "no", *memo,
                          "--stages", stages], cache_env)
        add(f"memcheck 12 stage(s), inputs {n}", s, rc=rc)
    big = json.dumps(SIZE)
    target = [py, "-m", "profiler_report.live.target", "profile", "--case", "transpose", "--size", big,
              "--dtype", "float32"]
    for st in ("naive", "naive,smem,padded,unrolled") if part("ncu") else ():
        s, _, rc = timed([*target, "--stages", st], cache_env)
        add(f"profile target alone, {len(st.split(','))} stage(s)", s, rc=rc)
        cmd = NcuCommand(ncu="ncu", export=tmp / f"p{st.count(',') + 1}", target=[*target, "--stages", st],
                         ranges=[f"pr_transpose.{x}" for x in st.split(",")])
        s, text, rc = timed(cmd.argv(), cache_env, timeout=300)
        add(f"ncu --set full, {st.count(',') + 1} stage(s)", s, rc=rc, profiled=text.count("==PROF== Profiling"))
    run = [py, "-m", "profiler_report", "run", "--case", "transpose", "--stages", "naive", "--no-counters",
           "--no-sanitize", "--no-peers", "--out", str(tmp / "minimal")]
    if part("minimal"):
        s, text, rc = timed(run, {**cache_env, "PROFILER_REPORT_CACHE": str(tmp / "rc")})
        add("run --stages naive --no-counters --no-sanitize --no-peers", s, rc=rc, tail=text[-600:])
    out.write_text(json.dumps({"rows": rows, "gpu": subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip(),
        "cpus": os.cpu_count()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
