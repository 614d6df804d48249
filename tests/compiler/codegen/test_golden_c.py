"""Golden-file tests for the generated C: the exact source of a dozen representative kernels
(formats, assembly modes, fused programs, schedules, dtypes and index widths) is kept in
``golden/<case>.c``, so that any change of the lowering or the C printer shows up as a reviewed
diff (as finch-tensor-lite keeps ``tests/reference/*.c``). The source is recorded where it is
handed to the compiler (``kernel_cache.load_kernel``), after the process's memos of compiled
kernels and plans are emptied, and checked against what ``ls.explain`` prints; every kernel's
result is checked against dense NumPy, so a golden file is the C of a kernel known to be right.
``LAZYSPARSE_REGEN_GOLDEN=1`` rewrites the files (golden/README.md)."""
from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import fused_pipeline
from lazysparse.compiler.plan import skew
from lazysparse.runtime import kernel_cache

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("LAZYSPARSE_REGEN_GOLDEN", "").strip() not in ("", "0")
HINT = ("rerun with LAZYSPARSE_REGEN_GOLDEN=1 to rewrite the golden files, then review "
        "`git diff tests/compiler/codegen/golden`")
DIFF_LINES = 80  # of a mismatch's unified diff shown in the failure (the rest counted)


# -- inputs: small, and made by formulas (no random generator whose stream a library may change) --

def _dense(m, n, keep, shift=0):
    """An m x n matrix of small integers, with about ``keep`` in 5 entries stored."""
    i, j = np.indices((m, n))
    return np.where((3 * i + 2 * j + shift) % 5 < keep, 1.0 + (i * n + j + shift) % 4, 0.0)


def _csr(d, dtype=np.float64, index=np.int32):
    m = sp.csr_array(d.astype(dtype))
    return sp.csr_array((m.data, m.indices.astype(index), m.indptr.astype(index)), shape=m.shape)


A = _dense(7, 5, 2)                       # two entries a row
B, C = _dense(7, 5, 2, shift=1), _dense(7, 5, 3, shift=4)
S = _dense(5, 6, 2, shift=2)
x = np.arange(5.0) - 1.5
X = (np.arange(15.0).reshape(5, 3) % 7) - 2
U, V = np.arange(14.0).reshape(7, 2) / 4, np.arange(10.0).reshape(5, 2) / 8
W = np.arange(12.0).reshape(4, 3) / 4 - 1
T3 = np.where(np.indices((4, 5, 3)).sum(axis=0) % 3 == 0, np.arange(60.0).reshape(4, 5, 3) % 5 + 1, 0.0)
Bm, Cm = np.arange(10.0).reshape(5, 2) - 3, np.arange(6.0).reshape(3, 2) / 2
ROW_SPLIT = ls.Schedule().split("i0", "i00", "i01", 4).parallelize("i00")
HASHED_SPLIT = ls.Schedule().workspace("hash").split("i0", "i00", "i01", 4)


def _skewed():
    """64 rows, the first holding 80% of 137,800 entries: past the autoscheduler's thresholds
    for nonzero tiles on two threads (compiler/plan/skew.py, MIN_ENTRIES and SKEW_TILES)."""
    n = 110_000
    cols = [np.arange(n)] + [np.arange(r * 7 % 1000, r * 7 % 1000 + 440) for r in range(1, 64)]
    lens = np.array([len(c) for c in cols])
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    data = np.arange(ptr[-1]) % 7 + 1.0
    H = sp.csr_array((data, np.concatenate(cols).astype(np.int32), ptr), shape=(64, n))
    assert skew.MIN_ENTRIES <= ptr[-1] and lens.max() * 2 >= skew.SKEW_TILES * ptr[-1]
    return H, (np.arange(n) % 5) - 2.0


@dataclass(frozen=True)
class Case:
    """``make()``: ``(expression, dense NumPy result)``; the expression is lazy, or (``eager``)
    a function that computes the array (a conversion runs when it is asked for)."""
    make: Callable[[], tuple]
    fmt: str                                   # the result's format
    explain: dict = field(default_factory=dict)  # ls.explain's options: fusion, schedule
    threads: int = 1
    warm: bool = False                         # computed once before the recorded call
    eager: bool = False
    rtol: float = 1e-12


def _cg_update():
    xv, rv, pv, qv = (ls.asarray(v) for v in (x, x[::-1].copy(), x * 2, x + 1))
    r = rv - 0.5 * qv
    return ls.compute(xv + 0.5 * pv, r, (r * r).sum())[2]


