import sys

if not __package__:  # run as a file (skrl's JAX launcher takes a script path): its folder must not shadow modules
    sys.path.pop(0)

from fleetlab.cli import exit_process, main  # noqa: E402

exit_process(main())
