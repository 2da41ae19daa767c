"""Adversarial trajectories for the evidence gate, kept apart from the rules they test."""
