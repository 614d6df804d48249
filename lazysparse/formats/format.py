"""Formats: one level per mode plus a mode order; named formats as families over ndim."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

from lazysparse.formats.levels import Level, DENSE, COMPRESSED, SINGLETON
from lazysparse.errors import shown


@dataclass(frozen=True)
class Format:
    """A storage format: ``levels[k]`` stores mode ``order[k]`` (outermost first).

    >>> import lazysparse as ls
    >>> ls.Format(["dense", "compressed"]) == ls.csr
    True
    >>> ls.Format(["dense", "compressed"], order=(1, 0)) == ls.csc
    True
    """

    levels: tuple
    order: tuple = None
    name: str = field(default=None, compare=False)

    def __init__(self, levels, order=None, name=None):
        if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
            raise TypeError(f"Format: levels must be a sequence of levels such as ['dense', 'compressed'], "
                            f"got {shown(levels)}")
        levels = tuple(Level.parse(l) for l in levels)
        n = len(levels)
        order = tuple(range(n)) if order is None else _mode_order(order, n)
        if sorted(order) != list(range(n)):
            raise ValueError(f"Format: order {order} is not a permutation of the {n} modes")
        for k, lv in enumerate(levels):
            if k == 0 and not lv.level_kind.may_be_outermost:
                raise ValueError(f"Format: a {lv.kind} level cannot be outermost")
            # a singleton holds one coordinate per parent entry; only a non-unique sparse parent
            # has entries of its own to hang it on (COO's chain). Any other parent has no
            # storage the generated iterators could address (they would not compile).
            if lv.follows_parent and (levels[k - 1].is_dense or levels[k - 1].unique):
                raise ValueError(f"Format: singleton level {k} must follow a non-unique compressed or "
                                 f"singleton level, not {shown(levels[k - 1])} (COO is "
                                 "[('compressed', {'unique': False}), 'singleton'])")
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "name", name or _guess_name(levels, order))
        object.__setattr__(self, "_dense", all(l.is_dense for l in levels))

    @property
    def ndim(self) -> int:
        return len(self.levels)

    @property
    def is_dense(self) -> bool:
        return self._dense

    @property
    def is_sparse(self) -> bool:
        return not self._dense

    def __eq__(self, other):
        if other is self:
            return True
        if isinstance(other, FormatFamily):
            return other == self
        if isinstance(other, str):
            try:
                other = resolve_format(other, self.ndim)
            except (ValueError, TypeError):
                return False
        if not isinstance(other, Format):
            return NotImplemented
        return self.levels == other.levels and self.order == other.order

    def __hash__(self):
        # a named format hashes as its name: it equals the string and its family (``ls.csr``),
        # so ``{"csr": ...}[A.format]`` finds it, as scipy code that keys on ``A.format`` does
        h = self.__dict__.get("_h")
        if h is None:
            h = hash(self.name) if self.name else hash((self.levels, self.order))
            object.__setattr__(self, "_h", h)
        return h

    def __radd__(self, other):
        """``"to" + A.format`` is ``"tocsr"``: scipy's ``format`` is a string, and code builds
        method names from it."""
        if isinstance(other, str) and self.name:
            return other + self.name
        return NotImplemented

    def __repr__(self):
        if self.name:
            return f"ls.{self.name}"
        return f"ls.Format({list(self.levels)}, order={self.order})"

    def key(self) -> str:
        """Canonical text used in kernel signatures."""
        return ",".join(repr(l) for l in self.levels) + "|" + ",".join(map(str, self.order))


def _mode_order(order, n):
    """``order`` as a tuple of ints; 1.5 or '1' are mistakes, not modes."""
    try:
        items = tuple(order)
    except TypeError:
        raise TypeError(f"Format: order must be a sequence of {n} mode numbers, got {shown(order)}") from None
    out = []
    for o in items:
        if isinstance(o, bool) or not hasattr(o, "__index__"):
            raise TypeError(f"Format: order entries must be integers, got {shown(o)} in {shown(order)}")
        out.append(operator.index(o))
    return tuple(out)


def _guess_name(levels, order):
    n = len(levels)
    # (a format's name is spelled by its kinds' names: these tests name, they do not dispatch)
    kinds = tuple(l.kind for l in levels)
    canon = all(l.ordered and l.unique for l in levels)
    ident = order == tuple(range(n))
    if all(k == "dense" for k in kinds):
        return "dense" if ident else None
    if n >= 1 and kinds[0] == "compressed" and not levels[0].unique and all(k == "singleton" for k in kinds[1:]) \
            and ident and all(l.ordered for l in levels) and all(l.unique for l in levels[-1:]):
        return "coo"
    if not canon:
        return None
    if n == 2 and kinds == ("dense", "compressed"):
        return "csr" if ident else ("csc" if order == (1, 0) else None)
    if n == 2 and kinds == ("compressed", "compressed"):
        return "dcsr" if ident else ("dcsc" if order == (1, 0) else None)
    if all(k == "compressed" for k in kinds) and ident:
        return "csf"
    return None


class FormatFamily:
    """A named format defined for every ndim it makes sense for (``ls.dense``, ``ls.coo``, ``ls.csf``)
    or for one ndim (``ls.csr``). Compares equal to the concrete Format it resolves to."""

    def __init__(self, name, builder, ndims=None):
        self.name = name
        self._builder = builder
        self._ndims = ndims
        self._cache = {}

    def resolve(self, ndim: int) -> Format:
        fmt = self._cache.get(ndim)
        if fmt is not None:
            return fmt
        if self._ndims is not None and ndim not in self._ndims:
            raise ValueError(f"format {shown(self.name)} is defined for {sorted(self._ndims)}-d arrays, not {ndim}-d")
        return self._cache.setdefault(ndim, self._builder(ndim))

    def __eq__(self, other):
        if isinstance(other, FormatFamily):
            return self.name == other.name
        if isinstance(other, str):
            return other == self.name
        if isinstance(other, Format):
            try:
                return self.resolve(other.ndim) == other
            except ValueError:
                return False
        return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"ls.{self.name}"


def _dense(n):
    return Format([DENSE] * n, name="dense")


def _coo(n):
    if n == 0:
        return _dense(0)
    if n == 1:
        return Format([COMPRESSED], name="coo")
    lv = [Level("compressed", unique=False)] + [Level("singleton", unique=False)] * (n - 2) + [SINGLETON]
    return Format(lv, name="coo")


def _csf(n):
    if n == 0:
        return _dense(0)
    return Format([COMPRESSED] * n, name="csf")


dense = FormatFamily("dense", _dense)
coo = FormatFamily("coo", _coo)
csf = FormatFamily("csf", _csf)
csr = FormatFamily("csr", lambda n: Format([DENSE, COMPRESSED], name="csr"), {2})
csc = FormatFamily("csc", lambda n: Format([DENSE, COMPRESSED], order=(1, 0), name="csc"), {2})
dcsr = FormatFamily("dcsr", lambda n: Format([COMPRESSED, COMPRESSED], name="dcsr"), {2})
dcsc = FormatFamily("dcsc", lambda n: Format([COMPRESSED, COMPRESSED], order=(1, 0), name="dcsc"), {2})

NAMED = {f.name: f for f in (dense, coo, csf, csr, csc, dcsr, dcsc)}
# Vectors: every 1-d sparse name means one compressed level.
_SPARSE_1D = {"csr", "csc", "dcsr", "dcsc", "coo", "csf"}


def resolve_format(fmt, ndim: int, opname: str = None) -> Format:
    """Turn a Format, FormatFamily or name into the concrete Format for an ``ndim``-d array.

    ``opname``: the user's operation, put in front of error messages (a mistake is reported where
    the user wrote the format, naming the call).
    """
    if opname is None:
        return _resolve(fmt, ndim)
    try:
        return _resolve(fmt, ndim)
    except ValueError as e:
        raise ValueError(f"{opname}: {e}") from None
    except TypeError as e:
        raise TypeError(f"{opname}: {e}") from None


def _resolve(fmt, ndim):
    if isinstance(fmt, Format):
        if fmt.ndim != ndim:
            raise ValueError(f"format {shown(fmt)} has {fmt.ndim} levels but the array has {ndim} dimensions")
        return fmt
    if isinstance(fmt, str):
        key = fmt.lower()
        if key not in NAMED:
            raise ValueError(f"unknown format {shown(fmt)}; expected one of {sorted(NAMED)} or an ls.Format")
        fmt = NAMED[key]
    if isinstance(fmt, FormatFamily):
        if ndim == 1 and fmt.name in _SPARSE_1D:
            return Format([COMPRESSED], name="csf")
        if ndim == 0:
            return _dense(0)
        return fmt.resolve(ndim)
    raise TypeError(f"expected a format (ls.Format, ls.csr, 'csr', ...), got {type(fmt).__name__}")
