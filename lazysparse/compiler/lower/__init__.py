"""Lowering: a planned kernel (index notation plus its loop order, formats and schedule) becomes a
loop IR program — level iterators, merge lattices, located accesses, workspaces, parallel chunks
and the assembly of sparse results.
"""
