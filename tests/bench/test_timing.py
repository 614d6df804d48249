"""The benchmarks' warm-up to the steady state (lazysparse/bench/timing.py): it waits for the
run-time tuner (runtime/tuning.py) to finish measuring a kernel on its operands, and its bound
covers the tuner's whole measurement."""
from __future__ import annotations

import lazysparse as ls
from lazysparse import datasets
from lazysparse.bench import timing
from lazysparse.runtime import tuning


def test_window_covers_the_tuners_measurement():
    if not tuning.ENABLED:
        assert timing.tuning_window() == 1
        return
    first = max(2 * tuning.SAMPLES, 1 + tuning.HOT_CALLS)
    assert timing.tuning_window() >= first + 3 * max(tuning.SETTLE_CALLS, tuning.SETTLE_MAX)


def test_warm_up_waits_for_the_flag_measurement():
    # a masked product's on/off flags (tuning.Flags) are measured over the first 2 * SAMPLES
    # calls on any machine (the vector loops only where AVX-512 is built)
    lA = ls.asarray(datasets.rmat(7, seed=3))
    call = lambda: (lA * (lA @ lA)).materialize()  # noqa: E731
    call()
    if not tuning.ENABLED:
        assert not timing.tuning_pending([lA])
        return
    assert timing.tuning_pending([lA])
    calls, settled = timing.warm_until_settled(call, [lA], min_calls=0)
    assert settled and not timing.tuning_pending([lA])
    assert calls == 2 * tuning.SAMPLES - 1  # the first call measured too
    # settled: only the floor of calls
    assert timing.warm_until_settled(call, [lA], min_calls=3) == (3, True)


def test_pending_reads_the_states_on_the_operands():
    lA = ls.asarray(datasets.rmat(5, seed=1))
    stats = lA.storage.memo()
    assert not timing.tuning_pending([lA, 2.0])
    stats[("tune", "k")] = object()               # a state still measuring
    assert timing.tuning_pending([lA])
    stats[("tune", "k")] = object.__new__(tuning._Recheck)  # chosen; rechecked while in use
    assert not timing.tuning_pending([lA])
    stats[("tune", "k")] = ((1, 0),)              # chosen
    stats[("flags", "k")] = 1
    assert not timing.tuning_pending([lA])


def test_warm_up_stops_at_its_bounds():
    lA = ls.asarray(datasets.rmat(5, seed=2))
    lA.storage.memo()[("tune", "never")] = object()  # never settles
    n = []
    calls, settled = timing.warm_until_settled(lambda: n.append(1), [lA], min_calls=2, max_calls=7)
    assert (calls, settled) == (7, False) and len(n) == 7
    calls, settled = timing.warm_until_settled(lambda: n.append(1), [lA], min_calls=2, budget_s=0.0)
    assert (calls, settled) == (2, False)
