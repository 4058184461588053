"""RL library adapters behind one workflow: rl/workflow.py drives every library through the interface declared in
rl/library.py (LIBRARIES lists them); each library's upstream fixes live in its own package (rsl_rl/, rl_games/,
skrl/)."""
