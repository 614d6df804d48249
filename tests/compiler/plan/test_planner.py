"""The planner's loop-order pass on tiny hand-written statements (no compilation)."""
from lazysparse.formats import Format, resolve_format
from lazysparse.ir.nodes import Access, Call, Index, Statement
from lazysparse.compiler.plan import kernel as PL

i, j, k = Index("i"), Index("j"), Index("k")
CSR = resolve_format("csr", 2)
CSC = resolve_format("csc", 2)
DENSE2 = resolve_format("dense", 2)
DENSE1 = resolve_format("dense", 1)


def spec(fmt, layout=()):
    return PL.OperandSpec(fmt, "float64", "int32" if fmt.is_sparse else "int64", layout,
                          bool(layout))


def matmul(out, a, b):
    expr = Call("multiply", (Access(0, a), Access(1, b)), ("float64", "float64"), "float64")
    return Statement(out, expr, "sum", "float64")


def test_spmv_iterates_rows_then_the_row():
    stmt = matmul((i,), (i, j), (j,))
    order, converted = PL.choose_order(stmt, (spec(CSR), spec(DENSE1, (0,))), DENSE1)
    assert order == (i, j) and converted == ()


def test_spmm_keeps_the_dense_column_innermost():
    stmt = matmul((i, k), (i, j), (j, k))
    # the result format (dense, inferred before ordering) takes part: k is stored innermost in it
    order, converted = PL.choose_order(stmt, (spec(CSR), spec(DENSE2, (0, 1))), DENSE2)
    assert order == (i, j, k) and converted == ()


def test_conflicting_storage_orders_convert_one_operand():
    expr = Call("add", (Access(0, (i, j)), Access(1, (i, j))), ("float64", "float64"), "float64")
    order, converted = PL.choose_order(Statement((i, j), expr, "sum", "float64"), (spec(CSR), spec(CSC)), None)
    assert order == (i, j) and converted == (1,)


def test_csr_times_csc_avoids_the_inner_product_order():
    # A @ B with B stored column-major: the inner-product order (i, j, k) would visit all I*J pairs
    stmt = matmul((i, j), (i, k), (k, j))
    order, converted = PL.choose_order(stmt, (spec(CSR), spec(CSC)), None)
    assert order.index(k) < order.index(j), order
    assert converted == (1,)
    # and B is converted to the level kinds it has, stored in the new order (CSR)
    assert PL.concordant_format(spec(CSC), Access(1, (k, j)), order) == CSR


def test_csr_times_csr_is_gustavson_without_conversion():
    stmt = matmul((i, j), (i, k), (k, j))
    order, converted = PL.choose_order(stmt, (spec(CSR), spec(CSR)), None)
    assert order == (i, k, j) and converted == ()


def test_a_sum_of_mixed_formats_keeps_the_left_operands_format():
    """``A + B`` with one operand CSR and the other CSC is stored like the left one (scipy's
    rule): the union's terms are a set, and in its iteration order ``A + A.T`` came out CSC,
    assembled by a sort. Values against dense NumPy, both orders."""
    import numpy as np
    import scipy.sparse as sp

    import lazysparse as ls
    A = sp.random(40, 40, density=0.1, format="csr", random_state=3)
    lA = ls.asarray(A)
    for expr, want, fmt in ((lA + lA.T, A + A.T, ls.csr), (lA.T + lA, A.T + A, ls.csc),
                            (lA - lA.T, A - A.T, ls.csr), (lA.T - lA, A.T - A, ls.csc)):
        got = expr.materialize()
        assert got.format == fmt
        np.testing.assert_allclose(got.todense(), want.toarray(), rtol=1e-12)
    add = Call("add", (Access(0, (i, j)), Access(1, (i, j))), ("float64", "float64"), "float64")
    stmt = Statement((i, j), add, "sum", "float64")
    for a, b in ((CSR, CSC), (CSC, CSR)):
        assert PL.infer_format(stmt, (spec(a), spec(b)), {0: 0.1, 1: 0.1}, {i: 40, j: 40}, 2) == a
