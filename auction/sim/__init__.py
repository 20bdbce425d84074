"""Pure simulation pieces with no Django: the clock, simulated reps, in-memory clusters."""
