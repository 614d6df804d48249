"""Index notation: statements ``out[i,j] = reduce_k f(accesses...)`` over operand slots."""
from .nodes import Index, Const, Access, Call, Statement, indices_of, accesses_of
from . import ops

__all__ = ["Index", "Const", "Access", "Call", "Statement", "indices_of", "accesses_of", "ops"]
