"""A compiled kernel plus the recipe that feeds it buffers and wraps what it returns."""
from __future__ import annotations

import math
import os
import threading

import numpy as np

from lazysparse.compiler import stages
from lazysparse.formats import Storage
from lazysparse.ir import ops
from lazysparse.runtime import aligned, glue, tuning
from lazysparse.runtime.tuning import split_flag  # noqa: F401  (tests and callers import it from here)


class Runner:
    """A compiled kernel with a generated Python call: ``runner.call(storages, out_shape, name,
    buf=None)`` (``buf``: an array a dense result may be written into).

    The call is specialised to the kernel's ABI when the runner is built (JAX-style: trace once,
    then a warm call is straight-line code): every ``p[k]``/``d[k]`` slot becomes one line that
    reads the buffer or the size it needs, with no per-slot dispatch at run time. The generated
    source holds only names and integers made here, never user strings.
    """

    def __init__(self, spec, count=False):
        self.spec = spec
        self.compiled = stages.build(stages.lower(stages.Plan.of_statement(spec), count=count))
        self.abi = abi = self.compiled.abi
        self.source = self.compiled.source
        self.kernel = self.compiled.kernel
        from lazysparse.runtime.kernel_cache import ffi, libc
        self._ffi, self._libc = ffi, libc
        fmt = spec.output.format
        self.out_dense = fmt.is_dense
        self.odtype = np.dtype(spec.stmt.dtype)
        self.oidx = np.dtype(spec.output.index_dtype)
        self.obuf_slots = [(k, desc) for k, desc in enumerate(abi.p) if desc[0] == "obuf"]
        self.ocount_slots = {desc[1]: k for k, desc in enumerate(abi.d) if desc[0] == "ocount"}
        # what wrapping a sparse result reads of its format, once (a warm call then tests no level)
        levels = fmt.levels
        self.dense_prefix = next((k for k, lv in enumerate(levels) if not lv.is_dense), len(levels))
        self.coo = bool(levels) and levels[0].has_pos and not levels[0].unique
        # argument arrays not in use: a call takes one set and puts it back (list.pop/append
        # are atomic), so concurrent calls never share one, without a thread-local lookup,
        # which costs microseconds right after a kernel has swept the cache
        self._pool = []
        # a kernel that overwrites its whole dense result may run twice in a call (the tuner
        # times its variants back to back)
        rerun = self.out_dense and abi.writes_all and spec.mode != "dense-count"
        # an instrumented build runs once per call, in its plain loops (not timed)
        self.sites = None if count else (tuning.Sites.of(abi.d, self.kernel.key, rerun)
                                         or tuning.Flags.of(abi.d, self.kernel.key))
        self.counting = None  # its instrumented twin, built on the first ls.opcount
        self.glue = glue_source(spec, abi, self.sites)
        self.call = _compile_glue(self.glue, self)

    def bind(self, prologue, env):
        """The glue with ``prologue`` run first (lines over the names in ``env`` that check
        whether a bound plan applies, ``return None`` when not): checks, marshalling, kernel
        and wrapping in one Python frame (docs/design.md, "Warm path")."""
        return _compile_glue(glue_source(self.spec, self.abi, self.sites, prologue), self, env)

    def _bufs(self):
        """A new set of argument arrays ``(p, d, memo)``; ``memo``: per input slot a weak
        reference to the storage whose buffers ``p``/``d`` hold, then the tuning state, then
        the result shape whose sizes ``d`` holds."""
        ffi = self._ffi
        return (ffi.new("void*[]", max(len(self.abi.p), 1)),
                ffi.new("int64_t[]", max(len(self.abi.d), 1)),
                [None] * (len(self.spec.inputs) + 2))

    def _hint(self, storages, out_shape):
        tot = sum(st.nnz for st in storages if not st.format.is_dense and st.ndim)
        full = math.prod(out_shape)  # (exact Python ints: np.prod cost microseconds a call)
        return int(max(16, min(full, tot if tot else full, 1 << 26)))

    def _failed(self, p, out_shape, name):
        for k, _ in self.obuf_slots:
            if p[k] != self._ffi.NULL:
                self._libc.free(p[k])
        raise MemoryError(f"{name}: out of memory while assembling a result of shape {out_shape}")

    def _wrap_sparse(self, p, d, out_shape):
        ffi, libc = self._ffi, self._libc
        fmt = self.spec.output.format
        levels = fmt.levels
        nd = len(levels)
        counts = {l: d[k] for l, k in self.ocount_slots.items()}
        dense_count = 1
        kd = self.dense_prefix
        for m in fmt.order[:kd]:
            dense_count *= out_shape[m]
        coo = self.coo
        leaf = counts[nd - 1]
        pos, crd = [None] * nd, [None] * nd
        vals = None
        for k, (_, kind, l) in self.obuf_slots:
            if kind == "pos":
                n = 2 if coo else ((dense_count + 1) if l == kd else counts[l - 1] + 1)
                pos[l] = _own(ffi, libc, p[k], n, self.oidx)
            elif kind == "crd":
                crd[l] = _own(ffi, libc, p[k], leaf if coo else counts[l], self.oidx)
            else:
                vals = _own(ffi, libc, p[k], leaf, self.odtype)
        return Storage(out_shape, fmt, pos, crd, vals, self.oidx)


