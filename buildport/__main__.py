"""``python -m buildport``."""

from buildport.cli import main

main()
