"""The commands of ``lagsim``, one module each, imported only when the command is run, completed
or its help shown (the table :data:`lagsim.cli.group.COMMANDS`).

A command's module imports the command-line helpers and :mod:`lagsim.api` when loaded; the
stages it calls are imported inside the command, since they pull in SymEngine, SymPy, NumPy or
matplotlib (seconds), which ``lagsim COMMAND --help`` and shell completion do without.
"""
