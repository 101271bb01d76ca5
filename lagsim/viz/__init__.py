"""Figures: plot kinds, sweep figures, mode figures and animation (the only place matplotlib is
imported)."""
