#!/usr/bin/env bash
# Makes the real-tool fixtures of the format readers (formats/tests/fixtures/) from the
# sources in formats/tests/fixtures/src/: PDFs by pdfTeX, LibreOffice and groff, .docx files by
# LibreOffice and python-docx, HTML pages by Sphinx, MkDocs and rustdoc; and the real-model
# suite's folder of scans (tests/real_model/fixtures/scans/).
#
#   scripts/format-fixtures.sh           make them (installs the tools when missing)
#
# Debian packages: texlive-latex-base, texlive-latex-recommended, texlive-latex-extra,
# libreoffice-writer-nogui, qpdf, groff, poppler-utils, imagemagick; PyPI (in target/fixture-tools/venv): sphinx, mkdocs,
# python-docx. The outputs are committed; rerun this after changing a source.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/formats/tests/fixtures/src"
out="$root/formats/tests/fixtures"
work="$root/target/fixture-tools"
mkdir -p "$work"

need_apt=()
command -v pdflatex >/dev/null || need_apt+=(texlive-latex-base texlive-latex-recommended texlive-latex-extra)
command -v soffice >/dev/null || need_apt+=(libreoffice-writer-nogui)
command -v qpdf >/dev/null || need_apt+=(qpdf)
command -v gropdf >/dev/null || need_apt+=(groff)
command -v pdftoppm >/dev/null || need_apt+=(poppler-utils)
[[ -x /usr/bin/convert ]] || need_apt+=(imagemagick)
if ((${#need_apt[@]})); then
    . "$root/scripts/debian.sh"
    apt_install --recommends "${need_apt[@]}"
fi
venv="$work/venv"
if [[ ! -x "$venv/bin/sphinx-build" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q sphinx==9.0.4 mkdocs==1.6.1 python-docx==1.2.0
fi

# pdfTeX: twice, so references settle.
for name in tex-two-column tex-report tex-no-text; do
    tex="$work/tex"
    mkdir -p "$tex"
    (cd "$tex" && for _ in 1 2; do
        pdflatex -interaction=nonstopmode -halt-on-error "$src/$name.tex" >/dev/null
    done)
    cp "$tex/$name.pdf" "$out/$name.pdf"
done

# groff (ms macros, gropdf): a specification with no Title in its metadata.
groff -ms -Tpdf "$src/groff-spec.ms" >"$out/groff-spec.pdf"

# LibreOffice: the same flat ODF document as .docx and as PDF.
office="$work/office"
rm -rf "$office" && mkdir -p "$office"
soffice --headless -env:UserInstallation="file://$office/profile" \
    --convert-to 'docx:MS Word 2007 XML' --outdir "$office" "$src/libreoffice.fodt" >/dev/null
soffice --headless -env:UserInstallation="file://$office/profile" \
    --convert-to pdf --outdir "$office" "$src/libreoffice.fodt" >/dev/null
cp "$office/libreoffice.docx" "$out/libreoffice.docx"
cp "$office/libreoffice.pdf" "$out/libreoffice.pdf"

# qpdf: the LibreOffice PDF locked with a password, and with restrictions only (an
# empty password opens it, as such files are meant to be read).
qpdf --encrypt secret owner 256 -- "$out/libreoffice.pdf" "$out/encrypted.pdf"
qpdf --encrypt '' owner 256 --print=none --extract=n -- "$out/libreoffice.pdf" "$out/restricted.pdf"

# Poppler and ImageMagick: the report's second page as a WebP photo of it, for OCR (the
# other image kinds are rendered by the tests themselves).
pdftoppm -r 150 -gray -png -f 2 -l 2 -singlefile "$out/tex-report.pdf" "$work/report-page-2"
/usr/bin/convert "$work/report-page-2.png" -quality 80 "$out/tex-report-page-2.webp"
# The report scanned at 150 DPI (pages as JPEG images, no text layer), and a mixed PDF: a
# typed cover letter, then the report's second page scanned.
pdftoppm -r 150 -gray -jpeg -jpegopt quality=80 "$out/tex-report.pdf" "$work/report-scan"
python3 "$root/bench/scan_pdf.py" "$out/scanned-report.pdf" 150 "$work"/report-scan-*.jpg
python3 "$root/bench/scan_pdf.py" "$out/mixed-report.pdf" 150 \
    "text:Cover letter|The archive room key is kept by the night porter, Mr Alder.|He is at the desk from eight in the evening to six in the morning.|Ask him for the key and sign the book beside the door.|The scanned findings of the report follow on the next page." \
    "$work/report-scan-2.jpg"

# The real-model suite's folder of scans (tests/real_model/fixtures/scans/), whose facts
# no model knows: typed pages (bench/scan_pdf.py) rendered by Poppler at 150 DPI,
# greyscale, then a scanned PDF of two such pages, a mixed PDF (a typed page, then a
# scanned one) and a photo of a page (PNG).
scans="$root/tests/real_model/fixtures/scans"
mkdir -p "$scans"
python3 "$root/bench/scan_pdf.py" "$work/harbour-ledger.pdf" 150 \
    "text:Harbour office of Vell Island|Ledger of moorings, summer season||The harbour holds forty-two moorings on the east quay.|Boats over twelve metres moor on the west quay only.|Mooring fees are paid at the office before sailing.|The office opens at seven and closes at noon." \
    "text:Harbour office of Vell Island, second page||The harbour master of Vell Island is Orsola Brantwick.|She keeps this ledger and gives every boat its mooring.|Her deputy, Fenn Arkwright, keeps the keys of the crane."
python3 "$root/bench/scan_pdf.py" "$work/beekeepers-minutes.pdf" 150 \
    "text:Treasurer's report||The treasurer of the Fennick Valley Beekeepers' Society,|Ambrose Quillfeather, counted 317 hives this spring,|twenty-five more than last year.|The honey fair is held on the second Saturday of June."
python3 "$root/bench/scan_pdf.py" "$work/ferry-notice.pdf" 150 \
    "text:Notice to passengers of the Marrowgate ferry||From the first of March the Marrowgate ferry leaves|from pier 9 instead of pier 4.|The crossing to Tolley Sands takes fifty minutes.|Tickets are sold on board by the skipper, Idris Callowen."
for page in 1 2; do
    pdftoppm -r 150 -gray -jpeg -jpegopt quality=50 -f "$page" -l "$page" -singlefile \
        "$work/harbour-ledger.pdf" "$work/harbour-ledger-$page"
done
python3 "$root/bench/scan_pdf.py" "$scans/scanned-harbour-ledger.pdf" 150 \
    "$work/harbour-ledger-1.jpg" "$work/harbour-ledger-2.jpg"
pdftoppm -r 150 -gray -jpeg -jpegopt quality=50 -singlefile \
    "$work/beekeepers-minutes.pdf" "$work/beekeepers-minutes-2"
python3 "$root/bench/scan_pdf.py" "$scans/mixed-beekeepers-minutes.pdf" 150 \
    "text:Fennick Valley Beekeepers' Society|Minutes of the spring meeting||The meeting was held in the village hall and opened at eight.|Members spoke of the new apiary beside the old mill, of the|swarm season and of the wax press lent to the school.|The minutes of the last meeting were read and approved.|The treasurer's report, scanned, is on the next page." \
    "$work/beekeepers-minutes-2.jpg"
pdftoppm -r 150 -gray -png -singlefile "$work/ferry-notice.pdf" "$scans/photo-ferry-notice"

# python-docx, and a copy whose heading styles have localised ids.
"$venv/bin/python" "$src/python_docx_fixture.py" "$out/python-docx.docx"

# Sphinx (alabaster theme: sidebar navigation, search form, scripts, footer).
rm -rf "$work/sphinx"
"$venv/bin/sphinx-build" -q -b html "$src/sphinx" "$work/sphinx"
cp "$work/sphinx/lending.html" "$out/sphinx.html"

# MkDocs (its default theme: a navigation bar, a search dialog, scripts).
rm -rf "$work/mkdocs"
"$venv/bin/mkdocs" build -q -f "$src/mkdocs/mkdocs.yml" -d "$work/mkdocs"
cp "$work/mkdocs/cleaning/index.html" "$out/mkdocs.html"

# rustdoc (a struct page: sidebar, search, settings, scripts).
rm -rf "$work/rustdoc"
rustdoc --edition 2024 --crate-name shelf_marks -o "$work/rustdoc" "$src/rustdoc_fixture.rs"
cp "$work/rustdoc/shelf_marks/struct.ShelfMark.html" "$out/rustdoc.html"

ls -l "$out" | grep -v '^d'
