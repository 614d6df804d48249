"""A readable listing of a loop IR tree for debugging: one statement a line, bodies indented,
expressions in fully parenthesised infix with vector operations by name. Not C: the code
printers are compiler/codegen/<target>/."""
from __future__ import annotations

from dataclasses import fields, is_dataclass

from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import nodes as N
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T


def show(node) -> str:
    """The listing of ``node`` (a block, statement or expression)."""
    if isinstance(node, E.Expr) or _is_type(node):
        return _e(node)
    out = []
    if isinstance(node, (N.Block, N.Seq)):
        _body(node, out, 0)
    else:
        _s(node, out, 0)
    return "\n".join(out)


def _is_type(x):
    return isinstance(x, (T.Scalar, T.Ptr, T.Vec, T.Mask, T.Opaque, T.Array))


def _t(t):
    if isinstance(t, T.Scalar):
        return t.name
    if isinstance(t, T.Ptr):
        return (("const " if t.const else "") + _t(t.elem) + "*" + (" fixed" if t.fixed else "")
                + (" restrict" if t.restrict else ""))
    if isinstance(t, T.Vec):
        return f"{t.dtype}x{'W' if t.lanes is None else t.lanes}"
    if isinstance(t, T.Mask):
        return f"mask{t.lanes}"
    if isinstance(t, T.Opaque):
        return f"<{t.name}>"
    if isinstance(t, T.Array):
        return f"{_t(t.elem)}[{_e(t.count)}]"
    return repr(t)


def _e(e):
    if e is None:
        return "_"
    if _is_type(e):
        return _t(e)
    if isinstance(e, str):
        return e
    if isinstance(e, E.Var):
        return e.name
    if isinstance(e, E.Int):
        return str(e.value) + ("u" if e.unsigned else "")
    if isinstance(e, E.Lit):
        return f"{e.value!r}:{e.dtype}"
    if isinstance(e, E.Raw):
        return f"raw`{e.text}`"
    if isinstance(e, E.Paren):
        return _e(e.a)
    if isinstance(e, E.Unary):
        return f"({e.op}{_e(e.a)})"
    if isinstance(e, E.Binary):
        return f"({_e(e.a)} {e.op} {_e(e.b)})"
    if isinstance(e, E.Load):
        return f"{_e(e.base)}[{_e(e.index)}]"
    if isinstance(e, E.Select):
        return f"({_e(e.cond)} ? {_e(e.a)} : {_e(e.b)})"
    if isinstance(e, E.NumOp):
        return f"np.{e.op}<{', '.join(e.in_dtypes)} -> {e.dtype}>({', '.join(_e(a) for a in e.args)})"
    if isinstance(e, E.NumCast):
        return f"np.astype<{e.src} -> {e.dst}>({_e(e.value)})"
    if isinstance(e, (E.Call, E.SupportCall)):
        name = e.fn if isinstance(e, E.Call) else "@" + e.routine
        return f"{name}({', '.join(_e(a) for a in e.args)})"
    if is_dataclass(e):  # the rest by name: cast, field, vector operations...
        return f"{type(e).__name__.lower()}(" + ", ".join(_e(getattr(e, f.name)) for f in fields(e)) + ")"
    return repr(e)


def _body(b, out, ind):
    if isinstance(b, N.Block):
        for s in b.body:
            _s(s, out, ind)
    elif isinstance(b, N.Seq):
        for s in b.stmts:
            _s(s, out, ind)
    elif b is not None:
        _s(b, out, ind)


