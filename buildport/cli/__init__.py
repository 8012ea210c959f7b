"""The command line: the commands, their options and exit codes (:mod:`buildport.cli.commands`), and what
``migrate`` decides before and after its plan (:mod:`buildport.cli.migrate`)."""

from buildport.cli.commands import main

__all__ = ["main"]
