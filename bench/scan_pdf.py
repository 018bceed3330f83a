"""Wraps JPEG images into a PDF of one image per page, as a scanner writes one.

    python3 bench/scan_pdf.py OUT.pdf DPI PAGE1.jpg [PAGE2.jpg | "text:LINE|LINE…" ...]

Each JPEG page is the image at DPI, without a text layer (the JPEG data is embedded as
is, DCTDecode); a `text:` page is typed, its lines in Helvetica on an A5 page. Used by
bench/ocr.sh to make scans of known text, and by scripts/format-fixtures.sh for the
scanned and mixed PDF fixtures.
"""

import struct
import sys


def jpeg_size(data):
    """(width, height, components) from a JPEG's start-of-frame marker."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise ValueError("not a JPEG marker")
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height, data[at + 9]
        at += 2 + length
    raise ValueError("no start-of-frame marker")


def main():
    out, dpi, pages = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    objects = []  # bodies, numbered from 1

    def add(body):
        objects.append(body)
        return len(objects)

    catalog = add(b"")
    tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for path in pages:
        if path.startswith("text:"):
            lines = path[len("text:") :].split("|")
            escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in lines]
            draw = ("BT /F1 11 Tf 40 550 Td 15 TL\n" + "".join(f"({line}) Tj T*\n" for line in escaped) + "ET").encode("latin-1")
            content = add(b"<< /Length %d >>\nstream\n" % len(draw) + draw + b"\nendstream")
            kids.append(
                add(
                    b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 420 595] "
                    b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                    % (tree, font, content)
                )
            )
            continue
        data = open(path, "rb").read()
        width, height, components = jpeg_size(data)
        space = b"/DeviceGray" if components == 1 else b"/DeviceRGB"
        image = add(
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s "
            b"/BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n"
            % (width, height, space, len(data))
            + data
            + b"\nendstream"
        )
        w_pt, h_pt = width * 72 / dpi, height * 72 / dpi
        draw = b"q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q" % (w_pt, h_pt)
        content = add(b"<< /Length %d >>\nstream\n" % len(draw) + draw + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.2f %.2f] "
                b"/Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>"
                % (tree, w_pt, h_pt, image, content)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    objects[tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % kid for kid in kids),
        len(kids),
    )
    body = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        body += b"%010d 00000 n \n" % offset
    body += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        xref,
    )
    open(out, "wb").write(body)


if __name__ == "__main__":
    main()
