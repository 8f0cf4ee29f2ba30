"""A racing attacker for the file-tool race tests, run as its own process.

    python swapper.py ready-file stop-file file PATH DECOY_TEXT LINK_TARGET
    python swapper.py ready-file stop-file dir PATH LINK_TARGET
    python swapper.py ready-file stop-file once PATH TRIGGER LINK_TARGET

`file`: PATH flips between a regular file holding DECOY_TEXT and a symlink to LINK_TARGET.
`dir`: PATH flips between a real directory and a symlink to LINK_TARGET (the directory is
moved aside and back; one taken away meanwhile, by a restore, is replaced by a new one).
`once`: when TRIGGER is gone (the step of the run under test that signals it is under
way), PATH (a directory) is moved aside and LINK_TARGET linked in its place, once. Each flip is one atomic rename. It writes the number of flips to
ready-file after the first one, and stops when stop-file appears.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


def flip_file(path: Path, decoy: str, target: str) -> None:
    link, plain = path.with_name(path.name + ".link"), path.with_name(path.name + ".plain")
    if os.path.islink(path):
        plain.write_text(decoy)
        os.replace(plain, path)
    else:
        os.symlink(target, link)
        os.replace(link, path)


def flip_dir(path: Path, target: str) -> None:
    aside = path.with_name(path.name + ".aside")
    if os.path.islink(path):
        with contextlib.suppress(FileNotFoundError):  # moved away meanwhile (a restore)
            os.unlink(path)
        os.makedirs(aside, exist_ok=True)
        _retrying(lambda: os.rename(aside, path), path)
    else:
        try:
            os.rename(path, aside)
        except FileNotFoundError:  # moved away meanwhile (a restore): flip a new one
            os.makedirs(aside, exist_ok=True)
        _retrying(lambda: os.symlink(target, path), path)


def _retrying(step, path: Path) -> None:
    """A write may make the missing directory between two steps: move it away (it stays
    in the workspace) and do the step again."""
    while True:
        try:
            step()
            return
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                os.rename(path, path.with_name(f"{path.name}.made-{os.urandom(4).hex()}"))


def swap_once(ready: Path, stop: Path, path: Path, trigger: Path, target: str) -> int:
    ready.write_text("watching")
    while os.path.lexists(trigger):
        if stop.exists():
            return 0
    os.rename(path, path.with_name(path.name + ".aside"))
    os.symlink(target, path)
    ready.write_text("swapped")
    return 0


def main(argv: list[str]) -> int:
    ready, stop, kind, path = Path(argv[0]), Path(argv[1]), argv[2], Path(argv[3])
    if kind == "once":
        return swap_once(ready, stop, path, Path(argv[4]), argv[5])
    flips = 0
    while not stop.exists():
        if kind == "file":
            flip_file(path, argv[4], argv[5])
        else:
            flip_dir(path, argv[4])
        flips += 1
        if flips == 1 or flips % 1000 == 0:
            ready.write_text(str(flips))
    ready.write_text(str(flips))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
