"""The command-line subcommands (parsed in :mod:`autograder.cli`): each module one command."""
