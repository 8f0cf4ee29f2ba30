"""`exit_plan_mode`: the plan written down, put to the user, and plan mode left.

Offered only in plan mode (its effect is `plan`: permissions/modes.py). The plan is
saved in the session's folder as `plan-N.md` (N counts the plans of the session), then:

- where someone can answer (the terminal's approval prompt, an editor's permission
  request), the user approves it and picks the mode that carries it out (`y`: auto, `a`:
  ask), or says no with a note, and the model keeps planning; the switch is the
  session's own (`SessionPermissions.switch_mode`), so the rest of the turn runs in the
  new mode;
- in a headless run nobody can approve: the plan is the run's answer and the turn ends
  (exit 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz import private_data
from caretz.messages import ToolSpec
from caretz.tools.asking import Question
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.policy import EndTurn

if TYPE_CHECKING:
    from caretz.tools.permission import SessionPermissions

TOOL_NAME = "exit_plan_mode"
PLAN_FILE = "plan-{number}.md"
# The mode each approving answer switches to.
MODE_FOR = {"yes": "auto", "always": "ask"}

SPEC = ToolSpec(
    name=TOOL_NAME,
    description=(
        "Plan mode: when your plan is ready, call this with the whole plan in Markdown "
        "(the steps, the files each touches, how the result will be checked). The user "
        "reads it and approves it or tells you what to change. Once approved, the session "
        "leaves plan mode and you carry the plan out in the same turn. Call it only when "
        "the plan is complete, not to ask questions."
    ),
    parameters=object_schema(
        plan=Param("string", "The plan, in Markdown, as the user should read it.", True)
    ),
)


class ExitPlanModeTool:
    spec = SPEC
    effect = "plan"  # offered and run in plan mode only (permissions/modes.py)

    def __init__(self, permissions: SessionPermissions, folder: Path):
        self.permissions = permissions
        self.folder = folder  # the session's folder, where its plans are kept

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = str(args.get("plan", "")).strip()
        if not plan:
            raise ToolArgumentError("the plan is empty: send the whole plan as `plan`")
        path = self.save(plan)
        permissions = self.permissions
        if not permissions.asker.interactive:
            saved = ToolResult(ok=True, output=f"The plan was saved to {path}.")
            raise EndTurn("the plan is ready; nobody can approve it in a headless run", saved, plan)
        answer = permissions.ask_user(approval(plan, path))
        note = f" The user's note: {answer.note}" if answer.note.strip() else ""
        if answer.choice == "no":
            return ToolResult(
                ok=False,
                output=(
                    f"The user did not approve the plan (saved at {path}); the session stays "
                    f"in plan mode.{note} Revise the plan and call {TOOL_NAME} again."
                ),
            )
        mode = MODE_FOR[answer.choice]
        permissions.leave_plan_mode(mode)
        return ToolResult(
            ok=True,
            output=(
                f"The user approved the plan (saved at {path}). The session is in {mode} "
                f"permission mode now: carry out the plan.{note}"
            ),
        )

    def save(self, plan: str) -> Path:
        """The plan as the session's next `plan-N.md`."""
        private_data.make_dir(self.folder)
        taken = {entry.name for entry in self.folder.iterdir()}
        number = 1
        while PLAN_FILE.format(number=number) in taken:
            number += 1
        path = self.folder / PLAN_FILE.format(number=number)
        private_data.write_file(path, plan + "\n")
        return path


def approval(plan: str, path: Path) -> Question:
    """The question the user answers: the plan, and which mode carries it out."""
    return Question(
        tool=TOOL_NAME,
        arguments={"plan": plan},
        summary=f"the plan in {path.name}",
        reason=f"the plan is ready (saved to {path}); plan mode ends once it is approved",
        heading="caretz asks: approve this plan and leave plan mode?",
        yes_means="yes, carry it out in auto mode (changes in the sandbox run unasked)",
        always_means="yes, carry it out in ask mode (every change asks first)",
        no_means="no, keep planning (a note says what to change)",
    )
