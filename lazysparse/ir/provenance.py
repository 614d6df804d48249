"""Provenance of index variables ("A Sparse Iteration Space Transformation Framework for Sparse
Tensor Algebra", the scheduling paper): the log of loop transformations that code generation reads
to recover coordinates, bound derived loops and place guards. Sparse operands store coordinates of
the *original* index variables, which the compiler may not rewrite, so each transformation is
recorded as a relation between index variables (``Split``, ``Fuse``, ``Pos``, ``Bound``) in a
``Provenance`` graph instead of rewriting subscripts as a dense compiler does."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


# -- expressions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Lit:
    value: int


@dataclass(frozen=True)
class Bin:
    op: str  # + - * / (floor division of non-negative values) %, ceil (CEIL(a, b))
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Load:
    array: str
    index: "Expr"


@dataclass(frozen=True)
class Search:
    """The last index ``t`` in ``[lo, hi)`` with ``array[t] <= key`` (the row of position ``key``
    in a position array, empty rows skipped), or, with ``exact``, the index holding ``key`` in a
    sorted coordinate segment."""
    array: str
    lo: "Expr"
    hi: "Expr"
    key: "Expr"
    exact: bool = False


Expr = Union[Var, Lit, Bin, Load, Search]


def ext(v: str) -> Var:
    """The extent symbol of index variable ``v``."""
    return Var(f"N_{v}")


def _e(x) -> Expr:
    return Lit(x) if isinstance(x, int) else x


def add(a, b):
    return Bin("+", _e(a), _e(b))


def mul(a, b):
    return Bin("*", _e(a), _e(b))


def div(a, b):
    return Bin("/", _e(a), _e(b))


def mod(a, b):
    return Bin("%", _e(a), _e(b))


def ceil(a, b):
    return Bin("ceil", _e(a), _e(b))


def render(e: Expr) -> str:
    """C text of an expression (``CEIL`` and ``ls_search``/``ls_find`` are the kernel's)."""
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Lit):
        return str(e.value)
    if isinstance(e, Bin):
        if e.op == "ceil":
            return f"CEIL({render(e.a)}, {render(e.b)})"
        return f"({render(e.a)} {e.op} {render(e.b)})"
    if isinstance(e, Load):
        return f"{e.array}[{render(e.index)}]"
    if isinstance(e, Search):
        fn = "ls_find" if e.exact else "ls_search"
        return f"{fn}({e.array}, {render(e.lo)}, {render(e.hi)}, {render(e.key)})"
    raise TypeError(f"render: not an expression: {e!r}")


