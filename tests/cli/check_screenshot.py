#!/usr/bin/env python3
"""A screenshot of the report is not blank: Chromium drew the charts. At least 3 % of the pixels
are not white, and at least 6 of the charts' palette colours (docs/report.md) appear.
Usage: check_screenshot.py SHOT.png   (Debian's python3-pil)"""
import sys
from PIL import Image

PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
image = Image.open(sys.argv[1]).convert("RGB")
pixels = list(image.getdata())
inked = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
present = set(pixels)
colours = [c for c in PALETTE if tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) in present]
print(f"screenshot {image.size[0]}x{image.size[1]}: {inked:.1%} of the pixels inked, palette colours {len(colours)} of {len(PALETTE)}")
sys.exit(0 if inked >= 0.03 and len(colours) >= 6 else 1)
