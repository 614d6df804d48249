"""The builder the lowering hands a level kind (formats/level_kinds.py) so that the kind writes
its walks (``size``, ``iterate``, ``coordinate``, ``locate``, ``append``) in the kernel's terms:
``LevelIR`` returns loop IR expressions over one operand level's C names (``p<slot>_<l>``
positions, ``c<slot>_<l>`` coordinates, ``n<slot>_<l>`` extent, as ``declare_operand`` names
them; ``LevelIR.output`` the result's). The formats layer sits below the compiler, so the kinds
never import it: they call what they are given.
"""
from __future__ import annotations

from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T


class LevelIR:
    """Loop IR for the walks over level ``level`` of operand ``slot``."""

    def __init__(self, slot, level):
        self.pos, self.crd, self.extent = (E.Var(f"{c}{slot}_{level}") for c in "pcn")

    @classmethod
    def output(cls, level):
        """The builder of the result's level ``level``: ``op<l>``, ``oc<l>``, extent ``osz<l>``."""
        b = cls.__new__(cls)
        b.pos, b.crd, b.extent = (E.Var(f"{c}{level}") for c in ("op", "oc", "osz"))
        return b

    def load(self, array, i):
        return E.Load(E.var(array), E.var(i))

    def store(self, array, i, value):
        return S.Assign(self.load(array, i), E.var(value))

    def add(self, a, b):
        return E.add(a, b)

    def sub(self, a, b):
        return E.sub(a, b)

    def mul(self, a, b):
        return E.mul(a, b)

    def paren(self, x):
        return E.Paren(E.var(x))

    def index(self, x):
        return E.Cast(T.INDEX, E.var(x))

