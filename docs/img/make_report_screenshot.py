"""Render an HTML report of `gradkit trace report` to a PNG, without a browser.

WeasyPrint (an HTML/CSS engine, not a browser) lays the page out as one tall PDF page and
pdfium rasterizes it; the report uses no script, so this is what a browser shows, up to fonts.
Not run by the test suite; needs ``pip install weasyprint pypdfium2`` (and the system's Pango).

    gradkit profile --with-modules --profile-memory -o traces/cnn.json \
        docs/examples/cnn_digits.py --epochs 1
    gradkit trace report traces/cnn.json -o traces/cnn.html
    python docs/img/make_report_screenshot.py traces/cnn.html docs/img/trace_report.png
"""
import sys

import pypdfium2
import weasyprint

WIDTH_PX, HEIGHT_PX = 1600, 4000  # one page, taller than the report; cropped below


def main(html: str, png: str) -> None:
    page = weasyprint.CSS(string=f"@page {{ size: {WIDTH_PX}px {HEIGHT_PX}px; margin: 0 }}")
    pdf = pypdfium2.PdfDocument(weasyprint.HTML(html).write_pdf(stylesheets=[page]))
    image = pdf[0].render(scale=1.0).to_pil().convert("RGB")
    pixels = image.convert("L").load()
    width, height = image.size
    last = max(y for y in range(0, height, 2) if any(pixels[x, y] < 250
                                                    for x in range(0, width, 2)))
    image.crop((0, 0, width, min(height, last + 20))).save(png, optimize=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
