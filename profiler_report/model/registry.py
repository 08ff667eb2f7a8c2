"""The case registry and case folders: how a case name or path becomes a :class:`~.base.Case`.

Built-in cases: :data:`REGISTRY` maps names to the modules under ``profiler_report/cases/`` that
define ``CASE`` (their files under ``kernels/<case>/``); :data:`DEFAULT_CASE` is the one commands
use when none is named. A user's case is a folder holding ``case.py`` (which ends with
``CASE = YourCase()``), ``stages.toml`` and the kernel source, made by ``profiler-report new-case
DIR`` and loaded by :func:`get_case` from its path.

:func:`load_case_folder` imports ``case.py`` from the folder (``importlib`` from the file: the
folder need not be a package nor on ``sys.path``), binds the case to the folder and checks the
folder before any GPU work: the manifest parses, and every stage it lists (the ceiling too) has
its ``// stage: ID`` ... ``// end stage`` block in the source, defining the kernel it names.
Every failure is one :class:`~profiler_report.errors.CaseError` line naming the file (and the
line and stage where there is one). :func:`compile_error` turns NVRTC's log into such a line.

This module imports nothing heavy: the registry is read by every command. The built-in cases
are plugins above every other layer: they are imported by name (:data:`REGISTRY`), never here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from profiler_report.errors import CaseError, InputError, ProfilerReportError
from profiler_report.model.base import Case
from profiler_report.model.manifest import Manifest, Stage, fix_in

#: Case name -> module defining ``CASE``.
REGISTRY = {
    "transpose": "profiler_report.cases.transpose",
    "reduction": "profiler_report.cases.reduction",
    "gemm": "profiler_report.cases.gemm",
    "hgemm": "profiler_report.cases.hgemm",
}
#: The case a command uses when none is named.
DEFAULT_CASE = "transpose"


def is_case_path(ref: str) -> bool:
    """Whether ``ref`` names a case folder rather than a built-in case: it has a path separator,
    starts with "." or "~", or is an existing folder."""
    return "/" in ref or "\\" in ref or ref.startswith((".", "~")) or (ref not in REGISTRY and Path(ref).is_dir())


def get_case(ref: str = DEFAULT_CASE) -> Case:
    """The case ``ref``: a built-in case's name, or the path of a user's case folder.

    Raises:
        InputError: no built-in case has that name and it is no folder.
        CaseError: the folder's case.py, stages.toml or kernel source is broken
            (see :func:`load_case_folder`).
    """
    if ref in REGISTRY:
        return importlib.import_module(REGISTRY[ref]).CASE
    if ref.strip() and is_case_path(ref):  # "" would be the current folder
        return load_case_folder(Path(ref))
    raise InputError(f"unknown case {ref!r}",
                     f"use one of {', '.join(sorted(REGISTRY))}, or the path of a case folder "
                     "(`profiler-report new-case DIR` makes one)")

#: Loaded folders (resolved path -> case): each case.py is imported once per process.
_LOADED: dict[Path, Case] = {}

#: A case name: it becomes part of the NVTX range ``pr_<name>.<stage>``, so no dots.
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def load_case_folder(path: Path) -> Case:
    """The case a folder defines, bound to that folder and checked (see the module docstring).

    Raises:
        InputError: the folder does not exist.
        CaseError: case.py is missing, does not import, lacks ``CASE`` or names the case
            badly; stages.toml is broken; a stage's block or kernel is missing from the source.
    """
    folder = path.expanduser().resolve()
    if folder in _LOADED:
        return _LOADED[folder]
    if not folder.is_dir():
        raise InputError(f"case folder {path} does not exist",
                         "pass a folder made by `profiler-report new-case DIR`, or a built-in case name")
    module_file = folder / "case.py"
    if not module_file.is_file():
        raise CaseError(f"{module_file} is missing: a case folder holds case.py, stages.toml and its kernels",
                        f"run `profiler-report new-case {path}` in an empty folder for a working start")
    with _user_code(module_file):
        case = _case_of(_import(module_file), module_file)
        case.user_folder = folder
        if not case.name:
            case.name = folder.name
        _check_name(case, module_file)
        check_sources(case, _manifest(case))
    _LOADED[folder] = case
    return case


@contextlib.contextmanager
def _user_code(module_file: Path) -> Iterator[None]:
    """Whatever a user's case.py raises or exits with while its case is loaded (its import, a
    ``name`` or ``manifest`` it overrides) is a :class:`CaseError` naming the file: a
    ``sys.exit(0)`` must not end a `check` with no verdicts and exit 0, nor ``SystemExit(3)``
    pass for "ncu not found". Only Ctrl-C goes through (exit 130)."""
    try:
        yield
    except (KeyboardInterrupt, ProfilerReportError):
        raise
    except BaseException as exc:
        what = f"exits ({type(exc).__name__}({exc.code!r}))" if isinstance(exc, SystemExit) else \
            f"raises {type(exc).__name__}" + (f": {_text(exc)}" if str(exc) else "")
        raise CaseError(f"{_where(exc, module_file)}: case.py {what} while the case is loaded",
                        "case.py defines the case and ends with `CASE = YourCase()`; remove the exit or fix the "
                        "error (rerun with --debug for the traceback)") from exc


def _import(module_file: Path) -> object:
    """case.py imported as a module of its own (named after its path, so two folders never clash)."""
    digest = hashlib.sha1(str(module_file).encode()).hexdigest()[:10]
    name = f"profiler_report_user_case_{digest}"
    spec = importlib.util.spec_from_file_location(name, module_file)
    if spec is None or spec.loader is None:
        raise CaseError(f"{module_file} cannot be imported", "check the file is a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if not isinstance(exc, Exception):
            raise  # an exit or Ctrl-C: :func:`_user_code` says what it was
        raise CaseError(f"{_where(exc, module_file)}: case.py does not import: {type(exc).__name__}: "
                        f"{_text(exc)}", "fix case.py (rerun with --debug for the traceback)") from exc
    return module


def _where(exc: BaseException, module_file: Path) -> str:
    """'case.py:LINE' of the failure: the syntax error's line, else the innermost frame in case.py."""
    if isinstance(exc, SyntaxError) and exc.lineno and Path(exc.filename or "") == module_file:
        return f"{module_file}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == module_file]
    return f"{module_file}:{frames[-1].lineno}" if frames else str(module_file)


