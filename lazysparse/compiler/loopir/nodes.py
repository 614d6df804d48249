"""Loop IR: the imperative program lowering produces and backends print.

Statements are structured (blocks, for/while loops, ifs); leaf statements and conditions are
expression strings in C syntax built only from generated identifiers and numeric literals (no
user text ever reaches them). The CUDA backend shares the syntax.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    body: list = field(default_factory=list)

    def add(self, *stmts):
        for s in stmts:
            if isinstance(s, str):
                s = Line(s)
            self.body.append(s)
        return self


@dataclass
class Line:
    text: str


@dataclass
class Decl:
    ctype: str
    name: str
    init: str = None


@dataclass
class For:
    var: str
    lo: str
    hi: str
    body: Block
    step: str = None  # None: var++ ; else an assignment expression


@dataclass
class While:
    cond: str
    body: Block


@dataclass
class If:
    cond: str
    then: Block
    orelse: Block = None


@dataclass
class Comment:
    text: str