def _s(s, out, ind):
    pad = "  " * ind
    if isinstance(s, (N.Block, N.Seq)):
        out.append(pad + "block:")
        _body(s, out, ind + 1)
    elif isinstance(s, N.RawText):
        out.append(pad + f"raw `{s.text}`")
    elif isinstance(s, N.Comment):
        out.append(pad + f"# {s.text}")
    elif isinstance(s, N.Decl):
        out.append(pad + f"raw-decl {s.ctype} {s.name} = {s.init}")
    elif isinstance(s, (N.For, S.For)):
        hints = ""
        if isinstance(s, S.For):
            hints = (f" unroll={s.unroll}" if s.unroll else "") + (f" simd{list(s.simd.reductions)}" if s.simd else "")
            if s.worksharing is not None:
                ws = s.worksharing
                hints += f" shared {ws.schedule.kind}({_e(ws.schedule.chunk)})" + (" nowait" if ws.nowait else "")
        span = f"while {_e(s.cond)}" if getattr(s, "cond", None) is not None else f"in [{_e(s.lo)}, {_e(s.hi)})"
        out.append(pad + f"for {s.var} {span}" + (f" step {_e(s.step)}" if s.step else "") + hints + ":")
        _body(s.body, out, ind + 1)
    elif isinstance(s, (N.While, S.While)):
        out.append(pad + f"while {_e(s.cond)}:")
        _body(s.body, out, ind + 1)
    elif isinstance(s, (N.If, S.If)):
        out.append(pad + f"if {_e(s.cond)}:")
        _body(s.then, out, ind + 1)
        if s.orelse is not None:
            out.append(pad + "else:")
            _body(s.orelse, out, ind + 1)
    elif isinstance(s, S.ParallelFor):
        out.append(pad + f"parallel {s.schedule.kind}({_e(s.schedule.chunk)}) threads={_e(s.threads)} "
                   f"when={_e(s.when)} reductions={list(s.reductions)}:")
        _s(s.loop, out, ind + 1)
    elif isinstance(s, S.Parallel):
        out.append(pad + f"parallel threads={_e(s.threads)} when={_e(s.when)} reductions={list(s.reductions)}:")
        _body(s.body, out, ind + 1)
    elif isinstance(s, (S.FeatureGuard, S.FeatureIf)):
        cond = f" and {_e(s.cond)}" if isinstance(s, S.FeatureIf) else ""
        _branches(f"if target has {s.feature}{cond}:", s, out, ind)
    elif isinstance(s, S.TargetIf):
        _branches(f"if target {_e(s.cond)}:", s, out, ind)
    elif isinstance(s, S.Recover):
        out.append(pad + f"recover {s.name}:")
        _body(s.body, out, ind + 1)
        out.append(pad + "then:")
        _body(s.then, out, ind + 1)
        out.append(pad + f"on failure {s.name}:")
        _body(s.handler, out, ind + 1)
    elif isinstance(s, (S.Inline, S.Scope)):
        for x in s.stmts:
            _s(x, out, ind)
    elif isinstance(s, S.Atomic):
        out.append(pad + f"atomic {s.kind}{' relaxed' if s.relaxed else ''}:")
        _s(s.stmt, out, ind + 1)
    elif isinstance(s, S.Declare):
        out.append(pad + ("const " if s.const else "") + f"{_t(s.type)} {s.name}" +
                   (f" = {_e(s.init)}" if s.init is not None else "") +
                   "".join(f", {n}" + (f" = {_e(i)}" if i is not None else "") for n, i in s.more))
    elif isinstance(s, S.Assign):
        out.append(pad + f"{_e(s.target)} = {_e(s.value)}")
    elif isinstance(s, S.Update):
        out.append(pad + f"{_e(s.target)} {s.op}= {_e(s.value)}")
    elif isinstance(s, S.Reduce):
        out.append(pad + f"{_e(s.target)} {s.op}<{s.dtype}>= {_e(s.value)}")
    elif is_dataclass(s):
        args = ", ".join(f"{f.name}={_e(getattr(s, f.name))}" for f in fields(s))
        out.append(pad + type(s).__name__.lower() + (f" {args}" if args else ""))
    else:
        out.append(pad + repr(s))


def _branches(head, s, out, ind):
    """A target test's listing: ``head``, its ``then`` and, when there is one, its ``orelse``."""
    out.append("  " * ind + head)
    _body(s.then, out, ind + 1)
    if s.orelse is not None:
        out.append("  " * ind + "else:")
        _body(s.orelse, out, ind + 1)
