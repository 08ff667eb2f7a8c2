"""Size limits that keep the package readable, checked on its source (AST): no module over 400
lines, no function over 60 lines, none with more than 8 parameters (group them in a frozen
dataclass). A click command takes its options as ``**opts`` and builds such a dataclass."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "profiler_report"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Named parameters (positional, keyword-only), not counting ``self``/``cls``, *args, **kwargs."""
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return len([n for n in names if n not in ("self", "cls")])


def function_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the ``def`` (decorators not counted) to the function's last line."""
    return (fn.end_lineno or fn.lineno) - fn.lineno + 1


def test_the_counters_count():
    (fn,) = _functions(ast.parse("def f(self, a, b=1, *c, d, **e):\n    x = 1\n\n    return x\n"))
    assert parameters(fn) == 3 and function_lines(fn) == 4


def test_no_module_is_over_400_lines():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in _sources()}
    assert {m: n for m, n in lines.items() if n > MAX_MODULE_LINES} == {}


def test_no_function_is_over_60_lines_nor_takes_over_8_parameters():
    bad = []
    for path in _sources():
        for fn in _functions(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(PACKAGE)}:{fn.lineno} {fn.name}"
            if function_lines(fn) > MAX_FUNCTION_LINES:
                bad.append(f"{where}: {function_lines(fn)} lines")
            if parameters(fn) > MAX_PARAMETERS:
                bad.append(f"{where}: {parameters(fn)} parameters")
    assert bad == []
