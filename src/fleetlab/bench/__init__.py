"""Benchmarks: `fleetlab bench env` (env-only throughput)."""
