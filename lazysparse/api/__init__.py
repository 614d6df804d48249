"""The NumPy/scipy surface: functions and operators that check their operands eagerly and build
lazy DAG nodes (``lazysparse.ir.dag.Node``) without computing anything. Creation and conversion
of concrete arrays live here too; running a DAG is the compiler's job (``lazysparse.compiler``).
"""
