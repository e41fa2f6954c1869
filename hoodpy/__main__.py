"""``python -m hoodpy``: the command line."""

from hoodpy.cli import main

raise SystemExit(main())
