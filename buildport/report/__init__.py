"""Rendering what a run found: text, JSON, SARIF, GitHub annotations, unified diffs."""
