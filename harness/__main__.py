import sys

from harness.entry import main

sys.exit(main())
