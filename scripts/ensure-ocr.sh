#!/usr/bin/env bash
# Makes sure what OCR needs is installed (docs/FORMATS.md, "Scanned pages and images"):
# Tesseract with the data of each language in BOR_OCR_LANGUAGES (default eng), Poppler's
# pdftoppm, and util-linux's prlimit (with BOR_OCR=vision, pdftoppm and prlimit only).
# Installs the missing Debian packages (apt-get): tesseract-ocr, tesseract-ocr-LANG,
# poppler-utils. Nothing to do with BOR_OCR=off. Idempotent; prints nothing on success
# and one clear message on failure.
set -euo pipefail

fail() {
    echo "ensure-ocr: $*" >&2
    exit 1
}

[ "${BOR_OCR:-tesseract}" = off ] && exit 0

. "$(dirname "$0")/debian.sh"

missing=()
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
command -v prlimit >/dev/null 2>&1 || missing+=(util-linux)
if [ "${BOR_OCR:-tesseract}" != vision ]; then
    command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
    installed_languages="$(tesseract --list-langs 2>/dev/null | tail -n +2 || true)"
    IFS=+ read -r -a languages <<<"${BOR_OCR_LANGUAGES:-eng}"
    for language in "${languages[@]}"; do
        grep -qx "$language" <<<"$installed_languages" || missing+=("tesseract-ocr-${language//_/-}")
    done
fi
[ ${#missing[@]} -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 ||
    fail "OCR needs ${missing[*]} and this is not a Debian-like system (no apt-get); install Tesseract and Poppler's pdftoppm, or set BOR_OCR=off"
apt_install "${missing[@]}" || fail "apt-get install ${missing[*]} failed"
