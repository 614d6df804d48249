"""Planning: passes from a lazy DAG to kernel specifications — decomposition into three-address
operations, association, redundancy-aware fusion, format inference, loop order, workspaces and
schedules. Each pass is a function of its inputs; nothing here emits code.
"""
