"""The runtime: what runs compiled kernels and never plans — the kernel cache and toolchain,
tuning of run-time variants, threads, memory and work guards, aligned buffers, interruption, and
the CPU's cache sizes.
"""
