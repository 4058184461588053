from fleetlab.distributed.context import RunContext
from fleetlab.distributed.sync import (
    all_reduce_sum,
    nanmean_over_ranks,
    parameter_checksum,
    pooled_over_ranks,
    state_checksum,
)

__all__ = ["RunContext", "all_reduce_sum", "nanmean_over_ranks", "parameter_checksum", "pooled_over_ranks",
           "state_checksum"]
