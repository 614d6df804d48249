"""The call glue: Python source, generated once per kernel, that marshals the operands into the
kernel's ``p[]`` pointer and ``d[]`` integer slots, calls it and hands its argument arrays back.
One generator for every kernel: it reads the kernel's ABI, a list of descriptors per slot
(``("in", operand, "vals" | "pos" | "crd" | "order", level)``, ``("out", ...)``, ``("obuf", ...)`` for
pointers; ``(tag, ...)`` for integers), and the drivers add only what their results need
(``compiler/runner.py``: the result's allocation, the tuner's flags, a bound plan's checks;
``compiler/fused_pipeline.py``: the memory guard of the temporaries). A warm call is then
straight-line code with no per-slot dispatch (an interpreted walk of the ABI cost 26 us a call).
Lines for an operand run only when its slot holds another storage than in that argument set's
previous call: storages never change, so what ``p``/``d`` hold is still right. Only names and
integers made by the compiler reach the source, never user strings.
"""
from __future__ import annotations

import weakref

import numpy as np

from lazysparse.formats import Storage
from lazysparse.runtime import interrupt, row_order
from lazysparse.runtime.cpu_caches import STREAM_MIN
from lazysparse.runtime.threads import PAR_MIN_WORK, get_num_threads

# an argument set (p, d, memo) from the kernel's pool, or a new one: a call takes one and puts it
# back (list.pop/append are atomic), so concurrent calls never share one, without a thread-local
# lookup, which costs microseconds right after a kernel has swept the cache
TAKE_BUFS = ["try:", "    p, d, memo = bufs = pool.pop()", "except IndexError:",
             "    p, d, memo = bufs = new_bufs()"]


def indent(lines, by=4) -> list:
    return [" " * by + ln for ln in lines]


def marshal(abi, operands, out_array, d_value, threads="nthreads()"):
    """The marshalling lines of ``abi``'s slots: ``(per operand, always, by result shape)``.

    ``operands``: operand id -> (glue name of its storage, its OperandSpec). ``out_array(desc)``:
    the array an ``("out", ...)`` pointer points into. ``d_value(desc)``: for an integer slot
    this generator does not know, ``(value, where)`` with ``where`` an operand id, "always" or
    "shape", or None for a slot the kernel writes."""
    per = {v: [] for v in operands}
    always, by_shape = [], []
    for k, desc in enumerate(abi.p):
        if desc[0] == "in":
            name, spec = operands[desc[1]]
            arr = f"{name}.vals" if desc[2] == "vals" else f"{name}.{desc[2]}[{int(desc[3])}]"
            if desc[2] == "order":  # the rows' visiting order (runtime/row_order.py), or NULL
                per[desc[1]] += [f"b{k} = order_of({name}, {int(desc[3])})",
                                 f"p[{k}] = NULL if b{k} is None else fb(BC, b{k}, False)"]
                continue
            if desc[2] == "vals" and spec.dense:  # a strided view has no buffer: its first element
                per[desc[1]] += ["try:", f"    b{k} = fb(BC, {arr}, False)", "except ValueError:",
                                 f"    b{k} = addr({arr})", f"p[{k}] = b{k}"]
            else:
                per[desc[1]].append(f"b{k} = fb(BC, {arr}, False); p[{k}] = b{k}")
        elif desc[0] == "out":
            always.append(f"b{k} = fb(BC, {out_array(desc)}, True); p[{k}] = b{k}")
        elif desc[0] == "obuf":
            always.append(f"p[{k}] = NULL")  # stale pointers from the last call belong to NumPy now
        else:  # pragma: no cover - the lowerers record only these
            raise AssertionError(desc)
    where = {"always": always, "shape": by_shape}
    for k, desc in enumerate(abi.d):
        tag = desc[0]
        if tag in ("stride", "size"):
            name, spec = operands[desc[1]]
            val = (f"{name}.vals.strides[{int(desc[2])}] // {np.dtype(spec.dtype).itemsize}" if tag == "stride"
                   else f"{name}.shape[{int(spec.format.order[desc[2]])}]")
            per[desc[1]].append(f"d[{k}] = {val}")
        elif tag in _GLOBALS:
            always.append(f"d[{k}] = {threads if tag == 'threads' else _GLOBALS[tag]}")
        else:
            got = d_value(desc)
            if got is not None:
                val, dest = got
                (where[dest] if dest in where else per[dest]).append(f"d[{k}] = {val}")
    return per, always, by_shape


# integer slots read from the process's settings at each call
_GLOBALS = {"threads": None,
            "parmin": "PARMIN[0]",       # the autoscheduler's thread threshold (runtime/threads.py)
            "streammin": "STREAMMIN[0]"}  # entries past the caches (runtime/cpu_caches.py)


def remembered(j, name, lines, also=()) -> list:
    """``lines`` run only when memo slot ``j`` does not hold ``name``'s storage (then it does);
    ``also``: lines run with them after."""
    if not lines:
        return []
    return [f"m = memo[{j}]", f"if m is None or m() is not {name}:", *indent(lines),
            f"    memo[{j}] = wref({name})", *indent(also)]


def gated_call(work, keep, call_lines) -> list:
    """The kernel call: on this thread for less than ``interrupt.SMALL`` units of ``work``, else
    through the interrupt gate, which moves a long call off the main thread so that Ctrl-C is
    seen (runtime/interrupt.py). ``keep``: what the call must keep alive; ``call_lines(fn)``:
    the lines calling the kernel ``fn``."""
    return [f"w = {work}", "if w < SMALL:", *indent(call_lines("fn")), "else:",
            f"    kfn = GATE.bind(fn, w, {keep})", *indent(call_lines("kfn"))]


def environment(ffi, pool, new_bufs, fn) -> dict:
    """The names every glue reads (its driver adds its own)."""
    import _cffi_backend

    def addr(arr):  # the caller keeps arr alive for the call
        return ffi.cast("void *", arr.__array_interface__["data"][0])
    return dict(fb=_cffi_backend.from_buffer, BC=ffi.BCharA, addr=addr, NULL=ffi.NULL, pool=pool,
                new_bufs=new_bufs, fn=fn, wref=weakref.ref, new=object.__new__, Storage=Storage,
                nthreads=get_num_threads, order_of=row_order.order_of, PARMIN=PAR_MIN_WORK, STREAMMIN=STREAM_MIN,
                GATE=interrupt.Gate(), SMALL=interrupt.SMALL)


def compile_glue(source, env, label) -> object:
    """The function ``call`` that ``source`` defines, over the names in ``env``."""
    exec(compile(source, label, "exec"), env)
    return env["call"]
