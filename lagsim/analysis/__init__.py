"""Questions asked of a model: check (with its conserved quantities), equilibria, modes, the
action, the energy balance."""
