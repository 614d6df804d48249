"""User strings are no injection point; the parsers only raise ValueError/TypeError.

* Nothing the user types reaches the generated C: einsum letters become integer labels and ``expr``
  identifiers become operand slots and generated index names (``i0, i1, ...``). Checked on the IR of
  every expression the fuzzers get accepted (every index name generated, every op known, every dtype
  a value dtype, every format key made of level kinds), by renaming: the same expression with other
  identifiers is the *same* interned statement, so the same kernel, and on compiled C source.
* einsum subscripts are fuzzed against NumPy as the oracle: NumPy raises exactly when we raise
  (ValueError/TypeError), and otherwise both give the same shape and dtype.
* ``expr`` statements come from a grammar with adversarial identifiers (C keywords, the generated
  code's own names) and random corruption; raw text goes through every parser. Only ValueError and
  TypeError may come out (an affine subscript lazysparse cannot read is a ValueError naming it);
  pathological inputs (deep nesting, 100k-character strings) finish quickly.
"""
from __future__ import annotations

import os
import random
import re
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.storage import VALUE_DTYPES
from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call, Const, Index, Statement
from lazysparse.ir.notation import parse_notation

SCALE = float(os.environ.get("LAZYSPARSE_HYPOTHESIS_SCALE", "1"))
ALLOWED = (ValueError, TypeError)
VALUE_NAMES = {str(d) for d in VALUE_DTYPES}


def examples(n, **kw):
    return settings(max_examples=max(1, int(n * SCALE)), **kw)


def allowed(e):
    """ValueError/TypeError only."""
    return isinstance(e, ALLOWED)


@pytest.mark.parametrize("text, want", [
    ("y[i] = x[i+1]", [1.0, 2.0]), ("y[i] = x[2*i]", [0.0, 2.0]), ("y = x[1+1]", 2.0),
    ("y[i] = x[-i]", "subtracts index 'i'"), ("y[k] = x[i+1]", "does not appear"),
    ("y[i] = x[i+" + "+".join(["1"] * 5000) + "]", []),  # a window wider than x: none
    ("y[i] = x[i*99999999999999999999]", [0.0]), ("y[i] = x[i*99999999999999999999+1]", [1.0]),
    ("y[i] = x[i+99999999999999999999] * x[i]", "past its axis"),
    ("y[i] = x[i+j+99999999999999999999] * x[j]", []),
])
@pytest.mark.parametrize("sparse", [False, True])
def test_affine_subscripts_read_or_raise_a_value_error(text, want, sparse):
    x = np.arange(3.0)
    x = ls.asarray(x, format=ls.Format(["compressed"])) if sparse else x
    if isinstance(want, str):
        with pytest.raises(ValueError, match=re.escape(want)):
            ls.expr(text, x=x)
    else:
        np.testing.assert_array_equal(np.asarray(ls.expr(text, x=x).materialize().todense()), want)


# -- the IR of an accepted expression carries no user text -----------------------------------------
_GENERATED_INDEX = re.compile(r"i\d+")
_FORMAT_KEY = re.compile(r"[a-z(),|0-9]*")


def assert_clean_ir(arr):
    """Every node below ``arr``: generated index names, known ops, value dtypes, level-kind formats."""
    stack, seen = [arr], set()
    while stack:
        a = stack.pop()
        node = a._node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stmt = node.stmt
        assert type(stmt) is Statement and stmt.reduce in ops.REDUCTIONS and stmt.dtype in VALUE_NAMES
        for ix in stmt.out_indices:
            assert type(ix) is Index and _GENERATED_INDEX.fullmatch(ix.name), ix
        exprs = [stmt.expr]
        while exprs:
            e = exprs.pop()
            if type(e) is Access:
                assert type(e.operand) is int and 0 <= e.operand < len(node.children)
                for ix in e.indices:
                    assert (type(ix) is Index and _GENERATED_INDEX.fullmatch(ix.name)) or \
                           (type(ix) is Const and type(ix.value) is int), ix
            else:
                assert type(e) is Call and e.op in ops.OPS, e
                assert all(d in VALUE_NAMES for d in (*e.in_dtypes, e.dtype)), e
                exprs.extend(e.args)
        if node.format is not None:
            assert _FORMAT_KEY.fullmatch(node.format.key()), node.format.key()
        stack.extend(node.children)


