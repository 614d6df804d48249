"""Level kinds. A tensor's storage is a stack of levels, one per mode in storage order.

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

_KINDS = ("dense", "compressed", "singleton")


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
        if self.kind not in _KINDS:
            raise ValueError(f"Level: unknown level kind {shown(self.kind)}; expected one of {_KINDS}")
        if self.kind == "dense" and not (self.ordered and self.unique):
            raise ValueError("Level: a dense level is always ordered and unique")

    @property
    def is_dense(self) -> bool:
        return self.kind == "dense"

    @property
    def is_sparse(self) -> bool:
        return self.kind != "dense"

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
