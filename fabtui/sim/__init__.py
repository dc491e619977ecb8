"""The simulated fabric: scenarios, the deterministic device model, and the device programs."""
