"""The golden kernels' loop IR (tests/compiler/codegen/golden: seventeen kernels, a fused GNN
layer among them) holds no C text: every statement and expression lowering builds
is a loop IR node, so that a second printer needs no change in compiler/lower. The bound keeps
the text from growing back."""
from __future__ import annotations

import importlib.util
import pathlib
import sys
from collections import Counter

import lazysparse as ls
from lazysparse.compiler.codegen.c import printer
from lazysparse.compiler.loopir.walk import text_debt

GOLDEN_DEBT = 0  # C-text nodes (loopir.walk.text_debt) the golden kernels may hold


def _golden_cases():
    """The golden test's module (its cases and their recording), loaded once."""
    name = "_lazysparse_golden_cases"
    if name not in sys.modules:
        path = pathlib.Path(__file__).parents[1] / "codegen" / "test_golden_c.py"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def test_golden_kernels_hold_no_c_text(monkeypatch):
    g = _golden_cases()
    seen, emit = [], printer.emit

    def spy(block, header_comment="", count=False):
        seen.append(block)
        return emit(block, header_comment, count)
    monkeypatch.setattr(printer, "emit", spy)
    before_threads = ls.get_num_threads()
    debt = Counter()
    try:
        for name, case in g.CASES.items():
            n = len(seen)
            with monkeypatch.context() as m:
                g._record(case, m)
            assert len(seen) > n, f"{name}: no kernel was lowered"
            for block in seen[n:]:
                debt += text_debt(block)
    finally:
        ls.set_num_threads(before_threads)
    assert sum(debt.values()) <= GOLDEN_DEBT, f"C text in the golden kernels' loop IR: {dict(debt)}"
