#!/usr/bin/env python3
"""The HTML report of `dsml-render audit` in a real browser (stdlib only).

  audit_browser_test.py --binary PATH [--chromium PATH]

Headless Chromium renders the page written by `audit --html`: its
screenshot must not be blank and must show both highlight colours of the
side-by-side view, and the page's text, as the browser parsed it, must hold
the summary counts of the --json report.  Exits 77 (ctest: skipped), saying
so, when Chromium is not installed.
"""
import argparse
import html.parser
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--hide-scrollbars"]
WIDTH, HEIGHT = 900, 700
MARK_A = (0xff, 0xb3, 0xb3)  # mark.a, the first side's differing bytes
MARK_B = (0xa6, 0xe9, 0xa6)  # mark.b, the second side's


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    width, height, depth, color, _, _, interlace = ihdr
    assert depth == 8 and color in (2, 6) and interlace == 0, ihdr
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xff
        elif f == 2:
            line = bytearray((a + b) & 0xff for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xff
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


class PageText(html.parser.HTMLParser):
    """The text of the elements with an id, as the browser serialized them."""

    def __init__(self):
        super().__init__()
        self.by_id, self.stack, self.text = {}, [], []

    def handle_starttag(self, tag, attrs):
        self.stack.append(dict(attrs).get("id"))

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)
        for i in self.stack:
            if i is not None:
                self.by_id[i] = self.by_id.get(i, "") + data


def chromium(exe, tmp, *action):
    profile = tempfile.mkdtemp(dir=tmp)
    p = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *action],
                       capture_output=True, timeout=120, cwd=tmp)
    if p.returncode != 0:
        sys.exit(f"chromium failed ({p.returncode}): {p.stderr.decode(errors='replace')[-2000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--chromium", default=os.environ.get("DSML_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    if not os.access(args.chromium, os.X_OK):
        print(f"SKIP: no Chromium at {args.chromium} (Debian's 'chromium' package)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        # a corpus whose one group differs at the effort line, and that
        # shows it at the top of the page
        user = {"role": "user", "content": "What is 2+2?"}
        lines = [{"messages": [user], "thinking_mode": "thinking"},
                 {"id": "r2", "model": "m", "messages": [user, {"role": "assistant",
                  "content": "4"}, user], "chat_template_kwargs": {"thinking": True}},
                 {"messages": [user]}]
        corpus = os.path.join(tmp, "corpus.jsonl")
        with open(corpus, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(d) + "\n" for d in lines)
        page = os.path.join(tmp, "report.html")
        p = subprocess.run([args.binary, "audit", "--against", "prerelease", "--json",
                            "--html", page, corpus], capture_output=True, timeout=120)
        assert p.returncode == 1, (p.returncode, p.stderr)
        report = json.loads(p.stdout)
        url = "file://" + page

        shot = os.path.join(tmp, "shot.png")
        chromium(args.chromium, tmp, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                 url)
        width, height, bpp, rows = png_pixels(shot)
        assert (width, height) == (WIDTH, HEIGHT), (width, height)
        colours, painted = set(), 0
        for row in rows:
            for x in range(0, len(row), bpp):
                px = tuple(row[x:x + 3])
                colours.add(px)
                painted += px != (255, 255, 255)
        share = painted / (width * height)
        print(f"screenshot {width}x{height}: {len(colours)} colours, {share:.1%} not white")
        assert len(colours) > 16 and share > 0.02, "the screenshot is blank"
        assert MARK_A in colours and MARK_B in colours, "no highlighted bytes in the screenshot"

        dom = chromium(args.chromium, tmp, "--dump-dom", url).decode("utf-8")
        text = PageText()
        text.feed(dom)
        want = {"count-items": report["items"], "count-identical": report["identical"],
                "count-differ": report["differ"], "count-refused-a": report["refused_a"],
                "count-refused-b": report["refused_b"],
                "count-refused-both": report["refused_both"]}
        got = {k: text.by_id.get(k, "").strip() for k in want}
        assert got == {k: str(v) for k, v in want.items()}, (got, want)
        assert (report["items"], report["differ"]) == (3, 2), report
        whole = "".join(text.text)
        for g in report["groups"]:
            assert g["kind"] in whole and g["example"]["id"] in whole, g["kind"]
        print("page text holds the summary counts:", got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
