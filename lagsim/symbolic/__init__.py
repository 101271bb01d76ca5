"""The symbolic model and what is derived from it by algebra alone: forms, rendering, reduction,
conserved quantities."""
