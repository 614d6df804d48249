"""The warm path: bound plans, per-slot argument memos and run-time schedule flags.

A warm call skips planning and re-marshals only the operand slots whose storage changed since the
thread's previous call of the same kernel. These tests check, against dense NumPy, that results stay
right when operands change between calls, when an operand dies and another takes its place, across
threads, and under every run-time schedule variant (vector, split accumulators, plain loop) that
the tuner measures on the first calls with a new operand.
"""
from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.runtime import tuning
from lazysparse.compiler.runner import split_flag


def _csr(rows, cols, lengths, seed, dtype=np.float64):
    """A CSR matrix whose row r has lengths[r] entries (distinct random columns)."""
    rng = np.random.default_rng(seed)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]
                             or [np.zeros(0)]).astype(np.int32)
    data = rng.standard_normal(indptr[-1]).astype(dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(rows, cols))


def test_split_flag_follows_row_statistics():
    uniform = _csr(50, 200, [40] * 50, 0)                # long rows: split accumulators
    regular = _csr(50, 200, [10] * 50, 1)                # uniform rows of 10: split
    skewed = _csr(50, 200, [2] * 49 + [150], 2)          # short rows, one huge: plain loop
    short = _csr(50, 200, [3] * 50, 3)                   # short rows: plain loop
    flags = [split_flag(ls.asarray(m).storage, 1) for m in (uniform, regular, skewed, short)]
    assert flags == [1, 1, 0, 0]


@pytest.mark.parametrize("lengths", [[40] * 30, [12] * 30, [1] * 29 + [100], [0] * 10 + [5] * 20, [0] * 30])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_both_schedules_match_numpy(lengths, dtype):
    A = _csr(len(lengths), 120, lengths, 7, dtype)
    x = np.random.default_rng(8).standard_normal(120).astype(dtype)
    X = np.random.default_rng(9).standard_normal((120, 3)).astype(dtype)
    lA = ls.asarray(A)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose((lA @ x).todense(), A.toarray() @ x, rtol=tol, atol=tol)
    np.testing.assert_allclose((lA @ X).todense(), A.toarray() @ X, rtol=tol, atol=tol)
    np.testing.assert_allclose(lA.sum(axis=1).todense(), A.toarray().sum(axis=1), rtol=tol, atol=tol)


@settings(max_examples=30)
@given(seeds=st.lists(st.integers(0, 10**6), min_size=2, max_size=6),
       reuse=st.lists(st.booleans(), min_size=6, max_size=6))
def test_changing_operands_between_warm_calls(seeds, reuse):
    """Same kernel, operands swapped, reused or replaced at random: every result is right."""
    xs = [np.random.default_rng(s).standard_normal(30) for s in seeds]
    mats = [sp.random(25, 30, density=0.3, format="csr", random_state=s) for s in seeds]
    prev_A = prev_x = None  # (lazysparse array, the NumPy/scipy original it wraps)
    for k, (A, x) in enumerate(zip(mats, xs)):
        cur_A = prev_A if (reuse[k] and prev_A is not None) else (ls.asarray(A), A)
        cur_x = prev_x if (reuse[(k + 1) % 6] and prev_x is not None) else (ls.asarray(x), x)
        want = cur_A[1].toarray() @ cur_x[1]
        np.testing.assert_allclose((cur_A[0] @ cur_x[0]).todense(), want, rtol=1e-12, atol=1e-12)
        prev_A, prev_x = cur_A, cur_x


def test_operand_dies_and_another_takes_its_place():
    x = np.arange(40.0)
    for k in range(20):
        A = sp.random(30, 40, density=0.2, format="csr", random_state=k)
        lA = ls.asarray(A)
        np.testing.assert_allclose((lA @ x).todense(), A @ x, rtol=1e-12)
        del lA
        gc.collect()


def test_threads_share_a_warm_kernel(in_threads):
    mats = [sp.random(60, 50, density=0.2, format="csr", random_state=k) for k in range(8)]
    xs = [np.random.default_rng(k).standard_normal(50) for k in range(8)]
    (ls.asarray(mats[0]) @ xs[0]).materialize()  # warm
    wrong = []

    def work(k):
        lA = ls.asarray(mats[k])
        for r in range(30):
            x = xs[(k + r) % 8]
            got = (lA @ x).todense()
            if not np.allclose(got, mats[k] @ x, rtol=1e-12, atol=1e-12):
                wrong.append((k, r))

    assert in_threads(work, 8) == []
    assert wrong == []


