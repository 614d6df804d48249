"""Values (``ValueMixin``): the loop IR expression of the statement's expression at the current
loop point (``leaf_value``: NumPy's operations and casts as ``NumOp`` and ``NumCast`` nodes),
with the condition under which each call may be nonzero there (a structural zero stays +0, as
the operation alone on its pattern gives), calls of 0-d values hoisted before the loops, and the
loads of dense and sparse accesses.
"""
from __future__ import annotations

from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower import counting
from lazysparse.compiler.lower.operands import chain
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T


class ValueMixin:
    """Values at the current loop point. Owns ``hoisted`` and the walk over the expression's
    accesses (``_walk_q``, ``_dec``, ``_dec_k``)."""

    def value(self, e):
        return self.valued(e)[0]

    _dec = None  # decisions replayed by ``valued`` (None: not aligned with the walk)

    def valued(self, e):
        """``(value of e, condition under which e may be nonzero here)``, loop IR expressions:
        the condition is e's pattern (compiler/plan/patterns.py's rules) over the presence
        flags of the sparse accesses at this point, ``ALWAYS`` where it always holds. An
        intersection or a division whose condition fails is a structural zero: +0, whatever
        its arguments' values (``A * nan + 1`` is 1 where A stores nothing, ``1 / (A * B)`` is
        +inf there, ``exp(A / s)`` is 1 with ``s = 0``), as when the operation runs alone on
        its pattern (docs/design.md, "Numerics"). A dense loop that also follows A evaluated
        ``0 * nan`` there."""
        if isinstance(e, Access):
            a = self.acc_by_q[self._walk_q]  # value() walks accesses in accesses_of order
            self._walk_q += 1
            return self.value_of_access(a, e), (ALWAYS if a.spec.dense else E.var(a.pres))
        if self.invariant(e):
            return self.hoist(e, *self._valued_call(e))
        return self._valued_call(e)

    @staticmethod
    def invariant(e):
        """A call of 0-d values only (``sqrt(s)`` in ``y / sqrt(s)``): the same at every loop
        point, a scalar to the patterns too (``P.is_0d``). A ``where`` stays in the loop (its
        branches count as taken)."""
        return isinstance(e, Call) and P.is_0d(e)

    def hoist(self, e, code, nz):
        """``code``, the value of the invariant call ``e``, computed once before the loops
        (paper 000's loop-invariant redundancy; the C compiler would hoist a pure call too, but
        an instrumented build counts what the source evaluates); equal values share one."""
        name = self.hoisted.get(code)
        if name is None:
            name = self.hoisted[code] = f"ls_h{len(self.hoisted)}"
            self.sched.add(S.Declare(name, T.scalar(e.dtype), code, const=True))
            if self.count:
                tally = counting.count_stmts(counting.expr_ops(e, lambda x: x is not e and self.invariant(x)), [])
                if tally is not None:
                    self.sched.add(tally)
        return E.Var(name), nz

    def _valued_call(self, e):
        pairs = [self.valued(arg) for arg in e.args]
        args = [E.NumCast(v, self.dtype_of(arg), d) for (v, _), arg, d in zip(pairs, e.args, e.in_dtypes)]
        if self.count and e.op == "where":  # only the branch taken counts (compiler/lower/counting.py)
            args[1:] = [counted(a, t, self.invariant) for a, t in zip(e.args[1:], args[1:])]
        code = E.NumOp(e.op, args, e.in_dtypes, e.dtype)
        nzs = [nz for _, nz in pairs]
        kind, scalar = ops.OPS[e.op][2], P._scalars(e)
        if not P._decides(kind, scalar):
            if kind == "where":
                return code, _any([_all(nzs[:2]), nzs[2]])
            nz = _all(nzs) if kind == "intersect" else nzs[0]
            if nz != ALWAYS:
                code = _or_zero(nz, code, e.dtype)
            return code, nz
        # f at zero decides (in expr_pattern's order: arguments first), when replayed here
        if self._dec is None:
            return code, ALWAYS
        zero = self._dec[self._dec_k]
        self._dec_k += 1
        if not zero:
            return code, ALWAYS
        if kind == "where":
            return code, _all(nzs[:2])
        tensors = [nz for nz, sc in zip(nzs, scalar) if not sc]
        return code, (_any(tensors) if tensors else ALWAYS)

    def value_of_access(self, a, e):
        """The value of access ``e`` (lowering state ``a``) at the current loop point."""
        k = a.slot
        if a.spec.dense:
            if a.spec.ndim == 0:
                return E.Var(f"v{k}s")
            terms = [self.stride_term(self.coord(ix), self._stride(a.spec, k, m)) for m, ix in enumerate(e.indices)]
            return E.Load(E.Var(f"v{k}"), chain("+", terms))
        load = E.Load(E.Var(f"v{k}"), E.var(a.pos))
        if a.pres == "1":
            return load
        return _or_zero(E.var(a.pres), load, a.spec.dtype)

    @staticmethod
    def _stride(spec, k, m):
        return "1" if spec.unit and m == spec.layout[-1] else f"s{k}_{m}"

    @staticmethod
    def stride_term(c, s):
        """Coordinate ``c`` (an expression or a name) times stride ``s`` (a name, or "1")."""
        return E.Paren(E.var(c)) if s == "1" else E.mul(E.Paren(E.var(c)), s)

    def dtype_of(self, e):
        if isinstance(e, Access):
            return self.spec.inputs[e.operand].dtype
        return e.dtype

    def leaf_value(self):
        self._walk_q = self.q0
        self._dec, self._dec_k = self.dec, 0
        try:
            val = self.value(self.expr)
        finally:
            self._dec = None
        if self.term is not None:  # one term of the sum: cast as the +/- chain does, then signed
            val = E.NumCast(val, self.dtype_of(self.expr), self.odt)
            if self.term.sign < 0:
                val = E.Unary("-", E.Paren(val))
        return val


ALWAYS, NEVER = E.Int(1), E.Int(0)  # presence conditions that always, never hold


def _or_zero(cond, value, dtype):
    """``value`` where ``cond`` holds, else a zero of ``dtype`` (a structural zero)."""
    return E.Paren(E.Select(E.Paren(cond), value, E.Cast(T.scalar(dtype), E.Int(0))))


def counted(e, value, hoisted=None):
    """``value`` (of a ``where`` branch ``e``) counting its operations when it runs (those of
    the calls computed before the loops, ``hoisted``, are counted there)."""
    counts = tuple((k, n) for k, n in enumerate(counting.expr_ops(e, hoisted)) if n)
    return E.Counted(counts, value) if counts else value


def _all(flags):
    """The conjunction of presence conditions."""
    fs = [f for f in flags if f != ALWAYS]
    if NEVER in fs:
        return NEVER
    fs = list(dict.fromkeys(fs))
    return chain("&&", [E.Paren(f) for f in fs]) if fs else ALWAYS


def _any(flags):
    """The disjunction of presence conditions."""
    if ALWAYS in flags:
        return ALWAYS
    fs = list(dict.fromkeys(f for f in flags if f != NEVER))
    return chain("||", [E.Paren(f) for f in fs]) if fs else NEVER
