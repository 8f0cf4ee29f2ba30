"""A job as one crontab line and back; other lines are never touched."""

from __future__ import annotations

import shlex
from pathlib import Path

from caretz.schedule.jobs import Job, job_ids, jobs_in, read_job, with_job, without_job

USERS = "# my jobs\nMAILTO=me@example.com\n0 3 * * * /usr/local/bin/backup\n"


def job(job_id: str = "3fa9c1", prompt: str = "is CI green? 100% please") -> Job:
    return Job(
        id=job_id,
        schedule="*/10 * * * *",
        workdir=Path("/work/my app"),
        argv=[
            "/usr/bin/python3",
            "-m",
            "caretz",
            "--job",
            job_id,
            "-p",
            prompt,
            "--goal",
            "it's green",
        ],
        log=Path("/data/schedule") / f"{job_id}.log",
        env={"CARETZ_DATA_DIR": "/data", "PATH": "/usr/bin:/bin"},
    )


def test_a_job_line_reads_back_as_the_same_job():
    line = job().line()

    assert line.startswith("*/10 * * * * cd '/work/my app' && CARETZ_DATA_DIR=/data ")
    assert line.endswith(">> /data/schedule/3fa9c1.log 2>&1 # caretz-job:3fa9c1")
    assert "100\\% please" in line and "100% please" not in line
    back = read_job(line)
    assert back is not None
    assert (back.id, back.schedule, back.workdir, back.log) == (
        "3fa9c1", "*/10 * * * *", Path("/work/my app"), Path("/data/schedule/3fa9c1.log"),
    )  # fmt: skip
    assert back.argv == job().argv and back.env == job().env
    assert back.option("-p") == "is CI green? 100% please" and back.option("--goal") == "it's green"
    assert shlex.split(back.installed)[0] == "cd" and "100% please" in back.installed


def test_adding_and_removing_keeps_every_other_line():
    table = with_job(with_job(USERS, job("aaaaaa")), job("bbbbbb"))

    assert table.startswith(USERS)
    assert job_ids(table) == ["aaaaaa", "bbbbbb"]
    assert without_job(table, "aaaaaa") == USERS + job("bbbbbb").line() + "\n"
    assert without_job(without_job(table, "aaaaaa"), "bbbbbb") == USERS
    assert with_job("0 1 * * * x", job()).startswith("0 1 * * * x\n")  # no final newline


def test_a_macro_schedule_and_lines_that_are_not_ours():
    daily = Job(
        id="c0ffee",
        schedule="@daily",
        workdir=Path("/w"),
        argv=["python", "-m", "caretz"],
        log=Path("/l"),
    )

    assert read_job(daily.line()) == Job(
        id="c0ffee", schedule="@daily", workdir=Path("/w"), argv=["python", "-m", "caretz"], log=Path("/l"), env={},
        installed=read_job(daily.line()).installed,  # type: ignore[union-attr]
    )  # fmt: skip
    assert read_job("0 3 * * * /usr/local/bin/backup") is None
    assert read_job("0 3 * * * echo hi # caretz-job:") is None


def test_a_line_edited_past_reading_is_still_found_by_its_tag():
    table = USERS + "*/5 * * * * something else entirely # caretz-job:abcdef\n"

    assert jobs_in(table) == []
    assert job_ids(table) == ["abcdef"]
    assert without_job(table, "abcdef") == USERS
