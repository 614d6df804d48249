"""A recursive-descent parser for the index notation of ``ls.expr`` (``parse_notation``). The
result is a small AST of tuples; it names operands and indices by the user's identifiers, which
only the front end sees (it maps them to integers and ``Index('i<k>')``)."""
from __future__ import annotations

from dataclasses import dataclass
from lazysparse.errors import shown

_MAX_DEPTH = 64    # parser nesting limit: deep input must give ValueError, not RecursionError
_MAX_TREE = 128    # AST depth limit (left-deep chains like a+a+...+a), for recursive consumers
_SYMBOLS = "[](),=+-*/"
_ID_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_ID_CHARS = _ID_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")


# -- AST ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Num:
    value: object  # int | float


@dataclass(frozen=True)
class Ref:
    name: str
    subs: tuple  # of str (index name) | int (constant) | Affine; () for a bare name


@dataclass(frozen=True)
class Affine:
    """A compound subscript ``c1*i + c2*j + ... + b`` (the grammar of "Compiler Support for
    Sparse Tensor Convolutions", its Fig. 4).

    ``terms``: ``((index name, coefficient), ...)`` in first-seen order, like names merged
    (``i+i`` is ``2*i``), zero coefficients dropped; ``const``: the intercept. Negative
    coefficients or intercepts and products of two indices parse; the front end rejects them
    (``problem``) with the subscript's text."""
    text: str  # the subscript as written, for messages
    terms: tuple = ()
    const: int = 0
    problem: str = ""  # why the subscript is not an affine form lazysparse can read, or ""


@dataclass(frozen=True)
class Fn:
    name: str
    args: tuple


@dataclass(frozen=True)
class Bin:
    op: str  # '+', '-', '*', '/'
    left: object
    right: object


@dataclass(frozen=True)
class Neg:
    arg: object


@dataclass(frozen=True)
class Parsed:
    out_name: str
    out_indices: tuple  # of str
    rhs: object


# -- tokens -------------------------------------------------------------------------------------
def tokenize(text: str):
    """``[(kind, value, position)]`` with kind in NAME, INT, FLOAT, SYM, END."""
    toks = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n\r":
            i += 1
        elif c in _ID_START:
            j = i + 1
            while j < n and text[j] in _ID_CHARS:
                j += 1
            toks.append(("NAME", text[i:j], i))
            i = j
        elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
            i = _number(text, i, toks)
        elif c in _SYMBOLS:
            toks.append(("SYM", c, i))
            i += 1
        else:
            raise ValueError(f"expr: unexpected character {shown(c)} at position {i}")
    toks.append(("END", None, n))
    return toks


def _number(text, i, toks):
    n = len(text)
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    is_float = False
    if j < n and text[j] == ".":
        is_float = True
        j += 1
        while j < n and text[j] in _DIGITS:
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k] in _DIGITS:
            is_float = True
            j = k
            while j < n and text[j] in _DIGITS:
                j += 1
    if j < n and text[j] in _ID_CHARS:
        raise ValueError(f"expr: malformed number {shown(text[i:j + 1])} at position {i}")
    lit = text[i:j]
    try:
        toks.append(("FLOAT", float(lit), i) if is_float else ("INT", int(lit), i))
    except ValueError:  # Python refuses int() of more than 4300 digits
        raise ValueError(f"expr: number of {len(lit)} digits at position {i} is too long") from None
    return j


