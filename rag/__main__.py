"""`python -m rag`: the command line, as the `rag` script runs it."""

import sys

from rag.frontends.cli import main

sys.exit(main())
