"""``python -m tests.games.golden [--update]``."""

import sys

from . import main

sys.exit(main())
