"""What every benchmark does before it measures a cold process.

``compile_package()``: an installed package has its bytecode compiled, but a checkout run with
PYTHONDONTWRITEBYTECODE=1 (as CI and this sandbox set it) keeps no ``.pyc`` for a module edited since
the last compile, so every cold ``mdmem`` process would compile it again. Timing that would measure
the edit, not the code: compile first, as ``pip install`` does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def compile_package() -> None:
    """Write fresh bytecode for the mdmem package this interpreter imports."""
    import mdmem

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(mdmem.__file__).parent)], check=True)
