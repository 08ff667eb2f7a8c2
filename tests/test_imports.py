"""Import hygiene: what ``check`` and ``diff`` load, no import cycles, no import that climbs a layer.

``check`` and ``diff`` run in CI on machines without a browser stack or a GPU: they must not
load the HTML layer (``profiler_report.report``, jinja2, markupsafe, pygments, matplotlib) nor
the GPU side (``profiler_report.live``), not even through a lazy import. The cycle and layer
tests count imports inside functions too (a lazy import only hides a cycle until the function
runs) and ``importlib.import_module("...")`` of a constant name.
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

def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


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
    assert not leaked, f"{args[0]} imports {leaked}: " + "; ".join(f"{m} from {first.get(m, '?')}" for m in leaked)


#: What ``render`` runs before its reads start (cli.render): nothing of it may load pandas,
#: matplotlib or jinja2, which it imports while the ncu_report children read (~0.3 s earlier each).
_BEFORE_THE_READS = r"""
import json, sys
from pathlib import Path
import profiler_report.cli
from profiler_report.capture.readahead import start_read
from profiler_report.report.render_cmd import render_target

render_target((Path({capture!r}),), Path({out!r}), False,
              {{"stage_opts": (), "ceiling_opts": (), "case_ref": None, "allow_mixed": False}})
read = start_read(Path({capture!r}))
read.close()
print(json.dumps({{"started": read is not None,
                   "heavy": sorted(m for m in sys.modules if m.split(".")[0] in ("pandas", "matplotlib", "jinja2"))}}))
"""


def test_render_starts_its_reads_before_pandas_loads(tmp_path):
    code = _BEFORE_THE_READS.format(capture=str(F32), out=str(tmp_path / "out"))
    env = {k: v for k, v in os.environ.items() if k != "PROFILER_REPORT_NO_READ_CACHE"}  # the cache is asked too
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {"started": True, "heavy": []}


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


def _dynamic_imports(tree: ast.AST) -> list[str]:
    """Modules named by a constant string to ``importlib.import_module``, ``import_module`` or
    ``__import__``: an import all the same, however it is spelled (a name held in a variable, as
    the case registry's, is a plugin lookup and is not seen here)."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in {"import_module", "__import__"}:
            found.append(node.args[0].value)
    return found


def _dotted_targets(names: list[str], known: set[str], module: str = "") -> set[str]:
    """The package modules importing each dotted name loads (its parent packages too), less
    ``module``'s own parent packages (already loaded when it runs)."""
    out = set()
    for name in names:
        parts = name.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    own_parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    return (out & known) - own_parents


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the ``profiler_report`` modules it imports: module-level, inside functions, and
    constant-string ``importlib`` imports; ``if TYPE_CHECKING:`` imports are not run, so not counted."""
    files = {_module_name(p): p for p in sorted(package.rglob("*.py"))}
    known = set(files)
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = set().union(*(_targets(n, name, path.name == "__init__.py", known) for n in _imports(tree)))
        graph[name] |= _dotted_targets(_dynamic_imports(tree), known, name)
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
    assert cycles(import_graph()) == []


def test_a_constant_importlib_import_is_an_import():
    code = 'import importlib\ndef f():\n    return importlib.import_module("profiler_report.b.c")\n'
    assert _dotted_targets(_dynamic_imports(ast.parse(code)), {"profiler_report.b", "profiler_report.b.c"}) == {
        "profiler_report.b", "profiler_report.b.c"}
    assert _dynamic_imports(ast.parse("import importlib\nimportlib.import_module(name)\n")) == []


#: The layers, bottom to top: a module may import its own subpackage and anything on a lower
#: layer, never a higher one nor a sibling on its own layer (report and gate do not import each other).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",), ("util",), ("formulas",), ("metrics",), ("model",), ("capture",), ("analysis",), ("report", "gate"),
    ("live",), ("cases",), ("api", "cli"), ("__main__",), ("",))


def _part(module: str) -> str:
    """'profiler_report.analysis.run' -> 'analysis'; the root package -> ''."""
    return module.split(".")[1] if "." in module else ""


def _layer(module: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if _part(module) in layer)


def climbing(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module on the same or a higher layer from another part of the package."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if _part(a) != _part(b) and _layer(b) >= _layer(a))


def test_the_layer_rule_finds_a_climbing_import():
    graph = {"profiler_report.report.tables": {"profiler_report.live.fanout", "profiler_report.analysis.run"},
             "profiler_report.gate.output": {"profiler_report.report.html"},
             "profiler_report.live.ncu": {"profiler_report.live.gpu", "profiler_report.model.ranges"}}
    assert climbing(graph) == ["profiler_report.gate.output -> profiler_report.report.html",
                               "profiler_report.report.tables -> profiler_report.live.fanout"]


def test_every_part_of_the_package_has_a_layer():
    parts = {_part(m) for m in import_graph()}
    assert parts <= {p for layer in LAYERS for p in layer}, parts


def test_no_import_climbs_a_layer():
    assert climbing(import_graph()) == []


# --------------------------------------------------------------------------------------------
# The copy a boundary needs


def test_own_nvtx_prefix_agrees_with_the_launcher():
    # One place names the ranges: the launcher and the loader both use model.ranges.
    from profiler_report.model.ranges import nvtx_range_name, own_range

    assert own_range("outer/" + nvtx_range_name("transpose", "naive")) == ("transpose", "naive")
    assert own_range("pr_smem") == ("transpose", "smem")  # captures from before cases existed
    assert own_range("other") is None

