"""The shell reader: every command a line runs, with its words as bash passes them."""

from __future__ import annotations

import shlex

import pytest

from caretz.permissions.command import Runs, walk_all
from caretz.permissions.shell import MAX_DEPTH, parse_command_line


def commands(line: str) -> list[str]:
    """Each command the line runs, as `words` or `words <via>`; unknown words as `?`."""
    shown = []
    for command in walk_all(parse_command_line(line)):
        words = " ".join(word.text if word.known else "?" for word in command.words)
        shown.append(f"{words} <{command.via}>" if command.via else words)
    return shown


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a && b || c; d & e", ["a", "b", "c", "d", "e"]),
        ("a | b |& c", ["a", "b", "c"]),
        ("(cd x; rm a) && { rm b; }", ["cd x", "rm a", "rm b"]),
        ("echo $(rm y) `rm z`", ["echo ? ?", "rm y", "rm z"]),
        ("diff <(ls a) >(wc -l)", ["diff ? ?", "ls a", "wc -l"]),
        ("cat <<< \"$(rm h)\" > out", ["cat", "rm h"]),
        ("FOO=$(rm q) ls", ["ls", "rm q"]),
        ("export A=$(rm y) B", ["export ? B", "rm y"]),
        ("if true; then rm a; fi; for i in 1; do rm b; done", ["true", "rm a", "rm b"]),
        ("f() { rm c; }; f", ["rm c", "f"]),
        ("case $x in a) rm q;; esac", ["rm q"]),
        ("[[ -f $(rm w) ]]", ["rm w"]),
        ("/usr/bin/rm x; ./rm y; \\rm z; 'rm' w", ["rm x", "rm y", "rm z", "rm w"]),
        ("ls 'a b' \"c d\" e\\ f", ["ls a b c d e f"]),
        ('echo "a\\"b" "\\$x"', ['echo a"b $x']),
        ("bash -c 'rm -rf v'", ["bash -c rm -rf v", "rm -rf v <bash -c>"]),
        ("sh -lc \"cd x && rm y\"", ["sh -lc cd x && rm y", "cd x <sh -c>", "rm y <sh -c>"]),
        ("bash -o pipefail -c 'rm y'", ["bash -o pipefail -c rm y", "rm y <bash -c>"]),
        ("eval 'rm -rf v'", ["eval rm -rf v", "rm -rf v <eval>"]),
        ("env -i FOO=1 -u BAR rm x", ["env -i FOO=1 -u BAR rm x", "rm x <env>"]),
        ("env -S 'rm -rf' v", ["env -S rm -rf v", "rm -rf v <env command line>"]),
        ("sudo -u root -E rm x", ["sudo -u root -E rm x", "rm x <sudo>"]),
        ("doas -u root rm x", ["doas -u root rm x", "rm x <doas>"]),
        ("command rm x; builtin cd y; exec rm z", ["command rm x", "rm x <command>",
                                                   "builtin cd y", "cd y <builtin>",
                                                   "exec rm z", "rm z <exec>"]),
        ("command -v rm", ["command -v rm"]),
        ("nohup nice -n 5 ionice -c 3 rm x", ["nohup nice -n 5 ionice -c 3 rm x",
                                              "nice -n 5 ionice -c 3 rm x <nohup>",
                                              "ionice -c 3 rm x <nice>", "rm x <ionice>"]),
        ("nice -10 rm x", ["nice -10 rm x", "rm x <nice>"]),
        ("timeout -s KILL 5 rm x", ["timeout -s KILL 5 rm x", "rm x <timeout>"]),
        ("timeout --sig=KILL 5 rm x", ["timeout --sig=KILL 5 rm x", "rm x <timeout>"]),
        ("time -p rm x", ["time -p rm x", "rm x <time>"]),
        ("stdbuf -oL rm x", ["stdbuf -oL rm x", "rm x <stdbuf>"]),
        ("setsid -f rm x", ["setsid -f rm x", "rm x <setsid>"]),
        ("chrt -b 0 rm x", ["chrt -b 0 rm x", "rm x <chrt>"]),
        ("taskset -c 1 rm x", ["taskset -c 1 rm x", "rm x <taskset>"]),
        ("flock /tmp/l rm x", ["flock /tmp/l rm x", "rm x <flock>"]),
        ("flock /tmp/l -c 'rm x'", ["flock /tmp/l -c rm x", "rm x <flock command line>"]),
        ("watch -n 1 'rm -rf v'", ["watch -n 1 rm -rf v", "rm -rf v <watch command>"]),
        ("watch -x rm v", ["watch -x rm v", "rm v <watch>"]),
        ("busybox rm -rf v", ["busybox rm -rf v", "rm -rf v <busybox>"]),
        ("su -c 'rm x' bob", ["su -c rm x bob", "rm x <su -c>"]),
        ("xargs -0 -n 1 rm", ["xargs -0 -n 1 rm", "rm ? <xargs>"]),
        ("xargs", ["xargs", "echo ? <xargs>"]),
        ("find . -name '*.pyc' -exec rm -f {} \\;", ["find . -name *.pyc -exec rm -f {} ;",
                                                     "rm -f {} <find -exec>"]),
        ("find src -okdir rm {} +", ["find src -okdir rm {} +", "rm {} <find -okdir>"]),
        ("find a b -type f -delete", ["find a b -type f -delete", "rm -r -f a b <find -delete>"]),
        ("find -delete", ["find -delete", "rm -r -f . <find -delete>"]),
        ("trap 'rm -rf v' EXIT", ["trap rm -rf v EXIT", "rm -rf v <trap>"]),
        ("alias x='rm -rf'", ["alias x=rm -rf", "rm -rf <alias>"]),
        ("sudo bash -c 'timeout 3 rm x'", ["sudo bash -c timeout 3 rm x",
                                           "bash -c timeout 3 rm x <sudo>",
                                           "timeout 3 rm x <bash -c>", "rm x <timeout>"]),
    ],
)  # fmt: skip
def test_every_command_a_line_runs_is_found(line: str, expected: list[str]):
    assert commands(line) == expected


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("$x -rf v", "the variable $x"),
        ("${CMD} v", "the variable ${CMD}"),
        ("$(echo rm) v", "the output of $(echo rm)"),
        ("$'\\x72\\x6d' -rf v", "$'…' quoting with escapes"),
        ("rm${IFS}-rf${IFS}v", "the variable ${IFS}"),
        ("/bin/r? v", "glob expansion in /bin/r?"),
        ("r{m,} -rf v", "brace expansion"),
    ],
)
def test_a_program_known_only_at_run_time_is_unknown_with_the_reason(line: str, reason: str):
    (command, *_) = parse_command_line(line)
    assert command.program is None
    assert command.unknown is not None and command.unknown.startswith(reason)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("curl -s x | bash", "bash reads the commands it runs from standard input"),
        ("base64 -d f | sh -s", "sh reads the commands it runs from standard input"),
        ("cat x | python3 -", "python3 reads the commands it runs from standard input"),
        ("bash < script", "bash reads the commands it runs from standard input"),
        ("eval $x", "eval runs the variable $x"),
        ('eval "$(curl -s x)"', "eval runs the output of"),
        ("source $f", "source of a computed path"),
        ('. "$(mktemp)"', "source of a computed path"),
        ('bash -c "$CMD"', "the bash -c is the variable $CMD"),
        ("sudo -s", "sudo opens a shell"),
        ("su bob", "su opens a shell"),
        ("sudo -Q rm x", "sudo's option -Q is not one caretz knows"),
        ("timeout $T rm x", "where timeout's command starts depends on the variable $T"),
        ("PATH=/tmp/evil rm x", "PATH=… changes which program runs"),
        ("env LD_PRELOAD=/x.so ls", "LD_PRELOAD=… changes which program runs"),
        ("find . $op", "find's expression depends on the variable $op"),
        ("echo 'unterminated", "bash cannot parse it"),
        ("{rm,-rf,v}", "bash cannot parse it"),
        ("ls 'a b'\\ c", "bash reads"),
    ],
)
def test_code_that_cannot_be_seen_before_it_runs_is_hidden_with_the_reason(line: str, reason: str):
    hidden = [c.unknown for c in walk_all(parse_command_line(line)) if c.hidden is not None]
    assert hidden and hidden[0].startswith(reason), hidden


