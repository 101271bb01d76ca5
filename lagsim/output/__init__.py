"""What a run gives: the trajectory, and CSV in and out through one safe writer."""
