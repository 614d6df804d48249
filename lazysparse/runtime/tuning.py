"""Measured choice among a kernel's run-time schedule variants (a first autoscheduler step). Some
schedule decisions cannot be read off cheap statistics: the innermost segment sum (SpMV's row, a
row sum, any contraction whose innermost index is sparse) has three loops in one kernel, picked by
``d[]`` flags (AVX-512 vector, split scalar accumulators, plain scalar;
compiler/lower/reductions.py), and whether the vector loop wins depends on column locality and
row-length mix. So where the vector loop is built it is timed against the static scalar choice on
the data itself, FFTW-style, in the first calls on a new operand (``_State``, then ``_Settle`` or
``_Recheck``), every call still computing the right result, and the faster is kept on the storage
that drives the schedule sites; ``LAZYSPARSE_TUNE=0`` turns measuring off (docs/design.md,
"Run-time schedule tuner")."""
from __future__ import annotations

import collections
import os
import threading
import time
import weakref
from statistics import median_high

from lazysparse.formats.storage import memo_of

SAMPLES = 3        # single runs: timed calls per variant; its best counts (robust to one noisy call)
FLAG_LEAD = 0.8    # Flags: flag 1 is kept when its best call is under this fraction of flag 0's
HOT_CALLS = 2      # hot runs: measuring calls after the first, each running A, B, A, B, A and
HOT_RUNS = 5       # timing all but the first: 4 samples per variant in all
HOT_MAX_S = 0.001  # hot runs for kernels whose first run took less: a measuring call then costs
                   # at most a few ms
SETTLE_CALLS = 256  # settling (``_Settle``): calls per variant of a short kernel, of which the
SETTLE_TAIL = 32    # last SETTLE_TAIL are timed (the branch predictor has learnt the rows by then),
SETTLE_MAX = 640    # and SETTLE_TAIL more while the last ones still got faster (up to SETTLE_MAX)
SETTLE_GAIN = 0.97  # ("faster": a median under this fraction of the one before)
RECHECK_EVERY = 32  # rechecking (``_Recheck``): a long kernel's other variant runs every this
RECHECK_KEEP = 5    # many calls; once it has this many times, it takes over when its median
RECHECK_GAIN = 0.9  # is under this fraction of the kept variant's over its last RECHECK_RECENT
RECHECK_RECENT = 32
ENABLED = os.environ.get("LAZYSPARSE_TUNE", "1") != "0"
clock = time.perf_counter
# the latest choices, for benchmark records (lazysparse.bench.suite): (variant names, how timed, best
# time per variant in us); CHOICES_MADE counts them all
CHOICES = collections.deque(maxlen=64)
CHOICES_MADE = [0]
# held while a state is replaced on its operand and a choice recorded (rare: a few times per
# operand); never on a call that only runs a kernel
_PUBLISH = threading.Lock()


def split_flag(st, l):
    """Split accumulators for the sums driven by level ``l`` of ``st``? They hide the latency of
    the additions when segments are long or uniform; on short, skewed segments (power-law rows)
    the plain loop wins, mispredicting one loop exit per segment instead of two (measured on the
    corpus: docs/design.md, "run-time schedule flags")."""
    mean, mx = st.segment_stats(l)
    return 1 if mean >= 32 or (mean >= 8 and mx <= 4 * mean) else 0