def test_density_dependent_format_replans():
    """The bound plan of A @ x declines when A's density changes the inferred result format (a
    sparse x: with a dense one the product is dense whatever A's density, as scipy's)."""
    x = ls.asarray(sp.csr_array(np.ones((1, 100)))).reshape(100)
    D = sp.random(100, 100, density=0.2, format="csr", random_state=1)
    O = sp.csr_matrix((np.ones(3), np.array([1, 5, 9]), np.r_[0, 3, np.full(99, 3)]), shape=(100, 100))
    dense_rows, one_row = ls.asarray(D), ls.asarray(O)
    r1 = (dense_rows @ x).materialize()
    r2 = (one_row @ x).materialize()
    r3 = (dense_rows @ x).materialize()
    assert r1.format == "dense" and r3.format == "dense"
    assert r2.format != "dense"
    np.testing.assert_allclose(r2.todense(), O.toarray() @ x)
    np.testing.assert_allclose(r3.todense(), D.toarray() @ x)
    # used in turn, the two plans switch without generating their glue again
    from lazysparse.compiler import statement as EX
    binds = dict(EX._BINDS)
    for _ in range(3):
        np.testing.assert_allclose((one_row @ x).materialize().todense(), O.toarray() @ x)
        np.testing.assert_allclose((dense_rows @ x).materialize().todense(), D.toarray() @ x)
    assert EX._BINDS == binds


