"""The command's scratch folder: a command killed outright (SIGKILL) leaves its folder, and what it
listed with it, for the next command to remove; what lives, and what is not conform's, stays."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import scratch

pytestmark = pytest.mark.skipif(scratch.fcntl is None, reason="no file locks on this system: nothing is swept")

KILLED = textwrap.dedent("""
    import os, signal, sys
    from conformance import scratch
    os.makedirs(sys.argv[1])  # as the fork server's socket folder is made
    scratch.remove_with_it(sys.argv[1])
    print(os.path.dirname(scratch.folder("stderr")), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")
LIVING = textwrap.dedent("""
    import os, sys
    from conformance import scratch
    print(os.path.dirname(scratch.folder("stderr")), flush=True)
    sys.stdin.read()
""")


def started(script: str, temporary: Path, *args: str) -> subprocess.Popen:
    environment = {key: value for key, value in os.environ.items() if key != scratch.FOLDER_VARIABLE}
    return subprocess.Popen([sys.executable, "-c", script, *args], env={**environment, "TMPDIR": str(temporary)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_the_folders_of_a_killed_command_go_when_the_next_makes_its_own_and_the_rest_stays(own_scratch):
    temporary = own_scratch
    killed = started(KILLED, temporary, str(temporary / "pymp-killed"))
    killed_root = Path(killed.stdout.readline().strip())
    assert killed.wait(timeout=60) == -9 and killed_root.is_dir() and (temporary / "pymp-killed").is_dir()
    living = started(LIVING, temporary)
    living_root = Path(living.stdout.readline().strip())
    foreign = [temporary / "conform-made-by-hand", temporary / "pymp-not-listed"]  # no owner file; listed by none
    for path in foreign:
        path.mkdir()

    mine = Path(scratch.folder("stderr")).parent
    assert not killed_root.exists() and not (temporary / "pymp-killed").exists()
    assert living_root.is_dir() and mine.is_dir() and all(path.is_dir() for path in foreign)
    living.communicate("", timeout=60)
    assert living.returncode == 0 and not living_root.exists()  # removed by its own exit, as ever


def test_an_owner_file_names_nothing_outside_the_temporary_folder_for_removal(own_scratch, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "pymp-elsewhere"
    killed = started(KILLED, own_scratch, str(outside))
    killed_root = Path(killed.stdout.readline().strip())
    killed.wait(timeout=60)
    scratch.folder("stderr")
    assert not killed_root.exists() and outside.is_dir()