class Sites:
    """The schedule sites of one kernel: per driving (slot, level), the ``d[]`` indices of its
    ``split`` flag and, where a vector loop was generated, its ``vec`` flag."""

    def __init__(self, abi_d, kernel_key, rerun=False):
        # rerun: the kernel may run twice in one call (it overwrites its whole dense result)
        self.rerun = rerun
        sites = {}
        self.caps = None  # d[] slot where the kernel reports whether its vector code is built
        for k, desc in enumerate(abi_d):
            if desc[0] in ("split", "vec"):
                sites.setdefault((desc[1], desc[2]), {})[desc[0]] = k
            elif desc[0] == "simd":
                self.caps = k
        self.sites = [(slot, lvl, f["split"], f.get("vec")) for (slot, lvl), f in sites.items()]
        self.tag = ("tune", kernel_key)
        self.key_slot = self.sites[0][0]

    @classmethod
    def of(cls, abi_d, kernel_key, rerun=False):
        """The sites of a kernel, or None when it has no run-time schedule flags."""
        return cls(abi_d, kernel_key, rerun) if any(desc[0] == "split" for desc in abi_d) else None

    def apply(self, variant, d):
        for (_, _, ks, kv), (vec, split) in zip(self.sites, variant):
            d[ks] = split
            if kv is not None:
                d[kv] = vec

    def start(self, sts, d):
        """Set the flags for a call on new operands; returns the tuning state while the
        operand's variants are still being measured, else None."""
        st = sts[self.key_slot]
        stats = st.stats
        if stats is None:
            stats = _stats(st)
        ent = stats.get(self.tag)  # (read once: another thread may replace the entry meanwhile)
        if type(ent) is tuple:  # measured before: the winner
            self.apply(ent, d)
            return None
        if type(ent) is _Settle or type(ent) is _Recheck:  # its variant of the moment
            ent.pick(d)
            return ent
        default = tuple((1 if kv is not None else 0, split_flag(sts[slot], lvl))
                        for slot, lvl, _, kv in self.sites)
        self.apply(default, d)
        if not ENABLED:
            return None
        if ent is None:
            # one state per operand: a thread that loses the race measures the winner's
            ent = stats.setdefault(self.tag, _State(self, st, default))
            if type(ent) is not _State:  # (measured to its end in between)
                return self.start(sts, d)
        return ent


