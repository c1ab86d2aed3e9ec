"""Importable, but has no prepare(): conform must say it is not a backend."""
