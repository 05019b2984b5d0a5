"""``python -m tests.games.golden [--update]``."""

import sys

from games.golden import main

sys.exit(main())
