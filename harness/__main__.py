import sys

from harness._cli import main

sys.exit(main())
