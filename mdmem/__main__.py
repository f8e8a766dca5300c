"""`python -m mdmem`: the git and agent hooks' fast paths, which skip click, then the command line."""

import sys

# The git hooks' exact call skips click entirely: every commit pays for this start-up.
if len(sys.argv) == 6 and sys.argv[1] == "--vault" and sys.argv[3:5] == ["reindex", "--git-hook"]:
    from .edges.githook import run_git_hook

    sys.exit(run_git_hook(sys.argv[2], sys.argv[5]))

# Agent hooks run before every prompt: they too skip click (agent_hooks.fast_main; None = not ours).
if "hook" in sys.argv[1:4]:
    from .edges.agent_hooks import fast_main

    code = fast_main(sys.argv[1:])
    if code is not None:
        sys.exit(code)

from .cli import main  # noqa: E402

main()
