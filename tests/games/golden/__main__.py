"""``python -m tests.games.golden [--update]``."""

import sys

from tests.games.golden import main

sys.exit(main())