def _cg_update_numpy():
    r = x[::-1] - 0.5 * (x + 1)
    return r @ r


def _spmv_skewed():
    H, xh = _skewed()
    return (lambda: ls.asarray(H) @ xh), H @ xh


CASES = {
    # SpMV, float64 values, int32 indices: segment sums with vector, split and plain variants
    "spmv_csr": Case(lambda: (ls.asarray(_csr(A)) @ x, A @ x), "dense"),
    # SpMV on CSC: columns scattered into the dense result
    "spmv_csc": Case(lambda: (ls.asarray(sp.csc_array(A)) @ x, A @ x), "dense"),
    # SpMM, a dense matrix on the right: row-times-rows
    "spmm_csr": Case(lambda: (ls.asarray(_csr(A)) @ X, A @ X), "dense"),
    # three-way union, a CSR result assembled through a workspace
    "add3_csr": Case(lambda: (ls.asarray(_csr(A)) + ls.asarray(_csr(B)) + ls.asarray(_csr(C)),
                              A + B + C), "csr"),
    # intersection, a CSR result appended in order
    "mul_csr": Case(lambda: (ls.asarray(_csr(A)) * ls.asarray(_csr(B)), A * B), "csr"),
    # SpGEMM, a CSR result gathered in the cost model's workspace
    "spgemm_csr": Case(lambda: (ls.asarray(_csr(A)) @ ls.asarray(_csr(S)), A @ S), "csr"),
    # transpose assembly: CSR to CSC (an eager conversion)
    "tocsc": Case(lambda: ((lambda a: lambda: a.tocsc())(ls.asarray(_csr(A))), A), "csc",
                  eager=True),
    "rowsum_csr": Case(lambda: (ls.asarray(_csr(A)).sum(axis=1), A.sum(axis=1)), "dense"),
    "colsum_csr": Case(lambda: (ls.asarray(_csr(A)).sum(axis=0), A.sum(axis=0)), "dense"),
    # SDDMM as one einsum: a fused program over the sparse pattern
    "sddmm_einsum": Case(lambda: (ls.einsum("ij,ik,jk->ij", ls.asarray(_csr(A)), U, V),
                                  A * (U @ V.T)), "csr"),
    # a GNN layer, every temporary substituted: one kernel with both sums
    "gnn_layer_fused": Case(lambda: (ls.asarray(_csr(A)) @ (ls.asarray(S[:, :4]) @ ls.asarray(W)),
                                     A @ (S[:, :4] @ W)), "dense", explain={"fusion": "max"}),
    # a Jacobi step: SpMV's row sum as split partial sums inside a fused element-wise kernel
    "jacobi_step_fused": Case(lambda: ((lambda L, xv: xv + 0.5 * (xv - L @ xv))(ls.asarray(_csr(_dense(5, 5, 4))), ls.asarray(x)),
                                       x + 0.5 * (x - _dense(5, 5, 4) @ x)), "dense"),
    # joint results (a CG step's update): x + a p and r - a q stored, |r - a q|^2 summed in
    # the loop that writes r, one kernel for the three (the case returns the sum)
    "cg_update_joint": Case(lambda: (_cg_update, _cg_update_numpy()), "dense", eager=True),
    # MTTKRP on a 3-d CSF tensor: a fused program with a row temporary
    "mttkrp_csf": Case(lambda: (ls.einsum("ijk,jr,kr->ir", ls.asarray(T3, format="csf"), Bm, Cm),
                                np.einsum("ijk,jr,kr->ir", T3, Bm, Cm)), "dense"),
    # two threads on a skewed operand: the autoscheduler's nonzero tiles (its first call learns)
    "spmv_csr_tiles_2threads": Case(_spmv_skewed, "dense", threads=2, warm=True),
    # a user's schedule: rows split by 4, the outer loop on threads
    "spmv_csr_schedule_split": Case(lambda: (ls.asarray(_csr(A)) @ x, A @ x), "dense",
                                    explain={"schedule": ROW_SPLIT}),
    # a user's schedule: a hashed workspace and a row split
    "spgemm_csr_schedule_hash": Case(lambda: (ls.asarray(_csr(A)) @ ls.asarray(_csr(S)), A @ S),
                                     "csr", explain={"schedule": HASHED_SPLIT}),
    # float32 values: 16 lanes a vector, float accumulators
    "spmv_csr_float32": Case(lambda: (ls.asarray(_csr(A, np.float32)) @ x.astype(np.float32),
                                      A.astype(np.float32) @ x.astype(np.float32)), "dense",
                             rtol=1e-6),
    # int64 indices: 64-bit gathers
    "spmv_csr_int64": Case(lambda: (ls.asarray(_csr(A, index=np.int64)) @ x, A @ x), "dense"),
}


