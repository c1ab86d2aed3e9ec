"""The `conform` command's entry point (and `python -m conformance`), kept to this one function.

multiprocessing starts each worker process (the isolated runtime's, and `--jobs`') by importing
the main module again; this module imports nothing heavy, so a worker imports only what it runs, not
the command line's typer, rich and every report format (a runtime worker starts in about half the
time).

The commands that may start workers (`run`, `diff`, `verify`, `generate`) start the fork server their workers
come from first thing, so that its imports run beside this process's own (see `lifetime`), and
have hypothesis store what it stores in the command's scratch folder, not the working folder (see
`scratch.hold_hypothesis_storage`).

Once the command has finished (its reports written and closed, its workers stopped), the process
ends without the interpreter's tear-down: freeing a run's results and every module object by
object took 0.08-0.1 s of every command, for nothing anyone reads. What the tear-down did outside
the process, removing the fork server's socket folder (/tmp/pymp-*) and the command's scratch
folder (see scratch), `leave` does.

SIGTERM is Ctrl-C from the first thing the command does (before it makes anything to remove):
whatever it is doing then, it ends as an interrupted command does, exit 130, its scratch folder
removed (`run`, `diff` and `verify` write their reports first, see cli). A signal ignored when the
command started stays ignored.
"""

import os
import signal
import sys

WORKER_COMMANDS = ("run", "diff", "verify", "generate")


def ops_named(arguments: list[str]) -> list[str]:
    """The ops a command line names with --op (nothing where it says --all): read before the
    command line is parsed, as the fork server starts first. A misspelt op is readied by no one
    and refused by the command line as usual."""
    if "--all" in arguments:
        return []
    named = [word.removeprefix("--op=") for word in arguments if word.startswith("--op=")]
    named += [after for word, after in zip(arguments, arguments[1:]) if word == "--op"]
    return named


def main() -> None:
    from . import scratch
    from .lifetime import PRELOAD_OPS_VARIABLE, interrupt, start_server

    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda number, frame: interrupt())
    scratch.forget_inherited()
    try:
        if sys.argv[1:2] and sys.argv[1] in WORKER_COMMANDS:
            named = ops_named(sys.argv[2:])
            if named:  # the server readies these ops only (see conformance.preload), not all 166
                os.environ[PRELOAD_OPS_VARIABLE] = ",".join(named)
            start_server()
            scratch.hold_hypothesis_storage()
        from .cli import main as run_command_line

        run_command_line()
    except SystemExit as done:
        leave(done.code)
    except KeyboardInterrupt:  # before the command line took over
        print("interrupted", file=sys.stderr)
        leave(130)
    leave(0)


def leave(code: object) -> None:
    """End the process with `code` as `sys.exit` would (None is 0; a message goes to stderr, exit
    code 1), once what is buffered for stdout and stderr is out. A signal from now on is ignored:
    the process is ending, and it would only cut short the removal of its folders."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    from . import scratch
    from .lifetime import remove_server_folder

    scratch.discard()  # with what workers wrote to stderr, when the command did not keep it (an error, an interruption)
    remove_server_folder()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # stdout closed early (a pipe whose reader left): as Python reports it
    os._exit(code or 0)


if __name__ == "__main__":
    main()
