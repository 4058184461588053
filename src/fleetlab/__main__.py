import sys

from fleetlab.cli import main

sys.exit(main())
