"""Library adapters. Each module (rsl_rl, rl_games, skrl) has its env wrapper, its distributed fixes, train() and play()."""

LIBRARIES = ("rsl_rl", "rl_games", "skrl")