# -- capture ------------------------------------------------------------------------------------

def _forget_compiled():
    """Empty every in-process memo that could serve a kernel without handing its source to
    ``load_kernel`` again (a kernel compiled earlier in this process, by another test, would
    otherwise be missed): compiled kernels and bound plans, the fused pipeline's plans, and what
    the autoscheduler learned from earlier calls. The disk cache stays: it only saves compiles."""
    kernel_cache.clear_cache()
    for memo in (fused_pipeline._FAST, fused_pipeline._SKIP, fused_pipeline._PLANS,
                 fused_pipeline._STEPS):
        memo.clear()
    skew.reset()


def _record(case, monkeypatch):
    """``(sources handed to the compiler, in order; the result; dense NumPy's; explain's text,
    None for an eager case)``."""
    expr, want = case.make()
    # the team is the one choice of this machine's that reaches the C (skew tiles need two
    # threads); OMP_THREAD_LIMIT would refuse the second
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    ls.set_num_threads(case.threads)
    _forget_compiled()
    if case.warm:
        expr().todense()
        expr = expr()
    seen = []
    real = kernel_cache.load_kernel

    def recording(source):
        seen.append(source)
        return real(source)

    with monkeypatch.context() as m:
        # under every name a module imported it by (compiler/stages.py's ``build`` holds its own)
        for name, module in list(sys.modules.items()):
            if name.split(".")[0] == "lazysparse" and getattr(module, "load_kernel", None) is real:
                m.setattr(module, "load_kernel", recording)
        if case.eager:
            return seen, expr(), want, None
        text = ls.explain(expr, **case.explain)
    return seen, expr, want, text


def _joined(sources):
    """One golden file per case; a case of several kernels keeps them in the order compiled."""
    if len(sources) == 1:
        return sources[0]
    n = len(sources)
    return "".join(f"/* ---- golden: kernel {k + 1} of {n} ---- */\n{s}" for k, s in enumerate(sources))


def _compare(name, text):
    path = GOLDEN / f"{name}.c"
    data = text.encode("utf-8")
    if REGEN:
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        return
    if not path.exists():
        pytest.fail(f"golden/{name}.c is missing: {HINT}", pytrace=False)
    old = path.read_bytes().decode("utf-8")
    if old == text:
        return
    diff = list(difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                     f"golden/{name}.c", f"generated {name}", n=2))
    shown, more = diff[:DIFF_LINES], len(diff) - DIFF_LINES
    body = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in shown)
    pytest.fail(f"the generated C of {name!r} differs from golden/{name}.c:\n{body}"
                + (f"... and {more} more diff lines\n" if more > 0 else "") + HINT, pytrace=False)


# -- tests --------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _threads():
    before = ls.get_num_threads()
    yield
    ls.set_num_threads(before)


@pytest.mark.parametrize("name", list(CASES))
def test_generated_c_matches_golden(name, monkeypatch):
    case = CASES[name]
    seen, result, want, text = _record(case, monkeypatch)
    assert seen, (f"{name}: no C source reached kernel_cache.load_kernel, which the test "
                  f"records under every name a lazysparse module imported it by")
    if text is not None:
        shown = len(re.findall(r"^kernel \d+:", text, re.M))
        assert shown == len(seen), (
            f"{name}: explain shows {shown} kernel(s), {len(seen)} reached the compiler: a memo "
            f"served the others (_forget_compiled must empty it)")
        assert all(s in text for s in seen), f"{name}: explain does not print the exact C compiled"
    assert result.format.name == case.fmt, f"{name}: result format {result.format!r}"
    np.testing.assert_allclose(result.todense(), want, rtol=case.rtol, atol=0)
    _compare(name, _joined(seen))


def test_every_golden_file_has_a_case():
    extra = sorted({p.stem for p in GOLDEN.glob("*.c")} - CASES.keys())
    if REGEN:
        for stem in extra:
            (GOLDEN / f"{stem}.c").unlink()
        return
    assert not extra, f"golden files of no case: {extra}; {HINT}"