class _State:
    """Samples per variant for one operand; replaced by the winning variant when complete.

    Two variants at most: every site's vector loop, or every site's static scalar loop
    (``split_flag`` picks well between the two scalar loops, so they are not measured against
    each other). A counter picks the variant, its flags are precomputed ``d[]`` writes: a
    measuring call stays cheap beyond its kernel runs.

    Segment lengths pick well between the two scalar loops (``split_flag``), but the vector loop,
    measured on the corpus, is 25-60% faster than scipy's scalar loop on most matrices and ~15% slower
    than the split scalar loop on cage10 (uniform rows of ~13 entries, two gathers per row). How it is
    timed depends on the kernel:

    * **hot runs** (a short kernel that may run several times: a dense result it overwrites
      entirely): after the first call, two calls run the kernel five times each, ``A, B, A, B, A``
      then ``B, A, B, A, B``, and all runs but the first count. Each counted run follows a run over
      the same data, so both variants are timed in the same cache state; timing each variant once
      per call instead (right after whatever the program did before) lets that state decide: on
      cage10 the wrong loop won 3 times in 10.
    * **single runs** (a long kernel, or one whose result cannot be recomputed in place): the calls
      alternate the variants, ``SAMPLES`` each, and the best time counts. At milliseconds per run
      the cache state before a call matters little.

    The choice is stored on the storage that drives the schedule sites (storages are immutable, so it
    stays valid), so ``A @ x`` in a loop has a first choice within three calls; a short kernel is then
    measured again by ``_Settle``, a long one by ``_Recheck``. With ``LAZYSPARSE_TUNE=0`` the static
    choice (vector where built, else ``split_flag``) is used.

    Python threads may call a kernel on one operand at once, and the GIL does not make a state's
    compound updates atomic (nor is there one under free-threaded Python): unguarded, eight threads
    each read sample count 0, timed the same variant, and the choice took ``min`` of an empty list. So
    a state measures under its own lock, taken without waiting: a call that finds it held (another
    thread is measuring) runs the kernel untimed with flags that are valid at any time (the static
    choice, or the one made), which also keeps two timed runs from overlapping each other. A state is
    replaced on the operand (``_publish``) under one module lock, compared first, so a thread that
    measured a state another thread already replaced never undoes the newer entry. Once the choice is
    a tuple on the storage nothing measures and no lock is taken: the glue reads the one reference
    ``stats[tag]`` (``Sites.start``) or ``chosen`` (set after ``after``, so a thread that sees the
    choice sees what measures next).
    """

    def __init__(self, sites: Sites, st, default):
        # the storage weakly: its stats dict holds this state until the choice replaces it
        self.sites, self.storage, self.default = sites, weakref.ref(st), default
        self.variants = None  # known after the first call reports the vector capability
        self.samples = None
        self.writes = None    # per variant: the (d index, value) pairs that select it
        self.n = 0            # calls measured so far
        self.hot = False      # measured in hot runs (class docstring), known after the first call
        self.chosen = None    # the winner, once measured (other threads may still hold self)
        self.after = None     # what measures next on this operand (``_Settle``), once chosen
        self.mu = threading.Lock()  # held by the thread measuring (``_State``)

    def run(self, fn, p, d):
        """The kernel run(s) of one measuring call (the glue's ``fn(p, d)``); returns the
        kernel's status, nonzero when it failed (the caller reports it)."""
        chosen = self.chosen
        if chosen is not None:  # chosen since this thread's glue took the state
            self.sites.apply(chosen, d)
            return fn(p, d)
        if not self.mu.acquire(False):
            # another thread is measuring: untimed, on the static choice (right whatever runs)
            self.sites.apply(self.default, d)
            return fn(p, d)
        try:
            if self.hot and self.chosen is None:
                return self._hot(fn, p, d)
            k = self.pick(d)
            t0 = clock()
            rc = fn(p, d)
            t1 = clock()
            if not rc:
                self.record(k, t1 - t0, d)
            return rc
        finally:
            self.mu.release()

    def _hot(self, fn, p, d):
        """``A, B, A, B, A``: the runs after the first are timed, each right after a run over
        the same data; the next call swaps the roles."""
        a = self.n & 1
        for j in range(HOT_RUNS):
            k = a ^ (j & 1)
            rc, seconds = _timed(self.writes[k], fn, p, d)
            if rc:
                return rc
            if j:
                self.samples[k].append(seconds)
        self.n += 1
        if self.n > HOT_CALLS:  # (n counts the first call too)
            self._choose(d)
        return 0

    def pick(self, d):
        """Flags of the next variant to time (its index), or -1: the defaults already in ``d``.
        ``pick`` and ``record`` change the samples: ``run`` calls them holding ``mu``."""
        if self.chosen is not None:
            self.sites.apply(self.chosen, d)
            return -1
        if self.variants is None:
            return -1
        k = self.n & 1
        for i, v in self.writes[k]:
            d[i] = v
        return k

    def record(self, k, seconds, d) -> bool:
        """Add a sample; True when the choice is made (and ``d`` holds it)."""
        if self.chosen is not None:
            self.sites.apply(self.chosen, d)
            return True
        if self.variants is None:
            if self.sites.caps is None or d[self.sites.caps] != 1:
                # no vector code built (a machine without AVX-512, or LAZYSPARSE_SIMD=0): the
                # static scalar loops, recorded as what runs (the vector flags are ignored)
                self._keep(tuple((0, split) for _, split in self.default), d)
                return True
            scalar = tuple((0, split) for _, split in self.default)
            vector = tuple((1, 0) if kv is not None else (0, split)
                           for (_, _, _, kv), (_, split) in zip(self.sites.sites, self.default))
            if vector == scalar:
                self._keep(self.default, d)
                return True
            self.variants, self.samples = [vector, scalar], [[], []]
            self.writes = [_writes(self.sites, v) for v in self.variants]
            # the first call ran the default: vector where built. A short kernel that may run
            # twice is measured hot from now on; its first, cold run does not count
            self.n = 1
            if self.sites.rerun and seconds < HOT_MAX_S:
                self.hot = True
                return False
            k = 0
        else:
            self.n += 1
        self.samples[k].append(seconds)
        if self.n < 2 * SAMPLES:
            return False
        self._choose(d)
        return True

    def _choose(self, d):
        """Keep the variant with the best time (a variant without samples never wins: constants
        set so that a measurement times one variant only still choose)."""
        inf = float("inf")
        best = 0 if min(self.samples[0], default=inf) <= min(self.samples[1], default=inf) else 1
        self._keep(self.variants[best], d)

    def _keep(self, variant, d):
        settle = record = None
        if self.samples is not None and self.chosen is None:
            names = ["vector" if v[0] else "scalar" for v in variant]
            record = (names, "hot" if self.hot else "single",
                      [round(min(s) * 1e6, 1) if s else None for s in self.samples])
            if min((min(s) for s in self.samples if s), default=0.0) < HOT_MAX_S and SETTLE_CALLS > 0:
                settle = _Settle(self.sites, self.storage, variant)
            elif not self.hot and RECHECK_EVERY > 0:
                other = self.variants[1] if variant == self.variants[0] else self.variants[0]
                settle = _Recheck(self.sites, variant, other)
        # ``after`` before ``chosen``: the glue reads ``chosen`` without a lock, then ``after``
        self.after = settle
        self.chosen = variant
        _publish(self.storage(), self.sites.tag, self, variant if settle is None else settle, record)
        self.sites.apply(variant, d)


