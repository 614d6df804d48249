"""The loop IR: the imperative program that lowering produces and code printers spell — blocks,
loops, conditionals and statements, independent of the text of any one target.
"""
