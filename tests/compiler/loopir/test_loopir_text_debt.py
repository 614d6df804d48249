"""The text debt of a lowered program: C-text nodes counted by kind, so what a program holds as
text is measurable; and frozen copies of trees."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler.codegen.c import printer
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, RawText, Seq, While
from lazysparse.compiler.loopir.walk import count_raw, freeze, text_debt, walk


def test_counts_each_kind_of_text():
    blk = Block().add("x = 1;", Decl("int64_t", "y", "0"),
                      For("i", "0", "n", Block().add(If("i", Block().add("y++;")))),
                      While("y", Block()),
                      S.For("j", E.Int(0), E.Raw("n + 1"), Block([S.Assign(E.Var("x"), E.Var("j"))])))
    assert text_debt(blk) == {"raw_text": 2, "text_decl": 1, "text_for": 1, "text_if": 1, "text_while": 1,
                              "raw_expr": 1}
    assert count_raw(blk) == 7


def test_ir_nodes_carry_no_debt():
    x = E.Var("x")
    blk = Block([S.Declare("x", T.INDEX, E.Int(0)),
                 S.If(E.lt(x, 3), Block([S.Update(x, "+", E.Int(1))]), S.Break(), oneline=False),
                 S.FeatureGuard("avx512", S.Assign(x, E.Int(1)))])
    assert count_raw(blk) == 0
    assert sum(1 for _ in walk(blk)) > 6


def test_freeze():
    inner = Block([S.Break()])
    blk = Block([S.For("i", E.Int(0), E.Var("n"), inner), RawText("raw;")])
    frozen = freeze(blk)
    assert isinstance(frozen, Seq) and isinstance(frozen.stmts[0].body, Seq)
    inner.add(S.Continue())  # the builder changes; the frozen copy does not
    assert len(frozen.stmts[0].body.stmts) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.stmts[0].var = "j"
    assert printer.emit(frozen) == printer.emit(Block([S.For("i", E.Int(0), E.Var("n"), Block([S.Break()])),
                                                       RawText("raw;")]))


def test_a_lowered_kernel_reports_its_debt(monkeypatch):
    """The measure on a real kernel: whatever its lowering still builds as text, by kind."""
    seen = []
    emit = printer.emit

    def spy(block, header_comment="", count=False):
        seen.append(block)
        return emit(block, header_comment, count)
    monkeypatch.setattr(printer, "emit", spy)
    A = ls.asarray(sp.random(30, 20, density=0.2, format="csr", random_state=1))
    y = (A.T @ ls.asarray(np.ones(30))).materialize()  # (a transpose: the sort assembly's IR)
    np.testing.assert_allclose(np.asarray(y), np.asarray(A.materialize().todense()).T @ np.ones(30))
    if not seen:
        pytest.skip("the kernel came from an earlier build in this process")
    debt = text_debt(seen[-1])
    assert set(debt) <= {"raw_text", "raw_expr", "text_decl", "text_for", "text_while", "text_if"}
    assert count_raw(seen[-1]) == sum(debt.values())