def _choice(lA):
    """The tuner's entry on lA's storage: a variant tuple once measured, else its state."""
    ents = [v for k, v in (lA.storage.stats or {}).items() if isinstance(k, tuple) and k[0] == "tune"]
    assert len(ents) == 1
    return ents[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_variant_is_right_while_the_tuner_measures(dtype, monkeypatch):
    """The first calls with a new matrix time the vector and the scalar loop (where the vector
    loop is built); every result is right, and the choice is then fixed on the matrix."""
    ran = []  # the variant flags of every kernel run while measuring
    orig = tuning._State.run

    def run(self, fn, p, d):
        def spy(p, d):
            ran.append(tuple(d[i] for i, _ in self.writes[0]) if self.writes else None)
            return fn(p, d)
        return orig(self, spy, p, d)
    monkeypatch.setattr(tuning._State, "run", run)
    settled = []  # the same for the second measurement (_Settle), short here
    orig_settle = tuning._Settle.run

    def settle_run(self, fn, p, d):
        def spy(p, d):
            settled.append(tuple(d[i] for i, _ in self.writes[0]))
            return fn(p, d)
        return orig_settle(self, spy, p, d)
    monkeypatch.setattr(tuning._Settle, "run", settle_run)
    monkeypatch.setattr(tuning, "SETTLE_CALLS", 2)
    monkeypatch.setattr(tuning, "SETTLE_TAIL", 1)
    monkeypatch.setattr(tuning, "SETTLE_MAX", 2)
    A = _csr(40, 90, [0, 1, 7, 8, 9, 16, 17, 33] * 5, 11, dtype)
    lA = ls.asarray(A)
    rng = np.random.default_rng(12)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    with ls.compiler.pipeline.kernel_log() as log:
        for _ in range(2 * tuning.SAMPLES + 3 + 3 * 2):
            x = rng.standard_normal(90).astype(dtype)
            np.testing.assert_allclose((lA @ x).todense(), A.toarray() @ x, rtol=tol, atol=tol)
    runner = log[-1][1]
    vector_built = runner._pool[-1][1][runner.sites.caps] == 1
    chosen = _choice(lA)
    assert type(chosen) is tuple
    if vector_built:  # then each loop ran twice in a row in the second measurement
        assert len(settled) == 3 * 2 and len(set(settled)) == 3, settled
    if vector_built:
        # a short kernel that overwrites its dense result: measured hot, both loops ran
        assert runner.sites.rerun
        flags = {f for f in ran if f is not None}
        assert len(flags) == 2, ran
        assert len(ran) == 1 + tuning.HOT_CALLS * tuning.HOT_RUNS
    else:
        assert chosen == ((0, tuning.split_flag(lA.storage, 1)),) and len(ran) == 1
    # a later call runs the chosen variant and stays right
    np.testing.assert_allclose((lA @ x).todense(), A.toarray() @ x, rtol=tol, atol=tol)
    assert _choice(lA) == chosen


def _fake_sites(caps_slot=True, rerun=False):
    d = [("ext", 0), ("split", 0, 1)] + ([("vec", 0, 1), ("simd",)] if caps_slot else [])
    return tuning.Sites(d, "k", rerun)


class _St:
    stats = None

    def segment_stats(self, l):
        return (20.0, 30)  # uniform rows of 20: the static split flag is 1


def test_tuner_keeps_the_fastest_variant_by_its_best_time():
    sites = _fake_sites()
    st0 = _St()
    d = [0] * 4
    state = sites.start([st0], d)
    assert (d[1], d[2]) == (1, 1)  # static choice: vector, split flag from the row statistics
    d[3] = 1  # the kernel reports its vector code as built
    # the scalar loop (split, by the statistics) is fastest at its best, though one call was noisy
    times = {(1, 0): [5.0, 4.0, 4.5], (0, 1): [9.0, 2.0, 3.0]}
    k, done, n = -1, False, {v: 0 for v in times}
    while not done:
        k = state.pick(d)
        v = (d[2], d[1]) if d[2] == 0 else (1, 0)
        done = state.record(k, times[v][n[v]], d)
        n[v] += 1
    # (seconds a run: a long kernel, whose choice is rechecked now and then: _Recheck)
    assert st0.stats[sites.tag].variants[0] == ((0, 1),) and (d[1], d[2]) == (1, 0)
    assert all(c == tuning.SAMPLES for c in n.values())
    # a later operand with the same storage starts from the choice, without measuring
    d2 = [0] * 4
    assert sites.start([st0], d2) is st0.stats[sites.tag] and (d2[1], d2[2]) == (1, 0)
    # a thread still holding the old state gets the choice too
    assert state.pick(d2) == -1 and state.record(-1, 1.0, d2) is True


def test_tuner_keeps_the_vector_loop_when_it_is_faster():
    sites = _fake_sites()
    st0 = _St()
    d = [0] * 4
    state = sites.start([st0], d)
    d[3] = 1
    done = state.record(state.pick(d), 1.0, d)
    while not done:
        done = state.record(state.pick(d), 2.0 if d[2] == 0 else 1.5, d)
    assert st0.stats[sites.tag].variants[0] == ((1, 0),) and d[2] == 1


class _FakeKernel:
    """A kernel whose runs advance a fake clock: ``cold`` seconds for a run that follows a call
    boundary (the cache holds whatever the program did before), ``hot[variant]`` for a run right
    after another run."""

    def __init__(self, cold, hot):
        self.now, self.cold, self.hot, self.runs, self.first = 0.0, cold, hot, [], True

    def clock(self):
        return self.now

    def __call__(self, p, d):
        v = (1, 0) if d[2] else (0, d[1])  # the vector loop ignores the split flag
        self.runs.append(v)
        self.now += self.cold[v] if self.first else self.hot[v]
        self.first = False
        return 0


def _first_choice(monkeypatch, kernel, rerun):
    """The first measurement of a fake kernel on the fake clock, to its choice: (state, sites,
    operand, d, calls)."""
    monkeypatch.setattr(tuning, "clock", kernel.clock)
    sites = _fake_sites(rerun=rerun)
    st0 = _St()
    d = [0] * 4
    state = sites.start([st0], d)
    d[3] = 1  # the kernel reports its vector code as built
    calls = 0
    while state.chosen is None:
        kernel.first = True
        assert state.run(kernel, None, d) == 0
        calls += 1
    return state, sites, st0, d, calls


def test_tuner_times_short_kernels_hot(monkeypatch):
    """A short kernel that overwrites its dense result is timed in runs that follow a run over
    the same data: the first run of each call (after whatever ran before) never counts, so a
    variant that only looks fast cold does not win."""
    vec, scal = (1, 0), (0, 1)
    k = _FakeKernel(cold={vec: 1e-5, scal: 9e-4}, hot={vec: 2e-4, scal: 1e-4})
    state, sites, st0, d, calls = _first_choice(monkeypatch, k, True)
    assert state.hot and calls == 1 + tuning.HOT_CALLS
    assert len(k.runs) == 1 + tuning.HOT_CALLS * tuning.HOT_RUNS
    assert {v[0]: len(s) for v, s in zip(state.variants, state.samples)} == \
        {vec: tuning.HOT_CALLS * (tuning.HOT_RUNS - 1) // 2,
         scal: tuning.HOT_CALLS * (tuning.HOT_RUNS - 1) // 2}
    assert state.chosen == (scal,) and (d[1], d[2]) == (1, 0)
    # a short kernel: the second measurement (_Settle) follows on the operand
    assert st0.stats[sites.tag] is state.after and type(state.after) is tuning._Settle


def test_tuner_times_long_or_accumulating_kernels_once_per_call(monkeypatch):
    """A kernel that cannot run twice in a call (it accumulates into its result), or a long one,
    is timed once per call, alternating the variants."""
    vec, scal = (1, 0), (0, 1)
    for rerun, cold in ((False, 1e-5), (True, 2 * tuning.HOT_MAX_S)):
        k = _FakeKernel(cold={vec: cold, scal: cold / 2}, hot={vec: 1.0, scal: 1.0})
        state, sites, st0, d, _ = _first_choice(monkeypatch, k, rerun)
        assert not state.hot and len(k.runs) == 2 * tuning.SAMPLES
        assert state.chosen == (scal,)
        # settled further where the kernel is short, rechecked now and then where it is long
        want = tuning._Recheck if cold >= tuning.HOT_MAX_S else tuning._Settle
        assert type(state.after) is want and st0.stats[sites.tag] is state.after
        assert state.after.variants[0] == (scal,)


def test_recheck_swaps_a_long_kernels_loops_when_the_other_gets_clearly_faster(monkeypatch):
    """A long kernel's variant not kept runs every RECHECK_EVERY-th call (the others run the
    kept one); once it has RECHECK_KEEP times with a median under RECHECK_GAIN of the kept
    one's recent median, the two change places, on the operand too (a new marshal of it
    continues the recheck with the new loop); a slower or only a little faster other loop
    never takes over."""
    vec, scal = (1, 0), (0, 1)
    k = _FakeKernel(cold={vec: 2e-3, scal: 1e-3}, hot={vec: 2e-3, scal: 1e-3})
    state, sites, st0, d, _ = _first_choice(monkeypatch, k, False)
    rc = state.after
    assert type(rc) is tuning._Recheck and rc.variants == [(scal,), (vec,)] and rc.chosen is None
    every, keep = tuning.RECHECK_EVERY, tuning.RECHECK_KEEP

    def calls(n):
        start = len(k.runs)
        for _ in range(n):
            k.first = True
            assert rc.run(k, None, d) == 0
        return k.runs[start:]
    # the vector loop stays slower: run once every RECHECK_EVERY calls, never kept
    ran = calls(every * (keep + 2))
    assert ran.count(vec) == keep + 2 and all(r == vec for r in ran[every - 1::every])
    assert rc.variants[0] == (scal,)
    # a little faster (0.95 of the kept loop's time) is not enough
    k.cold[vec] = k.hot[vec] = 0.95e-3
    calls(every * (keep + 2))
    assert rc.variants[0] == (scal,)
    # clearly faster: after RECHECK_KEEP more of its calls it is kept, and runs from then on
    k.cold[vec] = k.hot[vec] = 0.5e-3
    rc.times[1].clear()
    ran = calls(every * keep)
    assert rc.variants == [(vec,), (scal,)] and ran[-1] == vec
    assert tuning.CHOICES[-1][:2] == (["vector"], "rechecked")
    assert calls(every - 1) == [vec] * (every - 1) and calls(1) == [scal]
    d2 = [0] * 4
    assert sites.start([st0], d2) is rc and (d2[2], d2[1]) == (1, 0)


def test_recheck_stops_on_a_failed_run(monkeypatch):
    vec, scal = (1, 0), (0, 1)
    k = _FakeKernel(cold={vec: 2e-3, scal: 1e-3}, hot={vec: 2e-3, scal: 1e-3})
    state, sites, st0, d, _ = _first_choice(monkeypatch, k, False)
    rc = state.after
    assert rc.run(lambda p, d: 7, None, d) == 7 and not rc.times[0] and not rc.times[1]


class _LearningKernel:
    """A kernel whose time per variant depends on how many runs of that variant came right
    before it, as on a core whose branch predictor learns the rows: ``times[v](n)``."""

    def __init__(self, times):
        self.now, self.times, self.runs, self.last, self.streak = 0.0, times, [], None, 0

    def clock(self):
        return self.now

    def __call__(self, p, d):
        v = "vector" if d[2] else ("split" if d[1] else "plain")
        self.streak = self.streak + 1 if v == self.last else 0
        self.last = v
        self.runs.append(v)
        self.now += self.times[v](self.streak)
        return 0


def test_settling_keeps_the_loop_that_is_fastest_once_learnt(monkeypatch):
    """The first measurement sees each loop in its first runs; a loop that gets faster after
    many runs in a row (the split loop here, 3 units at first, 0.5 after 10 runs) wins the
    second one, which runs each loop SETTLE_CALLS calls in a row and times the last ones, and
    SETTLE_TAIL calls more while the last ones were faster than those before."""
    times = {"vector": lambda n: 1e-5, "split": lambda n: 3e-5 if n < 10 else 0.5e-5,
             "plain": lambda n: 2e-5}
    k = _LearningKernel(times)
    monkeypatch.setattr(tuning, "SETTLE_CALLS", 16)
    monkeypatch.setattr(tuning, "SETTLE_TAIL", 4)
    monkeypatch.setattr(tuning, "SETTLE_MAX", 64)
    state, sites, st0, d, _ = _first_choice(monkeypatch, k, True)
    assert state.chosen == ((1, 0),)  # vector: the split loop has not learnt yet
    settle, n0 = state.after, len(k.runs)
    assert sites.start([st0], [0] * 4) is settle  # a new marshal of the operand continues it
    calls = 0
    while settle.chosen is None:
        assert settle.run(k, None, d) == 0
        calls += 1
    # the split loop's calls 12-15 were faster than 8-11: four more, then no change
    assert calls == 3 * 16 + 4
    assert k.runs[n0:] == ["vector"] * 16 + ["plain"] * 16 + ["split"] * 20
    assert st0.stats[sites.tag] == ((0, 1),) and (d[1], d[2]) == (1, 0)
    # the operand keeps the choice: a later call starts from it, measuring nothing
    d2 = [0] * 4
    assert sites.start([st0], d2) is None and (d2[1], d2[2]) == (1, 0)


def test_settling_extends_a_loop_that_keeps_learning_up_to_its_limit(monkeypatch):
    k = _LearningKernel({"vector": lambda n: 1e-5, "split": lambda n: 1e-3 * 0.9 ** n,
                         "plain": lambda n: 2e-5})
    monkeypatch.setattr(tuning, "clock", k.clock)
    monkeypatch.setattr(tuning, "SETTLE_CALLS", 8)
    monkeypatch.setattr(tuning, "SETTLE_TAIL", 4)
    monkeypatch.setattr(tuning, "SETTLE_MAX", 40)
    sites = _fake_sites()
    st0 = _St()
    st0.stats = {}
    settle = tuning._Settle(sites, lambda: st0, ((1, 0),))
    d = [0] * 4
    while settle.chosen is None:
        settle.run(k, None, d)
    assert k.runs == ["vector"] * 8 + ["plain"] * 8 + ["split"] * 40
    # its last four (1e-3 * 0.9 ** 36..39, 2.03e-5 at the median) against plain's 2e-5 and
    # vector's 1e-5: the vector loop
    assert settle.chosen == ((1, 0),) and st0.stats[sites.tag] == ((1, 0),)


def test_settling_runs_the_first_choice_first_and_the_split_loop_last():
    sites = _fake_sites()
    V, S, P = ((1, 0),), ((0, 1),), ((0, 0),)
    assert tuning._Settle(sites, None, V).variants == [V, P, S]
    assert tuning._Settle(sites, None, P).variants == [P, V, S]
    assert tuning._Settle(sites, None, S).variants == [S, V, P]


def test_settling_stops_on_a_failed_run(monkeypatch):
    """A run that fails is reported at once and counts for nothing."""
    monkeypatch.setattr(tuning, "SETTLE_CALLS", 4)
    sites = _fake_sites(rerun=True)
    st0 = _St()
    settle = tuning._Settle(sites, lambda: st0, ((0, 0),))
    d = [0] * 4
    assert settle.run(lambda p, d: 1, None, d) == 1 and settle.chosen is None and not settle.times


def test_tuner_stops_on_a_failed_run(monkeypatch):
    """A run that fails (a kernel out of memory returns nonzero) is reported at once."""
    sites = _fake_sites(rerun=True)
    d = [0] * 4
    state = sites.start([_St()], d)
    d[3] = 1
    state.record(state.pick(d), 1e-5, d)
    assert state.hot
    runs = []
    assert state.run(lambda p, d: runs.append(1) or 1, None, d) == 1 and runs == [1]
    assert state.chosen is None


def test_tuner_without_vector_code_keeps_the_static_scalar_loop():
    sites = _fake_sites()
    st0 = _St()
    d = [0] * 4
    state = sites.start([st0], d)
    d[3] = 0  # built without AVX-512: the vec flag selects nothing, nothing to measure
    assert state.record(-1, 1.0, d) is True
    # what runs is recorded: the scalar loop the static split flag picks, vector flag off
    assert st0.stats[sites.tag] == ((0, 1),) and state.variants is None
    assert (d[1], d[2]) == (1, 0)


def test_tuner_off(monkeypatch):
    monkeypatch.setattr(tuning, "ENABLED", False)
    d = [0] * 4
    assert _fake_sites().start([_St()], d) is None and (d[1], d[2]) == (1, 1)


def test_explain_names_the_run_time_schedule():
    A = ls.asarray(sp.random(30, 30, density=0.2, format="csr", random_state=0))
    assert "run-time schedule: innermost sums driven by T0 level 1" in ls.explain(A @ np.ones(30))
    assert "run-time schedule" not in ls.explain(A + A)


def test_einsum_build_cache_keys_on_subscripts_shapes_and_dtypes():
    """A repeated einsum replays its checked node; anything that changes the statement or the
    result's shape or dtype builds anew (checked against NumPy)."""
    rng = np.random.default_rng(0)
    cases = [("ij,j->i", (4, 3), (3,), np.float64), ("ij,j->i", (5, 2), (2,), np.float64),
             ("ij,j->i", (4, 3), (3,), np.float32), ("ij,i->j", (4, 3), (4,), np.float64),
             ("ij,ij->", (4, 3), (4, 3), np.float64), ("ij,j->i", (4, 3), (3,), np.int64)]
    for _ in range(2):  # the second round replays every node
        for sub, sa, sb, dt in cases:
            a, b = (rng.random(sa) * 10).astype(dt), (rng.random(sb) * 10).astype(dt)
            la, lb = ls.asarray(a), ls.asarray(b)
            got = ls.einsum(sub, la, lb).materialize()
            want = np.einsum(sub, a, b)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.todense(), want, rtol=1e-6)
    A = ls.asarray(np.arange(6.0).reshape(2, 3))
    for _ in range(2):  # one operand twice
        np.testing.assert_allclose(ls.einsum("ij,ij->i", A, A).todense(), [5.0, 50.0])
    with pytest.raises(ValueError, match="einsum"):
        ls.einsum("ij,j->i", A, ls.asarray(np.ones(4)))  # a new shape is checked again


def test_workspace_plans_are_bound_and_choose_their_policy_each_call(monkeypatch):
    """A product through a workspace (A @ B, CSR) runs on a bound plan once warm, which picks
    the policy and capacity again from each call's sizes (``_workspace``'s rule): an operand
    pair whose result rows span a million columns with a few entries takes the bucket policy,
    a small one the dense row; each switch is planned again, and calls in turn stay right
    against NumPy."""
    from lazysparse.compiler import statement as EX
    planned = []
    real = EX._plan_and_run
    monkeypatch.setattr(EX, "_plan_and_run", lambda *a, **k: planned.append(1) or real(*a, **k))
    small = sp.random(40, 40, density=0.1, format="csr", random_state=3)
    wideL = sp.random(5, 40, density=0.2, format="csr", random_state=4)
    wideR = sp.random(40, 1_000_000, density=2e-6, format="csr", random_state=5)
    s, wl, wr = ls.asarray(small), ls.asarray(wideL), ls.asarray(wideR)
    modes, plans = [], []
    for _ in range(3):
        for a, b, A, B in ((s, s, small, small), (wl, wr, wideL, wideR)):
            n = len(planned)
            with EX.kernel_log() as log:
                r = (a @ b).materialize()
            modes.append(log[-1][0].mode)
            plans.append(len(planned) - n)
            np.testing.assert_allclose(r.todense(), A.toarray() @ B.toarray())
            assert r.format == "csr"
    assert modes == ["ws-dense", "ws-bucket"] * 3
    # the policy changes at every call: each declines the other's plan (the first call may
    # find the small pair's plan bound by an earlier test)
    assert all(plans[1:])
    (s @ s).materialize()  # binds the small pair's plan again
    for _ in range(3):
        n = len(planned)
        r = (s @ s).materialize()
        np.testing.assert_allclose(r.todense(), small.toarray() @ small.toarray())
        assert len(planned) == n  # warm and unchanged: the bound plan, no planning


@pytest.mark.parametrize("ratio, want", [(0.9, 0), (0.85, 0), (0.75, 1), (0.5, 1)])
def test_a_measured_flag_is_switched_on_only_for_a_clear_lead(monkeypatch, ratio, want):
    # runtime/tuning.py Flags: flag 1 (a masked product's dense rows, a workspace's branch-free
    # insert) replaces the default only when its best call takes under FLAG_LEAD of flag 0's
    from lazysparse.runtime import tuning
    if not tuning.ENABLED:
        pytest.skip("LAZYSPARSE_TUNE=0")
    now = [0.0]
    monkeypatch.setattr(tuning, "clock", lambda: now[0])

    class St:  # an operand's storage: the stats dict the choice is kept in
        stats = None

    st, d = St(), [0, 0]
    flags = tuning.Flags([("wsb", 0, 0), ("ext", 0)], ("test", ratio))
    state = flags.start([st], d)

    def kernel(p, d):
        now[0] += 1.0 if d[0] == 0 else ratio
        return 0
    for _ in range(2 * tuning.SAMPLES):
        assert state.run(kernel, None, d) == 0
    assert state.chosen == want and d[0] == want and st.stats[flags.tag] == want
    assert flags.start([st], d) is None and d[0] == want  # kept on the operand


# -- 0-d operands: plans keyed by what their values decide ------------------------------------------
_SCALARS = [2.0, 3.0, 0.0, -0.0, 1.0, np.nan, np.inf, -2.5, 0.0, 2.0]
_SCALAR_OPS = {
    # (lazy, dense oracle): a nonzero scalar keeps A's pattern for these; zero, NaN or inf change
    # what the result stores (A + 0 is A's pattern, A + 1 is full; 0 / A is NaN at A's zeros)
    "add": (lambda L, s: L + s, lambda D, s: D + s),
    "subtract": (lambda L, s: s - L, lambda D, s: s - D),
    "rdivide": (lambda L, s: s / L, lambda D, s: s / D),
    "maximum": (lambda L, s: ls.maximum(L, s), lambda D, s: np.maximum(D, s)),
    "power": (lambda L, s: L ** s, lambda D, s: D ** s),
    "greater": (lambda L, s: L > s, lambda D, s: D > s),
}


@pytest.mark.parametrize("op", sorted(_SCALAR_OPS))
def test_scalar_operands_switch_plans_between_warm_calls(op):
    """One expression, its scalar changed between calls (zero, -0.0, NaN, inf among them): the
    bound plan made for one value must decline the values whose pattern differs."""
    A = _csr(9, 7, [3, 0, 7, 1, 2, 0, 5, 4, 1], 3)
    D = A.toarray()
    lA = ls.asarray(A)
    lazy, dense = _SCALAR_OPS[op]
    for s in _SCALARS + _SCALARS[::-1]:
        with np.errstate(all="ignore"):
            got = lazy(lA, s).todense()
            want = dense(D, s)
        # (the same stored and implicit points; ``pow`` to libmvec's last bits: docs/design.md,
        # "Semantics the project chose")
        assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got == 0, want == 0)
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=0, err_msg=f"{op} with {s!r}")


