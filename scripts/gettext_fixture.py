#!/usr/bin/python3
"""Writes the gettext-de test fixture under tests/golden/gettext/ and its expected figures.

Two small catalogs hold every case the pair rules of gettext-de name (docs/usage.md):
  alpha.mo  compiled by GNU msgfmt from the .po text below (little-endian, with a hash table)
  beta.mo   written here byte by byte, big-endian, no hash table
and gettext_fixture.json records what an independent reading of them must give: the pairs kept at
max_len 24, the train/validation split at val_fraction 0.3, and the corpus hash (FNV-1a 64 over the
sorted pairs: source, 0x1f, target, 0x1e). tests/test_seq2seq_data.cpp reads all three.

Run from the repository root: /usr/bin/python3 scripts/gettext_fixture.py (needs msgfmt, Debian
package gettext).
"""
import json
import os
import struct
import subprocess
import tempfile

OUT = "tests/golden/gettext"
MAX_LEN = 24
VAL_FRACTION = 0.3

ALPHA_PO = r'''
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"

msgid "Open"
msgstr "Öffnen"

msgid "Close"
msgstr "Schließen"

msgid "File"
msgstr "Datei"

msgid "Save as"
msgstr "Speichern unter"

msgid "Print"
msgstr "Drucken"

msgid "Quit"
msgstr "Beenden"

msgid "Help"
msgstr "Hilfe"

msgid "Edit"
msgstr "Bearbeiten"

msgid "View"
msgstr "Ansicht"

msgid "Window"
msgstr "Fenster"

msgid "Undo"
msgstr "Rückgängig"

msgid "Redo"
msgstr "Wiederholen"

msgid "Copy"
msgstr "Kopieren"

msgid "Paste"
msgstr "Einfügen"

msgid "Delete"
msgstr "Löschen"

msgid "Search"
msgstr "Suchen"

msgid "Replace"
msgstr "Ersetzen"

msgid "Settings"
msgstr "Einstellungen"

msgid "%d files"
msgstr "%d Dateien"

msgid "line one\nline two"
msgstr "Zeile eins\nZeile zwei"

msgctxt "menu"
msgid "Format"
msgstr "Format-Menü"

msgid "one file"
msgid_plural "many files"
msgstr[0] "eine Datei"
msgstr[1] "viele Dateien"

msgid "Name"
msgstr "Name"

msgid "Untranslated"
msgstr ""

msgid "A message that is far too long for the limit"
msgstr "Kurz"

msgid "Short"
msgstr "Eine Übersetzung, die länger als das Limit ist"

msgid "Tab\there"
msgstr "Tab\thier"
'''

# beta.mo: entries in this order; "Open" repeats one of alpha's msgids (alpha is read first, so
# alpha's translation wins), "Zoom" repeats within beta (its first entry wins).
BETA = [
    (b"", b"Content-Type: text/plain; charset=UTF-8\n"),
    (b"Open", b"Aufmachen"),
    (b"Zoom", b"Vergr\xc3\xb6\xc3\x9fern"),
    (b"Zoom", b"Zoomen"),
    (b"Back", b"Zur\xc3\xbcck"),
    (b"Forward", b"Vorw\xc3\xa4rts"),
    (b"Home", b"Startseite"),
    (b"Stop", b"Anhalten"),
    (b"Reload", b"Neu laden"),
    (b"Bookmarks", b"Lesezeichen"),
    (b"History", b"Chronik"),
    (b"Downloads", b"Downloads"),  # identical: skipped
    (b"Tools", b"Extras"),
    (b"Del\x7f", b"Entf"),  # DEL is a control byte: skipped
    (b"Yes", b"Ja"),
    (b"No", b"Nein"),
    (b"Cancel", b"Abbrechen"),
    (b"OK", b"OK"),  # identical: skipped
    (b"Apply", b"Anwenden"),
    (b"Size: 100%", b"Gr\xc3\xb6\xc3\x9fe: 100%"),  # '%': skipped
]


def write_mo_big_endian(path, entries):
    n = len(entries)
    o_table, t_table = 28, 28 + 8 * n
    data_at = 28 + 16 * n
    blob, o_entries, t_entries = b"", [], []
    for src, _ in entries:
        o_entries.append((len(src), data_at + len(blob)))
        blob += src + b"\0"
    for _, tgt in entries:
        t_entries.append((len(tgt), data_at + len(blob)))
        blob += tgt + b"\0"
    head = struct.pack(">7I", 0x950412de, 0, n, o_table, t_table, 0, 0)
    body = b"".join(struct.pack(">II", *e) for e in o_entries + t_entries)
    with open(path, "wb") as f:
        f.write(head + body + blob)


def read_mo(path):
    """The (msgid, msgstr) entries of a GNU .mo catalog (its magic gives the byte order); written
    independently of normtool's reader. scripts/torch_twin.py reads gettext-de with it too."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 20 or struct.unpack("<I", raw[:4])[0] not in (0x950412de, 0xde120495):
        raise OSError(f"{path}: not a GNU .mo catalog")
    order = "<" if struct.unpack("<I", raw[:4])[0] == 0x950412de else ">"
    n, oo, ot = struct.unpack(order + "III", raw[8:20])
    out = []
    for i in range(n):
        lo, po = struct.unpack_from(order + "II", raw, oo + 8 * i)
        lt, pt = struct.unpack_from(order + "II", raw, ot + 8 * i)
        out.append((raw[po:po + lo], raw[pt:pt + lt]))
    return out


def keep(src, tgt):
    clean = lambda b: all(ch >= 0x20 and ch != 0x7f and ch != ord("%") for ch in b)
    return (src and tgt and src != tgt and len(src) <= MAX_LEN and len(tgt) <= MAX_LEN
            and clean(src) and clean(tgt))


def fnv1a64(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        po = os.path.join(tmp, "alpha.po")
        open(po, "w", encoding="utf-8").write(ALPHA_PO)
        subprocess.run(["msgfmt", "-o", os.path.join(OUT, "alpha.mo"), po], check=True)
    write_mo_big_endian(os.path.join(OUT, "beta.mo"), BETA)

    pairs = {}
    entries = 0
    for name in sorted(["alpha.mo", "beta.mo"]):
        for src, tgt in read_mo(os.path.join(OUT, name)):
            entries += 1
            if keep(src, tgt):
                pairs.setdefault(src, tgt)
    pairs = sorted(pairs.items())
    h = 0xcbf29ce484222325
    for s, t in pairs:
        h = fnv1a64(b"\x1e", fnv1a64(t, fnv1a64(b"\x1f", fnv1a64(s, h))))
    val = [s.decode() for s, _ in pairs if fnv1a64(s) % 1000 < 1000 * VAL_FRACTION]
    out = {
        "max_len": MAX_LEN, "val_fraction": VAL_FRACTION, "entries": entries, "pairs": len(pairs),
        "train_pairs": len(pairs) - len(val), "val_pairs": len(val), "corpus_fnv1a64": format(h, "016x"),
        "sources": [s.decode() for s, _ in pairs], "targets": [t.decode() for _, t in pairs], "validation": val,
    }
    with open("tests/golden/gettext_fixture.json", "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{entries} entries -> {len(pairs)} pairs ({len(pairs) - len(val)} train, {len(val)} val), hash {h:016x}")


if __name__ == "__main__":
    main()
