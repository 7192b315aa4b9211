"""Reads at scale and restores: search, traversal and aggregates, restore from an export."""
