"""The package version (its own module, so lower layers need not import the package root)."""

__version__ = "0.1.0"
