"""OCR on scans of known text: character error rate and pages per second, and the PDF
renderers compared (`make bench-ocr`).

Scans are made from the format readers' PDF fixtures (formats/tests/fixtures): each page
rendered by Poppler at 300 and 150 DPI, and at 300 DPI turned 1.5 degrees with noise, as
JPEG images wrapped into PDFs without a text layer (bench/scan_pdf.py). bor's reader
(`cargo run -p bor-formats --example read -- --ocr`) reads each scan; its text is
compared with what the same reader takes from the original's text layer. The character
error rate is the edit distance between the two (whitespace collapsed, Markdown's heading
and table marks dropped) over the length of the text layer's.

Real scans (bench/scans, each with its source and licence in bench/scans/README.md) are
read the same way and compared with their transcriptions.

The renderers (Poppler's pdftoppm, MuPDF's mutool, the pure-Rust hayro when
BENCH_HAYRO names its binary, a build of bench/hayro-render) render every page at 300
DPI, greyscale, to PGM: wall time and peak memory of each run (/usr/bin/time), and the
character error rate of Tesseract reading what each rendered of a typeset PDF.

Needs: tesseract-ocr, poppler-utils, mupdf-tools, imagemagick, /usr/bin/time.
Prints Markdown tables for bench/RESULTS.md.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "formats", "tests", "fixtures")
REAL_SCANS = os.path.join(ROOT, "bench", "scans")
REAL = [
    ("huckleberry-finn-page-29.pdf", "Huckleberry Finn, 1885, page 29: an illustration, a drop capital, show-through"),
]
SOURCES = [
    ("tex-report.pdf", "report, a table"),
    ("tex-two-column.pdf", "two columns"),
    ("libreoffice.pdf", "lists, a table"),
    ("groff-spec.pdf", "a specification"),
]
VARIANTS = [
    ("300 DPI", 300, []),
    ("150 DPI", 150, []),
    ("300 DPI, turned 1.5°, noise", 300, ["-background", "white", "-rotate", "1.5", "-attenuate", "0.6", "+noise", "Gaussian"]),
]


def levenshtein(a, b):
    """Edit distance of two strings (Hyyrö's bit-parallel algorithm over Python ints)."""
    if not a:
        return len(b)
    m = len(a)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    peq = {}
    for i, c in enumerate(a):
        peq[c] = peq.get(c, 0) | (1 << i)
    pv, mv, score = full, 0, m
    for c in b:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & full)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = mh | (~(xv | ph) & full)
        mv = ph & xv
    return score


def normalised(text):
    """The words of a Markdown-shaped text: heading and table marks dropped, whitespace
    collapsed."""
    text = re.sub(r"^#+ ", "", text, flags=re.M)
    text = text.replace(" | ", " ")
    return " ".join(text.split())


def read(path, ocr):
    """bor's reading of `path`: (text, milliseconds, page sources)."""
    args = ["cargo", "run", "-q", "-p", "bor-formats", "--example", "read", "--"]
    if ocr:
        args.append("--ocr")
    out = subprocess.run(args + [path], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    head = lines[0]
    if "refused" in head:
        raise SystemExit(f"{path}: {head}")
    ms = float(re.search(r"([0-9.]+) ms$", head).group(1))
    sources = [line for line in lines[1:] if re.match(r"^page \d+: ", line)]
    body = "\n".join(line for line in lines[1:] if not re.match(r"^page \d+: ", line))
    return body, ms, sources


def make_scan(source, dpi, effects, folder):
    """A scanned PDF of `source`: each page rendered at `dpi`, changed by `effects`."""
    base = os.path.join(folder, "page")
    subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", source, base], check=True)
    pages = sorted(p for p in os.listdir(folder) if p.startswith("page") and p.endswith(".png"))
    jpegs = []
    for page in pages:
        jpeg = os.path.join(folder, page[:-4] + ".jpg")
        subprocess.run(["convert", os.path.join(folder, page), *effects, "-quality", "80", jpeg], check=True)
        os.remove(os.path.join(folder, page))
        jpegs.append(jpeg)
    scan = os.path.join(folder, "scan.pdf")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "scan_pdf.py"), scan, str(dpi), *jpegs], check=True)
    return scan, len(jpegs)


def timed(command):
    """(seconds, peak resident MiB) of running `command`."""
    started = time.monotonic()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], capture_output=True, text=True, check=True)
    seconds = time.monotonic() - started
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return seconds, peak_kib / 1024


def tesseract_text(folder):
    """Tesseract's reading of every PGM in `folder`, in page order."""
    texts = []
    for image in sorted(p for p in os.listdir(folder) if p.endswith(".pgm")):
        out = subprocess.run(
            ["tesseract", os.path.join(folder, image), "stdout", "-l", "eng", "--dpi", "300"],
            capture_output=True, text=True, check=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        ).stdout
        texts.append(out)
    return "\n".join(texts)


