#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""render.py: turns a `tmux capture-pane -p -e` capture (text with SGR colour codes)
into a PNG, cell by cell, with DejaVu Sans Mono. Usage: render.py CAPTURE.txt OUT.png COLS
Needs python3-pil (Debian package) and fonts-dejavu-core."""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf'
BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf'
BG, FG = (24, 26, 33), (214, 216, 222)
PALETTE = [(40, 42, 54), (230, 92, 92), (108, 200, 120), (230, 192, 92),
           (100, 150, 240), (200, 120, 220), (90, 200, 210), (220, 220, 220)]
SGR = re.compile(r'\x1b\[([0-9;:]*)m')


def cells(line):
    """Yields (char, fg, bg, bold, dim, reverse, underline) per character."""
    state = dict(fg=None, bg=None, bold=False, dim=False, rev=False, ul=False)
    pos = 0
    for m in SGR.finditer(line + '\x1b[m'):
        for ch in line[pos:m.start()]:
            yield ch, dict(state)
        pos = m.end()
        codes = [c for c in re.split('[;:]', m.group(1)) if c != ''] or ['0']
        i = 0
        while i < len(codes):
            c = int(codes[i])
            if c == 0:
                state.update(fg=None, bg=None, bold=False, dim=False, rev=False, ul=False)
            elif c == 1:
                state['bold'] = True
            elif c == 2:
                state['dim'] = True
            elif c == 4:
                state['ul'] = True
            elif c == 7:
                state['rev'] = True
            elif c in (22,):
                state['bold'] = state['dim'] = False
            elif c == 24:
                state['ul'] = False
            elif c == 27:
                state['rev'] = False
            elif 30 <= c <= 37:
                state['fg'] = PALETTE[c - 30]
            elif c == 39:
                state['fg'] = None
            elif 40 <= c <= 47:
                state['bg'] = PALETTE[c - 40]
            elif c == 49:
                state['bg'] = None
            elif 90 <= c <= 97:
                state['fg'] = PALETTE[c - 90]
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == '5':
                n = int(codes[i + 2])
                rgb = PALETTE[n % 8]
                state['fg' if c == 38 else 'bg'] = rgb
                i += 2
            i += 1


def main():
    src, out, cols = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lines = open(src, encoding='utf-8', errors='replace').read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    size = 15
    font, bold = ImageFont.truetype(FONT, size), ImageFont.truetype(BOLD, size)
    cw = int(font.getlength('M'))
    ch = size + 4
    img = Image.new('RGB', (cw * cols + 16, ch * len(lines) + 16), BG)
    d = ImageDraw.Draw(img)
    for row, line in enumerate(lines):
        x = 8
        y = 8 + row * ch
        for c, st in cells(line):
            fg, bg = st['fg'] or FG, st['bg']
            if st['rev']:
                fg, bg = (bg or BG), (st['fg'] or FG)
            if st['dim'] and not st['rev']:
                fg = tuple(int(v * 0.6) for v in fg)
            if bg is not None:
                d.rectangle([x, y, x + cw, y + ch], fill=bg)
            if c != ' ':
                d.text((x, y + 1), c, font=bold if st['bold'] else font, fill=fg)
            if st['ul']:
                d.line([x, y + ch - 2, x + cw, y + ch - 2], fill=fg)
            x += cw
    img.save(out)


if __name__ == '__main__':
    main()
