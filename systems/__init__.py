"""Bundled example systems, found by name (``lagsim derive pendulum``)."""
