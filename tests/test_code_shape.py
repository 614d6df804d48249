"""House style for code shape, checked on the source: no module over 800 lines and no function
over 120, in the package and in its tests."""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted(str(p.relative_to(ROOT)) for d in ("lazysparse", "tests") for p in (ROOT / d).rglob("*.py"))
MAX_MODULE, MAX_FUNCTION = 800, 120


def too_long(source: str) -> list:
    """``(name, lines)`` of each function longer than MAX_FUNCTION lines in ``source``."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION]


@pytest.mark.parametrize("path", FILES)
def test_module_and_function_sizes(path):
    source = (ROOT / path).read_text()
    assert source.count("\n") <= MAX_MODULE, f"{path}: {source.count(chr(10))} lines"
    assert too_long(source) == [], f"{path}: functions over {MAX_FUNCTION} lines"


def test_the_check_sees_a_long_function():
    body = "".join(f"    x{k} = {k}\n" for k in range(MAX_FUNCTION))
    assert too_long("def f():\n" + body) == [("f", MAX_FUNCTION + 1)]
    assert too_long("def g():\n" + body[: -len(f"    x{MAX_FUNCTION - 1} = {MAX_FUNCTION - 1}\n")]) == []
