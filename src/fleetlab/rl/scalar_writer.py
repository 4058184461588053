"""TensorBoard scalars without torch, for the JAX workflows.

torch.utils.tensorboard.SummaryWriter writes its event files through the tensorboard package's EventFileWriter;
this writes the same files (`events.out.tfevents.*`, scalars as `simple_value`) through it directly, so a brax
process need not import torch (~3 s on a GPU host) to log its first epoch."""

from __future__ import annotations

import time


class ScalarWriter:
    """The part of SummaryWriter's interface that fleetlab's brax session uses: add_scalar and flush."""

    def __init__(self, log_dir: str, flush_secs: int = 10):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._file = EventFileWriter(log_dir, flush_secs=flush_secs)

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(scalar_value))])
        self._file.add_event(Event(summary=summary, step=int(global_step), wall_time=time.time()))

    def flush(self) -> None:
        self._file.flush()
