"""Level kinds as classes: each kind's arrays, size, iterate, locate and append walks, run on
small storages through ``NumPyBuilder`` against scipy's and NumPy's own indexing; the lowering's
builders (loop IR and C text) giving the same C; and the ``Level`` values formats are made of
keeping their public behaviour (parsing, reprs, errors, equality and hashing)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.formats import KINDS, COMPRESSED, DENSE, SINGLETON, Compressed, Dense, Level, LevelKind, Singleton
from lazysparse.formats.level_kinds import NumPyBuilder


def _matrix(seed=0, shape=(6, 5), density=0.4):
    return sp.random(*shape, density=density, format="csr", random_state=seed, dtype=np.float64)


def _storage(m, fmt=None):
    x = ls.asarray(m)
    return (x if fmt is None else x.asformat(fmt)).storage


# -- the classes ----------------------------------------------------------------------------------

def test_registry_and_capabilities():
    assert list(KINDS) == ["dense", "compressed", "singleton"]
    assert all(isinstance(k, LevelKind) for k in KINDS.values())
    d, c, s = KINDS["dense"], KINDS["compressed"], KINDS["singleton"]
    assert (type(d), type(c), type(s)) == (Dense, Compressed, Singleton)
    assert (d.arrays, c.arrays, s.arrays) == ((), ("pos", "crd"), ("crd",))
    assert d.full and not c.full and not s.full
    assert s.follows_parent and not c.follows_parent and not d.follows_parent
    assert not d.may_be_unordered and not d.may_be_nonunique and c.may_be_nonunique and s.may_be_unordered
    assert not s.may_be_outermost and c.may_be_outermost
    assert DENSE.level_kind is d and COMPRESSED.level_kind is c and SINGLETON.level_kind is s


def test_level_properties_follow_the_kind():
    for lv in (DENSE, COMPRESSED, SINGLETON, Level("compressed", unique=False)):
        k = lv.level_kind
        assert lv.is_dense == k.full and lv.is_sparse == (not k.full)
        assert lv.has_pos == ("pos" in k.arrays) and lv.has_crd == ("crd" in k.arrays)
        assert lv.follows_parent == k.follows_parent
    assert COMPRESSED.unique_segments
    assert not Level("compressed", unique=False).unique_segments
    assert not DENSE.unique_segments and not SINGLETON.unique_segments


# -- the walks against scipy ----------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_csr_walks(seed):
    m = _matrix(seed)
    st = _storage(m)
    assert st.format == ls.csr
    rows, cols = NumPyBuilder.of(st, 0), NumPyBuilder.of(st, 1)
    d, c = st.format.levels[0].level_kind, st.format.levels[1].level_kind
    assert d.size(rows, 1) == m.shape[0]
    assert c.size(cols, m.shape[0]) == m.nnz
    for i in range(m.shape[0]):
        p = d.locate(rows, 0, i)
        assert p == i
        lo, hi = c.iterate(cols, p)
        assert (lo, hi) == (m.indptr[i], m.indptr[i + 1])
        assert [c.coordinate(cols, q, lo) for q in range(lo, hi)] == m.indices[lo:hi].tolist()
        assert c.locate(cols, p, 0) is None  # a compressed level is searched, not located
    # a dense level walked as positions: its range, and coordinates back from positions
    lo, hi = d.iterate(rows, 0)
    assert (lo, hi) == (0, m.shape[0])
    assert [d.coordinate(rows, q, lo) for q in range(lo, hi)] == list(range(m.shape[0]))


def test_dense_levels_locate_like_ravel():
    a = np.arange(24.0).reshape(4, 6)
    st = _storage(a)
    b0, b1 = NumPyBuilder.of(st, 0), NumPyBuilder.of(st, 1)
    d0, d1 = (lv.level_kind for lv in st.format.levels)
    assert d1.size(b1, d0.size(b0, 1)) == a.size
    for i in range(4):
        for j in range(6):
            assert d1.locate(b1, d0.locate(b0, 0, i), j) == np.ravel_multi_index((i, j), a.shape)


def test_coo_walks():
    m = _matrix(3, shape=(7, 5), density=0.5).tocoo()
    st = _storage(m)
    assert st.format == ls.coo
    top, inner = NumPyBuilder.of(st, 0), NumPyBuilder.of(st, 1)
    c, s = (lv.level_kind for lv in st.format.levels)
    assert c.size(top, 1) == m.nnz
    assert s.size(inner, m.nnz) is None  # a singleton's positions are its parent's
    lo, hi = c.iterate(top, 0)
    rows = [c.coordinate(top, p, lo) for p in range(lo, hi)]
    cols = [s.coordinate(inner, p, p) for p in range(lo, hi)]
    order = np.lexsort((m.col, m.row))
    assert rows == m.row[order].tolist() and cols == m.col[order].tolist()
    for p in range(lo, hi):
        assert s.iterate(inner, p) == (p, p + 1)
    # under a run of equal row coordinates [p, g), a singleton walks the whole run
    assert s.iterate(inner, 2, 5) == (2, 5)


def test_dcsr_walks():
    m = _matrix(4, shape=(8, 6), density=0.15)
    st = _storage(m, "dcsr")
    b0, b1 = NumPyBuilder.of(st, 0), NumPyBuilder.of(st, 1)
    c0, c1 = (lv.level_kind for lv in st.format.levels)
    got = {}
    lo, hi = c0.iterate(b0, 0)
    for p in range(lo, hi):
        i = c0.coordinate(b0, p, lo)
        a, z = c1.iterate(b1, p)
        got[i] = [c1.coordinate(b1, q, a) for q in range(a, z)]
    want = {i: m.indices[m.indptr[i]:m.indptr[i + 1]].tolist() for i in range(m.shape[0])
            if m.indptr[i + 1] > m.indptr[i]}
    assert got == want
    assert c1.size(b1, c0.size(b0, 1)) == m.nnz


@pytest.mark.parametrize("seed", [0, 5])
def test_append_assembles_csr(seed):
    m = _matrix(seed, shape=(6, 7), density=0.3)
    coo = m.tocoo()
    n, ncol = m.shape
    rows = NumPyBuilder(extent=n)
    cols = NumPyBuilder(np.zeros(n + 1, dtype=np.int64), np.zeros(m.nnz, dtype=np.int64), ncol)
    d, c = DENSE.level_kind, COMPRESSED.level_kind
    end = 0
    for i, j in sorted(zip(coo.row.tolist(), coo.col.tolist())):
        stores, parent = d.append(rows, 0, i, None)
        assert stores == () and parent == i
        stores, p = c.append(cols, parent, j, end)
        assert p == end and len(stores) == 2
        end += 1
    pos = np.maximum.accumulate(cols.pos)  # parents with no children take the end before them
    assert pos.tolist() == m.indptr.tolist()
    assert cols.crd.tolist() == m.indices.tolist()


def test_append_singleton_writes_at_the_parent():
    crd = np.full(4, -1)
    b = NumPyBuilder(None, crd, 9)
    s = SINGLETON.level_kind
    for parent, coord in [(0, 3), (2, 8), (1, 0), (3, 3)]:
        stores, p = s.append(b, parent, coord, None)
        assert p == parent and stores == ((parent, coord),)
    assert crd.tolist() == [3, 0, 8, 3]


# -- the lowering's builders ----------------------------------------------------------------------

# The C the built-in kinds' walks print to over operand 3's level 1: size of segment ``n``,
# the positions ``p``'s segment spans, the position of coordinate ``i`` under position ``p``.
PRINTED = {
    "dense": ("(n) * n3_1", ("(p) * n3_1", "(p) * n3_1 + n3_1"), "(p) * n3_1 + i"),
    "compressed": ("(int64_t)p3_1[n]", ("(int64_t)p3_1[p]", "(int64_t)p3_1[(p) + 1]"), None),
    "singleton": (None, ("(int64_t)(p)", "(int64_t)(p) + 1"), None),
}


def test_lowering_builder_prints_the_walks():
    """The loop IR the lowering's builder makes of each built-in kind's walks prints as the C the
    kernels use."""
    from lazysparse.compiler.codegen.c.exprs import expr
    from lazysparse.compiler.loopir import expr as E
    from lazysparse.compiler.lower.level_builder import LevelIR

    def printed(e):
        return None if e is None else expr(e)
    for name, (size, segment, locate) in PRINTED.items():
        kind, ir = KINDS[name], LevelIR(3, 1)
        assert printed(kind.size(ir, E.Var("n"))) == size, name
        assert tuple(expr(b) for b in kind.iterate(ir, E.Var("p"))) == segment, name
        assert printed(kind.locate(ir, E.Var("p"), E.Var("i"))) == locate, name
    assert expr(KINDS["compressed"].size(LevelIR(0, 1), E.Var("m"))) == "(int64_t)p0_1[m]"
    assert expr(KINDS["dense"].locate(LevelIR(2, 0), E.Var("q"), E.Var("i"))) == "(q) * n2_0 + i"


# -- Level's public behaviour ---------------------------------------------------------------------

def test_level_values_and_messages():
    assert Level.parse("compressed") == COMPRESSED
    assert Level.parse(("compressed", {"unique": False})) == Level("compressed", unique=False)
    assert repr(Level("compressed", ordered=False, unique=False)) == "compressed(unordered,nonunique)"
    assert repr(SINGLETON) == "singleton"
    with pytest.raises(ValueError, match=r"unknown level kind 'bitmap'; expected one of "
                                         r"\('dense', 'compressed', 'singleton'\)"):
        Level("bitmap")
    with pytest.raises(ValueError, match="unknown level kind"):
        Level(["dense"])
    with pytest.raises(ValueError, match="a dense level is always ordered and unique"):
        Level("dense", unique=False)
    with pytest.raises(ValueError, match="a singleton level cannot be outermost"):
        ls.Format(["singleton", "compressed"])
    with pytest.raises(ValueError, match="singleton level 1 must follow a non-unique"):
        ls.Format(["dense", "singleton"])
    with pytest.raises(TypeError, match="ordered must be True or False"):
        Level("compressed", ordered="yes")


def test_formats_as_keys():
    f = ls.Format(["dense", "compressed"])
    g = ls.Format([Level("dense"), Level("compressed", ordered=True, unique=True)])
    assert f == g == ls.csr and hash(f) == hash(g)
    assert {f: 1}[g] == 1
    assert pickle.loads(pickle.dumps(f)) == f
    assert f.key() == "dense,compressed|0,1"
    assert ls.Format(["compressed", "compressed"], order=(1, 0)).name == "dcsc"
    coo = ls.Format([("compressed", {"unique": False}), "singleton"])
    assert coo == ls.coo and repr(coo) == "ls.coo"
