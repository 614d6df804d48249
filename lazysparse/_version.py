"""The package version (pyproject.toml's ``version`` must equal it)."""
__version__ = "0.1.0"