# -- einsum against NumPy --------------------------------------------------------------------------
EINSUM_TOKENS = ["i", "j", "k", "a", "I", "Z", ",", ",", "->", "...", ".", " ", "ii", "-", ">",
                 ";", "*/", "\n", "1", "é", "{", "\\", "%d", "\x00"]
SHAPE = st.lists(st.sampled_from([1, 2, 2, 3]), max_size=3).map(tuple)


@examples(2500)
@given(subs=st.lists(st.sampled_from(EINSUM_TOKENS), max_size=10).map("".join),
       shapes=st.lists(SHAPE, min_size=1, max_size=3))
def test_fuzz_einsum_agrees_with_numpy(subs, shapes):
    compare_einsum(subs, shapes)


# found by the fuzzer above, kept as fixed cases: the grammar's corners, whitespace included
@pytest.mark.parametrize("subs,shapes", [
    ("i- >i", [(2,)]), ("i - > i", [(2,)]), (" i -> i ", [(2,)]), ("i\n->i", [(2,)]), ("i->\ti", [(2,)]),
    ("i j", [(2, 2)]), ("i->i->i", [(2,)]), ("i>", [(2,)]), ("i-", [(2,)]), ("\x00", [()]),
    ("...i->...", [(2, 2)]), (". ..i", [(2, 2)]), ("i...i", [(2, 3, 2)]), ("ii->i", [(2, 3)]),
])
def test_einsum_corner_cases_agree_with_numpy(subs, shapes):
    compare_einsum(subs, shapes)


def compare_einsum(subs, shapes):
    """NumPy raises exactly when lazysparse does; otherwise the same shape and dtype."""
    ops_ = [np.zeros(s) for s in shapes]
    try:
        if "\x00" in subs:
            raise ValueError  # NumPy's C parser stops at a NUL and ignores the rest; we refuse it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.einsum(subs, *ops_)
    except Exception:  # NumPy's verdict: these subscripts do not fit these operands
        want = None
    try:
        got = ls.einsum(subs, *ops_)
    except Exception as e:
        assert isinstance(e, ALLOWED), f"{type(e).__name__}: {e}"
        assert str(e).startswith("einsum"), str(e)
        assert want is None, f"NumPy accepts {subs!r} for {shapes}, lazysparse says: {e}"
        return
    assert want is not None, f"NumPy rejects {subs!r} for {shapes}, lazysparse accepted it"
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    assert_clean_ir(got)


def test_einsum_relabelling_gives_the_same_statement():
    A, B = ls.asarray(np.ones((2, 3))), ls.asarray(np.ones((3, 4)))
    s1 = ls.einsum("ij,jk->ik", A, B)._node.stmt
    for subs in ("ab,bc->ac", "XY,YZ->XZ", " p q , q r -> p r", "zy,yx->zx"):
        assert ls.einsum(subs, A, B)._node.stmt is s1, subs


# -- expr: a grammar with adversarial names, then corruption ------------------------------------------
NAMES = ["A", "B", "x", "y", "i", "j", "k", "T0", "T1", "i0", "i1", "p", "d", "ls_kernel", "main", "return",
         "int", "system", "__asm__", "_", "_x", "NULL", "void", "out", "exp", "max", "sum", "while", "pos",
         "crd", "vals", "zz_inject", "n" * 40]
FUNCS = ["exp", "log", "sqrt", "abs", "max", "min", "sigmoid", "relu", "tanh", "foo", "system", "printf"]
NUMBERS = ["2", "0.5", "1e3", "0", "3.", ".5", "1e400", "99999999999999999999", "7"]
JUNK = list(";{}\"'\\#%$@!?<>&|^~`\x00\n\t") + ["*/", "/*", "é", "∗", "0x1f", "1j", "..."]


