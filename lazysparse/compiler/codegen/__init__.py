"""Code printers: loop IR to source text for one target each (``c/``: C99 with OpenMP and SIMD)."""