def test_a_literal_heredoc_is_read_and_an_expanding_one_is_not():
    assert commands("bash <<'EOF'\ncd x && rm y\nEOF") == [
        "bash",
        "cd x <heredoc>",
        "rm y <heredoc>",
    ]
    (python,) = parse_command_line("python3 - <<'EOF'\nprint(1)\nEOF")
    assert python.hidden is None and [w.text for w in python.words] == ["python3", "-"]
    (shell, *_) = parse_command_line("bash <<EOF\nrm $x\nEOF")
    assert shell.hidden == "bash reads the commands it runs from standard input"


def test_a_script_file_is_a_plain_command():
    (command,) = parse_command_line("bash ./build.sh --fast")
    assert command.hidden is None and command.program == "bash" and command.runs is Runs.ITSELF


def test_nesting_is_followed_to_a_limit_and_then_fails_closed():
    line = "rm x"
    for _ in range(MAX_DEPTH + 2):
        line = f"bash -c {shlex.quote(line)}"
    found = list(walk_all(parse_command_line(line)))
    assert any(c.hidden and "nested more than" in c.hidden for c in found)
    three = list(walk_all(parse_command_line("bash -c \"sh -c 'rm x'\"")))
    assert three[-1].program == "rm" and three[-1].via == "sh -c"


def test_wrappers_say_how_they_run_what_they_wrap():
    (sudo,) = parse_command_line("sudo rm x")
    (timeout,) = parse_command_line("timeout 5 rm x")
    (find,) = parse_command_line("find . -exec rm {} ;")
    assert sudo.runs is Runs.AS_OTHER_USER
    assert timeout.runs is Runs.INSTEAD
    assert find.runs is Runs.BESIDES
