"""Benchmarks and the demo (``python -m lazysparse bench|demo``). The library never imports this
package; it measures lazysparse side by side with its peers."""
