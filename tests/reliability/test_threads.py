"""Guarantee: Python threads may call lazysparse at once, on one operand or many, while the
run-time tuner measures (runtime/tuning.py) and while the plan caches fill (compiler/pipeline.py,
compiler/fused_pipeline.py): every result is right, no exception escapes, and the tuner keeps a variant it
measured.

The tuner times a kernel's variants in the first calls on a new operand and keeps per-operand
state meanwhile. Unguarded, eight threads calling ``(A @ A).todense()`` on one fresh operand all
read the state's sample count 0 while their kernels ran, timed the same variant, and the choice
took ``min`` of the other variant's empty list: ``ValueError: min() arg is an empty sequence`` (76
of 1,280 calls). The tests make such races likely: the threads start together (a barrier), the
switch interval is a microsecond, the tuner's constants are small so that every state is passed
through in a few calls, and the unit tests' fake kernels sleep for real in the middle of a
measuring call (as a C kernel releases the GIL) on a fake clock per thread (exact timings).
"""
from __future__ import annotations

import collections
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import statement as EX
from lazysparse.compiler import fused_pipeline as F
from lazysparse.runtime import tuning

THREADS = 8

pytestmark = pytest.mark.skipif(not tuning.ENABLED, reason="LAZYSPARSE_TUNE=0: nothing measures")


