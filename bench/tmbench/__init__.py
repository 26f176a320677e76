"""Pieces of the threadmon benchmark runner (bench/run.py)."""
