"""The one error type for a user's mistake (bad flag, unknown task, unreadable checkpoint, ...).

The command line prints a FleetlabError as one line, `fleetlab: error: <message>`, and exits 2. Every other exception
is a bug (ours or a library's) and keeps its traceback. So a message says what is wrong AND what to do."""

from __future__ import annotations

import argparse


class FleetlabError(Exception):
    """A mistake in the user's input, with a message that says how to fix it."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are FleetlabErrors (one line, no usage block), so every entry point reports them alike."""

    def error(self, message: str):
        raise FleetlabError(f"{message} (see {self.prog} --help)")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (iterations, envs, steps, frames)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value
