"""The compiler: plans a lazy DAG (``plan/``), lowers the plan to a target-neutral loop IR
(``lower/`` into ``loopir/``), prints that IR as C (``codegen/c/``), and hands the source to the
runtime to build and call. ``pipeline.py`` is the driver; ``schedule.py`` is the user's steering
object (Halide's schedule, kept apart from the algorithm).
"""
