"""The `conform` command's entry point (and `python -m conformance`), kept to this one function.

multiprocessing starts each worker process (the isolated runtime's, and `--jobs`') by importing
the main module again; this module imports nothing heavy, so a worker imports only what it runs, not
the command line's typer, rich and every report format (a runtime worker starts in about half the
time).

The commands that may start workers (`run`, `diff`, `verify`, `generate`) start the fork server their workers
come from first thing, so that its imports run beside this process's own (see `lifetime`).
"""

import sys

WORKER_COMMANDS = ("run", "diff", "verify", "generate")


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in WORKER_COMMANDS:
        from .lifetime import start_server

        start_server()
    from .cli import main as run_command_line

    run_command_line()


if __name__ == "__main__":
    main()
