"""Loop IR blocks and the nodes that hold C text: ``Block``, the builder lowering fills (its
``body`` a list, appended to and spliced while the loops are emitted; ``loopir.walk.freeze``
turns a finished tree into immutable ``Seq``s) with the statements of ``loopir.stmt`` over
``loopir.expr``, and the text nodes (``RawText``, a statement as C text; ``Decl``, ``For``,
``While``, ``If`` whose type, bounds or conditions are C text), which no lowering module builds
(tests/compiler/loopir checks it): the printers' tests build them, the C printer spells them and
``loopir.walk.text_debt`` counts them in a lowered program."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    """A sequence of statements, mutable while lowering builds it."""
    body: list = field(default_factory=list)

    def add(self, *stmts):
        """Append ``stmts``; a ``str`` is C text (a RawText)."""
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
    """One statement (or preprocessor line) as C text."""
    text: str


@dataclass(frozen=True)
class Comment:
    """A comment in the generated code (generated names and numbers only)."""
    text: str


@dataclass
class Decl:
    """A declaration whose type and initialiser are C text (``loopir.stmt.Declare`` is the typed
    one)."""
    ctype: str
    name: str
    init: str = None


@dataclass
class For:
    """A loop whose bounds are C text (``loopir.stmt.For`` is the typed one)."""
    var: str
    lo: str
    hi: str
    body: Block
    step: str = None  # None: var++ ; else an assignment expression


@dataclass
class While:
    """A loop whose condition is C text (``loopir.stmt.While`` is the typed one)."""
    cond: str
    body: Block


@dataclass
class If:
    """A conditional whose condition is C text (``loopir.stmt.If`` is the typed one)."""
    cond: str
    then: Block
    orelse: Block = None
