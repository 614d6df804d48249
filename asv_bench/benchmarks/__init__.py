"""asv benchmarks for lazysparse (see docs/performance.md)."""
