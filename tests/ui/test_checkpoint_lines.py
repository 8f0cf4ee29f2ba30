"""The terminal's lines for checkpoint events: a long snapshot under way is shown."""

from __future__ import annotations

from caretz.session.records.checkpoints import CheckpointSaving
from caretz.ui.checkpoint_lines import CheckpointLines


def test_a_long_snapshot_under_way_is_a_line_while_it_runs():
    message = "checkpoint: saving 80,000 files (1,024.0 MB) before the first change; [later]"
    for interactive in (False, True):
        lines = CheckpointLines(interactive).render(CheckpointSaving(files=80_000, message=message))

        assert lines == [f"[dim]{message.replace('[later]', chr(92) + '[later]')}[/]"]
    assert CheckpointLines().render(CheckpointSaving()) == []