def glue_source(spec, abi, sites=None, prologue=()) -> str:
    """Python source of ``call(sts, shape, name)`` for one kernel: marshal, run, wrap.
    ``sites``: the kernel's run-time schedule sites (runtime/tuning.py), set by the tuner.
    ``prologue``: lines run first, which may ``return None`` (a bound plan's checks; see
    ``Runner.bind``)."""
    from lazysparse.compiler.plan.kernel import extent_sources
    stmt = spec.stmt
    out_pos = {v: j for j, v in enumerate(stmt.out_indices)}
    src = {ix: (k, m) for ix, k, m in extent_sources(stmt)}

    def ext(v):
        if v in out_pos:
            return f"shape[{out_pos[v]}]"
        k, m = src[v]
        return f"s{k}.shape[{m}]"

    n_in = len(spec.inputs)
    L = ["def call(sts, shape, name, buf=None):"]
    L += ["    " + ln for ln in prologue]
    L.append("    " + "".join(f"s{k}, " for k in range(n_in)) + "= sts" if n_in else "    pass")
    fmt = spec.output.format
    L += _result_lines(spec, abi, ext)
    per_slot, always, by_shape = glue.marshal(
        abi, {k: (f"s{k}", sp) for k, sp in enumerate(spec.inputs)},
        lambda desc: "out" if desc[1] == "vals" else "cnt", _int_slots(spec, abi, ext, out_pos, src))
    L += glue.indent(glue.TAKE_BUFS)
    site_slots = {slot for slot, *_ in sites.sites} if sites is not None else set()
    if site_slots:
        L.append("    fresh = False")
    L.append("    same = True")
    for k in range(n_in):
        L += glue.indent(glue.remembered(k, f"s{k}", per_slot[k],
                                         ["same = False"] + (["fresh = True"] if k in site_slots else [])))
    if site_slots:  # schedule flags: the measured choice for these operands, or still measuring
        L.append("    if fresh:")
        L.append(f"        memo[{n_in}] = tstart(sts, d)")
    if by_shape:  # the same shape object as in this set's previous call: its sizes are in d[]
        L.append(f"    if shape is not memo[{n_in + 1}]:")
        L += ["        " + ln for ln in by_shape]
        L.append(f"        memo[{n_in + 1}] = shape")
    L += ["    " + ln for ln in always]
    # the call itself, on this thread, or off it when it may be long (runtime/interrupt.py)
    keep = "(sts, bufs, out)" if fmt.is_dense else "(sts, bufs)"
    L += glue.indent(glue.gated_call(work_expr(spec, ext), keep, lambda fn: _call_lines(site_slots, n_in, fn)))
    if fmt.is_dense:  # Storage.wrap_dense, inline: a frame fewer after the kernel
        nones = "[" + "None, " * len(stmt.out_indices) + "]"
        L += ["    pool.append(bufs)",
              "    st = new(Storage)",
              f"    st.shape, st.format, st.pos, st.crd = out.shape, OFMT, {nones}, {nones}",
              "    st.vals, st.index_dtype, st.spec, st.stats = out, I64, None, None",
              "    return st"]
    else:
        L += ["    st = wrap_sparse(p, d, shape)", "    pool.append(bufs)", "    return st"]
    return "\n".join(L) + "\n"