class _Measuring:
    """A call of a state that measures with one thread at a time: the choice once made; else
    timed (``_step``) by the thread that takes ``mu`` without waiting, and run untimed with
    valid flags (``_untimed``) by a thread that finds it held."""

    def run(self, fn, p, d):
        chosen = self.chosen
        if chosen is not None:
            self._apply(chosen, d)
            return fn(p, d)
        if not self.mu.acquire(False):  # another thread is timing
            self._untimed(d)
            return fn(p, d)
        try:
            return self._step(fn, p, d)
        finally:
            self.mu.release()


class _Settle(_Measuring):
    """The second measurement of a short kernel's variants: each of the loops (vector where
    built, split accumulators, plain) runs for ``SETTLE_CALLS`` calls in a row, ``SETTLE_TAIL``
    more at a time while the median of the last ones still drops (up to ``SETTLE_MAX``), and the
    median of its last ``SETTLE_TAIL`` calls counts; the fastest is then kept on the operand.

    The first measurement (``_State``) sees each loop in its first few runs. A kernel called
    again and again on the same rows (SpMV in an iterative solver, a benchmark) runs faster
    once the core's branch predictor has learnt the rows' loop exits, and by how much differs
    per loop: SpMV on two threads (each running the same rows every call), vector / split /
    plain, in the first calls and after 256: vt2010 74 / 126 / 127 us and 72 / 38 / 110 us;
    email-Enron 137 / 172 / 145 and 135 / 138 / 89; ca-CondMat 71 / 120 / 91 and 68 / 45 / 45
    (docs/design.md, "Loop exits the predictor learns"). Every call computes the right result
    meanwhile. The first measurement's choice runs first, then the others, the split loop last
    where it was not first (it wins most often, and the last one keeps what the predictor
    learnt). Each call costs one timed run and a few ``d[]`` writes."""

    def __init__(self, sites: Sites, storage, first):
        self.sites, self.storage = sites, storage
        # (made only after the first measurement timed a vector loop: one is built). ``first``,
        # that measurement's choice, runs first: a program that calls the kernel fewer times
        # than a block runs what it ran before settling existed
        nsites = len(sites.sites)
        split, plain = ((0, 1),) * nsites, ((0, 0),) * nsites
        vector = tuple((1, 0) if kv is not None else (0, 1) for (_, _, _, kv) in sites.sites)
        self.variants = [first] + [v for v in (vector, plain, split) if v != first]
        self.writes = [_writes(sites, v) for v in self.variants]
        self.scores = []
        self.times = []
        self.chosen = None
        self.after = None
        self.mu = threading.Lock()  # held by the thread timing (``_State``)

    def pick(self, d):
        """Sets the flags of the variant of the moment."""
        chosen = self.chosen
        if chosen is not None:
            self.sites.apply(chosen, d)
            return
        # (min: another thread may have added the last score and not yet set the choice)
        for i, v in self.writes[min(len(self.scores), len(self.writes) - 1)]:
            d[i] = v

    def _apply(self, chosen, d):
        self.sites.apply(chosen, d)

    def _untimed(self, d):
        self.pick(d)  # the variant of the moment

    def _step(self, fn, p, d):
        """One timed call (``run``, holding ``mu``)."""
        chosen = self.chosen
        if chosen is not None:  # (chosen by the thread that held ``mu`` before)
            self.sites.apply(chosen, d)
            return fn(p, d)
        self.pick(d)
        rc, seconds = _timed((), fn, p, d)
        if rc:
            return rc
        times = self.times
        times.append(seconds)
        n = len(times)
        if n >= SETTLE_CALLS and (n - SETTLE_CALLS) % SETTLE_TAIL == 0:
            last = median_high(times[-SETTLE_TAIL:])
            before = median_high(times[-2 * SETTLE_TAIL:-SETTLE_TAIL])
            if n + SETTLE_TAIL <= SETTLE_MAX and last < SETTLE_GAIN * before:
                return 0  # still learning: SETTLE_TAIL more calls
            self.scores.append(last)
            self.times = []
            if len(self.scores) >= len(self.variants):
                best = min(range(len(self.variants)), key=self.scores.__getitem__)
                chosen = self.chosen = self.variants[best]
                _publish(self.storage(), self.sites.tag, self, chosen,
                         ([_name(v) for v in chosen], "settled",
                          [round(t * 1e6, 1) for t in self.scores]))
                self.sites.apply(chosen, d)
        return 0


