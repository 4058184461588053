"""The one error type for a user's mistake (bad flag, unknown task, unreadable checkpoint, ...).

The command line prints a FleetlabError as one line, `fleetlab: error: <message>`, and exits 2. Every other exception
is a bug (ours or a library's) and keeps its traceback. So a message says what is wrong AND what to do."""

from __future__ import annotations

import argparse


class FleetlabError(ValueError):
    """A mistake in the user's input, with a message that says how to fix it. A ValueError, so code that calls
    fleetlab from Python (gymnasium.make with a bad argument) can catch it as the bad value it is."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are FleetlabErrors (one line, no usage block), so every entry point reports them alike."""

    def error(self, message: str):
        raise FleetlabError(f"{message} (see {self.prog} --help)")


def bounded_int(text: str, low: int, high: int | None, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got '{text}'") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (0: a library's own default)."""
    return bounded_int(text, 0, 1024, "an integer in 0..1024")


def port_number(text: str) -> int:
    """argparse type: a TCP port, 1..65535."""
    return bounded_int(text, 1, 65535, "a port number in 1..65535")


def seed_value(text: str) -> int:
    """argparse type: a seed in 0..2**32-1, the range every library's seeding (NumPy's included) accepts."""
    return bounded_int(text, 0, 2**32 - 1, "an integer in 0..4294967295")


def positive_float(text: str) -> float:
    """argparse type: a number > 0 (timeouts)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got '{text}'") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


MAX_ENVS = 2**24  # per process: far beyond any machine's memory for any task, and safe from integer overflows


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (iterations, envs, steps, frames)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    if value > 2**31 - 1:  # int32 counters (torch, JAX) overflow past it
        raise argparse.ArgumentTypeError(f"must be at most {2**31 - 1}, got {value}")
    return value
