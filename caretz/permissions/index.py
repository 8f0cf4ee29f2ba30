"""Bash rules sorted by the program they name, so a check reads only the rules that can apply."""

from __future__ import annotations

from collections.abc import Iterable

from caretz.permissions.command import Command
from caretz.permissions.rules import Rule


class ProgramIndex:
    """The command rules of one behavior (deny, ask or allow), by program.

    The rules for a program are listed once, when the index is built: the rules for every
    command (`Bash`), those naming the program, then those whose program is a glob."""

    def __init__(self, rules: Iterable[Rule]):
        self.ordered = [rule for rule in rules if rule.legacy is None]
        whole = [rule for rule in self.ordered if rule.whole_tool]
        named: dict[str, list[Rule]] = {}
        wildcard: list[Rule] = []
        for rule in self.ordered:
            if rule.command is None:
                continue
            if not rule.command.literal_program:  # a glob, or a flag cluster (`-rf` is `-fr`)
                wildcard.append(rule)
            else:
                named.setdefault(rule.command.program, []).append(rule)
        self.other_programs = [*whole, *wildcard]
        self.by_program = {name: [*whole, *own, *wildcard] for name, own in named.items()}

    def candidates(self, command: Command) -> list[Rule]:
        """The rules that may match `command`: all of them when it cannot be fully read or
        may run commands caretz does not read."""
        program = command.program
        if program is None or command.opaque:
            return self.ordered
        return self.by_program.get(program, self.other_programs)


class BashRules:
    """The rules that cover the bash tool, indexed once per rule set."""

    def __init__(self, rules: Iterable[Rule]):
        bash = [rule for rule in rules if rule.covers("bash")]
        self.any = bool(bash)
        self.deny = ProgramIndex(rule for rule in bash if rule.behavior == "deny")
        self.ask = ProgramIndex(rule for rule in bash if rule.behavior == "ask")
        self.allow = ProgramIndex(rule for rule in bash if rule.behavior == "allow")
        self.legacy = [rule for rule in bash if rule.legacy is not None]

    def of(self, behavior: str) -> ProgramIndex:
        return {"deny": self.deny, "ask": self.ask, "allow": self.allow}[behavior]
