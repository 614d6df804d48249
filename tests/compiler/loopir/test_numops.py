"""NumPy's scalar operations and casts as loop IR nodes (``NumOp``, ``NumCast``, ``Counted``):
the C printer spells them as the NumPy spellings do, the loop IR says which call a math
function with SIMD variants exactly where the spelled C does, and the statement layouts the
lowering needs for them (bare one-line arms, one-line loops, fits, const pointers, zeros)."""
from __future__ import annotations

import numpy as np
import pytest

from lazysparse.compiler.codegen.c import printer, spelling
from lazysparse.compiler.codegen.c.exprs import ctype, expr
from lazysparse.compiler.codegen.c.mvec import calls_libm
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.printer import show
from lazysparse.compiler.loopir.walk import count_raw
from lazysparse.ir import ops

DTYPES = ("bool", "int32", "int64", "uint8", "float32", "float64", "complex128")


def _spelled(op, dt, n):
    """The C of ``op`` on ``n`` arguments of dtype ``dt`` (NumPy's spelling), or None where
    there is none."""
    args = [f"a{k}" for k in range(n)]
    try:
        return spelling.call(op, args, [dt] * n, dt)
    except TypeError:
        return None


@pytest.mark.parametrize("op", sorted(ops.OPS))
def test_numop_prints_numpys_spelling_and_knows_its_vector_math(op):
    n = ops.OPS[op][1]
    for dt in DTYPES:
        want = _spelled(op, dt, n)
        if want is None:
            continue
        node = E.NumOp(op, [E.Var(f"a{k}") for k in range(n)], [dt] * n, dt)
        assert expr(node) == want
        assert E.vector_math(node) == calls_libm(want), (op, dt, want)


def test_numcast_prints_numpys_cast():
    for src in DTYPES:
        for dst in DTYPES:
            assert expr(E.NumCast(E.Var("x"), src, dst)) == spelling.cast("x", src, dst)


def test_nested_values_print_as_their_text_did():
    x = E.Load(E.Var("v0"), E.Var("j1"))
    inner = E.NumOp("exp", [E.NumCast(x, "float64", "float64")], ["float64"], "float64")
    outer = E.NumOp("add", [inner, E.Var("ls_h0")], ["float64", "float64"], "float64")
    assert expr(outer) == spelling.call("add", [spelling.call("exp", ["v0[j1]"], ["float64"], "float64"), "ls_h0"],
                                        ["float64"] * 2, "float64")
    # a structural zero: the select prints no parentheses around the operation
    nz = E.Paren(E.Select(E.Paren(E.Var("p")), outer, E.Cast(T.scalar("float64"), E.Int(0))))
    assert expr(nz) == f"((p) ? {expr(outer)} : (double)0)"
    counted = E.Counted(((0, 1), (3, 2)), outer)
    assert expr(counted) == f"(LS_COUNT(0, 1), LS_COUNT(3, 2), ({expr(outer)}))"
    assert count_raw(S.Assign(E.Var("y"), counted)) == 0
    assert "np.add<float64, float64 -> float64>(np.exp<" in show(outer)
    # equal operations are equal values (hoisted calls are keyed by them)
    assert E.NumOp("sqrt", (E.Var("s"),), ("float64",), "float64") == E.NumOp("sqrt", [E.Var("s")], ["f8"], np.float64)


def test_layouts():
    o = E.Var("o")
    memset = S.Memset(o, 0, E.Var("n"), T.scalar("float64"))
    assert printer._line(S.If(E.Var("tid"), memset, oneline=True, bare=True)) == \
        "if (tid) memset(o, 0, (size_t)n * sizeof(double));"
    nested = S.If(E.Var("a"), S.If(E.Var("b"), S.Fail(), oneline=True), oneline=True, bare=True)
    assert printer._line(nested) == "if (a) if (b) goto ls_fail;"
    with pytest.raises(ValueError):
        S.If(E.Var("a"), S.Fail(), S.Fail(), oneline=True, bare=True)
    loop = S.For("x", E.Int(0), E.Int(16), S.Assign(E.load("h", "x"), E.Int(0)),
                 step=S.Update(E.Var("x"), "+", E.Int(4)), oneline=True)
    out = []
    printer._emit(loop, out, 1)
    assert out == ["  for (int64_t x = 0; x < 16; x += 4) h[x] = 0;"]
    assert printer._line(S.Fit(T.scalar("int32"), E.Var("oc0"), E.add("on0", 1), E.Var("occ0"))) == \
        "LS_FIT(int32_t, oc0, on0 + 1, occ0);"
    assert ctype(T.Ptr(T.scalar("float64"), fixed=True)) == "double *const"
    assert printer._line(S.Declare("v0s", T.scalar("float32"), E.Deref(E.Cast(T.ptr("float32", const=True),
                                                                             E.load("p", 2))), const=True)) == \
        "const float v0s = *(const float *)p[2];"
    assert expr(E.Binary("-", E.Var("x"), E.Zero(T.CText("ls_v8d")))) == "x - (ls_v8d){0}"
