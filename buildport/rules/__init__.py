"""Data tables: what maps to what. Passes (code) read these; users may extend them.

Each table row carries a short note of where the fact comes from.
"""
