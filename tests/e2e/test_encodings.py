"""Files that are not UTF-8, edited through the real CLI and the scripted model server: a
Latin-1 keymap and a UTF-16 resource file among a tree's other files, changed both ways
(accented text in, accented text out) and rewritten, each kept in its own encoding, line
endings and mark; a character the file cannot hold is a failed result that names the
encoding, and the run goes on."""

from __future__ import annotations

import codecs
import json

from tests.e2e.test_file_tools import told
from tests.modelserver import calls, text, tool

KEYMAP_LINES = [
    f"compose '{a}' '{b}' to '{c}'  # {word}"
    for a, b, c, word in [
        ("`", "a", "à", "voilà"),
        ("'", "e", "é", "café"),
        ("^", "o", "ô", "hôtel"),
        ('"', "u", "ü", "Grüße"),
        (",", "c", "ç", "façade"),
        ("~", "n", "ñ", "señor"),
    ]
] * 40


def a_tree(workspace):
    """A project of a few hundred files, two of them not UTF-8."""
    for n in range(300):
        folder = workspace / "src" / f"pkg{n % 12}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE_{n} = {n}\n")
    keymap = workspace / "drivers" / "tty" / "vt" / "defkeymap.map"
    keymap.parent.mkdir(parents=True)
    keymap.write_bytes(("\n".join(KEYMAP_LINES) + "\n").encode("latin-1"))
    resources = workspace / "win" / "strings.rc"
    resources.parent.mkdir()
    body = "".join(f'IDS_{n} "Eintrag {n}"\r\n' for n in range(150))
    resources.write_bytes(codecs.BOM_UTF16_LE + body.encode("utf-16-le"))
    return keymap, resources, body


def test_latin1_and_utf16_files_are_edited_both_ways_in_their_own_encodings(
    caretz, server, workspace
):
    keymap, resources, body = a_tree(workspace)
    km, rc = "drivers/tty/vt/defkeymap.map", "win/strings.rc"
    server.add(
        calls(("read", {"path": km}), ("read", {"path": rc})),
        calls(
            (
                "edit",
                {
                    "path": km,
                    "old_string": "to 'à'  # voilà",
                    "new_string": "to 'a'  # voila",
                    "replace_all": True,
                },
            ),
            (
                "edit",
                {
                    "path": km,
                    "old_string": "'~' 'n' to 'ñ'",
                    "new_string": "'~' 'N' to 'Ñ'",
                    "replace_all": True,
                },
            ),
            (
                "edit",
                {"path": rc, "old_string": 'IDS_1 "Eintrag 1"\n', "new_string": 'IDS_1 "Größe"\n'},
            ),
            (
                "edit",
                {
                    "path": km,
                    "old_string": "# café",
                    "new_string": "# café ☕",
                    "replace_all": True,
                },
            ),
        ),
        tool("grep", pattern="Größe|'N' to", output_mode="count"),
        tool("write", path=rc, content='IDS_0 "Grüße"\nIDS_1 "Maß"\n'),
        text("done"),
    )

    run = caretz("-p", "fix the strings", "--loop-guard", "off")

    assert run.code == 0, run.stderr
    data = keymap.read_bytes()
    expected = "\n".join(KEYMAP_LINES).replace("to 'à'  # voilà", "to 'a'  # voila")
    expected = expected.replace("'~' 'n' to 'ñ'", "'~' 'N' to 'Ñ'") + "\n"
    assert data == expected.encode("latin-1")  # every byte Latin-1, none UTF-8
    assert resources.read_bytes() == (
        codecs.BOM_UTF16_LE + 'IDS_0 "Grüße"\r\nIDS_1 "Maß"\r\n'.encode("utf-16-le")
    )
    read_km, read_rc, *_ = told(server)
    assert "to 'é'  # café" in read_km and "(detected) text; edit and write keep" in read_km
    assert '     2\tIDS_1 "Eintrag 1"' in read_rc and "with a byte-order mark" in read_rc
    results = [e for e in caretz.events(run.session_id) if e["type"] == "Tool.Result"]
    outcomes = [(r["name"], r["ok"]) for r in results]
    assert outcomes == [
        ("read", True),
        ("read", True),
        ("edit", True),
        ("edit", True),
        ("edit", True),
        ("edit", False),
        ("grep", True),
        ("write", True),
    ]
    refused = results[5]["output"]
    assert "is CP1252 (detected) text, which cannot hold '☕' (U+2615)" in refused
    assert f"{km}:40" in results[6]["output"] and f"{rc}:1" in results[6]["output"]
    diff = next(e for e in caretz.events(run.session_id) if e.get("diff") and "Größe" in e["diff"])
    assert '+IDS_1 "Größe"' in diff["diff"]
    json.dumps(server.requests[-1].body)
