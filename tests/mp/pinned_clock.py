"""`fleetlab ...` with the run-folder clock pinned to one second (PINNED_STAMP), as when two runs start in the same
second: tests/test_resume.py starts two at once and checks that each gets its own folder."""

import os
import sys

from fleetlab import cli
from fleetlab.rl import run_dir

run_dir.now_stamp = lambda: os.environ["PINNED_STAMP"]
cli.exit_process(cli.main(sys.argv[1:]))