def gen_statement(r: random.Random):
    """Tokens of a random statement: ``(kind, text)`` with kind op/idx/out (renamable) or lit."""
    names = r.sample(NAMES, 6)
    operands = {names[0]: r.randint(0, 2), names[1]: r.randint(0, 2)}
    indices = names[2:2 + r.randint(1, 3)]
    toks = []

    def sub():
        c = r.random()
        if c < 0.85:
            toks.append(("idx", r.choice(indices)))
        elif c < 0.97:
            toks.append(("lit", str(r.choice([0, 1, 1, 2]))))  # 2 may be out of range
        else:  # affine: a window, or a ValueError when it reads past the axis
            toks.extend([("idx", r.choice(indices)), ("lit", "+"), ("lit", "1")])

    def primary(depth):
        c = r.random()
        if c < 0.15 or depth > 3:
            toks.append(("lit", r.choice(NUMBERS)))
        elif c < 0.25:
            toks.append(("lit", "("))
            expr(depth + 1)
            toks.append(("lit", ")"))
        elif c < 0.4:
            f = r.choice(FUNCS) if r.random() < 0.2 else r.choice(FUNCS[:9])  # some unknown
            toks.extend([("lit", f), ("lit", "(")])
            expr(depth + 1)
            if f in ("max", "min") or r.random() < 0.1:
                toks.append(("lit", ","))
                expr(depth + 1)
            toks.append(("lit", ")"))
        else:
            name = r.choice(list(operands))
            toks.append(("op", name))
            nd = operands[name] if r.random() < 0.9 else r.randint(0, 3)
            if nd or r.random() < 0.2:
                toks.append(("lit", "["))
                for k in range(nd):
                    if k:
                        toks.append(("lit", ","))
                    sub()
                toks.append(("lit", "]"))

    def expr(depth):
        if r.random() < 0.15:
            toks.append(("lit", "-"))
        primary(depth)
        while r.random() < 0.45:
            toks.append(("lit", r.choice("+-*/")))
            primary(depth)

    toks.append(("out", names[5]))
    outs = r.sample(indices, r.randint(0, len(indices)))
    if outs or r.random() < 0.3:
        toks.append(("lit", "["))
        for k, ix in enumerate(outs):
            if k:
                toks.append(("lit", ","))
            toks.append(("idx", ix))
        toks.append(("lit", "]"))
    toks.append(("lit", "="))
    expr(0)
    return toks, operands


def render(toks, rename=None):
    rename = rename or {}
    return " ".join(rename.get((k, t), t) for k, t in toks)


def corrupt(r, text):
    k = r.randint(0, len(text))
    c = r.random()
    if c < 0.4:
        return text[:k] + r.choice(JUNK) + text[k:]
    if c < 0.7:
        return text[:k] + text[k + 1:]
    return text[:k]


def _operands(r, operands):
    ext = r.choice([2, 2, 2, 3])
    return {name: np.arange(1.0, ext ** nd + 1).reshape((ext,) * nd) for name, nd in operands.items()}


@examples(2500)
@given(seed=st.integers(0, 2**32 - 1))
def test_fuzz_expr_grammar(seed):
    r = random.Random(seed)
    toks, operands = gen_statement(r)
    text = render(toks)
    corrupted = r.random() < 0.3
    if corrupted:
        text = corrupt(r, text)
    arrays = _operands(r, operands)
    used = {t for k, t in toks if k == "op"}
    # operands the statement does not use are an error ("not used"): pass them only sometimes
    kw = {k: ls.asarray(v) for k, v in arrays.items() if k in used or r.random() < 0.05}
    try:
        out = ls.expr(text, **kw)
    except Exception as e:
        assert allowed(e), f"{type(e).__name__} from {text!r}: {e}"
        assert str(e).startswith("expr"), str(e)
        return
    assert out.is_lazy
    assert_clean_ir(out)
    if corrupted:
        return
    # renaming every identifier (operands, indices, output) must give the same statement
    rename, counters = {}, {"op": 0, "idx": 0, "out": 0}
    for kind, t in toks:
        if kind in counters and (kind, t) not in rename:
            rename[(kind, t)] = {"op": "Q", "idx": "w", "out": "R"}[kind] + str(counters[kind])
            counters[kind] += 1
    again = ls.expr(render(toks, rename), **{rename[("op", k)]: v for k, v in kw.items() if ("op", k) in rename})
    assert again._node.stmt is out._node.stmt, (text, render(toks, rename))
    assert again.shape == out.shape and again.dtype == out.dtype
    mine = [c for c in out._node.children]
    theirs = [c for c in again._node.children]
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert a is b or (a.shape == b.shape and a.dtype == b.dtype)


