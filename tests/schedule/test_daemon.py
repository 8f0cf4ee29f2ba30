"""Telling whether a cron daemon runs, from process names in a /proc-like folder."""

from __future__ import annotations

from pathlib import Path

from caretz.schedule.crontab import cron_daemon_running


def process(proc: Path, pid: int, comm: str, *argv: str) -> None:
    folder = proc / str(pid)
    folder.mkdir(parents=True)
    (folder / "comm").write_text(comm + "\n")
    (folder / "cmdline").write_bytes(b"\0".join(arg.encode() for arg in argv or (comm,)) + b"\0")


def test_no_daemon_among_other_processes(tmp_path: Path):
    process(tmp_path, 1, "init")
    process(tmp_path, 40, "bash")
    process(tmp_path, 41, "busybox", "busybox", "sh")
    (tmp_path / "self").mkdir()  # not a process folder
    (tmp_path / "77").mkdir()  # a process that ended while it was read

    assert cron_daemon_running(tmp_path) is False


def test_each_daemon_name_is_found(tmp_path: Path):
    for pid, name in enumerate(["cron", "crond", "fcron", "dcron"], start=2):
        proc = tmp_path / name
        process(proc, 1, "init")
        process(proc, pid, name)
        assert cron_daemon_running(proc) is True, name


def test_busybox_crond_is_found_by_its_applet(tmp_path: Path):
    process(tmp_path, 9, "busybox", "busybox", "crond", "-f")

    assert cron_daemon_running(tmp_path) is True


def test_without_a_proc_folder_nobody_can_tell(tmp_path: Path):
    assert cron_daemon_running(tmp_path / "missing") is None
