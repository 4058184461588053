"""`fleetlab train` with an exception injected on one rank, for the no-hang tests.

FAIL_RANK (default 1) raises at its FAIL_AT-th stop check (every library checks once per iteration/rollout on
every rank) and first writes the time of the raise to FAIL_STAMP."""

import os
import sys
import time

from fleetlab import process

rank = int(os.environ.get("RANK", os.environ.get("JAX_RANK", "0")))
calls = [0]
agreed = process.StopRequest.agreed


class InjectedFailure(Exception):
    pass


def failing_agreed(self, ctx):
    calls[0] += 1
    if rank == int(os.environ.get("FAIL_RANK", "1")) and calls[0] == int(os.environ.get("FAIL_AT", "3")):
        with open(os.environ["FAIL_STAMP"], "w") as f:
            f.write(str(time.time()))
        raise InjectedFailure(f"injected failure on rank {rank}")
    return agreed(self, ctx)


process.StopRequest.agreed = failing_agreed

from fleetlab.cli import main  # noqa: E402

sys.exit(main(["train", *sys.argv[1:]]))
