"""Workspaces for sparse scattering (paper 003), the lowering half: the insert-sort-merge (ISM)
template and the accumulation policies that fill its holes. A kernel in mode ``ws-<policy>``
(compiler/plan/kernel.py ``choose_mode``, compiler/plan/workspace.py for the policy) computes a
sparse result whose levels its loops do not bind in storage order. The loops that do bind the
leading levels in order (``h`` of them, "hoisted") stay outside; everything below them inserts
``(key, value)`` into the **accumulation array** (Acc), ``key`` being the remaining levels'
coordinates linearised in storage order (``key_expr``). When the Acc is full it is drained
(sorted, duplicates combined) and merged into the **all array** (All: sorted unique entries);
after each iteration of the last hoisted loop (or once, at the end, when nothing is hoisted)
the Acc is drained, merged, and All is compressed into the result's levels by appending, as
the append mode does for a concordant loop order (``emit_flush``)."""
from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace

import numpy as np

from lazysparse.ir import ops
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import support
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.loopir.support import POLICIES, Policy, Support  # noqa: F401  (POLICIES: schedule.py)

_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


def register_policy(name: str, source: str) -> None:
    """Add an accumulation policy: ``source`` is C text defining ``ls_ws`` and its five
    functions, init, insert, size, drain and free (the interface: compiler/codegen/c/workspace.py
    ``policy_source``), which the loop IR calls by name (``ws_insert``, ``ws_drain``...); one
    that defines ``LS_WS_INSERT_B`` has a second, branch-free insert too, which the kernel picks
    per call (``has_insert_b``). ``name`` is what ``ls.Schedule().workspace(name)`` asks for and
    what ``explain`` prints: lower-case letters, digits and ``_``. The source is code, like a C
    extension: it is the caller's, never built from data (tests/compiler/lower/test_workspaces.py
    adds a sorted-array policy)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"register_policy: name must match {_NAME.pattern}, got {name!r}")
    if not isinstance(source, str):
        raise TypeError(f"register_policy: source must be C text, got {type(source).__name__}")
    POLICIES[name] = Policy(insert_b="LS_WS_INSERT_B" in source, sources=(("c", source),))


def prelude(policy: str, ctype: str, ktype: str, reduce: str, dtype, comb_count=None) -> Support:
    """The support code a kernel with this workspace needs (its routines over values of
    ``dtype``, keys of ``ktype``; ``ctype`` is ``dtype``'s C type, unused). ``comb_count``: the
    ``ls.opcount`` counter a combination adds to, in an instrumented build whose combinations
    are the statement's own operations (a union fission's additions; compiler/lower/counting.py).
    (``ktype``: an index dtype.)"""
    if policy not in POLICIES:
        raise KeyError(policy)
    identity = E.Lit(ops.reduce_identity(reduce, dtype), dtype)
    return support.workspace(policy, str(np.dtype(dtype)), ktype, reduce, identity, comb_count)


def has_insert_b(policy: str) -> bool:
    """Whether the policy has a second insert, ``ls_ws_insert_b``, and ``ls_ws_use(w, b)``,
    which tells it which of the two the kernel calls (``LS_WS_INSERT_B`` defined)."""
    return POLICIES[policy].insert_b


def with_insert_b(node):
    """A copy of loop IR ``node`` whose inserts call ``ws_insert_b``."""
    if isinstance(node, E.SupportCall):
        args = tuple(with_insert_b(a) for a in node.args)
        return E.SupportCall("ws_insert_b" if node.routine == "ws_insert" else node.routine, args)
    if isinstance(node, Block):
        return Block([with_insert_b(b) for b in node.body])
    if isinstance(node, (S.Stmt, E.Expr)) and is_dataclass(node):
        kw = {}
        for f in fields(node):
            v = getattr(node, f.name)
            if isinstance(v, (Block, S.Stmt, E.Expr)):
                kw[f.name] = with_insert_b(v)
            elif isinstance(v, tuple):
                kw[f.name] = tuple(with_insert_b(x) for x in v)
        return replace(node, **kw)
    return node  # a Comment: no insert


def key_expr(lw, h):
    """The workspace key: levels ``h..`` of the result, linearised."""
    key = None
    for l in range(h, len(lw.ovars)):
        c = E.var(lw.vname[lw.ovars[l]])
        key = c if key is None else E.add(E.mul(E.Paren(key), f"osz{l}"), c)
    return E.Int(0) if key is None else key


WS, ISM = E.AddrOf(E.Var("ws")), E.AddrOf(E.Var("ism"))


def _call(routine, *args):
    return E.SupportCall(routine, tuple(E.var(a) for a in args))


def _fails(call):
    return S.If(call, S.Fail(), oneline=True)


def _ism(name):
    return E.Field(E.Var("ism"), name)


# frees the workspace and the all array, and zeroes them: the failure path may free them again
FREE = S.Inline((S.ExprStmt(_call("ws_free", WS)), S.ExprStmt(_call("ism_free", ISM)),
                 S.Memset(WS, 0, None, None), S.Memset(ISM, 0, None, None)))


def emit_flush(lw, blk, h, dpos0):
    """Drain and merge what the workspace holds, and append it to the result levels ``h..``
    (``dpos0``: the position of the hoisted dense levels, "0" when none)."""
    nd = len(lw.ovars)
    b = Block()
    blk.add(b)
    if nd - h == 1:
        _flush_one_level(lw, b, nd - 1, dpos0)
        return
    from lazysparse.compiler.lower.assembly import append_levels
    it, val = T.scalar(lw.spec.output.index_dtype), T.scalar(lw.odt)
    fk, fv, fn, t, r = E.Var("fk"), E.Var("fv"), E.Var("fn"), E.Var("t"), E.Var("r")
    b.add(S.Declare("fk", T.Ptr(T.Opaque("ws_key"), const=True), E.Null()),
          S.Declare("fv", T.Ptr(val, const=True), E.Null()), S.Declare("fn", T.INDEX, E.Int(0)))
    direct = Block().add(_fails(_call("ism_reserve", ISM, _call("ws_size", WS))),
                         S.Assign(fn, _call("ws_drain", WS, _ism("k"), _ism("v"), _ism("tk"), _ism("tv"))),
                         S.Inline((S.Assign(fk, _ism("k")), S.Assign(fv, _ism("v")))))
    merged = Block().add(_fails(_call("ism_spill", WS, ISM)),
                         S.Inline((S.Assign(fk, _ism("ak")), S.Assign(fv, _ism("av")), S.Assign(fn, _ism("an")),
                                   S.Assign(_ism("an"), E.Int(0)))))
    b.add(S.If(E.Binary("==", _ism("an"), E.Int(0)), direct, merged))
    # room for every entry at once: no check per entry
    for l in range(h, nd):
        if lw.olv[l].is_sparse:
            b.add(S.Grow(it, E.Var(f"oc{l}"), E.Var(f"occ{l}"), E.add(f"on{l}", fn)))
    b.add(S.Grow(val, E.Var("ov"), E.Var("ovc"), E.add(f"on{nd - 1}", fn)))
    loop = Block()
    for l in range(h, nd - 1):  # the previous entry's coordinates (-1: none yet)
        b.add(S.Declare(f"pc{l}", T.INDEX, E.Int(-1)))
    b.add(S.For("t", E.Int(0), fn, loop))
    # computed zeros are not stored (scipy's rule for products, and the append mode's)
    loop.add(S.If(E.Binary("==", E.Load(fv, t), E.Int(0)), S.Continue(), oneline=True))
    loop.add(S.Declare("r", T.INDEX, E.Load(fk, t)))
    for l in reversed(range(h, nd)):
        osz = E.Var(f"osz{l}")
        loop.add(S.Declare(f"wc{l}", T.INDEX, E.Binary("%", r, osz) if l > h else r, const=True))
        if l > h:
            loop.add(S.Update(r, "/", osz))
    # the first level where this entry leaves the previous one (keys are unique)
    dl = E.Int(nd - 1)
    for l in reversed(range(h, nd - 1)):
        dl = E.Paren(E.Select(E.Binary("!=", E.Var(f"wc{l}"), E.Var(f"pc{l}")), E.Int(l), dl))
    loop.add(S.Declare("dl", T.INT, dl, const=True))
    loop.add(*[S.Assign(E.Var(f"pc{l}"), E.Var(f"wc{l}")) for l in range(h, nd - 1)])
    append_levels(lw, loop, lambda l: E.Var(f"wc{l}"), h, dpos0, grow=False)
    loop.add(S.Assign(E.Load(E.Var("ov"), E.sub(f"on{nd - 1}", 1)), E.Load(fv, t)))


def _flush_one_level(lw, b, L, dpos0):
    """The common case, one compressed level in the workspace (a row-wise product's row):
    its keys are its coordinates, drained straight into the result's arrays; computed zeros
    are squeezed out in place."""
    it, val = T.scalar(lw.spec.output.index_dtype), T.scalar(lw.odt)
    fk, fv, fn, t, o = E.Var("fk"), E.Var("fv"), E.Var("fn"), E.Var("t"), E.Var("o")
    on, z, zd, zk = E.Var(f"on{L}"), E.Var("z_"), E.Var("zd_"), E.Var("zk_")
    b.add(S.Declare("fn", T.INDEX, E.add(_call("ws_size", WS), _ism("an"))))
    b.add(S.Grow(it, E.Var(f"oc{L}"), E.Var(f"occ{L}"), E.add(on, fn)), S.Grow(val, E.Var("ov"), E.Var("ovc"), E.add(on, fn)))
    b.add(S.Declare("fk", T.Ptr(it, restrict=True), E.add(f"oc{L}", on)),
          S.Declare("fv", T.Ptr(val, restrict=True), E.add("ov", on)))
    direct = Block().add(_fails(_call("ism_reserve", ISM, fn)),
                         S.Assign(fn, _call("ws_drain", WS, fk, fv, _ism("tk"), _ism("tv"))))
    b.add(S.Declare("zd_", T.INT, E.Int(0)), S.Declare("zk_", T.INT, E.Int(0)))  # zk_: the drain said zd_, a zero or not
    merged = Block().add(_fails(_call("ism_spill", WS, ISM)),
                         S.Inline((S.Assign(fn, _ism("an")), S.Assign(_ism("an"), E.Int(0)))),
                         S.Memcpy(fk, _ism("ak"), fn, it), S.Memcpy(fv, _ism("av"), fn, val))
    b.add(S.If(E.Binary("==", _ism("an"), E.Int(0)), direct, merged))
    # a scan first: the squeeze, a second pass over the entries, only runs when some value is
    # zero (rare; the pass cost 6% of A + B + C on cage10). On a short row the scan stops at
    # the first zero, which also keeps gcc from vectorising it: a vector load of values the
    # drain has just stored one by one (in rank order) cannot be forwarded from those stores
    # and waits for them to retire (cs4 A @ A: 22% of the kernel's samples on that one load).
    # A long row is scanned by the vector loop: its first values were stored long before, and
    # the scalar scan made long rows slower (adder_dcop_05 A @ A, rows of ~1000: 0.93 -> 1.18 of
    # scipy; R-MAT A + B + C 0.88 -> 1.07-1.29)
    # A policy that says whether its drain gave a zero (``ws_zero``: the dense one) saves the
    # scan: its drain sees every value once anyway (the scan was 8% of cryg2500's A @ A kernel).
    b.add(S.Declare("o", T.INDEX, fn), S.Declare("z_", T.INT, E.Int(0)))
    zero = E.Binary("==", E.Load(fv, t), E.Int(0))
    scan = S.If(E.lt(fn, 64),
                Block().add(S.For("t", E.Int(0), fn, Block().add(
                    S.If(zero, S.Inline((S.Assign(z, E.Int(1)), S.Break())), oneline=True)))),
                Block().add(S.For("t", E.Int(0), fn, Block().add(S.Update(z, "|", zero)))))
    direct.add(S.FeatureGuard("ws_zero", S.Inline((S.Assign(zd, E.Select(_call("ws_zero", WS), E.Int(1), E.Int(0))),
                                                   S.Assign(zk, E.Int(1))))))
    scan = S.If(E.Unary("!", zk), Block().add(scan), Block().add(S.Assign(z, zd)))
    maybe = getattr(lw, "row_maybe_zero", None)  # a union fission's rows know (Lowerer.terms_maybe_zero)
    b.add(S.If(E.var(maybe), Block().add(scan)) if maybe else scan)
    squeeze = Block().add(S.Assign(o, E.Int(0)))
    squeeze.add(S.For("t", E.Int(0), fn, Block().add(
        S.Assign(E.Load(fk, o), E.Load(fk, t)), S.Assign(E.Load(fv, o), E.Load(fv, t)),
        S.Update(o, "+", E.Binary("!=", E.Load(fv, t), E.Int(0))))))
    b.add(S.If(z, squeeze))
    b.add(S.Update(on, "+", o))
    if L == lw.kd:  # (``dpos0``: a name, or "0")
        b.add(S.Assign(E.Load(E.Var(f"op{L}"), E.add(E.Paren(E.var(dpos0)), 1)), E.Cast(it, on)))
