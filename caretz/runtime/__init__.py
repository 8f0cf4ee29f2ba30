"""Wiring: settings in, a ready session out (see session.py)."""
