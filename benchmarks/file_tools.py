"""The file tools on the Linux kernel's own files: encodings, the read cap, the closest text.

Three measurements, each on a file of the kernel source (--kernel DIR, an extracted
`linux-source` tree):

  encodings     drivers/tty/vt/defkeymap.map (Latin-1): read, an edit adding accented
                text and one removing it, then a write; the encoding found, the time,
                and whether every byte on disk is still Latin-1 (no UTF-8 in it)
  read cap      one read of a wide register header in a 32k-token session: the result's
                characters and its tokens at 3.5 characters each, against the window
  closest text  an edit whose old_string is not in a 20,000-line file (the kernel's
                lpfc_sli.c): four kinds of miss, the median time to find the closest
                text (goal: 200 ms each)

CARETZ_ROOT points it at another checkout (the figures before a change), whose tools
have no cap of their own: its sessions gave every tool 30,000 characters.

    .venv/bin/python benchmarks/file_tools.py --kernel DIR [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("CARETZ_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from caretz.tools.base import ToolContext  # noqa: E402
from caretz.tools.edit_match import EditMiss, apply_edit  # noqa: E402
from caretz.tools.edit_tool import EditTool  # noqa: E402
from caretz.tools.file_reads import FileReads  # noqa: E402
from caretz.tools.files import ReadTool, WriteTool  # noqa: E402

try:
    from caretz.tools.result_cap import cap_chars
except ImportError:  # a checkout from before the caps

    def cap_chars(room_tokens: int, calls: int = 1) -> int:
        return 30_000


WINDOW = 32_000
USED = 6_000  # a session's system prompt, tools and first steps
KEYMAP = "drivers/tty/vt/defkeymap.map"
HEADER = "drivers/gpu/drm/amd/include/asic_reg/nbio/nbio_7_4_sh_mask.h"
LONG_FILE = "drivers/scsi/lpfc/lpfc_sli.c"
CLOSEST_GOAL_MS = 200


def encodings(kernel: Path) -> None:
    folder = Path(tempfile.mkdtemp())
    shutil.copy(kernel / KEYMAP, folder / "defkeymap.map")
    reads, ctx = FileReads(), ToolContext(workspace=folder)
    started = time.perf_counter()
    read = ReadTool(reads).run({"path": "defkeymap.map"}, ctx)
    edits = [
        ("compose '`' 'A' to 'À'", "compose '`' 'A' to 'Â' # é"),
        ("compose '\\'' 'e' to 'é'", "compose '\\'' 'e' to 'e'"),
    ]
    results = [
        EditTool(reads).run({"path": "defkeymap.map", "old_string": a, "new_string": b}, ctx)
        for a, b in edits
    ]
    text = (folder / "defkeymap.map").read_bytes().decode("latin-1")
    write = WriteTool(reads).run({"path": "defkeymap.map", "content": text + "# ü\n"}, ctx)
    elapsed = time.perf_counter() - started
    data = (folder / "defkeymap.map").read_bytes()
    utf8 = any(
        0xC2 <= byte <= 0xC3 and 0x80 <= data[i + 1] <= 0xBF for i, byte in enumerate(data[:-1])
    )
    note = read.output.splitlines()[-1] if read.ok else read.output
    print(f"\nencodings: {KEYMAP} ({len(data):,} bytes)")
    print(f"  read: {'ok' if read.ok else 'FAILED'}; {note[:90]}")
    print(f"  edits: {[r.ok for r in results]}, write: {write.ok}; {elapsed * 1000:.0f} ms in all")
    print(f"  UTF-8 sequences on disk afterwards: {'YES (mixed encodings)' if utf8 else 'none'}")
    for result in (*results, write):
        try:
            result.output.encode("utf-8")
            (result.diff or "").encode("utf-8")
        except UnicodeEncodeError:
            print("  a result holds a lone surrogate: the event log cannot write it")


def read_cap(kernel: Path) -> None:
    cap = cap_chars(int(WINDOW * 0.8) - USED)
    ctx = ToolContext(workspace=kernel, output_limit_chars=cap)
    result = ReadTool().run({"path": HEADER}, ctx)
    tokens = len(result.output) / 3.5
    print(f"\nread cap: {HEADER} in a {WINDOW:,}-token window, {USED:,} used")
    print(f"  result: {len(result.output):,} characters, ~{tokens:,.0f} tokens")
    print(f"  with what is used: ~{USED + tokens:,.0f} of {WINDOW:,} tokens")
    print(f"  last line: {result.output.splitlines()[-1][:100]}")


def closest_text(kernel: Path, runs: int) -> None:
    source = (kernel / LONG_FILE).read_text(errors="replace").split("\n")
    lines = (source * (20_000 // len(source) + 1))[:20_000]
    text = "\n".join(lines)
    misses = {
        "one line, a typo": lines[12_351][:-3] + "xyz",
        "10 lines, one changed": "\n".join([*lines[15_000:15_009], "garbage line"]),
        "40 lines, reindented": "\n".join("  " + line for line in lines[8_000:8_040]),
        "nothing close": "def frobnicate(self):\n    return 42\n",
    }
    print(f"\nclosest text: {LONG_FILE}, 20,000 lines ({len(text):,} characters)")
    met = True
    for name, old in misses.items():
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            try:
                apply_edit(text, old, "new", False, "lpfc_sli.c")
            except EditMiss as miss:
                found = str(miss).split("\n")[0]
            samples.append(time.perf_counter() - started)
        median = statistics.median(samples) * 1000
        met &= median <= CLOSEST_GOAL_MS
        print(f"  {name:<24}{median:>7.0f} ms  {found[:70]}")
    print(f"  goal {CLOSEST_GOAL_MS} ms each: {'met' if met else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", type=Path, required=True, help="an extracted kernel tree")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"caretz at {ROOT}")
    print("load average: " + " ".join(f"{load:.1f}" for load in os.getloadavg()))
    encodings(args.kernel)
    read_cap(args.kernel)
    closest_text(args.kernel, args.runs)


if __name__ == "__main__":
    main()
