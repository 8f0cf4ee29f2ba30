"""SKILL.md files: the spec's name rules read leniently, what a file that cannot be used
says, the fields caretz honours, and the catalog kept within its budget."""

from __future__ import annotations

from pathlib import Path

from caretz.sandbox.door import ProjectDoor
from caretz.skills.files import Skill, load_skills, skill_folders, split_tools
from caretz.skills.prompt import catalog_block, catalog_budget


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skills_in(project: Path, home: Path | None = None) -> tuple[dict[str, Skill], list[str]]:
    found = load_skills(skill_folders(project, project, home, ProjectDoor((project,))))
    return found.skills, found.warnings


def test_names_follow_the_spec_and_what_breaks_it_is_said(tmp_path: Path) -> None:
    skills = tmp_path / ".agents" / "skills"
    write(skills / "pdf-tools/SKILL.md", "---\nname: pdf-tools\ndescription: PDFs\n---\nBody")
    write(skills / "renamed/SKILL.md", "---\nname: other\ndescription: Named apart\n---\nB")
    write(skills / "shouty/SKILL.md", "---\nname: Shouty\ndescription: Upper case\n---\nB")
    write(skills / "Bad_Folder/SKILL.md", "---\ndescription: Its folder breaks it\n---\nB")
    write(skills / "-edge/SKILL.md", "---\ndescription: A leading hyphen\n---\nB")
    write(skills / "no-description/SKILL.md", "---\nname: no-description\n---\nB")
    write(skills / "broken/SKILL.md", "").write_bytes(b"---\ndescription: x\n---\n\xff\xfe")
    write(skills / "notes.md", "not a skill folder")
    write(skills / "deep/inner/SKILL.md", "---\ndescription: Too deep\n---\nB")

    found, warnings = skills_in(tmp_path)

    assert sorted(found) == ["pdf-tools", "renamed", "shouty"]
    assert found["pdf-tools"].body == "Body" and found["pdf-tools"].scope == "project"
    said = "\n".join(warnings)
    assert "name 'other' is not its folder's name; it is /renamed" in said
    assert "name 'Shouty' breaks the rule" in said
    assert "its folder's name 'Bad_Folder' is no skill name" in said
    assert "its folder's name '-edge' is no skill name" in said
    assert f"{skills / 'no-description/SKILL.md'}: skill left out (no description" in said
    assert "broken/SKILL.md: skill left out (not UTF-8 text" in said


def test_the_fields_caretz_honours(tmp_path: Path) -> None:
    skills = tmp_path / ".claude" / "skills"
    write(
        skills / "ship/SKILL.md",
        "---\ndescription: Ship it\nallowed-tools: Bash(git log:*) Read, Edit\n"
        "disable-model-invocation: true\n---\nB",
    )
    write(skills / "lint/SKILL.md", "---\ndescription: Lint\nuser-invocable: false\n---\nB")
    write(
        skills / "listed/SKILL.md",
        "---\ndescription: Listed\nallowed-tools:\n  - Bash(npm run test:*)\n  - Read\n---\nB",
    )

    found, _ = skills_in(tmp_path)

    ship, lint = found["ship"], found["lint"]
    assert ship.allowed_tools == ("Bash(git log:*)", "Read", "Edit")
    assert found["listed"].allowed_tools == ("Bash(npm run test:*)", "Read")
    assert (ship.model_invocable, ship.user_invocable) == (False, True)
    assert (lint.model_invocable, lint.user_invocable) == (True, False)
    assert split_tools("Bash(a b), Read Grep") == ["Bash(a b)", "Read", "Grep"]


def test_the_project_shadows_the_user_and_says_so(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    write(project / ".caretz/skills/review/SKILL.md", "---\ndescription: Project's\n---\nP")
    write(home / ".claude/skills/review/SKILL.md", "---\ndescription: Mine\n---\nU")
    write(home / ".agents/skills/mine/SKILL.md", "---\ndescription: Only mine\n---\nU")

    found, warnings = skills_in(project, home)

    assert found["review"].description == "Project's" and found["mine"].scope == "user"
    assert warnings == [
        f"{home / '.claude/skills/review/SKILL.md'}: skill 'review' is shadowed by "
        f"{project / '.caretz/skills/review/SKILL.md'} (project), which is used"
    ]


def test_the_catalog_keeps_within_its_budget(tmp_path: Path) -> None:
    skills = [
        Skill(
            name=f"skill-{n:03}",
            description="word " * 200,
            path=tmp_path / f"skill-{n:03}" / "SKILL.md",
            scope="user",
            body="",
        )
        for n in range(300)
    ]
    hidden = Skill(
        name="hidden",
        description="Not for the model",
        path=tmp_path / "SKILL.md",
        scope="user",
        body="",
        allowed_tools=(),
        model_invocable=False,
    )
    budget = catalog_budget(200_000)

    whole = catalog_block(skills[:3], budget)
    shortened = catalog_block(skills[:40], budget)
    crowded = catalog_block([*skills, hidden], budget)

    assert budget == 16_000
    assert whole.count("word") == 600  # room for every description whole
    assert len(shortened) <= budget and shortened.count("<skill>") == 40
    assert "…</description>" in shortened  # the descriptions shortened, no skill left out
    assert len(crowded) <= budget and "hidden" not in crowded
    assert crowded.endswith("more skills are not listed here, for room.)")
    assert catalog_block([hidden], budget) == ""