def test_scalar_multiply_keeps_the_stored_pattern_with_any_value():
    """A * s is an intersection (scipy's rule: implicit zeros stay zero, also for NaN and inf),
    whatever value the bound plan was made for; A * 0 stores nothing (as pydata/sparse)."""
    A = _csr(6, 5, [2, 0, 5, 1, 3, 0], 4)
    lA = ls.asarray(A)
    for s in [2.0, np.nan, 0.0, np.inf, -0.0, 3.0]:
        with np.errstate(all="ignore"):
            got = (lA * s).materialize()
            want = A.multiply(s) if np.isfinite(s) else sp.csr_matrix((A.data * s, A.indices, A.indptr), A.shape)
        np.testing.assert_array_equal(got.todense(), want.toarray())
        assert got.nnz == (0 if s == 0 else A.nnz), s


def test_scalar_plans_are_bound_and_reused():
    """A * 2, then A * 3: the second and later calls take the bound plan (a plan hit, no
    analysis), and A * 0 does not reuse it."""
    from lazysparse.compiler import pipeline as ex
    A = _csr(8, 8, [2, 3, 0, 1, 4, 2, 2, 1], 5)
    lA = ls.asarray(A)
    (lA + 2.0).materialize()
    hits = ex.STATS["plan_hits"]
    for s in (3.0, 4.0, 5.0):
        np.testing.assert_array_equal((lA + s).todense(), A.toarray() + s)
    assert ex.STATS["plan_hits"] >= hits + 3
    np.testing.assert_array_equal((lA + 0.0).todense(), A.toarray())
    assert (lA + 0.0).materialize().nnz == A.nnz  # A's pattern, not a full result


