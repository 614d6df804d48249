"""Level kinds as classes behind one interface, so that a new kind is one class in this package.

A ``LevelKind`` says what a level stores (its index ``arrays``), what it can do (``full``:
every coordinate is stored, so a coordinate is located by arithmetic; ``follows_parent``: one
child per parent position; whether it may be unordered or non-unique, or outermost), how many
positions it has (``size``), and the three walks a kernel makes over it: ``iterate`` (the range
of a parent's children and the coordinate at a position), ``locate`` (the position of a
coordinate, where that needs no search) and ``append`` (the stores that add a child during
assembly). The walks are written once against a builder ``b`` the caller hands in (``b.load``,
``b.add``, ``b.mul``, ``b.paren``, ``b.index``, ``b.store`` and the level's ``b.pos``, ``b.crd``,
``b.extent``): the lowering's builder returns loop IR, ``NumPyBuilder`` computes on a storage's
arrays, so the formats layer needs no import of the compiler. ``Level`` (levels.py) is the
hashable value formats are made of; its ``level_kind`` is one of these classes' instances.
"""
from __future__ import annotations

from abc import ABC, abstractmethod


class LevelKind(ABC):
    """One kind of level. Subclasses set the class attributes and the four walks."""

    name: str = ""
    arrays: tuple = ()            # the index arrays it keeps per level: "pos", "crd"
    full: bool = False            # stores every coordinate 0..extent-1 of each parent
    follows_parent: bool = False  # exactly one child per parent position, at that position
    may_be_unordered: bool = True
    may_be_nonunique: bool = True
    may_be_outermost: bool = True

    @property
    def has_pos(self) -> bool:
        """A parent's children are the positions ``pos[p] .. pos[p+1]``."""
        return "pos" in self.arrays

    @property
    def has_crd(self) -> bool:
        """Each position's coordinate is stored in ``crd``."""
        return "crd" in self.arrays

    def check(self, ordered: bool, unique: bool):
        """The message refusing these properties for this kind, or None."""
        if (not ordered and not self.may_be_unordered) or (not unique and not self.may_be_nonunique):
            return f"Level: a {self.name} level is always ordered and unique"
        return None

    @abstractmethod
    def size(self, b, parents):
        """Positions at this level given ``parents`` positions at the level above (None where
        the level keeps no count of its own: a singleton's are its parent's entries)."""

    @abstractmethod
    def iterate(self, b, parent, end=None):
        """``(lo, hi)``: the positions of ``parent``'s children. ``end``: for a level that follows
        its parent, the end of the parent's run of equal coordinates (a non-unique parent)."""

    @abstractmethod
    def coordinate(self, b, p, lo):
        """The coordinate at position ``p`` of a range that starts at ``lo``."""

    def locate(self, b, parent, coord):
        """The position of ``coord`` under ``parent`` without a search, or None (the caller
        searches the ``iterate`` range: compressed levels)."""
        return None

    @abstractmethod
    def append(self, b, parent, coord, end):
        """``(stores, position)``: the stores that add child ``coord`` to ``parent`` when
        ``end`` positions are filled at this level, and the child's position."""

    def __repr__(self):
        return f"<level kind {self.name}>"


class Dense(LevelKind):
    """Every coordinate of each parent: position ``parent * extent + coordinate``; no arrays."""

    name = "dense"
    full = True
    may_be_unordered = False
    may_be_nonunique = False

    def size(self, b, parents):
        return b.mul(b.paren(parents), b.extent)

    def iterate(self, b, parent, end=None):
        lo = b.mul(b.paren(parent), b.extent)
        return lo, b.add(lo, b.extent)

    def coordinate(self, b, p, lo):
        return b.sub(p, lo)

    def locate(self, b, parent, coord):
        return b.add(b.mul(b.paren(parent), b.extent), coord)

    def append(self, b, parent, coord, end):
        return (), self.locate(b, parent, coord)  # (positions are implied: nothing to store)


class Compressed(LevelKind):
    """A parent's children are positions ``pos[parent] .. pos[parent+1]``, coordinates in ``crd``."""

    name = "compressed"
    arrays = ("pos", "crd")

    def size(self, b, parents):
        return b.index(b.load(b.pos, parents))

    def iterate(self, b, parent, end=None):
        return b.index(b.load(b.pos, parent)), b.index(b.load(b.pos, b.add(b.paren(parent), 1)))

    def coordinate(self, b, p, lo):
        return b.load(b.crd, p)

    def append(self, b, parent, coord, end):
        # ``pos[parent + 1]`` is the end so far; a parent with no children takes the end of the
        # one before it once assembly is over (a running maximum or a prefix sum of counts)
        return (b.store(b.crd, end, coord), b.store(b.pos, b.add(b.paren(parent), 1), b.add(end, 1))), end


class Singleton(LevelKind):
    """One child per parent position, at that position, its coordinate in ``crd`` (COO's inner
    levels); the parent is a non-unique level, whose runs of equal coordinates it walks."""

    name = "singleton"
    arrays = ("crd",)
    follows_parent = True
    may_be_outermost = False

    def size(self, b, parents):
        return None

    def iterate(self, b, parent, end=None):
        lo = b.index(b.paren(parent))
        return lo, (end if end is not None else b.add(lo, 1))

    def coordinate(self, b, p, lo):
        return b.load(b.crd, p)

    def append(self, b, parent, coord, end):
        return (b.store(b.crd, parent, coord),), parent


# name -> kind, in the order error messages list them; a new kind is a class above and an entry here
KINDS = {k.name: k for k in (Dense(), Compressed(), Singleton())}


class NumPyBuilder:
    """The walks on a storage's arrays: ``b.pos``/``b.crd`` are one level's arrays (or None) and
    ``b.extent`` its mode's extent; expressions are Python integers, stores write in place."""

    def __init__(self, pos=None, crd=None, extent=None):
        self.pos, self.crd, self.extent = pos, crd, extent

    @classmethod
    def of(cls, storage, level):
        """The builder of ``storage``'s level ``level``."""
        return cls(storage.pos[level], storage.crd[level], storage.level_size(level))

    def load(self, array, i):
        return int(array[i])

    def store(self, array, i, value):
        array[i] = value
        return (i, value)

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b

    def paren(self, x):
        return x

    def index(self, x):
        return int(x)
