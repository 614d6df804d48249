"""Levels, the hashable values formats are made of: a kind's name and two properties. A
tensor's storage is a stack of levels, one per mode in storage order; what each kind stores and
how kernels walk it is its class in level_kinds.py (``Level.level_kind``).

* dense: every coordinate 0..N-1 is stored; position = parent_pos * N + coord.
* compressed: ``pos[parent] .. pos[parent+1]`` delimits the children of a parent, ``crd`` holds
  their coordinates.
* singleton: exactly one child per parent position, coordinate in ``crd`` (COO's inner levels).

``ordered``: coordinates increase within a parent; ``unique``: no coordinate repeats within a
parent. A non-unique level is iterated by segments of equal coordinates (COO's outer level).
"""
from __future__ import annotations

from dataclasses import dataclass
from lazysparse.errors import shown
from lazysparse.formats.level_kinds import KINDS, LevelKind

_KINDS = tuple(KINDS)


@dataclass(frozen=True)
class Level:
    kind: str
    ordered: bool = True
    unique: bool = True

    def __post_init__(self):
        for prop in ("ordered", "unique"):
            v = getattr(self, prop)
            if type(v).__name__ not in ("bool", "bool_"):
                # "yes" would be truthy but compare unequal to True: two equal-looking formats
                raise TypeError(f"Level: {prop} must be True or False, got {shown(v)}")
            object.__setattr__(self, prop, bool(v))
        if not isinstance(self.kind, str) or self.kind not in KINDS:
            raise ValueError(f"Level: unknown level kind {shown(self.kind)}; expected one of {_KINDS}")
        bad = KINDS[self.kind].check(self.ordered, self.unique)
        if bad:
            raise ValueError(bad)

    @property
    def level_kind(self) -> LevelKind:
        """The class instance that says what this kind stores and how kernels walk it."""
        return KINDS[self.kind]

    @property
    def is_dense(self) -> bool:
        """Every coordinate stored: positions by arithmetic, no index arrays."""
        return KINDS[self.kind].full

    @property
    def is_sparse(self) -> bool:
        return not KINDS[self.kind].full

    @property
    def has_pos(self) -> bool:
        """A parent's children are the positions ``pos[p] .. pos[p+1]`` (compressed)."""
        return KINDS[self.kind].has_pos

    @property
    def has_crd(self) -> bool:
        """Each position's coordinate is in ``crd`` (every sparse kind)."""
        return KINDS[self.kind].has_crd

    @property
    def follows_parent(self) -> bool:
        """One child per parent position, at that position (singleton)."""
        return KINDS[self.kind].follows_parent

    @property
    def unique_segments(self) -> bool:
        """A parent's children are one segment ``crd[pos[p] .. pos[p+1]]`` of distinct
        coordinates (compressed and unique): what a binary or galloping search probes, a
        schedule splits by positions, or a result row appends to (the kernels take a compressed
        level's coordinates as sorted and do not test ``ordered``)."""
        return KINDS[self.kind].has_pos and self.unique

    def __repr__(self):
        props = []
        if not self.ordered:
            props.append("unordered")
        if not self.unique:
            props.append("nonunique")
        return self.kind if not props else f"{self.kind}({','.join(props)})"

    @staticmethod
    def parse(obj) -> "Level":
        """Accept a Level, a kind string, or ``(kind, {"ordered":..., "unique":...})``."""
        if isinstance(obj, Level):
            return obj
        if isinstance(obj, str):
            return Level(obj)
        if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str) and isinstance(obj[1], dict):
            unknown = set(obj[1]) - {"ordered", "unique"}
            if unknown:
                raise TypeError(f"Format: unknown level properties {sorted(map(str, unknown))} in {shown(obj)}; "
                                "a level takes 'ordered' and 'unique'")
            return Level(obj[0], **obj[1])
        raise TypeError(f"Format: cannot interpret {shown(obj)} as a level (use 'dense', 'compressed' or 'singleton')")


DENSE = Level("dense")
COMPRESSED = Level("compressed")
SINGLETON = Level("singleton")
