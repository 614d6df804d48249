"""How the demo and the benchmarks time calls: interleaved rounds of several libraries (and the
back-to-back variant), the warm-up that brings a lazysparse kernel to its steady state (its
run-time tuner settled, runtime/tuning.py), and the tuner's choices made while timing."""
from __future__ import annotations

import random
import statistics
import time

# The fewest warm-up calls before a steady-state measurement, tuner or not: a kernel's later
# calls still find their code and data in caches the first ones filled
MIN_WARM_CALLS = 10
# Past this many seconds of warm-up the demo stops waiting for the tuner (and says so): a
# kernel that is short inside a long call would otherwise take minutes
WARM_BUDGET_S = 30.0


def fmt_ms(v):
    """A time in ms as the tables print it."""
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def measure_interleaved(fns: dict, repeat: int, budget_s: float, back_to_back: bool = False) -> dict:
    """Median times of several libraries on one input, measured in interleaved rounds: every
    round calls each library once, in a shuffled order (seeded), so drift on a shared machine
    hits all of them alike and each follows each other equally often (what ran just before a
    call decides how much of its working set is still in cache). Each library first gets one untimed warm-up call; one whose warm-up took long
    is timed in fewer rounds (``budget_s`` per library). ``back_to_back``: each round calls
    each library twice in a row and times the second call, which then follows one of its own
    kind, as in a loop. Returns {name: {median_ms, first_ms}} or {name: {error}}."""
    calls = 2 if back_to_back else 1
    out, live, rounds, times = {}, [], {}, {}
    for name, fn in fns.items():
        try:
            t0 = time.perf_counter()
            fn()
            first_s = time.perf_counter() - t0
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            continue
        live.append(name)
        each = calls * first_s
        rounds[name] = repeat if each * repeat <= budget_s else max(1, int(budget_s / max(each, 1e-9)))
        times[name] = []
        out[name] = {"first_ms": first_s * 1e3}
    rng = random.Random(0)
    for r in range(repeat):
        order = list(live)
        rng.shuffle(order)
        for name in order:
            if len(times[name]) >= rounds[name]:
                continue
            if back_to_back:
                fns[name]()
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    for name in live:
        if name == "lazysparse":  # its first call is the compiling one, reported by the caller
            out[name].pop("first_ms")
        out[name]["median_ms"] = statistics.median(times[name]) * 1e3
    return out


def measure_back_to_back(fns: dict, repeat: int, budget_s: float) -> dict:
    """``measure_interleaved`` with each round calling every function twice in a row and timing
    the second call: the time of a call that follows one of its own kind, as in a loop (for two
    threads: the team's second thread is still awake)."""
    return measure_interleaved(fns, repeat, budget_s, back_to_back=True)


# ---------------------------------------------------------------------------------------------
# the run-time tuner's steady state

def tuning_window() -> int:
    """Calls of a kernel on one operand within which the run-time tuner has finished measuring
    it (runtime/tuning.py), counted from its first call: the first measurement (``2 * SAMPLES``
    single runs, or ``1 + HOT_CALLS`` calls of hot runs), then settling (``_Settle``, short
    kernels only) of at most three loops, each at most ``max(SETTLE_CALLS, SETTLE_MAX)`` calls.
    The on/off flags (``Flags``: ``2 * SAMPLES`` calls) are measured in the same calls. 1 when
    tuning is off (``LAZYSPARSE_TUNE=0``)."""
    from lazysparse.runtime import tuning as t
    if not t.ENABLED:
        return 1
    first = max(2 * t.SAMPLES, 1 + t.HOT_CALLS)
    return first + 3 * max(t.SETTLE_CALLS, t.SETTLE_MAX)


def tuning_pending(operands) -> bool:
    """Is the run-time tuner still measuring a kernel driven by one of ``operands`` (concrete
    lazysparse arrays)? The tuner keeps its state on the driving operand's storage under a
    ``("tune", kernel)`` or ``("flags", kernel)`` key: a tuple or an int once it has chosen, a
    ``_Recheck`` on a long kernel (chosen; one call in ``RECHECK_EVERY`` tries the other loop, for
    as long as it is used: steady), anything else while it measures."""
    from lazysparse.runtime import tuning
    for a in operands:
        stats = getattr(getattr(a, "storage", None), "stats", None)
        if not stats:
            continue
        for key, ent in list(stats.items()):  # (a copy: the tuner may add an entry meanwhile)
            if type(key) is tuple and key and key[0] in ("tune", "flags"):
                if not (type(ent) in (tuple, int) or isinstance(ent, tuning._Recheck)):
                    return True
    return False


def warm_until_settled(fn, operands, min_calls: int = MIN_WARM_CALLS, max_calls: int | None = None,
                       budget_s: float = WARM_BUDGET_S) -> tuple[int, bool]:
    """Call ``fn`` (untimed) until the run-time tuner has settled on every kernel the calls run
    on ``operands`` (``tuning_pending``): at least ``min_calls`` calls, at most ``max_calls``
    (default ``tuning_window()``, which covers the tuner's whole measurement) or ``budget_s``
    seconds. Returns (calls made, settled)."""
    if max_calls is None:
        max_calls = tuning_window()
    max_calls = max(max_calls, min_calls)
    t_end = time.perf_counter() + budget_s
    n = 0
    while n < max_calls:
        if n >= min_calls and not tuning_pending(operands):
            return n, True
        if n >= min_calls and time.perf_counter() > t_end:
            break
        fn()
        n += 1
    return n, not tuning_pending(operands)


def warm(fn, calls: int) -> None:
    """``calls`` untimed calls of ``fn``."""
    for _ in range(calls):
        fn()


def tuner_choices_since(made: int) -> list:
    """The run-time tuner's choices recorded since its counter read ``made``
    (``tuning.CHOICES_MADE[0]`` before a measurement): {loops, timed, best_us} each."""
    from lazysparse.runtime import tuning
    n = min(tuning.CHOICES_MADE[0] - made, len(tuning.CHOICES))
    if not n:
        return []
    return [{"loops": c[0], "timed": c[1], "best_us": c[2]} for c in list(tuning.CHOICES)[-n:]]
