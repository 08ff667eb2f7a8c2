"""Import hygiene: what ``check`` and ``diff`` load, and no import cycles in the package.

``check`` and ``diff`` run in CI on machines without a browser stack or a GPU: they must not
load the HTML layer (``profiler_report.report``, jinja2, markupsafe, pygments, matplotlib) nor
the GPU side (``profiler_report.live``), not even through a lazy import. The cycle test counts
imports inside functions too (a lazy import only hides a cycle until the function runs).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "profiler_report"
F32 = ROOT / "tests" / "data" / "h200_f32_4096" / "profile.ncu-rep"

#: Top-level modules and package prefixes ``check`` and ``diff`` must never import.
FORBIDDEN = ("jinja2", "matplotlib", "pygments", "markupsafe", "profiler_report.report", "profiler_report.live")

#: Modules of the gate's owner: an import leak or a cycle through one of them always fails.
#: Leaks and cycles only through other modules are reported as expected failures (xfail), so
#: that the owners of those modules see the list without turning CI red for them.
GATE_OWNED = ("profiler_report.gate", "profiler_report.analysis.compare", "profiler_report.analysis.run",
              "profiler_report.errors", "profiler_report.cli")


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def _owned(name: str) -> bool:
    return any(name == o or name.startswith(o + ".") for o in GATE_OWNED)


# --------------------------------------------------------------------------------------------
# What check and diff import

#: Runs the real CLI, in-process in a fresh interpreter; notes, for the first import of each
#: forbidden module, the innermost package frame that imported it; prints sorted(sys.modules).
_PROBE = r"""
import json, sys, traceback

FORBIDDEN = {forbidden!r}
first = {{}}

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name not in first and any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
            frames = [f for f in traceback.extract_stack()[:-1] if "/profiler_report/" in f.filename]
            first[name] = f"{{frames[-1].filename}}:{{frames[-1].lineno}}" if frames else "?"
        return None

sys.meta_path.insert(0, Watch())
from profiler_report.cli import main
try:
    main.main({args!r}, standalone_mode=False)
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps({{"modules": sorted(sys.modules), "first": first}}))
"""


def _imported_by(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """(sorted(sys.modules) after the CLI ran ``args``, forbidden module -> "file:line" that imported it)."""
    code = _PROBE.format(forbidden=FORBIDDEN, args=args)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    return out["modules"], out["first"]


def _module_of(where: str) -> str:
    """'/x/profiler_report/analysis/stages.py:56' -> 'profiler_report.analysis.stages'."""
    parts = list(Path(where.rsplit(":", 1)[0]).with_suffix("").parts)
    parts = parts[len(parts) - 1 - parts[::-1].index("profiler_report"):]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_module_of():
    assert _module_of("/a/profiler_report/analysis/stages.py:56") == "profiler_report.analysis.stages"
    assert _module_of("/a/profiler_report/gate/__init__.py:9") == "profiler_report.gate"


@pytest.mark.parametrize(("args", "expected"), [
    (["check", str(F32), "--missing", "warn"], "profiler_report.gate.evaluate"),
    (["diff", str(F32), str(F32)], "profiler_report.analysis.compare"),
], ids=["check", "diff"])
def test_check_and_diff_load_no_html_nor_gpu_module(args, expected):
    modules, first = _imported_by(args)
    assert expected in modules and "profiler_report.analysis.run" in modules
    leaked = sorted(m for m in modules if _forbidden(m))
    if not leaked:
        return
    culprits = {m: first.get(m, "?") for m in leaked if m in first}
    ours = {m: at for m, at in culprits.items() if at == "?" or _owned(_module_of(at))}
    assert not ours, f"{args[0]} imports {sorted(ours)} through the gate's modules: {ours}"
    pytest.xfail(f"{args[0]} imports {leaked}, through modules outside the gate: "
                 + "; ".join(f"{m} from {at}" for m, at in culprits.items()))


# --------------------------------------------------------------------------------------------
# No import cycles


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, module-level or in a function, outside ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    walk_one(sub)
                continue
            walk_one(child)

    def walk_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        walk(node)

    walk(tree)
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The package modules an import statement loads: the named module, its parent packages
    (their ``__init__`` runs first), and for ``from X import name`` the submodule ``X.name``."""
    if isinstance(node, ast.Import):
        named = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        named = [base] + [f"{base}.{a.name}" for a in node.names]
    out = set()
    for name in named:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            out.add(".".join(parts[:i]))
    own_parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    if is_package:
        own_parents.add(module)
    return {t for t in out if t in known and t not in own_parents}


def import_graph() -> dict[str, set[str]]:
    """module -> the ``profiler_report`` modules it imports (lazy imports included)."""
    files = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    known = set(files)
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = set().union(*(_targets(n, name, path.name == "__init__.py", known) for n in _imports(tree)))
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


_SAMPLE = """
import profiler_report.a
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from profiler_report.b import X
else:
    from profiler_report.c import Y
def f():
    from . import d
    from .e import g
class K:
    def m(self):
        import profiler_report.p.q
"""


def test_import_statements_found_lazy_relative_and_not_type_checking():
    known = {"profiler_report", *(f"profiler_report.{m}" for m in ("a", "b", "c", "d", "e", "m", "p", "p.q"))}
    found = set().union(*(_targets(n, "profiler_report.m", False, known) for n in _imports(ast.parse(_SAMPLE))))
    assert found == {f"profiler_report.{m}" for m in ("a", "c", "d", "e", "p", "p.q")}


def test_graph_of_the_package():
    graph = import_graph()
    assert "profiler_report.gate.rules" in graph["profiler_report.gate.grammar"]
    assert "profiler_report.capture.readahead" in graph["profiler_report.cli"]  # imported inside render()
    assert "profiler_report.errors" in graph["profiler_report.cli"]  # relative: from .errors import ...
    assert "profiler_report.analysis.run" not in graph["profiler_report.gate.evaluate"]  # TYPE_CHECKING only


def test_no_import_cycles():
    found = cycles(import_graph())
    ours = [c for c in found if any(_owned(m) for m in c)]
    assert not ours, f"import cycles through the gate's modules: {ours}"
    if found:
        pytest.xfail(f"import cycles outside the gate's modules: {found}")


# --------------------------------------------------------------------------------------------
# The copy a boundary needs


def test_own_nvtx_prefix_agrees_with_the_launcher():
    # One place names the ranges: the launcher and the loader both use cases.ranges.
    from profiler_report.model.ranges import nvtx_range_name, own_range

    assert own_range("outer/" + nvtx_range_name("transpose", "naive")) == ("transpose", "naive")
    assert own_range("pr_smem") == ("transpose", "smem")  # captures from before cases existed
    assert own_range("other") is None

