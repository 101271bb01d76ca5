"""The step loops: Python over scipy, DOP853, Radau IIA and the reduced loop in C, the fixed-step
methods."""