def _result_lines(spec, abi, ext) -> list:
    """Glue lines that make the dense result array (nothing for a sparse result: the kernel
    allocates it)."""
    stmt, L = spec.stmt, []
    if spec.output.format.is_dense:
        if spec.mode == "dense-count":
            L.append("    out = full(shape, IDENT, ODT)")
            L.append("    cnt = zeros(shape, I64)")
        else:
            prod = [ext(v) for v in stmt.reduce_indices] if stmt.reduce == "prod" else []
            if prod:  # an empty product is 1 everywhere
                L.append(f"    out = (ones if 0 in ({', '.join(prod)},) else zeros)(shape, ODT)")
            else:
                # buf: a dense temporary's buffer from the previous run of the same program
                # (compiler/fused_pipeline.py, _run_ops): reused, it costs no page faults
                rows = tuple(int(w) for w in abi.writes_rows)
                # (rows: the kernel stores everything only at these last extents)
                alloc = ("empty" if abi.writes_all else
                         f"(empty if shape[{len(stmt.out_indices) - 1}] in {rows} else zeros)" if rows
                         else "zeros")
                L.append("    if buf is None or buf.shape != shape or buf.dtype != ODT:")
                L.append(f"        out = {alloc}(shape, ODT)")
                L.append("    else:")
                L.append("        out = buf")
                if abi.writes_all:
                    if POISON:
                        L.append("        out[...] = empty(shape, ODT)")
                elif rows:
                    L.append(f"        if shape[{len(stmt.out_indices) - 1}] not in {rows}:")
                    L.append("            out.fill(0)")
                    if POISON:
                        L.append("        else:")
                        L.append("            out[...] = empty(shape, ODT)")
                else:
                    L.append("        out.fill(0)")
    return L


def _int_slots(spec, abi, ext, out_pos, src):
    """The statement kernels' own integer slots (``glue.marshal``'s ``d_value``): sizes from the
    result's shape, stored entries, the result's capacity hint, the workspace's capacity."""
    stmt, fmt, n_in = spec.stmt, spec.output.format, len(spec.inputs)

    def value(desc):
        tag = desc[0]
        if tag == "ext":
            return ext(desc[1]), ("shape" if desc[1] in out_pos else src[desc[1]][0])
        if tag == "ostride":  # the result is a new C-order array: its strides follow its shape
            return " * ".join(f"shape[{j}]" for j in range(desc[1] + 1, len(stmt.out_indices))) or "1", "shape"
        if tag == "osize":
            return f"shape[{fmt.order[desc[1]]}]", "shape"
        if tag == "nnz":  # stored entries of an input (a bound on a result in its pattern)
            return f"s{desc[1]}.nnz", desc[1]
        if tag == "zeros":  # 1 when an input stores an explicit zero (Storage.has_zero)
            return f"int(s{desc[1]}.has_zero())", desc[1]
        if tag == "ohint":
            # the same operands as this buffer set's previous call (no slot re-marshalled):
            # storages never change, so the result has the previous call's entries exactly. A
            # capacity from the bound (A + B: both operands' entries) would be shrunk at the end,
            # and glibc then maps the next call's buffer afresh (MIT8 A + A: 407 page faults and
            # 0.8 ms of system time a call)
            leaf = next((j for j, ds in enumerate(abi.d) if ds[0] == "ocount"
                         and ds[1] == len(fmt.levels) - 1), None)
            return ("hint(sts, shape)" if leaf is None or not n_in else
                    f"d[{leaf}] if same and d[{leaf}] > 0 else hint(sts, shape)"), "always"
        if tag == "wscap":  # set by execute for this call (compiler/statement.py, _workspace)
            return "WS_CALL.capacity", "always"
        return None  # slots the kernel writes
    return value


