"""A deny rule holds by construction: what a command's text hands a program caretz does not
read asks.

With `Bash(git push:*)` denied, each runnable form is first run with real bash in a real
repository with a bare remote (tests/permissions/test_indirections.py's), to show it
really pushes; then the check must deny it (caretz reads the push) or ask (a program
caretz does not read is handed it: a wrapper caretz does not know, code given inline,
an argument known only when it runs, a file the line itself writes), which a `-p` run
refuses. A program is read as running nothing else only when it is on caretz's list
of such programs (caretz/permissions/plain.py) or its reader finds nothing it runs;
every other program runs code caretz does not read, and the commands its arguments
form are read (caretz/permissions/runner.py), as are the line's strings (handed.py).

The other side: a program that runs the project's files (a script, `pytest`, `make
test`, `npm run x`) runs beside a deny rule when its text hands it nothing a rule names:
the project's code can do anything whatever the rules say, and the sandbox holds it.
Everyday commands a strong model runs (tests/permissions/everyday.py) never ask, with or
without a deny rule, but for code given inline, which asks until an allow rule names it.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from caretz.permissions import launch
from caretz.permissions.command import Command
from caretz.permissions.launch import _BUILDERS, SHELLS
from caretz.permissions.plain import PLAIN
from caretz.permissions.policy import RuleSet
from caretz.permissions.settings import rules_from_permissions
from caretz.permissions.shell import SYNTAX_ERROR, parse_command_line
from caretz.permissions.wrappers import SPECS
from tests.permissions.everyday import EVERYDAY, INLINE, RUNNERS, TYPICAL_ALLOWS
from tests.permissions.everyday import PLAIN as PLAIN_COMMANDS
from tests.permissions.test_indirections import PUSH, pushes_for_real

# (command, "deny" or "ask", the program it needs to run for real, or None: not run here)
FORMS = [
    # the forms that pushed past the deny rule
    (f"echo '{PUSH}' | xargs -I{{}} sh -c '{{}}'", "ask", "xargs"),
    (f"prlimit --nofile=1024 {PUSH}", "ask", "prlimit"),
    (f"setpriv --no-new-privs {PUSH}", "ask", "setpriv"),
    (f"printf '!{PUSH}\\nq\\n' | ed -s README", "ask", "ed"),
    (f"zip -q -T -TT '{PUSH} #' ../x.zip README", "ask", "zip"),
    # inline code in interpreters and programs that run commands from their arguments
    (f"awk 'BEGIN {{ system(\"{PUSH}\") }}'", "ask", "awk"),
    (f"perl -e 'system(\"{PUSH}\")'", "ask", "perl"),
    (f"python3 -c 'import os; os.system(\"{PUSH}\")'", "ask", "python3"),
    (f"echo '!{PUSH}' | ex -s", "ask", "vim"),
    (f"LESSOPEN='|{PUSH} %s' less README", "ask", None),
    ("sort --compress-program=./c.sh -S 1 README", "ask", None),
    ("rg --pre ./pre.sh x", "ask", None),
    # code in files caretz does not read
    (f"printf 'all:\\n\\t{PUSH}\\n' > Makefile && make -s", "ask", "make"),
    (f"printf '{PUSH}\\n' > p.sh && source p.sh", "ask", "git"),
    (f"printf '#!/bin/sh\\n{PUSH}\\n' > ls && chmod +x ls && ./ls", "ask", "git"),
    ("git config alias.p '!git push' && git p origin HEAD:refs/heads/main", "ask", "git"),
    ("RIPGREP_CONFIG_PATH=./rc rg x", "ask", None),
    # shell evaluation: what caretz reads is denied, what it cannot read asks
    (f'f() {{ "$@"; }}; f {PUSH}', "ask", "git"),
    (f"f() {{ {PUSH}; }}; f", "deny", "git"),
    ("$(echo git) push origin HEAD:refs/heads/main", "ask", "git"),
    (f"echo $({PUSH})", "deny", "git"),
    (f"eval \"$(echo '{PUSH}')\"", "ask", "git"),
    (f"eval '{PUSH}'", "deny", "git"),
    (f"sh <<'EOF'\n{PUSH}\nEOF", "deny", "git"),
    ("sh <<EOF\n$(echo git) push origin HEAD:refs/heads/main\nEOF", "ask", "git"),
    (f"command {PUSH}", "deny", "git"),
    (f"builtin eval '{PUSH}'", "deny", "git"),
    (f"exec {PUSH}", "deny", "git"),
    (f"alias x='{PUSH}'", "deny", None),
    # wrappers caretz reads
    (f"env -S '{PUSH}'", "deny", "env"),
    (f"nice -n 5 {PUSH}", "deny", "nice"),
    (f"timeout 60 {PUSH}", "deny", "timeout"),
    (f"stdbuf -oL {PUSH}", "deny", "stdbuf"),
    (f"nohup {PUSH}", "deny", "nohup"),
    (f"time {PUSH}", "deny", "git"),
    (f"ionice -c3 {PUSH}", "deny", "ionice"),
    (f"find . -maxdepth 0 -exec sh -c '{PUSH}' \\;", "deny", "find"),
    (f"sudo -u ann {PUSH}", "deny", None),
    (f"watch -n 1 -g '{PUSH}'", "deny", None),
    (f"parallel ::: '{PUSH}'", "ask", None),
    (f"busybox sh -c '{PUSH}'", "deny", None),
    (f"vim -c '!{PUSH}' -c 'qa!' README", "ask", None),
]
# A wrapper of the project's that runs its arguments: any wrapper caretz has no list of.
MADE = "printf '#!/bin/sh\\nexec \"$@\"\\n' > w && chmod +x w"
WRAP = f"{MADE} && ./w"
# Forms of the same classes that no list of wrappers, interpreters or runners names.
OWN_FORMS = [
    # the command its arguments form, however the program is reached
    (f"{WRAP} {PUSH}", "ask", "git"),
    (f"{WRAP} /usr/bin/{PUSH}", "ask", "git"),
    (f"{WRAP} env GIT_TRACE=0 {PUSH}", "ask", "git"),
    (f"{WRAP} timeout 30 {PUSH}", "ask", "git"),
    (f"{WRAP} sh -c '{PUSH}'", "ask", "git"),
    (f"{MADE} && echo '{PUSH}' | ./w sh", "ask", "git"),
    (f"{WRAP} bash -c", "ask", None),  # the command line it would add
    (f"{WRAP} python3 -c 'import os; os.system(\"{PUSH}\")'", "ask", "python3"),
    (f"{WRAP} sqlite3 :memory: '.shell {PUSH}'", "ask", None),
    (f"{MADE} && find . -maxdepth 0 -exec ./w {PUSH} \\;", "ask", "git"),
    (f"prlimit --as=unlimited -- {PUSH}", "ask", "prlimit"),
    # an argument known only when it runs, where a program could start
    (f"x=git; {WRAP} $x push origin HEAD:refs/heads/main", "ask", "git"),
    (f"{WRAP} $(echo git) push origin HEAD:refs/heads/main", "ask", "git"),
    (f"touch git && {WRAP} g?t push origin HEAD:refs/heads/main", "ask", "git"),
    (f"{WRAP} {{git,push}} origin HEAD:refs/heads/main", "ask", "git"),
    (f"{WRAP} --program=/usr/bin/git push origin HEAD:refs/heads/main", "ask", None),
    (f"{MADE} && printf '%s ' {PUSH} | xargs ./w", "ask", "git"),
    # code given inline: an interpreter's options, or any program's option named like one
    (f"perl -M'POSIX;system(q({PUSH}))' -e 1", "ask", "perl"),
    (f"python3 -Bc 'import os; os.system(\"{PUSH}\")'", "ask", "python3"),
    (f'node -p \'require("child_process").execSync("{PUSH}").length\'', "ask", None),
    (f"tclsh <<< 'exec {PUSH}'", "ask", None),
    (
        'python3 <(echo \'import os; os.system("g" + "it push origin HEAD:refs/heads/main")\')',
        "ask",
        "python3",
    ),
    (
        'python3 /dev/stdin <<< \'import os; os.system("g" + "it push origin HEAD:refs/heads/main")\'',
        "ask",
        "python3",
    ),
    (". /dev/stdin <<< \"$(printf 'g%s push origin HEAD:refs/heads/main' it)\"", "ask", "git"),
    (f"psql -c '\\! {PUSH}'", "ask", None),
    (f"frob --exec='sh -c \"$(echo {PUSH})\"'", "ask", None),
    # a file the line writes, or text it pipes, for a program that runs what it reads
    (f"cat > Makefile <<'EOF'\nall:\n\t{PUSH}\nEOF\nmake -s", "ask", "make"),
    (f"echo -e 'all:\\n\\t{PUSH}' > Makefile && make -s", "ask", "make"),
    (
        "printf 'all:\\n\\t\\x67it push origin HEAD:refs/heads/main\\n' > Makefile && make -s",
        "ask",
        "make",
    ),
    ("printf '%s %s origin HEAD:refs/heads/main\\n' git push > p.sh && sh p.sh", "ask", "git"),
    (f"printf '#!/bin/sh\\n$C\\n' > r && chmod +x r && C='{PUSH}' ./r", "ask", "git"),
    (f"{WRAP} sh <<< '{PUSH}'", "ask", "git"),
    (f"printf 'git() {{ command {PUSH}; }}' > f.sh && . ./f.sh && git status", "ask", "git"),
    # text bash itself evaluates: a subscript's `$(…)` where a name or a number is read
    (f"let 'x[$({PUSH})]'", "ask", "git"),
    (f"declare 'a[$({PUSH})]=1'", "ask", "git"),
    (f"[[ -v 'a[$({PUSH})]' ]]", "ask", "git"),
    (f"test -v 'a[$({PUSH})]'", "ask", "git"),
    (f"printf -v 'a[$({PUSH})]' x", "ask", "git"),
    (f"echo 'a[$({PUSH})]' | {{ read x; echo $(( x )); }}", "ask", "git"),
    (f"x='a[$({PUSH})]'; echo ${{!x}}", "ask", "git"),
    (f"declare -n r='a[$({PUSH})]'; echo $r", "ask", "git"),
    (f"PS4='$({PUSH})'; set -x; :", "ask", "git"),
    (f"mapfile -C '{PUSH}; :' -c 1 lines <<< one", "ask", "git"),
    # an editor's or a pager's shell escape
    (f"printf '!{PUSH}\\n' | less README", "ask", None),
]
# Programs that run the project's files: beside a deny rule they run, as the project's
# code could push whatever the rules say (the sandbox and the network policy hold it).
PROJECT_CODE = ["npm run deploy", "python3 deploy.py", "make push", "./ls -la", "sh deploy.sh",
                "bin/grep x", "source ./env.sh && pytest -q", "pytest tests/git",
                "python3 tools/release.py --tag v1", "PATH=./node_modules/.bin:$PATH jest",
                "FOO=1 make check", "pip install gitpython"]  # fmt: skip


def deny_push(root: Path, *allow: str) -> RuleSet:
    rules = rules_from_permissions({"deny": ["Bash(git push:*)"], "allow": list(allow)}, "s")
    return RuleSet(rules, root)


@pytest.mark.parametrize(("command", "expected", "needs"), FORMS + OWN_FORMS)
def test_each_form_is_denied_or_asks(tmp_path: Path, command: str, expected: str, needs):
    if needs is not None:
        assert shutil.which(needs), f"{needs} is needed to show the form pushes"
        assert pushes_for_real(command, tmp_path), "not a real bypass"
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == expected, decision.reason
    assert decision.rule is not None and decision.rule.text == "Bash(git push:*)"
    if expected == "ask":
        assert decision.unresolved, decision.reason  # one line says why it cannot be read
        assert "could match it" in decision.reason


@pytest.mark.parametrize("command", EVERYDAY)
def test_no_everyday_command_asks_without_a_deny_rule(tmp_path: Path, command: str):
    assert RuleSet([], tmp_path).check("bash", {"command": command}, tmp_path).outcome == (
        "no-match"
    )
    allows = RuleSet(rules_from_permissions({"allow": TYPICAL_ALLOWS}, "s"), tmp_path)
    assert allows.check("bash", {"command": command}, tmp_path).outcome in ("allow", "no-match")


@pytest.mark.parametrize("command", PLAIN_COMMANDS + RUNNERS + PROJECT_CODE)
def test_what_runs_nothing_else_or_the_projects_code_runs_unasked_beside_a_deny_rule(
    tmp_path, command
):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == "no-match", decision.reason


@pytest.mark.parametrize("command", INLINE)
def test_inline_code_asks_beside_a_deny_rule_unless_an_allow_rule_names_it(tmp_path, command):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == "ask", decision.reason
    assert "runs code given inline" in (decision.unresolved or "")
    vouched = deny_push(tmp_path, *TYPICAL_ALLOWS).check("bash", {"command": command}, tmp_path)
    assert vouched.outcome == "allow", vouched.reason
    assert "which covers what" in vouched.reason


def test_an_allow_rule_never_answers_for_what_the_line_shows_or_hides(tmp_path: Path):
    rules = deny_push(tmp_path, "Bash(make:*)", "Bash", "Bash(sed:*)", "Bash(python3:*)")
    # a push the line shows is denied, whatever runs beside it
    assert rules.check("bash", {"command": f"make && {PUSH}"}, tmp_path).outcome == "deny"
    # a command hidden from caretz is answered for by no allow rule, not even the bare Bash
    for hidden in (f"sed -n '1e {PUSH}' README", "x=git; $x push", f"echo '{PUSH}' | bash"):
        assert rules.check("bash", {"command": hidden}, tmp_path).outcome == "ask", hidden
    # the bare `Bash` names no program: it answers for none of what they are handed
    bare = deny_push(tmp_path, "Bash")
    assert bare.check("bash", {"command": f"./w {PUSH}"}, tmp_path).outcome == "ask"
    assert bare.check("bash", {"command": "make test"}, tmp_path).outcome == "allow"
    # an allow rule naming the program answers for what its arguments hand it
    named = deny_push(tmp_path, "Bash(docker run:*)")
    decision = named.check("bash", {"command": f"docker run img {PUSH}"}, tmp_path)
    assert decision.outcome == "allow" and "which covers what" in decision.reason


def test_a_program_of_the_projects_is_the_projects_code_not_the_one_of_that_name(tmp_path):
    rules = deny_push(tmp_path)
    for command in ("ls -la", "/usr/bin/ls -la", "./ls -la", "bin/grep x", "/tmp/cat f"):
        assert rules.check("bash", {"command": command}, tmp_path).outcome == "no-match", command
    (command,) = parse_command_line("/usr/bin/../../tmp/ls")
    assert "is a file caretz does not read" in (command.runs_code or "")
    decision = rules.check("bash", {"command": f"./ls {PUSH}"}, tmp_path)
    assert decision.outcome == "ask" and "hand it `git push" in (decision.unresolved or "")
    # a deny rule on a program still sees it reached by a path
    ls_denied = RuleSet(rules_from_permissions({"deny": ["Bash(ls:*)"]}, "s"), tmp_path)
    assert ls_denied.check("bash", {"command": "./ls -la"}, tmp_path).outcome == "deny"


@pytest.mark.parametrize(
    ("command", "outcome"),
    [
        ("LANG=C sort names.txt", "no-match"),
        ("NO_COLOR=1 ls", "no-match"),
        ("GIT_AUTHOR_NAME=ann git commit -m x", "no-match"),
        ("x=1; echo $x", "no-match"),
        ("export LC_ALL=C && grep -c x f", "no-match"),
        ("RIPGREP_CONFIG_PATH=rc grep x f", "ask"),
        ("env FOO=1 grep x f", "ask"),
        ("export FOO=1; grep x f", "ask"),
        ("FOO=1; grep x f", "ask"),
        ("HOME=/tmp/h git status", "ask"),
        ("PAGER='sh -c \"git push\"' git log", "deny"),
        # a program that runs its own code runs it whatever its variables say
        ("FOO=1 pytest -q", "no-match"),
        ("env FOO=1 make test", "no-match"),
        ("export FOO=1 && cd src && pytest", "no-match"),
        ("export FOO=1 && pytest && ls", "ask"),
        ("PATH=./node_modules/.bin:$PATH jest", "no-match"),
        ("PATH=./bin:$PATH git status", "ask"),
        ("CMD='git push' ./run.sh", "ask"),
    ],
)
def test_a_variable_set_in_the_line_counts_unless_it_is_known_harmless(tmp_path, command, outcome):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == outcome, decision.reason


# The programs caretz reads further whose reader finds them running nothing else when they
# are given plain operands: each for a reason.
RUN_NOTHING_WITH_OPERANDS = {
    "alias",  # `alias x` prints it; a body (`x=…`) is read
    "awk", "gawk", "mawk", "nawk", "busybox-awk",  # a program without system(), pipes, -f
    "sed",  # a script without `e` (or -f)
    "tar",  # no program options
    "find",  # no -exec, -ok or -delete
    "man",  # no -P: the pager is the user's own
    "hash", "shopt", "enable",  # without -p, expand_aliases, -f
}  # fmt: skip


def is_plain(command: Command) -> bool:
    return (
        command.hidden is None
        and command.unseen is None
        and command.runs_code is None
        and not command.inner
    )


READERS = sorted(set(SHELLS) | set(_BUILDERS) | set(SPECS))
# Programs with no reader and no place on the list, reached by name or by path.
UNREAD = ["make", "frobnicate", "prlimit", "setpriv", "python3", "node", "perl", "pwsh", "deno",
          "my-tool", "pytest", "cargo", "go", "docker", "gh", "patch", "openssl", "./tool",
          "/opt/bin/tool", ".venv/bin/git"]  # fmt: skip


def test_a_program_runs_nothing_else_only_by_the_list_or_its_readers_word():
    """The closed default: a program is read as running nothing else when the list of such
    programs names it, or when caretz's reader for it has read its words and found
    nothing it runs. Any other name, and any new reader that passes a program through
    without saying what it runs, fails here."""
    plain = {name for name in READERS if is_plain(parse_command_line(f"{name} a-file b")[0])}
    assert plain == RUN_NOTHING_WITH_OPERANDS
    assert all(is_plain(parse_command_line(f"{name} a-file")[0]) for name in PLAIN if name != "[")
    for name in UNREAD:
        (command,) = parse_command_line(f"{name} a-file")
        assert command.runs_code is not None and command.hidden is None, name
        assert command.unseen is None, name  # its text hands it nothing: not unresolvable


@pytest.mark.parametrize("name", READERS + sorted(PLAIN) + UNREAD)
def test_what_the_arguments_of_any_program_hand_it_is_read(tmp_path: Path, name: str):
    """Every way a program is read ends where the commands its arguments form are read:
    a program that runs nothing else, or whose reader finds nothing run, runs beside the
    deny rule; any other is denied (caretz reads the push), or asks (what it is handed
    may run). A new reader, or a new way of passing a program through, that returns a
    program caretz does not read without reading what it carries fails here."""
    command = f"{name} a-file {PUSH}"
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    if SYNTAX_ERROR in decision.reason:  # `[` without `]`, `export HEAD:refs/…`: it fails closed
        assert decision.outcome == "ask"
    elif name in PLAIN or name in RUN_NOTHING_WITH_OPERANDS:
        assert decision.outcome == "no-match", decision.reason
    else:
        assert decision.outcome in ("deny", "ask"), decision.reason
    for part in launch_walk(parse_command_line(command)):
        if part.runs_code is not None and not part.opaque and "git" in part.argument_texts:
            assert any(c.program == "git" for c in part.carries), (name, part.shown())


def launch_walk(commands: tuple[Command, ...]):
    for command in commands:
        yield command
        yield from launch_walk(command.inner)
        yield from launch_walk(command.carries)


def test_a_program_caretz_does_not_read_is_made_only_where_its_arguments_are_read():
    """A `Command` that runs code caretz does not read (`runs_code=`) is made by a reader
    that `build_command` dispatches to, which reads what its arguments carry
    (runner.runner), or is copied with its `carries`: a reader made elsewhere, after the
    dispatch, would skip that reading."""
    dispatched = {builder.__name__ for builder in _BUILDERS.values()} | {"_read", "_shell"}
    package = Path(launch.__file__).parent
    made_elsewhere = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.Lambda):
                continue
            for call in ast.walk(function):
                if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Command"):
                    continue
                keywords = {keyword.arg for keyword in call.keywords}
                if "runs_code" not in keywords or "carries" in keywords:
                    continue
                name = getattr(function, "name", "<lambda>")
                if path.name == "runner.py" or name in dispatched:
                    continue
                made_elsewhere.append(f"{path.name}:{call.lineno} in {name}")
    assert not made_elsewhere, made_elsewhere


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_a_shell_running_a_script_runs_the_projects_code_and_a_bare_one_reads_stdin(shell):
    (script,) = parse_command_line(f"{shell} deploy.sh")
    assert "runs the script deploy.sh" in (script.runs_code or "")
    assert script.hidden is None and script.unseen is None
    (bare,) = parse_command_line(f"{shell} -c")
    assert "given no command line" in (bare.hidden or "")
    for wrapper in ("chroot /", "unshare -r", "setarch x86_64", "fakeroot"):
        (opened,) = parse_command_line(wrapper)
        assert "opens a shell" in (opened.hidden or ""), wrapper