def renderers(hayro):
    """Each renderer's command: render PDF at 300 DPI, greyscale, to PGMs in a folder."""
    commands = {
        "Poppler pdftoppm 22.12": lambda pdf, out: ["pdftoppm", "-r", "300", "-gray", pdf, os.path.join(out, "p")],
        "MuPDF mutool draw 1.21": lambda pdf, out: ["mutool", "draw", "-q", "-r", "300", "-c", "gray", "-o", os.path.join(out, "p-%d.pgm"), pdf],
    }
    if hayro:
        commands["hayro 0.9 (pure Rust)"] = lambda pdf, out: [hayro, pdf, os.path.join(out, "p"), "300"]
    return commands


def main():
    subprocess.run(["cargo", "build", "-q", "-p", "bor-formats", "--example", "read"], cwd=ROOT, check=True)
    print("### Character error rate and speed (bor's reader: pdftoppm at 300 DPI, Tesseract 5.3, `eng`)\n")
    print("| scan | pages | CER | pages/s | mean confidence |")
    print("|---|---:|---:|---:|---:|")
    totals = {}
    for name, what in SOURCES:
        source = os.path.join(FIXTURES, name)
        reference = normalised(read(source, False)[0])
        for label, dpi, effects in VARIANTS:
            with tempfile.TemporaryDirectory() as folder:
                scan, pages = make_scan(source, dpi, effects, folder)
                text, ms, sources = read(scan, True)
            errors = levenshtein(reference, normalised(text))
            confidences = [int(c) for c in re.findall(r"confidence: (?:Some\()?(\d+)", "\n".join(sources))]
            total = totals.setdefault(label, [0, 0, 0, 0.0])
            total[0] += pages
            total[1] += errors
            total[2] += len(reference)
            total[3] += ms
            print(
                f"| {name} ({what}), {label} | {pages} | {100 * errors / len(reference):.1f} % | "
                f"{pages / (ms / 1000):.2f} | {sum(confidences) / max(len(confidences), 1):.0f} |"
            )
    for label, (pages, errors, chars, ms) in totals.items():
        print(f"| **all, {label}** | {pages} | **{100 * errors / chars:.1f} %** | {pages / (ms / 1000):.2f} | |")

    print("\n### Real scans (bench/scans: source and licence in its README)\n")
    print("| scan | pages | CER | pages/s | mean confidence |")
    print("|---|---:|---:|---:|---:|")
    for name, what in REAL:
        scan = os.path.join(REAL_SCANS, name)
        with open(scan[: -len(".pdf")] + ".txt", encoding="utf-8") as transcription:
            reference = normalised(transcription.read())
        text, ms, sources = read(scan, True)
        errors = levenshtein(reference, normalised(text))
        confidences = [int(c) for c in re.findall(r"confidence: (?:Some\()?(\d+)", "\n".join(sources))]
        print(
            f"| {name} ({what}) | {len(sources)} | {100 * errors / len(reference):.1f} % | "
            f"{len(sources) / (ms / 1000):.2f} | {sum(confidences) / max(len(confidences), 1):.0f} |"
        )

    print("\n### PDF renderers, 300 DPI greyscale to PGM\n")
    print("| renderer | input | pages | time | pages/s | peak memory | Tesseract's CER on its rendering |")
    print("|---|---|---:|---:|---:|---:|---:|")
    hayro = os.environ.get("BENCH_HAYRO")
    with tempfile.TemporaryDirectory() as folder:
        scan, scan_pages = make_scan(os.path.join(FIXTURES, "tex-report.pdf"), 300, VARIANTS[2][2], folder)
        inputs = [
            ("a typeset PDF (tex-two-column.pdf)", os.path.join(FIXTURES, "tex-two-column.pdf"), 3),
            ("a scan (tex-report.pdf at 300 DPI, turned, noise)", scan, scan_pages),
        ]
        typeset_reference = normalised(read(inputs[0][1], False)[0])
        for renderer, command in renderers(hayro).items():
            for label, pdf, pages in inputs:
                with tempfile.TemporaryDirectory() as out:
                    runs = [timed(command(pdf, out)) for _ in range(3)]
                    seconds = min(run[0] for run in runs)
                    peak = max(run[1] for run in runs)
                    cer = ""
                    if pdf == inputs[0][1]:
                        errors = levenshtein(typeset_reference, normalised(tesseract_text(out)))
                        cer = f"{100 * errors / len(typeset_reference):.1f} %"
                print(f"| {renderer} | {label} | {pages} | {seconds:.2f} s | {pages / seconds:.1f} | {peak:.0f} MiB | {cer} |")


if __name__ == "__main__":
    main()
