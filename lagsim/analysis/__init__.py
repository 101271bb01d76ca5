"""Questions asked of a model: check, invariants, equilibria, modes, the action, the energy
balance."""