# -- raw text through every parser ---------------------------------------------------------------
RAW = st.text(max_size=40) | st.text(alphabet=st.sampled_from(list("ABxyijk01.e=[](),+-*/ _;'\"{}\\>")),
                                     max_size=40)


@examples(1500)
@given(text=RAW)
def test_fuzz_raw_text_all_parsers(text):
    A, x = ls.asarray(np.ones((2, 2))), ls.asarray(np.ones(2))
    for call in (lambda: ls.einsum(text, A, x), lambda: ls.expr(text, A=A, x=x), lambda: parse_notation(text)):
        try:
            out = call()
        except Exception as e:
            assert allowed(e), f"{type(e).__name__} from {text!r}: {e}"
            continue
        if isinstance(out, ls.Array):
            assert_clean_ir(out)


PATHOLOGICAL = [
    "y = " + "(" * 100_000 + "x[i]", "y = " + "-" * 100_000 + "1", "y = " + "x[i]+" * 20_000 + "x[i]",
    "y[" + "i," * 20_000 + "i] = x[i]", "y = " + "exp(" * 20_000, "y = x[" + "(" * 100_000 + "i]",
    "y = x[" + "-" * 100_000 + "1]", "y = " + "1" * 5000, "y = x[" + "1" * 5000 + "]", "y = 1e" + "9" * 5000,
    "y[i] = x[i] +" + " " * 200_000, "é" * 100_000, "\x00" * 1000, "y = " + "x*" * 30_000 + "x",
]


@pytest.mark.parametrize("k", range(len(PATHOLOGICAL)))
def test_pathological_notation_is_rejected_quickly(k):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"^expr"):
        ls.expr(PATHOLOGICAL[k], x=np.ones(3))
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("subs", ["," * 100_000, "i" * 100_000, "..." * 10_000, "->" * 10_000,
                                  "-" * 100_000, "i" * 60 + "->", "a" * 52 + "..." + "->" * 2])
def test_pathological_einsum_is_rejected_quickly(subs):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"^einsum"):
        ls.einsum(subs, np.ones(3))
    assert time.perf_counter() - t0 < 5


# -- the C source: adversarial names never appear, and never clash with generated ones ----------------
def _sources(*arrays):
    from lazysparse.compiler.pipeline import kernel_log
    from lazysparse.compiler.fused_pipeline import FusedRun
    with kernel_log() as log:
        ls.compute(*arrays)
    # (one fused kernel for several results, or one kernel per statement)
    return [r.kernel.source if isinstance(r, FusedRun) else r[1].source for r in log]


def test_names_never_reach_the_c_source():
    import scipy.sparse as sp
    S = sp.random_array((5, 4), density=0.5, format="csr", rng=3)
    x = np.arange(1.0, 5.0)
    # operand and index names that are the generated code's own names, C keywords, and a marker
    y = ls.expr("zz_inject_out[p] = d[p, T0] * zz_inject_sys[T0] * 2", d=ls.asarray(S), zz_inject_sys=x)
    z = ls.expr("i0[ls_kernel] = return[ls_kernel, i1] * i1[i1]", **{"return": ls.asarray(S), "i1": x})
    srcs = _sources(y, z)
    assert srcs, "no kernel ran"
    for src in srcs:
        assert "zz_inject" not in src and "return[" not in src
    np.testing.assert_allclose(y.todense(), 2 * (S @ x))
    np.testing.assert_allclose(z.todense(), S @ x)
    assert_clean_ir(y)
    assert_clean_ir(z)


@pytest.mark.parametrize("make", [
    lambda: ls.asarray(np.eye(2), format="csr */ system(\"id\"); /*"),
    lambda: ls.asarray(np.eye(2)).materialize(format="dense\n#include <stdlib.h>"),
    lambda: ls.einsum("ij->ij", np.eye(2), format="csr;"),
    lambda: ls.Format(["dense", "compressed */"]),
    lambda: ls.Format(["dense", ("compressed", {"ordered": "1); system(\"id\"); (1"})]),
    lambda: ls.asarray(np.eye(2)).astype("float64; system"),
    lambda: ls.asarray(np.eye(2)).sum(dtype="int32 */"),
    lambda: ls.random((2, 2), format="csr\x00"),
])
def test_format_and_dtype_strings_are_names_not_code(make):
    with pytest.raises(ALLOWED):
        make()