@pytest.fixture(autouse=True)
def _switch_often():
    """Python threads switch every microsecond: a compound update of shared state is
    interrupted far more often than at the default 5 ms."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.fixture
def together(in_threads):
    """``together(work)``: ``work(i)`` in ``THREADS`` threads that start at once; returns what
    they raised."""
    return lambda work, n=THREADS: in_threads(work, n, together=True)


def _small_tuner(monkeypatch, long=False):
    """Tuner constants that pass through every state in a few calls; ``long``: every kernel
    counts as long (single runs, then ``_Recheck``), else as short (hot runs where the kernel
    may run twice, then ``_Settle``). Where the machine has no vector code the kernels report
    it built (their scalar loop runs whatever the vector flag says), so that the SpMV kernel is
    measured here too."""
    for name, value in (("SAMPLES", 1), ("SETTLE_CALLS", 4), ("SETTLE_TAIL", 2),
                        ("SETTLE_MAX", 6), ("RECHECK_EVERY", 2), ("RECHECK_KEEP", 2)):
        monkeypatch.setattr(tuning, name, value)
    # (however long a run takes on this machine, among other tenants)
    monkeypatch.setattr(tuning, "HOT_MAX_S", 0.0 if long else 1e9)
    record = tuning._State.record

    def built(self, k, seconds, d):
        if self.sites.caps is not None:
            d[self.sites.caps] = 1
        return record(self, k, seconds, d)
    monkeypatch.setattr(tuning._State, "record", built)


def _csr(n, per_row, seed):
    """An n x n CSR matrix with about ``per_row`` entries a row (sp.random draws its
    positions without replacement: seconds at these sizes)."""
    rng = np.random.default_rng(seed)
    nnz = n * per_row
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    return sp.csr_matrix((rng.standard_normal(nnz), (rows, cols)), shape=(n, n))


# -- the reproduction: real kernels, one fresh operand, eight threads ------------------------------

def test_spgemm_from_threads_on_fresh_operands(monkeypatch, together):
    """``(A @ A).todense()``, whose kernel's branch-free workspace insert is a measured flag
    (``Flags``), 8 threads x 6 calls on each of three fresh operands: right values, one
    measurement per operand, its choice kept."""
    _small_tuner(monkeypatch)
    warm = _csr(500, 20, 0)
    (ls.asarray(warm) @ ls.asarray(warm)).todense()  # compiled before the threads start
    for seed in (1, 2, 3):
        A = _csr(500, 20, seed)
        lA, want = ls.asarray(A), (A @ A).toarray()
        made = tuning.CHOICES_MADE[0]

        def work(_):
            for _ in range(6):
                np.testing.assert_allclose((lA @ lA).todense(), want, rtol=1e-12, atol=1e-12)
        errors = together(work)
        assert not errors, errors[0]
        assert type(_entry(lA, "flags")) is int
        assert _choices(made) == ["single"]


@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
def test_spmv_from_threads_on_fresh_operands(monkeypatch, long, together):
    """``(A @ x).todense()``, whose kernel has run-time schedule flags (vector / split / plain
    segment sums): 8 threads x 32 calls on each of seven fresh operands (12 calls on nine: long),
    through the first measurement, then settling (short) or rechecking (long): right values,
    one measurement of each kind per operand."""
    _small_tuner(monkeypatch, long)
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(20000) for _ in range(THREADS)]
    warm = ls.asarray(_csr(20000, 20, 0))
    (warm @ xs[0]).todense()
    for seed in range(1, 10 if long else 8):
        A = _csr(20000, 20, seed)
        lA = ls.asarray(A)
        made = tuning.CHOICES_MADE[0]

        def work(i):
            for j in range(12 if long else 32):
                x = xs[(i + j) % THREADS]
                np.testing.assert_allclose((lA @ x).todense(), A @ x, rtol=1e-12, atol=1e-12)
        errors = together(work)
        assert not errors, errors[0]
        ent = _entry(lA, "tune")
        assert type(ent) is (tuning._Recheck if long else tuple), ent
        # (a recheck may swap the loops as timings on a busy machine move: not counted)
        assert [c for c in _choices(made) if c != "rechecked"] == (["single"] if long else ["hot", "settled"])


def _choices(made):
    """How the choices recorded since ``CHOICES_MADE[0]`` was ``made`` were timed."""
    n = tuning.CHOICES_MADE[0] - made
    return [c[1] for c in list(tuning.CHOICES)[len(tuning.CHOICES) - n:]] if n else []


def _entry(lA, kind):
    """The tuner's entry of kind "tune" or "flags" on lA's storage (one kernel each here)."""
    ents = [v for k, v in (lA.storage.stats or {}).items() if isinstance(k, tuple) and k[0] == kind]
    assert len(ents) == 1, lA.storage.stats
    return ents[0]


# -- the tuner's states, from several threads, on a fake kernel and a fake clock per thread -------

class _Kernel:
    """A fake kernel: a run of a variant advances the calling thread's fake clock by that
    variant's time (``tuning.clock`` reads it: each thread's timings are exact, whatever the
    others do) and sleeps for real, releasing the GIL as a C kernel does, so other threads run
    in the middle of a measuring call. It reports its vector code built (``d[3]``)."""

    def __init__(self, times):
        self.times, self.local = times, threading.local()
        self.mu, self.runs = threading.Lock(), collections.Counter()

    def clock(self):
        return getattr(self.local, "now", 0.0)

    def __call__(self, p, d):
        v = (1, 0) if d[2] else (0, d[1])  # (the vector loop ignores the split flag)
        time.sleep(5e-5)
        self.local.now = self.clock() + self.times[v]
        d[3] = 1
        with self.mu:
            self.runs[v] += 1
        return 0


class _St:  # an operand's storage: the stats dict the tuner keeps its entry in
    stats = None

    def segment_stats(self, l):
        return (20.0, 30)  # uniform rows of 20: the static split flag is 1


def _sites(rerun):
    return tuning.Sites([("ext", 0), ("split", 0, 1), ("vec", 0, 1), ("simd",)], "k", rerun)


def _glue(start, kernel, calls, states):
    """What the generated glue does for ``calls`` calls of one thread's buffer set: the
    tuner's state from ``start(d)`` on a new operand (added to ``states``), ``run`` while it
    measures, what measures next once it has chosen, the kernel alone when nothing does."""
    d = [0] * 4
    tv = start(d)
    states.append(tv)
    for _ in range(calls):
        if tv is None:
            rc = kernel(None, d)
        else:
            rc = tv.run(kernel, None, d)
            if tv.chosen is not None:
                tv = tv.after
        assert rc == 0


VEC, SPLIT, PLAIN = (1, 0), (0, 1), (0, 0)


def test_first_measurement_and_settling_from_threads(monkeypatch, together):
    """A short kernel, measured hot by the first state, then settled, by 8 threads at once:
    every variant's samples as many as from one thread, one choice per state, and the variant
    kept is the fastest once settled (the split loop here)."""
    _small_tuner(monkeypatch)
    kernel = _Kernel({VEC: 3e-5, SPLIT: 1e-5, PLAIN: 2e-5})
    monkeypatch.setattr(tuning, "clock", kernel.clock)
    sites, st0 = _sites(rerun=True), _St()
    made, states = tuning.CHOICES_MADE[0], []
    errors = together(lambda _: _glue(lambda d: sites.start([st0], d), kernel, 40, states))
    assert not errors, errors[0]
    first = _one_state(states)
    assert first.hot and [len(s) for s in first.samples] == \
        [tuning.HOT_CALLS * (tuning.HOT_RUNS - 1) // 2] * 2
    assert first.chosen == (SPLIT,) and set(first.variants) == {(VEC,), (SPLIT,)}
    settle = first.after
    assert type(settle) is tuning._Settle and len(settle.scores) == 3
    assert st0.stats[sites.tag] == (SPLIT,) == settle.chosen
    assert all(kernel.runs[v[0]] >= tuning.SETTLE_CALLS for v in settle.variants)  # all measured
    assert tuning.CHOICES_MADE[0] == made + 2  # the first measurement's, the settled one


def test_single_runs_and_recheck_from_threads(monkeypatch, together):
    """A long kernel, measured in single runs, then rechecked, by 8 threads at once: the first
    state keeps the faster loop; once the other gets clearly faster it takes over, once."""
    _small_tuner(monkeypatch, long=True)
    kernel = _Kernel({VEC: 2e-3, SPLIT: 1e-3, PLAIN: 1e-3})
    monkeypatch.setattr(tuning, "clock", kernel.clock)
    sites, st0 = _sites(rerun=False), _St()
    made, states = tuning.CHOICES_MADE[0], []
    errors = together(lambda _: _glue(lambda d: sites.start([st0], d), kernel, 10, states))
    assert not errors, errors[0]
    first = _one_state(states)
    assert not first.hot and [len(s) for s in first.samples] == [tuning.SAMPLES] * 2
    recheck = st0.stats[sites.tag]
    assert type(recheck) is tuning._Recheck and recheck.variants == [(SPLIT,), (VEC,)]
    kernel.times[VEC] = 0.2e-3  # the vector loop becomes clearly faster
    errors = together(lambda _: _glue(lambda d: sites.start([st0], d), kernel, 30, []))
    assert not errors, errors[0]
    assert recheck.variants == [(VEC,), (SPLIT,)] and first.chosen == (SPLIT,)
    assert tuning.CHOICES_MADE[0] == made + 2  # the first measurement's, one swap
    assert tuning.CHOICES[-1][:2] == (["vector"], "rechecked")


def _one_state(states):
    """The first measurement's state: every thread's glue took the same one (one per operand)."""
    firsts = {id(s): s for s in states if type(s) is tuning._State}
    assert len(firsts) == 1, states
    return next(iter(firsts.values()))


@pytest.mark.parametrize("ratio, want", [(0.5, 1), (0.95, 0)])
def test_flags_from_threads(monkeypatch, ratio, want, together):
    """A kernel's on/off flags (``Flags``), measured by 8 threads at once: SAMPLES samples of
    each setting, one choice, the right one, kept on the operand."""
    monkeypatch.setattr(tuning, "SAMPLES", 2)
    local = threading.local()
    monkeypatch.setattr(tuning, "clock", lambda: getattr(local, "now", 0.0))

    def kernel(p, d):
        time.sleep(5e-5)
        local.now = getattr(local, "now", 0.0) + (ratio if d[0] else 1.0)
        return 0
    flags = tuning.Flags([("wsb", 0, 0), ("ext", 0)], ("threads", ratio))
    st0 = _St()
    made, states = tuning.CHOICES_MADE[0], []
    errors = together(lambda _: _glue(lambda d: flags.start([st0], d), kernel, 12, states))
    assert not errors, errors[0]
    assert len({id(s) for s in states if s is not None}) == 1  # one state per operand
    state = next(s for s in states if s is not None)
    assert [len(s) for s in state.samples] == [tuning.SAMPLES] * 2
    assert state.chosen == want and st0.stats[flags.tag] == want
    assert tuning.CHOICES_MADE[0] == made + 1


# -- the plan caches: first calls of several expressions from several threads at once ------------

def test_first_calls_of_many_expressions_from_threads(monkeypatch, together):
    """Eight threads make the first calls of nine expressions at once (the plan, bind and
    fused-program caches emptied first), on fresh operands, all in the same order, then call
    them again each in another order: every result is NumPy's, and each plan's glue and each
    fused program are made once, shared by all threads."""
    _small_tuner(monkeypatch)
    rng = np.random.default_rng(7)
    A, B = _csr(300, 9, 11), _csr(300, 9, 12)
    x = rng.standard_normal(300)
    X, W = rng.standard_normal((300, 32)), rng.standard_normal((32, 8))
    U, V = rng.standard_normal((300, 8)), rng.standard_normal((300, 8))
    Ad, Bd = A.toarray(), B.toarray()
    lA, lB = ls.asarray(A), ls.asarray(B)
    cases = [
        (lambda: lA @ lB, Ad @ Bd),
        (lambda: lA @ x, Ad @ x),
        (lambda: lA.T @ x, Ad.T @ x),
        (lambda: lA * lB, Ad * Bd),
        (lambda: lA + lB * 2.0, Ad + Bd * 2.0),
        (lambda: lA.sum(axis=1), Ad.sum(axis=1)),
        (lambda: (lA @ lB) * lA, (Ad @ Bd) * Ad),
        (lambda: lA @ (ls.asarray(X) @ ls.asarray(W)), Ad @ X @ W),
        (lambda: lA * (ls.asarray(U) @ ls.asarray(V).T), Ad * (U @ V.T)),
    ]
    for f, _ in cases:  # compiled before (the kernel cache is not under test)
        f().todense()
    EX.plan_cache_clear()
    for cache in (F._FAST, F._SKIP, F._PLANS, F._STEPS):
        cache.clear()
    lA, lB = ls.asarray(A.copy()), ls.asarray(B.copy())  # fresh operands: the tuner measures
    made = collections.Counter()
    bind, build = EX._bind, F._build

    def counted_bind(stmt0, extra, runner, out_fmt, *rest, **more):
        # (keyed as _BINDS is: a density rule, or another object, by identity)
        key = tuple(a if isinstance(a, (tuple, bool, type(None))) else id(a)
                    for a in (*rest, *sorted(more.items())))
        made["bind", id(stmt0), id(runner), out_fmt, key] += 1
        return bind(stmt0, extra, runner, out_fmt, *rest, **more)

    def counted_build(prog, specs, scalars):
        made["build", prog, tuple(sorted((v, id(sp)) for v, sp in specs.items()))] += 1
        return build(prog, specs, scalars)
    monkeypatch.setattr(EX, "_bind", counted_bind)
    monkeypatch.setattr(F, "_build", counted_build)

    def work(i):
        for r in range(4):
            for k in range(len(cases)):
                f, want = cases[(r * i + k) % len(cases)]  # (round 0: the same order everywhere)
                np.testing.assert_allclose(np.asarray(f().todense()), want, rtol=1e-10, atol=1e-10)
    errors = together(work)
    assert not errors, errors[0]
    assert any(key[0] == "build" for key in made) and any(key[0] == "bind" for key in made)
    assert max(made.values()) == 1, [key[:2] for key, n in made.items() if n > 1]