class _Recheck:
    """The variants of a long kernel (``HOT_MAX_S`` or more a run), measured again while it is
    in use: every ``RECHECK_EVERY``-th call runs the variant not kept, and once it has
    ``RECHECK_KEEP`` times whose median is under ``RECHECK_GAIN`` of the kept variant's over its
    last ``RECHECK_RECENT`` calls, the two change places. A long kernel is a memory-bound one
    whose loops rank by the state of the machine's memory, which moves with other tenants on a
    shared host: SpMV on R-MAT 2^20, two threads, the streamed vector / split loops, 7.9 / 8.8
    ms in one minute and 13.2 / 11.5 in another (docs/design.md, "Streamed segment sums"), where
    the first measurement (``_State``: three calls each) keeps whichever won when it ran. At
    milliseconds a run there is nothing for a branch predictor to learn across calls, so a
    call of the other loop now and then costs its own time only: under 1% of the calls' time.
    Every call computes the right result with either loop. It stays on the operand's storage,
    never done (``chosen`` stays None: the glue keeps calling ``run``)."""

    chosen = None
    after = None

    def __init__(self, sites: Sites, kept, other):
        self.sites = sites
        self.variants = [kept, other]
        self.writes = [_writes(sites, v) for v in self.variants]
        self.times = [collections.deque(maxlen=RECHECK_RECENT), collections.deque(maxlen=RECHECK_KEEP)]
        self.n = 0
        # held by the thread timing (``_State``). Taken on every call, as the recheck
        # never ends: a few tenths of a microsecond on a kernel of a millisecond or more
        self.mu = threading.Lock()

    def pick(self, d):
        """Sets the flags of the kept variant."""
        for i, v in self.writes[0]:
            d[i] = v

    def run(self, fn, p, d):
        if not self.mu.acquire(False):
            self.pick(d)  # another thread is timing: the kept variant, untimed
            return fn(p, d)
        try:
            self.n += 1
            k = 1 if self.n % RECHECK_EVERY == 0 else 0
            rc, seconds = _timed(self.writes[k], fn, p, d)
            if rc:
                return rc
            times = self.times
            times[k].append(seconds)
            if k and len(times[1]) == RECHECK_KEEP and times[0]:
                if median_high(times[1]) < RECHECK_GAIN * median_high(times[0]):
                    # new lists, not reversed in place: ``pick`` reads ``writes`` unlocked
                    self.variants = self.variants[::-1]
                    self.writes = self.writes[::-1]
                    self.times = [collections.deque(maxlen=RECHECK_RECENT),
                                  collections.deque(maxlen=RECHECK_KEEP)]
                    _publish(None, None, None, None,
                             ([_name(v) for v in self.variants[0]], "rechecked",
                              [round(median_high(t) * 1e6, 1) for t in times]))
            return 0
        finally:
            self.mu.release()


def _stats(st):
    """The storage's stats dict, made once whichever thread asks first (formats/storage.py)."""
    return memo_of(st)


def _publish(st, tag, old, new, record=None):
    """Replace the state ``old`` in the storage ``st``'s stats with ``new`` (what measures next,
    or the choice) unless another entry took its place (one measured by a thread that raced
    with this one: it stays); ``record``: a ``CHOICES`` entry to add. ``st`` None: the storage
    is gone, only ``record`` is added."""
    with _PUBLISH:
        if record is not None:
            CHOICES.append(record)
            CHOICES_MADE[0] += 1
        if st is None:
            return
        stats = memo_of(st)
        cur = stats.get(tag)
        if cur is old or cur is None:
            stats[tag] = new


