"""The target process of ncu (``python -m profiler_report.live.target profile --case NAME ...``)
and of compute-sanitizer (``... sanitize ...``: every stage once, between marker lines, see
:mod:`profiler_report.live.sanitizer`); also the run's peers' process (``... peers ...``, see
:mod:`profiler_report.live.peers_process`).

It validates each stage, then launches each one exactly once inside the NVTX push/pop range
``pr_<case>.<stage>`` (:func:`profiler_report.model.ranges.nvtx_range_name`), the range that
``ncu --nvtx-include pr_<case>.<stage>/`` filters on. Warm-up and validation launches sit outside
every range, so ncu profiles one launch per stage.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace

from profiler_report.live.gpu import import_cupy, push_range
from profiler_report.live.kernels import Kernels, Validation, compile_module, fresh_output, kernel_key, validate
from profiler_report.live.sanitizer import BEGIN, END
from profiler_report.model.base import Case, Size
from profiler_report.model.experiment import RESULT_PREFIX
from profiler_report.model.manifest import Stage
from profiler_report.model.ranges import nvtx_range_name
from profiler_report.model.registry import DEFAULT_CASE, get_case


def profile_launches(kernels: Kernels, stages: list[Stage], size: Size, validated: bool = False) -> list[Validation]:
    """Target side of ncu: validate (unless ``validated``: the run did, at this size and dtype, with
    the same kernels and configurations), warm up, then one launch per stage in its NVTX range."""
    cupy = import_cupy()
    case = kernels.case
    results = [Validation(st.id, dict(size), kernels.dtype, True) if validated else validate(kernels, st, size)
               for st in stages]
    a = kernels.make_input(None, size, 1)
    for st, v in zip(stages, results, strict=True):
        if not v.correct:
            continue
        out = case.guarded("make_output", st, case.make_output, cupy, st, size, kernels.dtype)
        kernels.launch(st, a, out, size)  # warm-up, outside every range
        cupy.cuda.runtime.deviceSynchronize()
        case.guarded("prepare_output", st, case.prepare_output, cupy, st, out)  # the profiled launch starts clean
        kernels.launch(st, a, out, size, profiled=lambda st=st: push_range(nvtx_range_name(case.name, st.id)))  # type: ignore[misc]
        cupy.cuda.runtime.deviceSynchronize()
    return results


def run_experiment(case: Case, experiment_id: str) -> int:
    """Target side of an experiment's ncu run: every point validated and launched once in its
    range; the per-point results printed as one JSON line after :data:`RESULT_PREFIX`."""
    exp = next((e for e in case.experiments() if e.id == experiment_id), None)
    if exp is None:
        print(f"profiler-report: case {case.name} has no experiment {experiment_id!r}", file=sys.stderr)
        return 2
    results = exp.run_target(case)
    print(RESULT_PREFIX + json.dumps(results, sort_keys=True), flush=True)
    return 0  # a wrong point is in the JSON (the report marks it): exit 1 would fail ncu and the run


def stage_kernels(kernels: Kernels, stage: Stage, size: Size) -> list[str]:
    """The name expressions of the kernels one run of ``stage`` launches (its steps), in order."""
    case = kernels.case
    a = kernels.make_input(stage, size, 0)
    out = fresh_output(kernels, stage, size)
    steps = case.guarded("steps", stage, case.steps, stage, a, out, size, kernels.dtype)
    return list(dict.fromkeys(kernels.names[kernel_key(s.kernel)] for s in steps if s.kernel is not None))


def sanitize_launches(kernels: Kernels, stages: list[Stage], size: Size) -> list[Validation]:
    """Target side of compute-sanitizer: each stage once (validated), between a begin and an end
    marker line that the tool's report blocks are attributed by. A stage that raises (a sticky
    CUDA error after a fault) ends the process: the parent reruns the rest in a fresh one."""
    cupy = import_cupy()
    results = []
    for st in stages:
        try:
            names = stage_kernels(kernels, st, size)
        except Exception:
            names = []  # the stage is still begun, so that the failure below is its own
        print(BEGIN + json.dumps({"stage": st.id, "kernels": names}), flush=True)
        try:
            v = validate(kernels, st, size)
            cupy.cuda.runtime.deviceSynchronize()
        except Exception as exc:  # the tool's own block says why; this says where the child stopped
            text = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            print(END + json.dumps({"stage": st.id, "correct": False, "message": f"raised {text}"}), flush=True)
            raise
        results.append(v)
        print(END + json.dumps({k: val for k, val in asdict(v).items() if k in ("stage", "correct", "message")}),
              flush=True)
    return results


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m profiler_report.live.target",
                                description="ncu target: one profiled launch per stage")
    p.add_argument("mode", choices=["profile", "experiment", "sanitize", "peers"],
                   help="profile: the stages; experiment: the points of one experiment of the case; "
                        "sanitize: each stage once between markers, for compute-sanitizer; peers: import the "
                        "peer libraries, then time the stages against the peers as one JSON line on stdin asks "
                        "(profiler_report.live.peers_process)")
    p.add_argument("--case", default=DEFAULT_CASE, help="a built-in case's name or a case folder's path")
    p.add_argument("--size", default="", help='the case\'s dimensions as JSON, e.g. {"rows": 4096, "cols": 4096}')
    p.add_argument("--dtype", default="")
    p.add_argument("--experiment", default="", help="experiment mode: the experiment's id")
    p.add_argument("--stages", default="",
                   help="comma-separated stage ids; ID:OTHER launches stage OTHER's kernel under ID's range "
                        "(how the deliberately regressed fixture is recorded)")
    p.add_argument("--validated", action="store_true",
                   help="profile mode: the run validated these stages at this size and dtype; launch them "
                        "without validating again")
    p.add_argument("--configs", default="",
                   help='stage id -> template arguments as JSON, e.g. {"vec_realigned": ["32", "16", "512"]}: '
                        "the configuration `run` chose for this shape instead of the manifest's")
    args = p.parse_args(argv)
    if args.mode == "profile" and not (args.size and args.dtype and args.stages):
        p.error("profile needs --size, --dtype and --stages")
    if args.mode == "peers" and not (args.size and args.dtype):
        p.error("peers needs --size and --dtype")
    if args.mode == "experiment" and not args.experiment:
        p.error("experiment needs --experiment ID")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    case = get_case(args.case)
    if args.mode == "experiment":
        return run_experiment(case, args.experiment)
    size = case.size(json.loads(args.size))
    if args.mode == "peers":
        from profiler_report.live.peers_process import serve

        return serve(case, size, args.dtype)
    configs = {k: tuple(str(a) for a in v) for k, v in json.loads(args.configs or "{}").items()}
    stages = []
    for item in args.stages.split(","):
        label, _, kernel_of = item.partition(":")
        st = case.manifest.stage(kernel_of or label)
        st = replace(st, id=label) if kernel_of else st
        stages.append(replace(st, targs=configs[st.id]) if st.id in configs else st)
    module, names = compile_module(case, args.dtype, extra=tuple(s for s in stages if s.id in configs))
    # Under compute-sanitizer each input is made once (see Kernels.make_input).
    kernels = Kernels(module, names, args.dtype, case, keep_inputs=args.mode == "sanitize")
    if args.mode == "profile":
        results = profile_launches(kernels, stages, size, validated=args.validated)
    else:
        results = sanitize_launches(kernels, stages, size)
    bad = [v for v in results if not v.correct]
    for v in bad:
        print(f"profiler-report: {v.message}", file=sys.stderr)
    verdict = "by the run" if args.validated else "here"
    print(f"profiler-report-validation ({verdict}) "
          + " ".join(f"{v.stage}={'ok' if v.correct else 'WRONG'}" for v in results))
    # Under compute-sanitizer every result is in the end markers: exit 0 once every stage ran.
    return 1 if bad and args.mode == "profile" else 0


if __name__ == "__main__":
    sys.exit(main())
