"""python -m mdmem"""

import sys

# The git hooks' exact call skips click entirely: every commit pays for this start-up.
if len(sys.argv) == 6 and sys.argv[1] == "--vault" and sys.argv[3:5] == ["reindex", "--git-hook"]:
    from .githook import run_git_hook

    sys.exit(run_git_hook(sys.argv[2], sys.argv[5]))

from .cli import main  # noqa: E402

main()
