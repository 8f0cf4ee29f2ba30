"""Agent Skills (agentskills.io): folders holding a `SKILL.md`, found in the project's and
the user's skill folders, offered to the model by name and description, loaded whole only
when used."""