def _call_lines(site_slots, n_in, fn):
    """Glue lines that run the kernel ``fn`` once (or through the tuner while it measures)."""
    if not site_slots:
        return [f"if {fn}(p, d):", "    failed(p, shape, name)"]
    return [f"tv = memo[{n_in}]",
            "if tv is None:",
            f"    rc = {fn}(p, d)",
            "else:",
            f"    rc = tv.run({fn}, p, d)",
            "    if tv.chosen is not None:",
            f"        memo[{n_in}] = tv.after",
            "if rc:",
            "    failed(p, shape, name)"]


def work_expr(spec, ext) -> str:
    """Python expression (glue names) of a kernel's work: the stored entries of its sparse
    operands, summed, times the extents of the indices none of them holds (SpMV: nnz; SpMM:
    nnz * columns; a dense product: I * K * J), as the C kernels' own estimate
    (compiler/lower/teams.py ``work_estimate``). A kernel that walks a sparse operand's implicit zeros
    (runtime/work.py) counts every point."""
    from lazysparse.ir.nodes import Index, accesses_of
    from lazysparse.compiler.plan import patterns as P
    stmt = spec.stmt
    accs = accesses_of(stmt.expr)
    sparse = [a for a in accs if not spec.inputs[a.operand].dense and spec.inputs[a.operand].ndim]
    idx = list(dict.fromkeys(tuple(stmt.out_indices) + tuple(stmt.reduce_indices)
                             + tuple(ix for a in accs for ix in a.indices if isinstance(ix, Index))))
    pat, _ = P.expr_pattern(stmt.expr, lambda a, q: None if spec.inputs[a.operand].dense else q,
                            lambda a: None, spec.decisions)
    if not sparse or frozenset() in pat:
        return " * ".join(ext(v) for v in idx) or "1"
    held = {ix for a in sparse for ix in a.indices if isinstance(ix, Index)}
    # (a sparse storage's values array holds its entries: what ``Storage.nnz`` returns, without
    # the property's call on every warm call)
    entries = " + ".join(dict.fromkeys(f"s{int(a.operand)}.vals.shape[0]" for a in sparse))
    return " * ".join([f"({entries})"] + [ext(v) for v in idx if v not in held])


def _ws_call():
    return WS_CALL


def _compile_glue(source, runner, extra_env=None):
    spec = runner.spec
    ident = (ops.reduce_identity(spec.stmt.reduce, runner.odtype)
             if spec.mode == "dense-count" else None)
    env = glue.environment(runner._ffi, runner._pool, runner._bufs, runner.kernel.fn)
    env.update(OFMT=spec.output.format, failed=runner._failed, hint=runner._hint,
               wrap_sparse=runner._wrap_sparse,
               tstart=runner.sites.start if runner.sites is not None else None,
               zeros=aligned.zeros, empty=_poisoned if POISON else aligned.empty, ones=np.ones, full=np.full,
               ODT=runner.odtype, I64=np.dtype(np.int64), IDENT=ident, WS_CALL=_ws_call())
    env.update(extra_env or {})
    return glue.compile_glue(source, env, "<lazysparse glue>")


# LAZYSPARSE_POISON=1 (the test suite sets it) fills results that kernels are trusted to
# overwrite entirely with garbage (NaN, -7 for signed integers, MAX - 6 for unsigned ones, True
# for bool) instead of leaving them uninitialised, so that a kernel skipping one element fails an
# oracle test every time
WS_CALL = threading.local()   # .capacity: the workspace capacity of the call being made


POISON = os.environ.get("LAZYSPARSE_POISON", "") not in ("", "0")


def _poisoned(shape, dtype):
    k = np.dtype(dtype).kind
    out = aligned.empty(shape, dtype)
    out.fill(True if k == "b" else (np.iinfo(out.dtype).max - 6 if k == "u" else -7 if k == "i" else np.nan))
    return out


def _own(ffi, libc, ptr, n, dtype):
    """A NumPy array owning a malloc'd buffer (freed when the array dies). No copy."""
    n = int(n)
    if n == 0:
        libc.free(ptr)
        return np.zeros(0, dtype=dtype)
    cptr = ffi.gc(ffi.cast("char *", ptr), libc.free)
    return np.frombuffer(ffi.buffer(cptr, n * dtype.itemsize), dtype=dtype)