def test_scalar_arrays_are_shared_but_not_for_signed_zeros_or_nan():
    x = ls.asarray(np.array([1.0, -2.0, 0.0]))
    with np.errstate(all="ignore"):
        for s in (0.0, -0.0, 0.0, np.nan, 2.0, 2, True, -0.0):
            np.testing.assert_array_equal((x / s).todense(), np.array([1.0, -2.0, 0.0]) / s)
    i = ls.asarray(np.array([1, 2, 3], dtype=np.int64))
    for _ in range(2):  # (one shared 2, one shared 2.0: each keeps its own dtype)
        assert (i * 2).dtype == np.int64 and (i * 2.0).dtype == np.float64
        np.testing.assert_array_equal((i * 2).todense(), np.array([2, 4, 6]))
        np.testing.assert_array_equal((i * 2.5).todense(), np.array([2.5, 5.0, 7.5]))


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.complex128])
def test_reduction_statements_follow_dtype_axis_and_op(dtype):
    """The reduction builder's statement cache keys on the operand dtype, axes, op and dtype
    argument: the same shape with another dtype gets NumPy's result dtype each time."""
    D = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    L = ls.asarray(sp.csr_matrix(D))
    for _ in range(2):
        for axis in (None, 0, 1, (0, 1)):
            for red in ("sum", "prod", "max", "min"):
                if red in ("max", "min") and np.dtype(dtype).kind == "c":
                    continue
                got = getattr(ls, red)(L, axis=axis).todense()  # (the lazy form for axis=None too)
                want = getattr(D, red)(axis=axis)
                assert got.dtype == want.dtype, (red, axis)
                np.testing.assert_allclose(got, want)
            acc = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
            got = ls.sum(L, axis=axis, dtype=acc).todense()
            assert got.dtype == acc
            np.testing.assert_allclose(got, D.sum(axis=axis, dtype=acc))
        np.testing.assert_allclose(L.mean(axis=1).todense(), D.mean(axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("red", ["max", "min"])
def test_max_and_min_right_in_every_loop_variant(dtype, red):
    """Row and whole-matrix max/min under each run-time variant (vector, split accumulators,
    plain), forced on fresh operands: NaN anywhere in a row (a full vector, the masked tail, a
    split accumulator's lane) wins, infinities and all-negative rows with implicit zeros too."""
    lengths = [0, 1, 7, 8, 9, 16, 17, 33, 5, 12]
    A = _csr(len(lengths), 60, lengths, 13, dtype)
    A.data[:] = -np.abs(A.data) - 1  # negative: a row with implicit zeros has max 0
    starts = A.indptr
    A.data[starts[2] + 6] = np.nan      # the masked tail of a 7-entry row
    A.data[starts[5] + 9] = np.nan      # the second vector of a 16-entry row
    A.data[starts[7] + 30] = np.nan     # a split accumulator's lane in a 33-entry row
    A.data[starts[6] + 3] = -np.inf
    A.data[starts[9] + 11] = np.inf
    D = A.toarray()
    lA = ls.asarray(A)
    for variant, axis in itertools.product((((1, 0),), ((0, 1),), ((0, 0),)), (1, None)):
        with ls.compiler.pipeline.kernel_log() as log:
            getattr(ls, red)(lA, axis=axis).todense()
        sites = log[-1][1].sites
        assert sites is not None and len(sites.sites) == 1  # a measured site: the variants exist
        fresh = ls.asarray(A)
        fresh.storage.stats = {sites.tag: variant}
        with np.errstate(invalid="ignore"):
            got = getattr(ls, red)(fresh, axis=axis).todense()
        want = getattr(D, red)(axis=axis)
        np.testing.assert_array_equal(got, want, err_msg=f"{variant} axis={axis}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_appended_results_drop_computed_zeros_in_the_vector_loop(dtype, index):
    """Elementwise results in an input's pattern (scale, abs, negation, a dense row's product)
    are appended a vector at a time (compiler/lower/simd.py, ``append_segment``): entries the operation
    makes zero are dropped (0, underflow), NaN and -0.0 inputs behave as in the scalar loop, rows
    of 0..33 entries cross full vectors and masked tails, both index widths."""
    lengths = [0, 1, 7, 8, 9, 16, 17, 33, 3]
    A = _csr(len(lengths), 40, lengths, 21, dtype)
    A.data[A.indptr[3]] = 0.0                 # an explicit zero
    A.data[A.indptr[4] + 2] = np.nan
    A.data[A.indptr[6] + 10] = -0.0
    A.data[A.indptr[7] + 31] = 1e-30          # underflows when squared in float32, scaled below
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    D = A.toarray()
    x = np.random.default_rng(22).standard_normal(40).astype(dtype)
    lA = ls.asarray(A)
    cases = [("scale", lambda: lA * 2.5, D * dtype(2.5)), ("tiny", lambda: lA * 1e-300, D * dtype(1e-300)),
             ("abs", lambda: abs(lA), np.abs(D)), ("negative", lambda: -lA, -D),
             ("square", lambda: lA * lA, D * D), ("row product", lambda: lA * ls.asarray(x), D * x)]
    for name, f, want in cases:
        with np.errstate(all="ignore"):
            got = f().materialize()
        np.testing.assert_array_equal(got.todense(), want, err_msg=name)
        assert got.nnz == np.count_nonzero(want), name  # computed zeros are not stored


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_loops_apply_abs_sqrt_divide_negative_exactly(dtype):
    """The vector loops' elementwise operations round as the scalar C does: values, row sums and
    maxima of ``abs``, ``sqrt``, division and negation match NumPy, NaN and -0.0 inputs too."""
    A = _csr(9, 50, [0, 1, 7, 8, 9, 16, 17, 33, 40], 23, dtype)
    A.data[A.indptr[2]] = -0.0
    A.data[A.indptr[5] + 3] = np.nan
    D = A.toarray()
    lA = ls.asarray(A)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    with np.errstate(all="ignore"):
        for _ in range(2 * tuning.SAMPLES + 3):  # every run-time variant while the tuner measures
            np.testing.assert_array_equal(np.sqrt(abs(lA)).todense(), np.sqrt(np.abs(D)))
            np.testing.assert_array_equal((lA / 3.0).todense(), D / dtype(3.0))
            np.testing.assert_array_equal((-lA).todense(), -D + 0.0)
            np.testing.assert_allclose(abs(lA).sum(axis=1).todense(), np.abs(D).sum(axis=1), rtol=tol)
            np.testing.assert_array_equal((-lA).max(axis=1).todense(), (-D).max(axis=1))
            np.testing.assert_allclose((lA / 3.0).sum().todense(), (D / dtype(3.0)).sum(), rtol=tol)


def test_scalar_decisions_are_the_pattern_walks_value_dependent_ones():
    """``kernel.scalar_decisions`` (what a bound plan with 0-d operands rechecks) equals the
    decisions of the full pattern walk (``global_pattern``) at the calls ``scalar_calls``
    lists, for every value; the walk's other decisions do not change with the values."""
    from lazysparse.compiler.plan import patterns as P
    from lazysparse.compiler.plan import kernel as PL
    lA = ls.asarray(_csr(5, 4, [1, 0, 3, 2, 4], 24))
    mask = (lA > 0).materialize()
    builders = [lambda s: lA + s, lambda s: s - lA, lambda s: s / lA, lambda s: lA / s,
                lambda s: ls.maximum(lA, s), lambda s: lA ** s, lambda s: lA > s, lambda s: lA * s,
                lambda s: ls.where(mask, lA, s)]
    for k, build in enumerate(builders):
        fixed = None
        # (``lA ** 2.0`` is ``square(lA)``, NumPy's scalar-power fast path: another statement)
        for s in (2.0 if k != 5 else 2.5, 0.0, -0.0, np.nan, np.inf, -1.5):
            node = build(s)._node
            sts = [c._storage for c in node.children]
            _, dec = PL.global_pattern(node.stmt, sts)
            at = [i for i, _, _ in P.scalar_calls(node.stmt.expr)]
            assert PL.scalar_decisions(node.stmt, sts) == tuple(dec[i] for i in at)
            rest = tuple(d for i, d in enumerate(dec) if i not in at)
            assert fixed is None or rest == fixed
            fixed = rest


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
def test_a_transposed_operand_is_one_view_call_after_call(fmt):
    """``A.T @ x`` in a loop: the transpose of a concrete array is a view of its arrays, made
    once and kept with the array (compiler/pipeline.py ``_relabel_view``), so later calls take the
    product's bound plan at once (``array._known``). Values against NumPy every call; ``A.T``
    stays lazy until a call materializes it; a new array gets its own view."""
    D = np.arange(35.0).reshape(5, 7) % 4
    x = np.arange(5.0) - 2
    A = ls.asarray(sp.csr_array(D).asformat(fmt) if fmt != "dense" else D)
    lx = ls.asarray(x)
    assert A.T.is_lazy
    views = []
    for _ in range(3):
        t = A.T
        np.testing.assert_array_equal((t @ lx).materialize().todense(), D.T @ x)
        views.append(t._node.result)  # (a dense transpose is a view as well)
    assert views[0] is not None and all(v is views[0] for v in views)
    B = ls.asarray(sp.csr_array(D * 2).asformat(fmt) if fmt != "dense" else D * 2)
    np.testing.assert_array_equal((B.T @ lx).materialize().todense(), 2 * D.T @ x)
    np.testing.assert_array_equal((A.T @ lx).materialize().todense(), D.T @ x)