def _text(exc: BaseException) -> str:
    msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return " ".join(str(msg).split())[:300]


def _case_of(module: object, module_file: Path) -> Case:
    case = getattr(module, "CASE", None)
    if not isinstance(case, Case):
        got = "no CASE" if case is None else f"CASE is a {type(case).__name__}"
        raise CaseError(f"{module_file} defines {got}, not an instance of profiler_report.model.base.Case",
                        "end case.py with `CASE = YourCase()` where `class YourCase(Case)`")
    return case


def _check_name(case: Case, module_file: Path) -> None:
    if not _NAME.match(case.name):
        raise CaseError(f"{module_file}: case name {case.name!r} is not an identifier (it names the NVTX "
                        f"range pr_<name>.<stage>)", "set `name` in case.py to letters, digits and _")
    if case.name in REGISTRY:
        raise CaseError(f"{module_file}: case name {case.name!r} is the name of a built-in case",
                        "set another `name` in case.py")


def _manifest(case: Case) -> Manifest:
    try:
        return case.manifest
    except InputError as exc:
        path = case.folder / "stages.toml"
        hint = fix_in(exc.hint, path)  # the manifest's own fix (what a valid template is), naming this file
        raise CaseError(exc.message, hint if str(path) in hint else f"fix {path}") from exc


def _listed(manifest: Manifest) -> list[Stage]:
    return [*manifest.stages, manifest.ceiling, *([manifest.regression] if manifest.regression else [])]


#: One stage block of a kernel source, with where it starts.
_BLOCK = re.compile(r"^// stage: (\w+)\s*$(.*?)^// end stage\s*$", re.M | re.S)


def check_sources(case: Case, manifest: Manifest) -> None:
    """Every stage of ``manifest`` (the ceiling and regression too) has its block in the source,
    and the block defines the kernel the stage names.

    Raises:
        CaseError: the source is missing, or a block or kernel is.
    """
    if not case.compiles_cuda:  # Python stages: functions of stages.py, not kernel blocks
        from profiler_report.model.python_case import check_python_sources

        check_python_sources(case, manifest)
        return
    toml = case.folder / "stages.toml"
    try:
        text = manifest.source_text()
    except OSError as exc:
        raise CaseError(f"{toml}: source {manifest.source.name} cannot be read ({exc.strerror})",
                        "set `source` in stages.toml to the kernel file in the case folder") from exc
    blocks = {m.group(1): m.group(2) for m in _BLOCK.finditer(text)}
    for st in _listed(manifest):
        if st.id not in blocks:
            raise CaseError(f"{manifest.source}: no `// stage: {st.id}` block for stage {st.id} of {toml}",
                            f"put the kernel between `// stage: {st.id}` and `// end stage` lines, or drop "
                            "the stage from stages.toml")
        if not re.search(rf"\b{re.escape(st.kernel)}\s*(<|\()", blocks[st.id]):
            raise CaseError(f"{manifest.source}: the block of stage {st.id} does not define kernel {st.kernel} "
                            f"(named in {toml})", "make `kernel` in stages.toml the name of the block's __global__ "
                            "function")


def stage_at_line(source_text: str, line: int) -> str | None:
    """The stage whose block holds 1-based ``line`` of a kernel source, or None (outside every block)."""
    for m in _BLOCK.finditer(source_text):
        first = source_text.count("\n", 0, m.start()) + 1
        last = source_text.count("\n", 0, m.end()) + 1
        if first <= line <= last:
            return m.group(1)
    return None


#: An error line of NVRTC's log (and nvcc's: the same front end): ``FILE(LINE): error: TEXT``.
_LOG_ERROR = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<kind>(?:catastrophic |fatal )?error)"
                        r"\s*:?\s*(?P<text>.*)$", re.M)


def compile_error(case: Case, log: str) -> CaseError:
    """One line for a failed compile of ``case``'s source: its file and line, the stage whose block
    holds that line, NVRTC's first error and how many there were."""
    source = case.manifest.source
    errors = list(_LOG_ERROR.finditer(log))
    if not errors:
        first = next((ln.strip() for ln in log.splitlines() if ln.strip()), "no log")
        return CaseError(f"{source}: NVRTC failed: {first[:300]}",
                         f"`profiler-report check-case {case.folder}` compiles every stage without a GPU")
    e = errors[0]
    line = int(e.group("line"))
    stage = stage_at_line(source.read_text(), line)
    where = f" (stage {stage})" if stage else " (outside every stage block)"
    more = f" [{len(errors)} errors]" if len(errors) > 1 else ""
    return CaseError(f"{source}:{line}{where}: NVRTC: {e.group('kind')}: {e.group('text').strip()[:300]}{more}",
                     f"fix the kernel; `profiler-report check-case {case.folder}` compiles every stage without a GPU")
