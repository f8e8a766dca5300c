"""`python -m mdmem`: the git and agent hooks' fast paths, which skip click, then the command line.

The agent hooks' command (``mdmem setup claude-code``) runs this file without ``site``: ``python -S
…/mdmem/__main__.py --vault V hook EVENT``. A prompt that the vault's running server answers then loads
no more than ``edges/hook_client`` needs; everything else loads ``site`` first, as a normal start would.
"""

import sys

if not __package__:  # run as a file: the package is this file's folder, imported from its parent
    import os

    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    __package__ = "mdmem"

# The prompt hook, when a running server answers it: nothing of mdmem but hook_client (no click, yaml, api).
STDIN = None
if sys.argv[1:2] == ["hook"] or sys.argv[3:4] == ["hook"]:
    from .edges.hook_client import served_main

    code, STDIN = served_main(sys.argv[1:])
    if code is not None:
        sys.exit(code)

if sys.flags.no_site:  # started without site (the hooks' command): the rest needs the installed packages
    import site

    site.main()

# The git hooks' exact call skips click entirely: every commit pays for this start-up.
if len(sys.argv) == 6 and sys.argv[1] == "--vault" and sys.argv[3:5] == ["reindex", "--git-hook"]:
    from .edges.githook import run_git_hook

    sys.exit(run_git_hook(sys.argv[2], sys.argv[5]))

# Agent hooks run before every prompt: they too skip click (agent_hooks.fast_main; None = not ours).
if "hook" in sys.argv[1:4]:
    from .edges.agent_hooks import fast_main

    code = fast_main(sys.argv[1:], STDIN)
    if code is not None:
        sys.exit(code)

from .cli import main  # noqa: E402

main()