# -- parser -------------------------------------------------------------------------------------
class _Parser:
    """The recursive-descent parser behind ``parse_notation``.

    Grammar (``sub`` are subscripts; an affine one is kept as its linear form, ``Affine``)::

    statement := NAME ['[' [NAME (',' NAME)*] ']'] '=' expr END
    expr      := term (('+' | '-') term)*
    term      := unary (('*' | '/') unary)*
    unary     := ('-' | '+') unary | primary
    primary   := NUMBER | '(' expr ')' | NAME '(' [expr (',' expr)*] ')'
               | NAME '[' [sub (',' sub)*] ']' | NAME
    sub       := sterm (('+' | '-') sterm)*        sterm := sfactor ('*' sfactor)*
    sfactor   := INT | NAME | '(' sub ')' | '-' sfactor
    """
    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.k = 0
        self.depth = 0

    # helpers
    def peek(self, value=None):
        kind, v, _ = self.toks[self.k]
        return v == value and kind == "SYM" if value is not None else kind

    def take(self):
        tok = self.toks[self.k]
        self.k += 1
        return tok

    def expect(self, sym):
        kind, v, pos = self.take()
        if kind != "SYM" or v != sym:
            self.fail(f"expected {shown(sym)}", pos, kind, v)

    def name(self, what):
        kind, v, pos = self.take()
        if kind != "NAME":
            self.fail(f"expected {what}", pos, kind, v)
        return v

    def fail(self, msg, pos, kind, v):
        got = "end of input" if kind == "END" else repr(v)
        raise ValueError(f"expr: {msg} at position {pos}, got {got} in {shown(self.text)}")

    def enter(self):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ValueError(f"expr: expression nested more than {_MAX_DEPTH} levels deep")

    # grammar
    def statement(self):
        out = self.name("the output name")
        idx = ()
        if self.peek("["):
            self.take()
            idx = self.list("]", lambda: self.name("an index name"))
        self.expect("=")
        rhs = self.expr()
        kind, v, pos = self.take()
        if kind != "END":
            self.fail("expected an operator or end of input", pos, kind, v)
        if _depth(rhs) > _MAX_TREE:
            raise ValueError(f"expr: expression is more than {_MAX_TREE} operations deep")
        return Parsed(out, tuple(idx), rhs)

    def list(self, close, item):
        items = []
        if not self.peek(close):
            items.append(item())
            while self.peek(","):
                self.take()
                items.append(item())
        self.expect(close)
        return items

    def expr(self):
        self.enter()
        left = self.term()
        while self.peek("+") or self.peek("-"):
            op = self.take()[1]
            left = Bin(op, left, self.term())
        self.depth -= 1
        return left

    def term(self):
        left = self.unary()
        while self.peek("*") or self.peek("/"):
            op = self.take()[1]
            left = Bin(op, left, self.unary())
        return left

    def unary(self):
        if self.peek("-") or self.peek("+"):
            self.enter()
            op = self.take()[1]
            arg = self.unary()
            self.depth -= 1
            if op == "+":
                return arg
            return Num(-arg.value) if isinstance(arg, Num) else Neg(arg)
        return self.primary()

    def primary(self):
        kind, v, pos = self.take()
        if kind in ("INT", "FLOAT"):
            return Num(v)
        if kind == "SYM" and v == "(":
            e = self.expr()
            self.expect(")")
            return e
        if kind != "NAME":
            self.fail("expected a number, a name or '('", pos, kind, v)
        if self.peek("("):
            self.take()
            return Fn(v, tuple(self.list(")", self.expr)))
        if self.peek("["):
            self.take()
            return Ref(v, tuple(self.list("]", self.subscript)))
        return Ref(v, ())

    def subscript(self):
        start = self.toks[self.k][2]
        tree = self.sexpr()
        text = self.text[start:self.toks[self.k][2]].strip()
        if isinstance(tree, (str, int)):
            return tree
        try:
            coefs, const = _linear(tree)
        except _NotLinear as e:
            return Affine(text, problem=str(e))
        terms = tuple((v, c) for v, c in coefs.items() if c != 0)
        if not terms:
            return const          # ``2*3``, ``i-i+1``: a constant subscript
        if terms == ((terms[0][0], 1),) and const == 0:
            return terms[0][0]    # ``(i)``, ``i+0``: a plain index
        return Affine(text, terms, const)

    # subscripts are parsed to a tree whose leaves are names and ints; only leaves survive
    def sexpr(self):
        self.enter()
        left = self.sterm()
        while self.peek("+") or self.peek("-"):
            left = (self.take()[1], left, self.sterm())
        self.depth -= 1
        return left

    def sterm(self):
        left = self.sfactor()
        while self.peek("*"):
            left = (self.take()[1], left, self.sfactor())
        return left

    def sfactor(self):
        kind, v, pos = self.take()
        if kind in ("INT", "NAME"):
            return v
        if kind == "SYM" and v == "-":
            self.enter()
            arg = self.sfactor()
            self.depth -= 1
            return -arg if isinstance(arg, int) else ("neg", arg)
        if kind == "SYM" and v == "(":
            e = self.sexpr()
            self.expect(")")
            return e
        self.fail("expected an index name or an integer in a subscript", pos, kind, v)


class _NotLinear(Exception):
    pass


def _linear(tree):
    """``({name: coefficient}, constant)`` of a subscript tree (leaves: names and ints; nodes
    ``(op, left, right)`` and ``("neg", arg)``). Iterative: ``i+i+...+i`` is a left-deep chain
    as long as the text, which the parser's nesting limit does not bound."""
    done = []                      # linear forms of finished subtrees, a stack
    work = [(tree, False)]
    while work:
        node, ready = work.pop()
        if isinstance(node, int):
            done.append(({}, node))
        elif isinstance(node, str):
            done.append(({node: 1}, 0))
        elif not ready:
            work.append((node, True))
            work.extend((kid, False) for kid in reversed(node[1:]))
        elif node[0] == "neg":
            c, b = done.pop()
            done.append(({v: -k for v, k in c.items()}, -b))
        else:
            (rc, rb), (lc, lb) = done.pop(), done.pop()
            if node[0] == "*":
                if lc and rc:
                    raise _NotLinear("a product of two indices is not affine")
                c, k = (lc, rb) if lc else (rc, lb)
                done.append(({v: x * k for v, x in c.items()}, lb * rb))
            else:
                sign = 1 if node[0] == "+" else -1
                out = dict(lc)
                for v, x in rc.items():
                    out[v] = out.get(v, 0) + sign * x
                done.append((out, lb + sign * rb))
    return done[0]


def children(node):
    """Sub-expressions of an AST node."""
    if isinstance(node, Bin):
        return (node.left, node.right)
    if isinstance(node, Neg):
        return (node.arg,)
    if isinstance(node, Fn):
        return node.args
    return ()


def _depth(tree):
    # iterative, so that measuring a deep tree cannot itself overflow the stack
    best, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        best = d if d > best else best
        stack.extend((c, d + 1) for c in children(node))
    return best


def parse_notation(text) -> Parsed:
    """Parse ``"A[i,j] = B[i,k] * C[k,j]"`` into a ``Parsed`` AST.

    >>> parse_notation("y[i] = A[i,j] * x[j]").out_indices
    ('i',)
    """
    if not isinstance(text, str):
        raise TypeError(f"expr: notation must be a string, got {type(text).__name__}")
    return _Parser(text).statement()
