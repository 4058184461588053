"""Run many `fleetlab ...` command lines that are expected to fail early, one after another in ONE process, and
write each one's exit code and output to a JSON file: tests/test_bad_input.py's cases, without paying Python's,
torch's and JAX's start-up (~4 s) once per case. Usage: run_cases.py CASES.json RESULTS.json, where CASES.json is
[[name, cwd, argv], ...] and argv is `-m fleetlab ...` or `<script.py> ...`. An exception other than SystemExit is
kept as its traceback text in the case's stderr."""

import contextlib
import io
import json
import os
import runpy
import sys
import traceback

from fleetlab import cli

cases_path, results_path = sys.argv[1:3]  # before a case's script replaces sys.argv
cases = json.load(open(cases_path))
results = {}
for name, cwd, argv in cases:
    print(f"[run_cases] {name}", file=sys.__stderr__, flush=True)
    os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if argv[:2] == ["-m", "fleetlab"]:
                code = cli.main(argv[2:])
            else:
                sys.argv = argv
                try:
                    runpy.run_path(argv[0], run_name="__main__")
                    code = 0
                except SystemExit as exit_:
                    code = exit_.code
        except BaseException:  # a bug: its traceback is what the test shows
            traceback.print_exc(file=err)
            code = 1
    results[name] = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
json.dump(results, open(results_path, "w"))
