"""The lowering modules converted to loop IR spell no C: no OpenMP, SIMD intrinsics, builtins,
C type names or C support code in their code (docstrings and comments aside), they build none
of the loop IR's C-text nodes, and they do not import the code printers; the
printers import only the loop IR (and numpy)."""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

import lazysparse

ROOT = pathlib.Path(lazysparse.__file__).parent / "compiler"
CONVERTED = ["simd", "tiling", "locate", "assembly", "workspace", "counting", "values", "stores", "results",
             "reductions", "coiteration", "fused", "fused_outputs", "fused_loops", "fused_parallel", "fused_temps",
             "fused_vectors", "lowering", "operands", "parallel", "prefetch", "rows", "teams"]
# the C-text nodes and types of the loop IR (loopir.nodes, E.Raw, T.CText, T.of)
TEXT_NODES = frozenset(("RawText", "Decl", "Raw", "CText", "of"))
FORBIDDEN = re.compile(
    r"#\s*pragma|\bomp_|_mm512_|_mm256_|__m512|__m256|__mmask|__builtin_|__atomic|ls_malloc|ls_calloc|"
    r"\b(?:u?int(?:8|16|32|64)_t|double|float|size_t|uintptr_t|unsigned|_Complex)\b|"
    r"\bstatic inline\b|\btypedef\b|#\s*(?:define|if|ifdef|endif|include)\b|\bmalloc\(|\bcalloc\(|\bfree\(")
# C text kept for callers outside these modules, by module: assignments to these names
ALLOWED = {"counting": {"PRELUDE"}}  # (tests/compiler/plan/test_opcount.py strips it from sources)


def _docstrings(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _code_strings(path, allowed):
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in allowed for t in node.targets):
            skip |= {id(n) for n in ast.walk(node.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


@pytest.mark.parametrize("name", CONVERTED)
def test_converted_lowering_spells_no_c(name):
    path = ROOT / "lower" / f"{name}.py"
    bad = [(ln, s) for ln, s in _code_strings(path, ALLOWED.get(name, ())) if FORBIDDEN.search(s)]
    assert not bad, f"C spellings left in compiler/lower/{name}.py: {bad}"
    assert not [m for m in _imports(path) if "codegen" in m]


@pytest.mark.parametrize("name", CONVERTED)
def test_converted_lowering_builds_no_text(name):
    tree = ast.parse((ROOT / "lower" / f"{name}.py").read_text())
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
             and n.module.startswith("lazysparse.compiler.loopir") for a in n.names}
    nodes = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "lazysparse.compiler.loopir.nodes"
             for a in n.names}
    assert not (used & TEXT_NODES), f"compiler/lower/{name}.py builds C text: {sorted(used & TEXT_NODES)}"
    assert nodes <= {"Block", "Comment"}, f"compiler/lower/{name}.py imports text nodes: {sorted(nodes)}"


def test_the_check_sees_c(tmp_path):
    src = 'X = f"#pragma omp atomic"\nY = "int64_t"\ndef f():\n    "double docstring"\n    return 1\n'
    tmp = tmp_path / "probe.py"
    tmp.write_text(src)
    assert sorted(ln for ln, s in _code_strings(tmp, ()) if FORBIDDEN.search(s)) == [1, 2]


def test_codegen_imports_only_loopir():
    for path in (ROOT / "codegen").rglob("*.py"):
        for mod in _imports(path):
            top = mod.split(".")[0]
            assert top in ("__future__", "numpy", "re", "dataclasses", "math") or \
                mod.startswith(("lazysparse.compiler.loopir", "lazysparse.compiler.codegen")), (path, mod)


def test_loopir_imports_nothing_of_a_target():
    for path in (ROOT / "loopir").rglob("*.py"):
        for mod in _imports(path):
            assert "codegen" not in mod and "lower" not in mod and "runtime" not in mod, (path, mod)
