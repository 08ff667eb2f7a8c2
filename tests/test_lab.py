"""lab/: the experiment scripts kept there still compile, and every name they import from the
package still exists (they are not run: they need a GPU)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import py_compile
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parent.parent / "lab"
SCRIPTS = sorted([*LAB.glob("*.py"), *LAB.glob("hgemm/*.py")])


def test_the_lab_says_it_is_not_part_of_the_tool():
    assert "not part of the tool" in (LAB / "README.md").read_text()
    assert SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_lab_script_compiles_and_its_package_imports_exist(script, tmp_path):
    py_compile.compile(str(script), cfile=str(tmp_path / "x.pyc"), doraise=True)
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("profiler_report"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or importlib.util.find_spec(f"{node.module}.{alias.name}"), \
                    f"{script.name}: from {node.module} import {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("profiler_report"):
                    importlib.import_module(alias.name)
