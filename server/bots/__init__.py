"""Pis Yedili."""
