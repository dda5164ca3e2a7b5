#!/usr/bin/env bash
# Install the Debian packages the course needs, only those missing.
#   chromium        - headless browser for the reader-facing tests (driven by Playwright)
#   bubblewrap      - sandbox that runs student code during grading
#   postgresql      - throwaway PostgreSQL servers for the grading scale tests (tests/batch/, tests/service/)
#   fonts-noto-cjk  - Chinese glyphs for the browser that the reader-facing tests drive (and the PDF edition)
#   poppler-utils   - pdfinfo/pdffonts/pdftotext/pdftoppm: page numbers of the PDF edition's contents, PDF tests
#   nginx-light     - `nginx -t` validates deploy/nginx/course.conf in the tests (the service is not started:
#                     this machine's policy-rc.d forbids it; elsewhere it is stopped right after installing)
#   shellcheck      - checks the run: scripts of .github/workflows/*.yml for actionlint
#   nodejs, npm     - npm installs axe-core (tests/a11y/package.json) for the accessibility audit and
#                     MathJax (book/_ext/mathjax_node/package.json), which typesets the book's formulas at build time
set -euo pipefail
packages=(chromium fonts-noto-cjk bubblewrap postgresql poppler-utils nginx-light shellcheck)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come with another build of Node.js than Debian's: only the commands matter.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# Only the nginx binary is needed (config tests); never leave a web server running on port 80.
if [[ " ${missing[*]} " == *" nginx-light "* ]] && [ ! -x /usr/sbin/policy-rc.d ]; then
  $SUDO service nginx stop >/dev/null 2>&1 || true
fi
