"""What a command inside bubblewrap can read and write, checked on the host afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from caretz.sandbox.policy import SandboxMode
from tests.sandbox.conftest import SECRET_KEY
from tests.sandbox.helpers import run_in


def test_writes_land_in_the_working_directory_only(make_policy, bwrap_sandbox, work, scratch):
    outside = scratch / "outside.txt"
    result = run_in(
        bwrap_sandbox(make_policy()),
        f"echo inside > made.txt && echo escaped > {outside}; echo escaped > ../escape.txt",
    )
    assert (work / "made.txt").read_text() == "inside\n"
    assert not outside.exists()
    assert not (scratch / "escape.txt").exists()
    assert "Read-only file system" in result.stderr


def test_add_dir_is_writable_and_other_dirs_are_not(make_policy, bwrap_sandbox, scratch):
    extra = scratch / "extra"
    extra.mkdir()
    other = scratch / "other"
    other.mkdir()
    run_in(
        bwrap_sandbox(make_policy(add_dirs=[extra])),
        f"echo a > {extra}/a.txt; echo b > {other}/b.txt",
    )
    assert (extra / "a.txt").read_text() == "a\n"
    assert not (other / "b.txt").exists()


def test_read_only_mode_refuses_writes_even_in_the_working_directory(
    make_policy, bwrap_sandbox, work
):
    sandbox = bwrap_sandbox(make_policy(mode=SandboxMode.READ_ONLY))
    result = run_in(sandbox, "cat README; echo x > new.txt")
    assert result.stdout == "hello"
    assert not (work / "new.txt").exists()
    assert "Read-only file system" in result.stderr


def test_tmp_is_private_and_gone_afterwards(make_policy, bwrap_sandbox, tmp_path):
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("host")
    result = run_in(
        bwrap_sandbox(make_policy()),
        f"ls {host_file} 2>&1; echo $TMPDIR; echo scratch > /tmp/inside-only.txt && echo wrote",
    )
    assert "No such file or directory" in result.stdout
    assert "/tmp\nwrote" in result.stdout
    assert not Path("/tmp/inside-only.txt").exists()


def test_credential_stores_are_hidden(make_policy, bwrap_sandbox, home):
    result = run_in(
        bwrap_sandbox(make_policy()),
        "cat ~/.ssh/id_rsa; ls -A ~/.ssh; cat ~/.aws/credentials ~/.netrc ~/.docker/config.json;"
        " cat ~/.bashrc; echo; echo planted > ~/.ssh/authorized_keys",
    )
    assert SECRET_KEY not in result.stdout
    assert "aws_secret" not in result.stdout and "password" not in result.stdout
    assert "token" not in result.stdout
    assert result.stdout.strip() == "ordinary dotfile"  # the control: HOME itself is readable
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert (home / ".ssh" / "id_rsa").read_text() == SECRET_KEY


def test_hidden_paths_stay_hidden_when_home_is_writable(make_policy, bwrap_sandbox, home):
    sandbox = bwrap_sandbox(make_policy(add_dirs=[home]))
    result = run_in(sandbox, "cat ~/.ssh/id_rsa; mv ~/.ssh ~/ssh2; echo ok > ~/notes.txt")
    assert SECRET_KEY not in result.stdout
    assert (home / ".ssh" / "id_rsa").read_text() == SECRET_KEY
    assert (home / "notes.txt").read_text() == "ok\n"


def test_a_root_named_inside_a_hidden_dir_is_usable(make_policy, bwrap_sandbox, home):
    inside = home / ".aws" / "project"
    inside.mkdir()
    result = run_in(
        bwrap_sandbox(make_policy(add_dirs=[inside])),
        f"echo made > {inside}/file; cat ~/.aws/credentials",
    )
    assert (inside / "file").read_text() == "made\n"
    assert "aws_secret" not in result.stdout


def test_caretz_dirs_and_extra_hidden_paths(make_policy, bwrap_sandbox, scratch, work):
    config = scratch / "caretz-config"
    config.mkdir()
    (config / "profiles.json").write_text("caretz settings")
    (work / ".env").write_text("DB_PASSWORD=hunter2")
    policy = make_policy(caretz_dirs=[config], extra_hidden=[".env"])
    result = run_in(bwrap_sandbox(policy), f"cat {config}/profiles.json; cat .env; cat README")
    assert "caretz settings" not in result.stdout
    assert "hunter2" not in result.stdout
    assert result.stdout == "hello"


def test_git_hooks_and_config_are_read_only_but_commits_work(make_policy, bwrap_sandbox, work):
    config_before = (work / ".git" / "config").read_text()
    result = run_in(
        bwrap_sandbox(make_policy()),
        "echo 'curl evil' > .git/hooks/pre-commit; echo '[core] x=1' >> .git/config;"
        " mv .git .git-old; mv .git/hooks .git/hooks-old;"
        " git add README && git -c user.name=t -c user.email=t@t commit -qm first && echo committed",
    )
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert (work / ".git" / "config").read_text() == config_before
    assert (work / ".git" / "hooks").is_dir()
    assert not (work / ".git-old").exists()
    assert "committed" in result.stdout
    log = subprocess.run(["git", "-C", str(work), "log", "--oneline"], capture_output=True)
    assert b"first" in log.stdout


def test_missing_hooks_dir_cannot_be_created(make_policy, bwrap_sandbox, work):
    hooks = work / ".git" / "hooks"
    for hook in hooks.iterdir():
        hook.unlink()
    hooks.rmdir()
    run_in(bwrap_sandbox(make_policy()), "echo 'curl evil' > .git/hooks/post-checkout")
    assert not (hooks / "post-checkout").exists()


def test_project_settings_are_read_only(make_policy, bwrap_sandbox, work):
    (work / ".caretz").mkdir()
    (work / ".caretz" / "settings.json").write_text("{}")
    run_in(bwrap_sandbox(make_policy()), """echo '{"permissions": 1}' > .caretz/settings.json""")
    assert (work / ".caretz" / "settings.json").read_text() == "{}"


def test_a_missing_project_settings_dir_cannot_be_planted(make_policy, bwrap_sandbox, work):
    """Created by a command, `.caretz` would hand the next session its rules: it is covered
    by an empty read-only directory, which stays behind empty (git does not see it)."""
    assert not (work / ".caretz").exists()
    result = run_in(
        bwrap_sandbox(make_policy()),
        """mkdir -p .caretz; echo '{"permissions": 1}' > .caretz/settings.json; """
        "rmdir .caretz; mv .caretz gone; echo done",
    )
    assert result.stdout.strip() == "done"
    assert (work / ".caretz").is_dir() and list((work / ".caretz").iterdir()) == []
    assert not (work / "gone").exists()
    status = subprocess.run(
        ["git", "-C", str(work), "status", "--porcelain"], capture_output=True, text=True
    )
    assert ".caretz" not in status.stdout


def test_extra_read_only_globs(make_policy, bwrap_sandbox, work):
    (work / ".env").write_text("A=1")
    (work / ".env.local").write_text("B=2")
    sandbox = bwrap_sandbox(make_policy(extra_read_only=[".env*"]))
    result = run_in(sandbox, "cat .env; echo A=2 > .env; echo B=3 > .env.local")
    assert result.stdout == "A=1"
    assert (work / ".env").read_text() == "A=1"
    assert (work / ".env.local").read_text() == "B=2"


def test_symlinks_do_not_lead_out(make_policy, bwrap_sandbox, work, scratch):
    target = scratch / "target"
    target.mkdir()
    (work / "out").symlink_to(target)
    run_in(bwrap_sandbox(make_policy()), "echo x > out/file; ln -s ../ up; echo y > up/z")
    assert not (target / "file").exists()
    assert not (scratch / "z").exists()


def test_root_has_no_capabilities_and_cannot_remount(make_policy, bwrap_sandbox):
    result = run_in(
        bwrap_sandbox(make_policy()),
        "grep -E '^Cap(Eff|Prm)' /proc/self/status; grep NoNewPrivs /proc/self/status;"
        " mount -o remount,rw / 2>&1 && echo remounted;"
        " cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo sysctl-written",
    )
    assert result.stdout.count("0000000000000000") == 2
    # no_new_privs: an execve (even of a setuid program, even as uid 0) adds no capability.
    assert "NoNewPrivs:\t1" in result.stdout
    assert "remounted" not in result.stdout
    assert "sysctl-written" not in result.stdout


def test_a_hidden_socket_cannot_be_reached(make_policy, bwrap_sandbox, scratch):
    path = scratch / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        probe = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""
        # With the network on, no filter refuses Unix sockets: the hiding is what holds.
        visible = run_in(bwrap_sandbox(make_policy(network=True)), probe)
        hidden = run_in(bwrap_sandbox(make_policy(network=True, extra_hidden=[str(path)])), probe)
    finally:
        server.close()
    assert visible.returncode == 0  # the control: the socket works when not hidden
    assert hidden.returncode != 0
    assert "Connection refused" in hidden.stderr or "not a socket" in hidden.stderr.lower()


def test_the_working_directory_is_the_cwd(make_policy, bwrap_sandbox, work):
    result = run_in(bwrap_sandbox(make_policy()), "pwd")
    assert result.stdout.strip() == str(work)
    assert os.path.isdir(work)