def _timed(writes, fn, p, d):
    """Run the kernel ``fn(p, d)`` with the flags ``writes`` set: (its status, seconds)."""
    for i, v in writes:
        d[i] = v
    t0 = clock()
    rc = fn(p, d)
    return rc, clock() - t0


def _writes(sites, variant):
    """The ``(d index, value)`` pairs that select ``variant`` (a ``(vec, split)`` per site)."""
    out = []
    for (_, _, ks, kv), (vec, split) in zip(sites.sites, variant):
        out.append((ks, split))
        if kv is not None:
            out.append((kv, vec))
    return tuple(out)


def _name(site_variant):
    vec, split = site_variant
    return "vector" if vec else ("split" if split else "plain")


class Flags:
    """Run-time choices of one kernel that are on/off flags with no static model, measured the
    same way (``macc``: a masked product's rows summed densely rather than probing the mask,
    compiler/lower/coiteration.py ``emit_row_acc``; ``wsb``: a workspace's branch-free insert,
    compiler/lower/workspace.py). A kernel's flags are set together. Both settings alternate over the
    first calls on a new driving operand, ``SAMPLES`` each, single runs; the faster is kept on
    the operand. Until then, and with ``LAZYSPARSE_TUNE=0``, the flags stay 0 (the probe, the
    insert with a branch)."""

    KINDS = ("macc", "wsb")

    def __init__(self, abi_d, kernel_key):
        self.slots = [k for k, desc in enumerate(abi_d) if desc[0] in self.KINDS]
        self.sites = [(abi_d[self.slots[0]][1],)]  # the driving operand's slot (the glue reads it)
        self.key_slot = self.sites[0][0]
        self.tag = ("flags", kernel_key)

    @classmethod
    def of(cls, abi_d, kernel_key):
        return cls(abi_d, kernel_key) if any(desc[0] in cls.KINDS for desc in abi_d) else None

    def apply(self, value, d):
        for k in self.slots:
            d[k] = value

    def start(self, sts, d):
        st = sts[self.key_slot]
        stats = st.stats
        if stats is None:
            stats = _stats(st)
        ent = stats.get(self.tag)  # (read once, as in Sites.start)
        if ent is None and ENABLED:
            ent = stats.setdefault(self.tag, _FlagState(self, st))  # one state per operand
        if type(ent) is int:  # measured before: the winner
            self.apply(ent, d)
            return None
        self.apply(0, d)
        return ent if ENABLED else None


class _FlagState(_Measuring):
    """Samples of flags 0 and 1 for one operand, then the winner (stored on the operand)."""

    after = None  # (nothing measures after it: see _State.after)

    def __init__(self, flags: Flags, st):
        self.flags, self.storage = flags, weakref.ref(st)
        self.samples = [[], []]
        self.n = 0
        self.chosen = None
        self.mu = threading.Lock()  # held by the thread measuring (``_State``)

    def _apply(self, chosen, d):
        self.flags.apply(chosen, d)

    def _untimed(self, d):
        self.flags.apply(0, d)  # the default

    def _step(self, fn, p, d):
        """One timed call (``run``, holding ``mu``)."""
        chosen = self.chosen
        if chosen is not None:  # (chosen by the thread that held ``mu`` before)
            self.flags.apply(chosen, d)
            return fn(p, d)
        k = self.n & 1
        self.flags.apply(k, d)
        t0 = clock()
        rc = fn(p, d)
        t1 = clock()
        if rc:
            return rc
        self.samples[k].append(t1 - t0)
        self.n += 1
        if self.n >= 2 * SAMPLES:
            # flag 1 wants a clear lead: a few slow calls on this shared machine can fake a
            # smaller one (A @ A bcsstk16: two calls of the branch at 55 ms against 30 ms in
            # every other process made the branch-free insert, 45 ms, the choice), and a wrong
            # switch costs more than a small gain missed
            best = 1 if min(self.samples[1]) < FLAG_LEAD * min(self.samples[0]) else 0
            self.chosen = best
            self.flags.apply(best, d)  # the glue calls the kernel directly from now on
            _publish(self.storage(), self.flags.tag, self, best,
                     (["flags on" if best else "flags off"], "single",
                      [round(min(s) * 1e6, 1) for s in self.samples]))
        return 0
