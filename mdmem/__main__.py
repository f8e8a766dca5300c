"""python -m mdmem"""

from .cli import main

main()
