"""Walks over loop IR trees: the nodes under a node, a tree made immutable, and the text debt
(how many C-text nodes a lowered program holds, by kind)."""
from __future__ import annotations

from collections import Counter
from dataclasses import fields, is_dataclass, replace

from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import nodes as N
from lazysparse.compiler.loopir import stmt as S


def children(node):
    """The statements, blocks and expressions directly under ``node``."""
    if isinstance(node, N.Block):
        return tuple(node.body)
    if isinstance(node, N.Seq):
        return node.stmts
    if isinstance(node, (S.Inline, S.Scope)):
        return node.stmts
    if not is_dataclass(node):
        return ()
    out = []
    for f in fields(node):
        v = getattr(node, f.name)
        if isinstance(v, (tuple, list)):
            out += [x for x in v if _node(x)]
        elif _node(v):
            out.append(v)
    return tuple(out)


def _node(x):
    return isinstance(x, (E.Expr, S.Stmt, N.Block, N.Seq, N.RawText, N.Comment, N.Decl, N.For,
                          N.While, N.If))


def walk(node):
    """``node`` and every node under it, depth first (statements before their bodies)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


RAW_KINDS = {N.RawText: "raw_text", E.Raw: "raw_expr", N.Decl: "text_decl", N.For: "text_for",
             N.While: "text_while", N.If: "text_if"}


def text_debt(node) -> Counter:
    """How many C-text nodes are in the tree under ``node``, by kind:
    ``raw_text`` (statements as text), ``raw_expr`` (expressions as text), and the text forms
    of declarations, loops and conditionals."""
    out = Counter()
    for n in walk(node):
        k = RAW_KINDS.get(type(n))
        if k is not None:
            out[k] += 1
    return out


def count_raw(node) -> int:
    """How many C-text nodes of any kind are under ``node``."""
    return sum(text_debt(node).values())


def freeze(node):
    """An immutable copy of the tree under ``node``: Blocks become Seqs (the
    text nodes with bodies are copied with frozen bodies too, but stay their own classes)."""
    if isinstance(node, N.Block):
        return N.Seq(tuple(freeze(s) for s in node.body))
    if isinstance(node, (N.For, N.While, N.If)):
        kw = {f.name: freeze(getattr(node, f.name)) for f in fields(node)
              if isinstance(getattr(node, f.name), N.Block)}
        return replace(node, **kw)
    if isinstance(node, (S.Stmt,)) and is_dataclass(node):
        kw = {}
        for f in fields(node):
            v = getattr(node, f.name)
            if isinstance(v, N.Block) or isinstance(v, S.Stmt):
                kw[f.name] = freeze(v)
            elif isinstance(v, tuple) and any(isinstance(x, (N.Block, S.Stmt)) for x in v):
                kw[f.name] = tuple(freeze(x) for x in v)
        return replace(node, **kw) if kw else node
    return node