def evaluate(e: Expr, env: dict, arrays: dict | None = None) -> int:
    """The value of ``e`` with variables (and extent symbols) from ``env`` and arrays (sequences
    of ints) from ``arrays``."""
    arrays = arrays or {}
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, Bin):
        a, b = evaluate(e.a, env, arrays), evaluate(e.b, env, arrays)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
                "%": lambda: a % b, "ceil": lambda: -(-a // b)}[e.op]()
    if isinstance(e, Load):
        return int(arrays[e.array][evaluate(e.index, env, arrays)])
    if isinstance(e, Search):
        arr, key = arrays[e.array], evaluate(e.key, env, arrays)
        lo, hi = evaluate(e.lo, env, arrays), evaluate(e.hi, env, arrays)
        found = [t for t in range(lo, hi) if (arr[t] == key if e.exact else arr[t] <= key)]
        if not found:
            raise ValueError(f"evaluate: {key} not in {e.array}[{lo}:{hi}]")
        return found[0] if e.exact else found[-1]
    raise TypeError(f"evaluate: not an expression: {e!r}")


# -- relations -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    parent: str
    outer: str
    inner: str
    factor: int
    up: bool = False  # divide: the outer loop runs ``factor`` times

    @property
    def sources(self):
        return (self.parent,)

    @property
    def results(self):
        return (self.outer, self.inner)


@dataclass(frozen=True)
class Fuse:
    outer: str
    inner: str
    fused: str

    @property
    def sources(self):
        return (self.outer, self.inner)

    @property
    def results(self):
        return (self.fused,)


@dataclass(frozen=True)
class Pos:
    coord: str
    pos: str
    access: str

    @property
    def sources(self):
        return (self.coord,)

    @property
    def results(self):
        return (self.pos,)


@dataclass(frozen=True)
class Bound:
    parent: str
    bound: str
    value: int  # MaxExact: the parent ranges over [lo, value)

    @property
    def sources(self):
        return (self.parent,)

    @property
    def results(self):
        return (self.bound,)


Relation = Union[Split, Fuse, Pos, Bound]


class ProvenanceError(ValueError):
    """A transformation that the graph cannot take (names the transformation and why)."""


@dataclass(frozen=True)
class Provenance:
    """The transformations applied to one statement's index variables, as relations between them.


    ==========  =====================================  ==========================================
    relation    edge                                   meaning
    ==========  =====================================  ==========================================
    ``Split``   ``parent -> (outer, inner)``           ``down``: the inner loop runs ``factor``
                                                       times; ``up`` (divide): the outer does
    ``Fuse``    ``(outer, inner) -> fused``            one loop over ``outer x inner``, same order
    ``Pos``     ``coord -> pos``                       the positions of ``access``'s stored entries
    ``Bound``   ``parent -> bound``                    a fact: ``parent`` ranges over ``[lo, value)``
    ==========  =====================================  ==========================================

    The graph is a DAG whose roots are the statement's variables and whose leaves are the loops
    that run. Everything here is a pure function of the (frozen) graph: :meth:`Provenance.derive`
    returns a new graph. Recovery and bounds are returned as expressions (:class:`Expr`), which
    render as C and evaluate on concrete values (the tests round-trip them). Extents are symbols
    ``N_<var>``; arrays are named ``<access>_pos`` and ``<access>_crd`` (the level the access's
    ``coord`` variable walks).
    """
    roots: tuple            # the statement's index variables
    relations: tuple = ()

    # -- structure ---------------------------------------------------------------------------------
    @property
    def variables(self) -> tuple:
        out = list(self.roots)
        for r in self.relations:
            out += [v for v in r.results if v not in out]
        return tuple(out)

    def derived_by(self, v: str):
        """The relation that has ``v`` among its sources (None for a leaf)."""
        for r in self.relations:
            if v in r.sources:
                return r
        return None

    def defined_by(self, v: str):
        """The relation that produced ``v`` (None for a root)."""
        for r in self.relations:
            if v in r.results:
                return r
        return None

    @property
    def leaves(self) -> tuple:
        """The fully derived variables: the loops that run."""
        return tuple(v for v in self.variables if self.derived_by(v) is None)

    def is_position(self, v: str) -> bool:
        """Whether ``v`` indexes an operand's position space (a ``Pos`` result or derived from one)."""
        r = self.defined_by(v)
        if r is None:
            return False
        if isinstance(r, Pos):
            return True
        return any(self.is_position(s) for s in r.sources)

    def fused_roots(self, v: str) -> tuple:
        """The original variables ``v`` iterates, outermost first."""
        r = self.defined_by(v)
        if r is None:
            return (v,)
        if isinstance(r, Fuse):
            return self.fused_roots(r.outer) + self.fused_roots(r.inner)
        return self.fused_roots(r.sources[0])

    def derive(self, rel: Relation) -> "Provenance":
        """The graph with ``rel`` added. Its sources must be leaves (a variable is transformed
        once), its results new names; ``pos`` needs a coordinate-space source."""
        name = type(rel).__name__.lower()
        known = self.variables
        for s in rel.sources:
            if s not in known:
                raise ProvenanceError(f"{name}: unknown index variable {s!r}")
            if self.derived_by(s) is not None:
                raise ProvenanceError(f"{name}: {s!r} was already transformed; transform what it became")
        for t in rel.results:
            if t in known:
                raise ProvenanceError(f"{name}: index variable {t!r} already exists")
        if len(set(rel.results)) != len(rel.results):
            raise ProvenanceError(f"{name}: the new variables must have distinct names")
        if isinstance(rel, (Split, Bound)):
            f = rel.factor if isinstance(rel, Split) else rel.value
            if isinstance(f, bool) or not isinstance(f, int) or f < 1:
                raise ProvenanceError(f"{name}: the factor must be a positive int, got {f!r}")
        if isinstance(rel, Pos) and self.is_position(rel.coord):
            raise ProvenanceError(f"pos: {rel.coord!r} is already in position space")
        if isinstance(rel, Fuse) and self.is_position(rel.outer):
            raise ProvenanceError(f"fuse: the outer variable {rel.outer!r} is in position space")
        return Provenance(self.roots, self.relations + (rel,))

    def reconstruct(self, order) -> tuple:
        """The loop order over the original variables that a nest of loops over ``order`` (in
        nesting order) stands for: the relations undone in inverse order, each result replaced
        by its sources where it first appears (the reconstruction of "Compilation of Modular and
        General Sparse Workspaces", which the workspace detection reads: its Fig. 11's
        ``{f0, f1, j}`` gives ``{i, k, j}``)."""
        cur = list(order)
        for r in reversed(self.relations):
            hit = [cur.index(v) for v in r.results if v in cur]
            if not hit:
                continue
            at = min(hit)
            cur = [v for v in cur if v not in r.results]
            cur[at:at] = [v for v in r.sources if v not in cur]
        return tuple(cur)

    # -- coordinate recovery -----------------------------------------------------------------------
    def recover_original(self, v: str) -> Expr:
        """``v`` as an expression of the leaves (and data): arithmetic for split and fuse, a
        ``crd`` load (and a search for the rows of a fused position space) for pos."""
        r = self.derived_by(v)
        if r is None:
            return Var(v)
        if isinstance(r, Split):
            o, i = self.recover_original(r.outer), self.recover_original(r.inner)
            step = ceil(ext(r.parent), r.factor) if r.up else Lit(r.factor)
            return add(mul(o, step), i)
        if isinstance(r, Fuse):
            f = self.recover_original(r.fused)
            n_in = self.extent(r.inner)
            return div(f, n_in) if v == r.outer else mod(f, n_in)
        if isinstance(r, Pos):
            p = self.recover_original(r.pos)
            roots = self.fused_roots(v)
            crd = Load(f"{r.access}_crd", p)
            if len(roots) == 1:
                return crd
            if len(roots) != 2:
                raise ProvenanceError(f"pos: recovering {len(roots)} fused variables is not supported")
            row = Search(f"{r.access}_pos", Lit(0), ext(roots[0]), p)
            return add(mul(row, ext(roots[1])), crd)
        if isinstance(r, Bound):
            return self.recover_original(r.bound)
        raise TypeError(r)

    def recover_derived(self, v: str) -> Expr:
        """``v`` (a derived variable) from the variables it was derived from: what a guard needs
        when a coordinate is loaded from the data."""
        r = self.defined_by(v)
        if r is None:
            return Var(v)
        if isinstance(r, Split):
            step = ceil(ext(r.parent), r.factor) if r.up else Lit(r.factor)
            p = Var(r.parent)
            return div(p, step) if v == r.outer else mod(p, step)
        if isinstance(r, Fuse):
            return add(mul(Var(r.outer), self.extent(r.inner)), Var(r.inner))
        if isinstance(r, Pos):
            roots = self.fused_roots(r.coord)
            if len(roots) == 1:
                return Search(f"{r.access}_crd", Var(f"{r.access}_lo"), Var(f"{r.access}_hi"),
                              Var(r.coord), exact=True)
            # a fused coordinate i * N_j + j: the position of j in row i's segment
            i, j = div(Var(r.coord), ext(roots[1])), mod(Var(r.coord), ext(roots[1]))
            return Search(f"{r.access}_crd", Load(f"{r.access}_pos", i), Load(f"{r.access}_pos", add(i, 1)),
                          j, exact=True)
        if isinstance(r, Bound):
            return Var(r.parent)
        raise TypeError(r)

    def extent(self, v: str) -> Expr:
        """Iterations of the loop over ``v`` (its range's length, symbolic)."""
        lo, hi = self.bounds()[v]
        return hi if lo == Lit(0) else Bin("-", hi, lo)

    # -- bounds (the scheduling paper's Fig. 19) ---------------------------------------------------
    def bounds(self, roots: dict | None = None) -> dict:
        """``{variable: (lo, hi)}``, propagated edge by edge from the roots' ranges (default
        ``[0, N_root)``)."""
        out = {v: (Lit(0), ext(v)) for v in self.roots}
        out.update({k: tuple(_e(x) for x in b) for k, b in (roots or {}).items()})
        for r in self.relations:
            if isinstance(r, Split):
                lo, hi = out[r.parent]
                if r.up:
                    n = hi if lo == Lit(0) else Bin("-", hi, lo)
                    out[r.outer], out[r.inner] = (Lit(0), Lit(r.factor)), (Lit(0), ceil(n, r.factor))
                else:
                    out[r.outer] = (div(lo, r.factor) if lo != Lit(0) else Lit(0), ceil(hi, r.factor))
                    out[r.inner] = (Lit(0), Lit(r.factor))
            elif isinstance(r, Fuse):
                (a, b), (c, d) = out[r.outer], out[r.inner]
                w = d if c == Lit(0) else Bin("-", d, c)
                lo = c if a == Lit(0) else add(mul(a, w), c)
                out[r.fused] = (lo, add(mul(b, w), c) if c != Lit(0) else mul(b, w))
            elif isinstance(r, Pos):
                roots_ = self.fused_roots(r.coord)
                lo, hi = out[roots_[0]]
                out[r.pos] = (Load(f"{r.access}_pos", lo), Load(f"{r.access}_pos", hi))
            elif isinstance(r, Bound):
                out[r.bound] = (out[r.parent][0], Lit(r.value))
        return out

    # -- guards ------------------------------------------------------------------------------------
    def guarded(self) -> tuple:
        """The split relations whose parent may run out of bounds in a full tile, so the loops
        need a guard (``if (parent >= hi) break``) or a guarded tail clone: every split, except
        one of a parent a ``Bound`` proves divisible by the factor. Pos parents stay in bounds
        (the data access is always guarded); other relations pass the property through."""
        out = []
        for r in self.relations:
            if not isinstance(r, Split):
                continue
            b = self._bound_of(r.parent)
            if b is not None and b % r.factor == 0:
                continue
            out.append(r)
        return tuple(out)

    def _bound_of(self, v: str):
        """The exact extent a Bound states for ``v`` (through the variable it bounds), or None."""
        r = self.defined_by(v)
        if isinstance(r, Bound):
            return r.value
        d = self.derived_by(v)
        if isinstance(d, Bound):
            return d.value
        return None
