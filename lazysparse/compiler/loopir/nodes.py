"""Loop IR blocks, and the transitional text nodes.

``Block`` is the builder lowering fills (its ``body`` a list, appended to and spliced while the
loops are emitted); ``loopir.walk.freeze`` turns a finished tree into immutable ``Seq``s. The
statements to build are those of ``loopir.stmt`` over ``loopir.expr``.

The other classes here are the transitional text nodes: ``RawText`` (a statement given as C
text; ``Line`` is its old name), and ``Decl``, ``For``, ``While``, ``If`` whose type, bounds and
conditions are C text. No lowering module builds them any more (tests/compiler/loopir checks it);
the C printer still spells them, and ``loopir.walk.text_debt`` counts them in a lowered program.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    """A sequence of statements, mutable while lowering builds it."""
    body: list = field(default_factory=list)

    def add(self, *stmts):
        """Append ``stmts``; a ``str`` is transitional C text (a RawText)."""
        for s in stmts:
            if isinstance(s, str):
                s = RawText(s)
            self.body.append(s)
        return self


@dataclass(frozen=True)
class Seq:
    """An immutable Block (``loopir.walk.freeze``)."""
    stmts: tuple


@dataclass(frozen=True)
class RawText:
    """Transitional: one statement (or preprocessor line) as C text."""
    text: str


Line = RawText  # its old name: lowering code not yet converted builds C text with it


@dataclass(frozen=True)
class Comment:
    """A comment in the generated code (generated names and numbers only)."""
    text: str


@dataclass
class Decl:
    """Transitional: a declaration whose type and initialiser are C text (``loopir.stmt.Declare``
    is the typed one)."""
    ctype: str
    name: str
    init: str = None


@dataclass
class For:
    """Transitional: a loop whose bounds are C text (``loopir.stmt.For``)."""
    var: str
    lo: str
    hi: str
    body: Block
    step: str = None  # None: var++ ; else an assignment expression


@dataclass
class While:
    """Transitional: a loop whose condition is C text (``loopir.stmt.While``)."""
    cond: str
    body: Block


@dataclass
class If:
    """Transitional: a conditional whose condition is C text (``loopir.stmt.If``)."""
    cond: str
    then: Block
    orelse: Block = None
