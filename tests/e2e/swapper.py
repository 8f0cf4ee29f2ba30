"""A racing attacker for the file-tool race tests, run as its own process.

    python swapper.py ready-file stop-file file PATH DECOY_TEXT LINK_TARGET
    python swapper.py ready-file stop-file dir PATH LINK_TARGET

`file`: PATH flips between a regular file holding DECOY_TEXT and a symlink to LINK_TARGET.
`dir`: PATH flips between a real directory and a symlink to LINK_TARGET (the directory is
moved aside and back). Each flip is one atomic rename. It writes the number of flips to
ready-file after the first one, and stops when stop-file appears.
"""

from __future__ import annotations

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
        os.unlink(path)
        _retrying(lambda: os.rename(aside, path), path)
    else:
        os.rename(path, aside)
        _retrying(lambda: os.symlink(target, path), path)


def _retrying(step, path: Path) -> None:
    """A write may make the missing directory between two steps: move it away (it stays
    in the workspace) and do the step again."""
    while True:
        try:
            step()
            return
        except OSError:
            os.rename(path, path.with_name(f"{path.name}.made-{os.urandom(4).hex()}"))


def main(argv: list[str]) -> int:
    ready, stop, kind, path = Path(argv[0]), Path(argv[1]), argv[2], Path(argv[3])
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
