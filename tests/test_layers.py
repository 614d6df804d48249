"""The package's layers, checked on its import graph (imports inside functions included): the
import-linter contracts in pyproject.toml, and no import cycle anywhere in the package."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import grimp
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "pyproject.toml")) as _f:
    _TOML = _f.read()
# the contracts' ids (pyproject.toml's [[tool.importlinter.contracts]] tables)
CONTRACTS = re.findall(r'^id = "([a-z_]+)"$', _TOML[_TOML.index("[tool.importlinter]"):], re.M)

# contracts that the code does not keep yet, each with what is missing (strict: a contract that
# starts to hold fails here until it is taken off this list)
PENDING = {}


@pytest.fixture(scope="module")
def lint_report():
    """import-linter's report on every contract, from one run (it builds the graph once)."""
    r = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                        "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, COLUMNS="200"))
    out = r.stdout + r.stderr
    assert "Contracts:" in out, out[-4000:]  # (it ran and checked the contracts)
    return out


def _contract_name(contract):
    block = _TOML[_TOML.index(f'id = "{contract}"'):]
    return re.search(r'^name = "([^"]+)"$', block, re.M).group(1)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_import_contract_holds(contract, lint_report, request):
    if contract in PENDING:
        request.applymarker(pytest.mark.xfail(reason=PENDING[contract], strict=True))
    name = _contract_name(contract)
    assert f"{name} KEPT" in lint_report, lint_report[-6000:]


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def test_no_import_cycles():
    graph = grimp.build_graph("lazysparse", cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    """The check above can fail: a graph with one planted cycle reports it."""
    g = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c"):
        g.add_module(m)
    g.add_import(importer="p.a", imported="p.b")
    g.add_import(importer="p.b", imported="p.a")
    g.add_import(importer="p.c", imported="p.a")
    assert _cycles(g) == [["p.a", "p.b"]]
