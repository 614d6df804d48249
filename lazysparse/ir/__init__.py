"""Index notation: statements ``out[i,j] = reduce_k f(accesses...)`` over operand slots."""
from lazysparse.ir.nodes import Index, Const, Access, Call, Statement, indices_of, accesses_of
from lazysparse.ir import ops

__all__ = ["Index", "Const", "Access", "Call", "Statement", "indices_of", "accesses_of", "ops"]
