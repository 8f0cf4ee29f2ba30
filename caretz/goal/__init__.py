"""Goals: a condition an evaluator model checks after each turn, until it is met."""
