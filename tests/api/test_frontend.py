"""The lazy front end: shapes, dtypes, laziness and build-time errors, checked without compiling.

Shapes and dtypes are compared with NumPy on zero-filled arrays of the same shapes. The
``TestValues`` class at the end runs the compiler (it compares ``.todense()`` with NumPy).
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.ir.einsum import parse_einsum
from lazysparse.ir.nodes import Access, Call, Const, Statement
from lazysparse.ir.notation import parse_notation


def arr(x):
    """A concrete ls.Array of a NumPy array."""
    return ls.asarray(np.asarray(x))


def zeros(shape, dtype="float64"):
    return np.zeros(shape, dtype=dtype)


def check_like(lazy, expected):
    assert isinstance(lazy, ls.Array)
    assert lazy.is_lazy
    assert lazy.shape == np.shape(expected)
    assert lazy.dtype == np.asarray(expected).dtype


# -- einsum ---------------------------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),                      # implicit output is sorted: 'ij'
    ("Ba,aB", [(2, 3), (3, 2)]),           # uppercase sorts before lowercase
    ("aB,Ca->BC", [(2, 3), (4, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 5)]),
    ("i,i", [(3,), (3,)]),
    ("i,i->i", [(3,), (3,)]),
    ("i,j", [(2,), (3,)]),
    ("i,j,k", [(2,), (3,), (4,)]),
    ("ijk,jl,kl->il", [(2, 3, 4), (3, 5), (4, 5)]),
    (",i->i", [(), (3,)]),
    ("->", [()]),
    ("", [()]),
    ("i->", [(4,)]),
    ("i->...", [(4,)]),
    ("ij->i...", [(2, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk", [(1, 2, 3), (3, 3, 4)]),  # size-1 broadcasting of batch dims
    ("...ij,...jk", [(2, 3), (5, 3, 4)]),
    ("...,...", [(2, 3), (3,)]),
    ("i...,i...", [(2, 3), (2, 1)]),
    ("...i->...", [(2, 3)]),
    ("ij...,jk...", [(2, 3, 5), (3, 4, 1)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),        # NumPy broadcasts size-1 named dims too
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("i,i->i", [(3,), (1,)]),
    ("ii,i->i", [(1, 1), (3,)]),
    (" i j -> j i ", [(2, 3)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUM_CASES)
def test_einsum_shape_dtype(subs, shapes):
    ops_np = [zeros(s) for s in shapes]
    check_like(ls.einsum(subs, *map(arr, ops_np)), np.einsum(subs, *ops_np))


@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("float32", "int32"), ("bool", "bool"),
                                    ("float32", "complex64")])
def test_einsum_dtypes(dtypes):
    a, b = zeros((2, 3), dtypes[0]), zeros((3,), dtypes[1])
    check_like(ls.einsum("ij,j->i", arr(a), arr(b)), np.einsum("ij,j->i", a, b))
    check_like(ls.einsum("ij->", arr(a)), np.einsum("ij->", a))


def test_einsum_accepts_numpy_scipy_and_scalars():
    check_like(ls.einsum(",i", 2, np.zeros(3, "float32")), np.einsum(",i", 2, np.zeros(3, "float32")))
    m = sp.random_array((4, 5), density=0.3, format="csr")
    check_like(ls.einsum("ij,j->i", m, np.zeros(5)), np.zeros(4))


def test_einsum_format_is_validated():
    x = arr(zeros((2, 3)))
    assert ls.einsum("ij->ji", x, format="csr").shape == (3, 2)
    with pytest.raises(ValueError):
        ls.einsum("ij->ji", x, format="nosuchformat")


@pytest.mark.parametrize("subs,shapes,exc", [
    ("ij,jk->ik", [(2, 3), (4, 5)], ValueError),          # extents
    ("ijk", [(2, 3)], ValueError),                         # too many subscripts
    ("i", [(2, 3)], ValueError),                           # too few
    ("ij,jk", [(2, 3)], ValueError),                       # too few operands
    ("ij", [(2, 3), (3,)], ValueError),                    # too many operands
    ("i->j", [(3,)], ValueError),                          # output index not in inputs
    ("i->ii", [(3,)], ValueError),                         # repeated output index
    ("i1", [(3,)], ValueError),
    ("i-", [(3,)], ValueError),
    ("i>", [(3,)], ValueError),
    ("i->->", [(3,)], ValueError),
    ("..i", [(2, 3)], ValueError),
    ("...i...", [(3,)], ValueError),
    ("....i", [(3,)], ValueError),
    ("ii", [(2, 3)], ValueError),                          # diagonal of a non-square
    ("ii->i", [(1, 3)], ValueError),
    ("...i->i", [(2, 3)], ValueError),                     # broadcast dims with no '...' out
    ("...ij,...jk", [(2, 2, 3), (3, 3, 4)], ValueError),   # batch dims 2 vs 3
    ("ïj", [(2, 3)], ValueError),                          # non-ASCII letter
])
def test_einsum_errors(subs, shapes, exc):
    with pytest.raises(exc, match="einsum"):
        ls.einsum(subs, *[arr(zeros(s)) for s in shapes])
    if subs != "ïj":
        with pytest.raises(ValueError):  # NumPy agrees these are errors
            np.einsum(subs, *[zeros(s) for s in shapes])


def test_einsum_error_names_operand_and_shape():
    with pytest.raises(ValueError, match=r"einsum: operand 1 of shape \(2, 3\) has 2 dimension.*'ijk'"):
        ls.einsum("i,ijk", arr(zeros(3)), arr(zeros((2, 3))))


def test_einsum_rejects_interleaved_form_and_no_operands():
    with pytest.raises(TypeError, match="einsum"):
        ls.einsum(arr(zeros(3)), [0])
    with pytest.raises(ValueError, match="einsum"):
        ls.einsum("i")


def test_einsum_parser_maps_letters_to_ints():
    ins, out = parse_einsum("ij,jk", [(2, 3), (3, 4)])
    assert all(isinstance(l, int) for s in ins for l in s) and all(isinstance(l, int) for l in out)
    ins, out = parse_einsum("Ab,bA", [(2, 3), (3, 2)])
    assert out == ()
    ins, out = parse_einsum("...i,...i", [(4, 5, 3), (5, 3)])
    assert len(out) == 2 and ins[1][:1] == ins[0][1:2]  # broadcast dims are right-aligned


def test_einsum_builds_one_contraction_node():
    a, b = arr(zeros((2, 3))), arr(zeros((3, 4)))
    c = ls.einsum("ij,jk->ik", a, b)
    stmt = c._node.stmt
    assert isinstance(stmt, Statement) and len(stmt.reduce_indices) == 1
    assert c._node.children == (a, b)
    # identical expressions are the same statement (interned), over the same children
    d = ls.einsum("ij,jk->ik", a, b)
    assert d._node.stmt is stmt and d._node.children == (a, b)


def test_common_subexpressions_run_once():
    """Within one DAG and across the outputs of one compute(), equal subexpressions share a kernel run."""
    import scipy.sparse as sp
    from lazysparse.compiler.pipeline import kernel_log
    S = sp.random(20, 30, density=0.3, format="csr", random_state=0)
    A, x = ls.asarray(S), ls.asarray(np.arange(30.0))
    want = S.toarray() @ np.arange(30.0)
    from lazysparse.compiler.fused_pipeline import FusedRun

    def statements_run(log):  # (a fused kernel runs its program's statements; another, one)
        return sum(len(r.plan.program.ops) if isinstance(r, FusedRun) else 1 for r in log)
    with kernel_log() as log:
        s, t, u = ls.compute((A @ x) + (A @ x), (A @ x) * 2, A @ x)
    # A @ x once, the sum once, the product once
    assert statements_run(log) == 3
    np.testing.assert_allclose(s.todense(), 2 * want)
    np.testing.assert_allclose(t.todense(), 2 * want)
    np.testing.assert_allclose(u.todense(), want)
    with kernel_log() as log:  # different operands are different subexpressions
        ls.compute(A @ x, A @ ls.asarray(np.ones(30)))
    assert statements_run(log) == 2


# -- matmul, dot, tensordot ----------------------------------------------------------------------
MATMUL_CASES = [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)),
                ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (7, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)),
                ((3,), (5, 3, 4)), ((5, 2, 3), (3,)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa,sb", MATMUL_CASES)
def test_matmul_shape(sa, sb):
    a, b = zeros(sa), zeros(sb)
    check_like(ls.matmul(arr(a), arr(b)), a @ b)
    check_like(arr(a) @ b, a @ b)
    check_like(a @ arr(b), a @ b)


@pytest.mark.parametrize("da,db", [("int32", "int32"), ("bool", "bool"), ("float32", "float64"),
                                   ("int32", "float32"), ("complex64", "float32")])
def test_matmul_dtype(da, db):
    a, b = zeros((2, 3), da), zeros((3, 2), db)
    check_like(arr(a) @ arr(b), a @ b)


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 2, 3), (3, 3, 4)),
                                   ((), (3,)), ((3,), ()), ((2, 1), (3, 4))])
def test_matmul_errors(sa, sb):
    with pytest.raises(ValueError, match="matmul"):
        ls.matmul(arr(zeros(sa)), arr(zeros(sb)))
    with pytest.raises(ValueError):
        np.matmul(zeros(sa), zeros(sb))


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)),
                                   ((), (3,)), ((2, 3), ()), ((2, 3, 4), (5, 4, 6))])
def test_dot_shape(sa, sb):
    a, b = zeros(sa), zeros(sb)
    check_like(ls.api.operations.dot(arr(a), arr(b)), np.dot(a, b))
    if sa:
        check_like(arr(a).dot(arr(b)), np.dot(a, b))


def test_dot_errors_and_scalar_dtype():
    with pytest.raises(ValueError, match="dot"):
        arr(zeros((2, 3))).dot(arr(zeros((4,))))
    check_like(ls.api.operations.dot(2, arr(zeros(3, "int32"))), np.dot(2, zeros(3, "int32")))


@pytest.mark.parametrize("sa,sb,axes", [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1),
                                        ((2, 3), (2, 3), 0), ((2, 3), (3, 2), ([1], [0])),
                                        ((2, 3), (3, 2), (1, 0)), ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
                                        ((2, 3), (3, 2), ([-1], [-2])), ((2, 3), (2, 3), 2)])
def test_tensordot_shape(sa, sb, axes):
    a, b = zeros(sa), zeros(sb)
    check_like(ls.tensordot(arr(a), arr(b), axes), np.tensordot(a, b, axes))


@pytest.mark.parametrize("sa,sb,axes", [((2, 3), (3, 2), 3), ((2, 3), (2, 2), 1),
                                        ((2, 3), (3, 2), ([1, 0], [0])), ((2, 3), (3, 2), -1),
                                        ((2, 3), (3, 2), ([5], [0])), ((2, 3), (3, 2), ([1, 1], [0, 0])),
                                        ((2, 3), (3, 2), "x")])
def test_tensordot_errors(sa, sb, axes):
    with pytest.raises(ValueError, match="tensordot"):
        ls.tensordot(arr(zeros(sa)), arr(zeros(sb)), axes)


# -- elementwise, casts, transposes -----------------------------------------------------------------
DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex128"]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
@pytest.mark.parametrize("da,db", [("int32", "float32"), ("int32", "int64"), ("float32", "float32"),
                                   ("int64", "float64")])
def test_binary_dtype_and_broadcast(name, da, db):
    a, b = zeros((2, 1, 3), da), zeros((4, 1), db)
    with np.errstate(all="ignore"):
        check_like(getattr(ls, name)(arr(a), arr(b)), getattr(np, name)(a, b))
        check_like(getattr(ls, name)(arr(a), 2.5), getattr(np, name)(a, 2.5))  # NEP 50 weak scalars


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "expm1", "sqrt", "abs", "negative", "sin",
                                  "cos", "tanh"])
@pytest.mark.parametrize("dt", ["int32", "float32", "float64", "complex64"])
def test_unary_dtype(name, dt):
    x = zeros((2, 3), dt)
    with np.errstate(all="ignore"):
        check_like(getattr(ls, name)(arr(x)), getattr(np, name)(x))


@pytest.mark.parametrize("dt", ["int32", "float32", "float64"])
def test_sigmoid_relu_dtype(dt):
    x = zeros(3, dt)
    check_like(ls.sigmoid(arr(x)), 1 / (1 + np.exp(-x)))
    check_like(ls.relu(arr(x)), np.maximum(x, np.zeros((), dt)))


def test_binary_broadcast_error():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4,\)"):
        ls.add(arr(zeros((2, 3))), arr(zeros(4)))


def test_where():
    c, x, y = zeros((2, 3), "bool"), zeros((3,), "float32"), zeros((2, 1), "int32")
    check_like(ls.where(arr(c), arr(x), arr(y)), np.where(c, x, y))
    check_like(ls.where(arr(zeros(3)), arr(x), 1.0), np.where(zeros(3), x, 1.0))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES + [np.float32, float, int, "f8", "c16"])
def test_astype(src, dst):
    x = zeros((2, 3), src)
    y = ls.astype(arr(x), dst)
    check_like(y, x.astype(dst))
    assert y._node.stmt.expr.op == "cast"
    check_like(arr(x).astype(dst), x.astype(dst))


@pytest.mark.parametrize("bad", ["float16", "U3", object, "i4,i4", "nonsense", 3.5])
def test_astype_rejects(bad):
    with pytest.raises(TypeError, match="astype"):
        ls.astype(arr(zeros(3)), bad)


@pytest.mark.parametrize("shape,axes", [((2, 3), None), ((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (-1, 0, 1)),
                                        ((3,), None), ((), None)])
def test_transpose(shape, axes):
    x = zeros(shape)
    check_like(ls.transpose(arr(x), axes), np.transpose(x, axes))


@pytest.mark.parametrize("axes", [(0,), (0, 0, 1), (0, 1, 5)])
def test_transpose_errors(axes):
    with pytest.raises(ValueError, match="transpose"):
        ls.transpose(arr(zeros((2, 3, 4))), axes)


# -- reductions -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dt", ["bool", "int32", "float32", "float64"])
def test_reductions(name, axis, keepdims, dt):
    x = zeros((2, 3, 4), dt)
    check_like(getattr(ls, name)(arr(x), axis=axis, keepdims=keepdims),
               getattr(np, name)(x, axis=axis, keepdims=keepdims))
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    method = getattr(arr(x), name)(axis=axis, keepdims=keepdims)
    if np.ndim(expected) == 0:  # a concrete operand's full reduction is a NumPy scalar, as NumPy's
        assert isinstance(method, np.generic) and method.dtype == expected.dtype
        assert method == expected or (np.isnan(method) and np.isnan(expected))
    else:
        check_like(method, expected)


def test_mean_empty_and_dtype():
    check_like(ls.mean(arr(zeros((0, 3))), axis=0), np.zeros(3))
    check_like(ls.mean(arr(zeros(3, "int32")), dtype="float32"), np.mean(zeros(3, "int32"), dtype="float32"))


def test_keepdims_statement():
    y = ls.sum(arr(zeros((2, 3, 4))), axis=1, keepdims=True)
    assert y.shape == (2, 1, 4)
    stmt = y._node.stmt
    assert len(stmt.out_indices) == 3 and stmt.reduce_indices == ()


@pytest.mark.parametrize("name", ["sum", "max", "mean"])
@pytest.mark.parametrize("axis", [3, -4, (0, 0)])
def test_reduction_axis_errors(name, axis):
    with pytest.raises(ValueError, match=name):
        getattr(ls, name)(arr(zeros((2, 3, 4))), axis=axis)


def test_max_of_empty_axis_raises():
    with pytest.raises(ValueError, match="max"):
        ls.max(arr(zeros((0, 3))), axis=0)


# -- ls.expr --------------------------------------------------------------------------------------
def test_expr_sddmm_structure():
    B, C, D = arr(zeros((4, 5))), arr(zeros((4, 3))), arr(zeros((3, 5)))
    A = ls.expr("A[i,j] = B[i,j] * C[i,k] * D[k,j]", B=B, C=C, D=D)
    check_like(A, zeros((4, 5)))
    node = A._node
    assert node.children == (B, C, D)
    stmt = node.stmt
    assert stmt.reduce == "sum" and len(stmt.reduce_indices) == 1
    assert isinstance(stmt.expr, Call) and stmt.expr.op == "multiply"
    # user identifiers never reach the IR
    assert "k" not in repr(stmt).replace("sum", "") and "B" not in repr(stmt)


EXPR_CASES = [
    ("y[i] = A[i,j] * x[j]", {"A": (2, 3), "x": (3,)}, lambda A, x: A @ x),
    ("s = x[i]", {"x": (3,)}, lambda x: np.einsum("i->", x)),  # sums keep the dtype, as in einsum
    ("s[] = x[i] * x[i]", {"x": (3,)}, lambda x: x @ x),
    ("B[j,i] = A[i,j]", {"A": (2, 3)}, lambda A: A.T),
    ("C[i] = -(A[i] + 2) / 3", {"A": (3,)}, lambda A: -(A + 2) / 3),
    ("C[i] = exp(A[i]) + sqrt(abs(A[i]))", {"A": (3,)}, lambda A: np.exp(A) + np.sqrt(np.abs(A))),
    ("C[i] = max(A[i], 0) + min(A[i], B[i])", {"A": (3,), "B": (3,)},
     lambda A, B: np.maximum(A, 0) + np.minimum(A, B)),
    ("C[j] = A[0, j] * 2.5e0", {"A": (2, 3)}, lambda A: A[0] * 2.5),
    ("C[i,j] = A[i] * B[j]", {"A": (2,), "B": (3,)}, lambda A, B: np.outer(A, B)),
    ("C = s * 2", {"s": ()}, lambda s: s * 2),
    ("C[i] = sigmoid(A[i]) - relu(A[i]) + tanh(A[i])", {"A": (3,)},
     lambda A: 1 / (1 + np.exp(-A)) - np.maximum(A, 0) + np.tanh(A)),
]


@pytest.mark.parametrize("notation,shapes,expected", EXPR_CASES)
@pytest.mark.parametrize("dt", ["float32", "int32", "float64"])
def test_expr_shape_dtype(notation, shapes, expected, dt):
    ops_np = {k: zeros(s, dt) for k, s in shapes.items()}
    with np.errstate(all="ignore"):
        check_like(ls.expr(notation, **{k: arr(v) for k, v in ops_np.items()}), expected(**ops_np))


@pytest.mark.parametrize("reduce", ["sum", "max", "min", "prod"])
def test_expr_reduce(reduce):
    y = ls.expr("y[i] = A[i,j]", reduce=reduce, A=arr(zeros((2, 3))))
    assert y.shape == (2,) and y._node.stmt.reduce == reduce


def test_expr_literal_is_operand_and_format():
    x = arr(zeros(3, "float32"))
    y = ls.expr("y[i] = 2 * x[i]", x=x, format="dense")
    assert y.dtype == np.float32 and y._node.children[0] is x
    lit = y._node.children[1]  # a literal is a 0-d float32 operand, NumPy's weak-scalar cast
    assert lit.shape == () and lit.dtype == np.float32
    assert y._node.stmt.expr.args[0] == Access(1, ())
    c = ls.expr("c = 3")
    assert c.shape == () and c.dtype == np.int64
    with pytest.raises(ValueError, match="does not fit"):
        ls.expr("y[i] = x[i] * 99999999999999999999999", x=arr(zeros(3, "int32")))


def test_expr_constant_subscript_is_const():
    y = ls.expr("y[j] = A[1, j]", A=arr(zeros((2, 3))))
    assert y._node.stmt.expr.indices[0] == Const(1)


@pytest.mark.parametrize("notation,operands,exc,match", [
    ("A[i,j] = B[i,k] * C[k,j]", {"B": (2, 3), "C": (4, 5)}, ValueError, "extent"),
    ("A[i] = B[i,j]", {"B": (2,)}, ValueError, "shape"),
    ("A[i] = X[i]", {"B": (2,)}, ValueError, "unknown operand"),
    ("A[i] = B[i]", {"B": (2,), "C": (2,)}, ValueError, "not used"),
    ("A[i,i] = B[i]", {"B": (2,)}, ValueError, "repeats"),
    ("A[j] = B[i]", {"B": (2,)}, ValueError, "does not appear"),
    ("A[i] = B[i] * foo(B[i])", {"B": (2,)}, ValueError, "unknown function"),
    ("A[i] = exp(B[i], B[i])", {"B": (2,)}, ValueError, "argument"),
    ("A[j] = B[2, j]", {"B": (2, 3)}, ValueError, "out of range"),
    ("A[j] = B[-1, j]", {"B": (2, 3)}, ValueError, "out of range"),
    ("A[i] = B", {"B": (2,)}, ValueError, "shape"),
    ("A[h,w] = I[h-r, w+q] * F[r,q]", {"I": (5, 5), "F": (2, 2)}, ValueError, "subtracts index 'r'"),
    ("A[h] = I[2*h+r] * F[r] * G[h]", {"I": (5,), "F": (2,), "G": (3,)}, ValueError, "past its axis"),
    ("A[i,j] = J[i, j*i]", {"J": (5, 5)}, ValueError, "product of two indices"),
    ("A[i] = B[i]; import os", {"B": (2,)}, ValueError, "';'"),
    ("A[i] = B[i] + '1'", {"B": (2,)}, ValueError, "\"'\""),
    ("A[i] = B[i] {", {"B": (2,)}, ValueError, "'{'"),
    ("A[i] = B[i] \\ 2", {"B": (2,)}, ValueError, "position"),
    ("A[i] = B[i] +", {"B": (2,)}, ValueError, "end of input"),
    ("A[i] = (B[i]", {"B": (2,)}, ValueError, "expected"),
    ("A[i] = B[i] B[i]", {"B": (2,)}, ValueError, "expected"),
    ("A[i] B[i]", {"B": (2,)}, ValueError, "expected '='"),
    ("A[0] = B[i]", {"B": (2,)}, ValueError, "index name"),
    ("A[i] = 1x * B[i]", {"B": (2,)}, ValueError, "malformed number"),
    ("A[i] = " + "(" * 500 + "B[i]" + ")" * 500, {"B": (2,)}, ValueError, "deep"),
    ("A[i] = " + "+".join(["B[i]"] * 500), {"B": (2,)}, ValueError, "deep"),
    ("A[i] = B[i] ∗ 2", {"B": (2,)}, ValueError, "character"),
    ("A[i] = B[i]", {"B": (2, 3)}, ValueError, "subscript"),
])
def test_expr_errors(notation, operands, exc, match):
    with pytest.raises(exc, match=match) as info:
        ls.expr(notation, **{k: arr(zeros(s)) for k, s in operands.items()})
    assert str(info.value).startswith("expr")


def test_expr_bad_reduce_and_types():
    with pytest.raises(ValueError, match="reduce"):
        ls.expr("y = x[i]", reduce="mean", x=arr(zeros(3)))
    with pytest.raises(TypeError, match="expr"):
        ls.expr(b"y = x[i]", x=arr(zeros(3)))
    with pytest.raises(TypeError, match="expr"):
        ls.expr("y = x[i]", reduce="max", x=arr(zeros(3, "complex128")))


def test_expr_parser_ast():
    p = parse_notation("A[i,j] = B[i,k] * C[k,j] + 1.5")
    assert p.out_name == "A" and p.out_indices == ("i", "j")


# -- NumPy protocols ------------------------------------------------------------------------------
def test_array_function_dispatch_is_lazy():
    A, B = arr(zeros((2, 3))), arr(zeros((3, 4)))
    check_like(np.einsum("ij,jk->ik", A, B), zeros((2, 4)))
    check_like(np.einsum("ij,jk->ik", A, B, optimize=True), zeros((2, 4)))
    check_like(np.dot(A, B), zeros((2, 4)))
    check_like(np.tensordot(A, B, axes=1), zeros((2, 4)))
    check_like(np.tensordot(A, B, 1), zeros((2, 4)))
    check_like(np.transpose(A), zeros((3, 2)))
    check_like(np.transpose(A, (1, 0)), zeros((3, 2)))
    check_like(np.where(A > 0, A, 1.0), zeros((2, 3)))
    for f in (np.sum, np.prod, np.max, np.amax, np.min, np.amin, np.mean):
        check_like(f(A), f(zeros((2, 3))))
        check_like(f(A, axis=1, keepdims=True), f(zeros((2, 3)), axis=1, keepdims=True))
        check_like(f(A, 0), f(zeros((2, 3)), 0))
    check_like(np.sum(arr(zeros(3, "int32")), dtype="float32"), np.zeros((), "float32"))


def test_array_ufunc_dispatch_is_lazy():
    A, B = arr(zeros((2, 3), "float32")), arr(zeros((2, 3)))
    a, b = zeros((2, 3), "float32"), zeros((2, 3))
    check_like(np.add(A, B), a + b)
    check_like(np.exp(A), np.exp(a))
    check_like(np.float64(2.0) * A, np.float64(2.0) * a)
    check_like(np.ones(3) + A, np.ones(3) + a)
    check_like(np.less(A, B), a < b)
    check_like(np.logical_and(A > 0, B > 0), np.logical_and(a > 0, b > 0))
    check_like(np.abs(A), np.abs(a))
    check_like(np.true_divide(A, 2), a / 2)
    check_like(np.matmul(A, arr(zeros((3, 4)))), a @ zeros((3, 4)))
    check_like(np.maximum(A, 0.5), np.maximum(a, 0.5))


@pytest.mark.parametrize("call", [
    lambda A: np.linalg.svd(A),
    lambda A: np.cumsum(A),
    lambda A: np.sort(A),
    lambda A: np.add(A, A, out=A),      # (a lazysparse out: arrays are changed by assignment)
    lambda A: np.add.reduce(A),
    lambda A: np.sum(A, out=np.empty(())),
    lambda A: np.sum(A, where=np.ones((2, 2), bool)),
    lambda A: np.einsum("ij->ji", A, out=np.empty((2, 2))),
    lambda A: np.frexp(A),              # (two outputs; arctan2 & co. are lazy: test_ufuncs_more)
    lambda A: np.where(A, A),           # two arguments: NumPy has no such form either
    lambda A: np.concatenate([A, A], axis=None),
    lambda A: np.any(A, out=np.empty(())),
])
def test_unimplemented_numpy_raises_typeerror(call):
    with pytest.raises(TypeError):
        call(arr(zeros((2, 2))))


def test_array_function_rejects_foreign_types():
    class Foreign:
        def __array_function__(self, func, types, args, kwargs):
            return NotImplemented
    assert ls.api.protocols.array_function(np.sum, (ls.Array, Foreign), (arr(zeros(2)),), {}) is NotImplemented


# -- fuzzing the parsers --------------------------------------------------------------------------
_ALLOWED = (ValueError, TypeError, NotImplementedError)
_EINSUM_CHARS = st.text(alphabet=st.sampled_from(list("ijkIJ.,->  1ï;")), max_size=20) | st.text(max_size=20)
_EXPR_TOKENS = list("ABxyij01.e=[](),+-*/ _;'\"{}\\") + ["exp", "max", "B[i,j]", "x[j]", "y[i] = "]
_EXPR_CHARS = st.lists(st.sampled_from(_EXPR_TOKENS), max_size=25).map("".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(_EINSUM_CHARS)
def test_fuzz_einsum(subs):
    A, x = arr(zeros((2, 2))), arr(zeros(2))
    try:
        out = ls.einsum(subs, A, x)
    except _ALLOWED:
        return
    assert out.is_lazy


@settings(max_examples=400, deadline=None)
@given(_EXPR_CHARS)
def test_fuzz_expr(notation):
    B, x = arr(zeros((2, 2))), arr(zeros(2))
    try:
        out = ls.expr(notation, B=B, x=x)
    except _ALLOWED:
        return
    assert out.is_lazy


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fuzz_notation_parser(text):
    try:
        parse_notation(text)
    except _ALLOWED:
        pass


# -- values (these run the compiler) ------------------------------------------------------------
class TestValues:
    rng = np.random.default_rng(0)

    def rand(self, *shape):
        return self.rng.standard_normal(shape)

    @pytest.mark.parametrize("subs,shapes", EINSUM_CASES)
    def test_einsum_values(self, subs, shapes):
        ops_np = [self.rand(*s) for s in shapes]
        np.testing.assert_allclose(ls.einsum(subs, *map(arr, ops_np)).todense(), np.einsum(subs, *ops_np),
                                   rtol=1e-12, atol=1e-12)

    def test_einsum_sparse_operand(self):
        m = sp.random_array((6, 5), density=0.3, format="csr", rng=1)
        x = self.rand(5, 3)
        np.testing.assert_allclose(ls.einsum("ij,jk->ik", ls.asarray(m), x).todense(), m @ x, rtol=1e-12)

    @pytest.mark.parametrize("sa,sb", MATMUL_CASES)
    def test_matmul_values(self, sa, sb):
        a, b = self.rand(*sa), self.rand(*sb)
        np.testing.assert_allclose((arr(a) @ arr(b)).todense(), a @ b, rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("sa,sb,axes", [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (2, 3), 0),
                                            ((2, 3, 4), (4, 3), ([1, 2], [1, 0]))])
    def test_tensordot_values(self, sa, sb, axes):
        a, b = self.rand(*sa), self.rand(*sb)
        np.testing.assert_allclose(ls.tensordot(arr(a), arr(b), axes).todense(), np.tensordot(a, b, axes),
                                   rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("notation,shapes,expected", EXPR_CASES)
    def test_expr_cases_values(self, notation, shapes, expected):
        ops_np = {k: self.rand(*s) for k, s in shapes.items()}
        got = ls.expr(notation, **{k: arr(v) for k, v in ops_np.items()}).todense()
        np.testing.assert_allclose(got, expected(**ops_np), rtol=1e-12, atol=1e-12)

    def test_expr_values(self):
        B, C, D = self.rand(4, 5), self.rand(4, 3), self.rand(3, 5)
        A = ls.expr("A[i,j] = B[i,j] * C[i,k] * D[k,j]", B=arr(B), C=arr(C), D=arr(D))
        np.testing.assert_allclose(A.todense(), B * (C @ D), rtol=1e-12)
        y = ls.expr("y[j] = A[1, j] * 2", A=arr(B))
        np.testing.assert_allclose(y.todense(), B[1] * 2)

    def test_keepdims_and_mean_values(self):
        x = self.rand(2, 3, 4)
        np.testing.assert_allclose(ls.sum(arr(x), axis=1, keepdims=True).todense(), x.sum(1, keepdims=True))
        np.testing.assert_allclose(ls.mean(arr(x), axis=(0, 2)).todense(), x.mean((0, 2)))


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr", "dcsc", "vec", "csf3", "coo3"])
def test_expr_all_constant_subscripts_read_the_element(fmt):
    """``y = X[2, 3]``: a kernel with no loops resolves its constant levels (it read the first
    stored value of a sparse operand whatever the subscripts)."""
    rng = np.random.default_rng(0)
    shape = {"vec": (6,), "csf3": (3, 4, 2), "coo3": (3, 4, 2)}.get(fmt, (4, 5))
    X = rng.random(shape) * (rng.random(shape) < 0.5)
    X[1] = 0  # an empty row
    f = {"vec": ls.Format(["compressed"]), "csf3": "csf", "coo3": "coo"}.get(fmt, fmt)
    lX = ls.asarray(X, format=f)
    for idx in np.ndindex(*shape):
        got = float(ls.expr(f"y = X[{','.join(map(str, idx))}]", X=lX).materialize())
        assert got == X[idx], (idx, got, X[idx])


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_numpys_array_queries_and_diag(fmt):
    """np.ndim, np.shape, np.size, np.copy, np.result_type, np.iscomplexobj/isrealobj and
    np.diag on lazysparse arrays give NumPy's answers (diag of a vector: a sparse matrix)."""
    from tests.oracle import build
    rng = np.random.default_rng(4)
    D = rng.random((4, 5)) * (rng.random((4, 5)) < 0.5)
    A = build(D, fmt)
    assert (np.ndim(A), np.shape(A), np.size(A), np.size(A, 1)) == (2, (4, 5), 20, 5)
    assert np.result_type(A, np.float32) == np.result_type(D, np.float32)
    assert np.result_type(A.astype(np.float32), np.int8) == np.float32
    assert not np.iscomplexobj(A) and np.isrealobj(A) and np.iscomplexobj(A * 1j)
    c = np.copy(A)
    assert c is not A and not c.is_lazy
    np.testing.assert_array_equal(c.todense(), D)
    for k in (0, 1, -2):
        np.testing.assert_allclose(np.diag(A, k).todense(), np.diag(D, k))
        v = A.sum(axis=1)
        got = np.diag(v, k)
        assert not got.format.is_dense
        np.testing.assert_allclose(got.todense(), np.diag(D.sum(axis=1), k))
    np.testing.assert_allclose(ls.diags(A.sum(axis=1)).todense(), np.diag(D.sum(axis=1)))
    with pytest.raises(ValueError, match="np.diag: input must be 1-d or 2-d"):
        np.diag(ls.asarray(np.ones((2, 2, 2))))


def test_array_class_call_round_and_numpys_tril_triu():
    """``type(A)(A, copy=True)`` is ``ls.asarray`` (scipy's copy idiom), ``round(A, n)`` is
    NumPy's round, and ``np.tril``/``np.triu`` take lazysparse arrays."""
    import copy
    import pickle
    D = np.array([[1.26, 0.0, -2.51], [0.0, 3.49, 0.0], [4.5, 0.0, 5.55]])
    A = ls.asarray(sp.csr_array(D))
    B = type(A)(A, copy=True)
    assert isinstance(B, ls.Array) and B.format == A.format
    assert not np.shares_memory(B.storage.vals, A.storage.vals)
    np.testing.assert_array_equal(B.todense(), D)
    assert type(A)(D, dtype=np.float32).dtype == np.float32
    for n in (0, 1):
        np.testing.assert_allclose(round(A, n).todense(), np.round(D, n))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(np.tril(A, k).todense(), np.tril(D, k))
        np.testing.assert_array_equal(np.triu(A, k).todense(), np.triu(D, k))
    for back in (pickle.loads(pickle.dumps(A)), copy.copy(A), copy.deepcopy(A)):
        np.testing.assert_array_equal(back.todense(), D)
