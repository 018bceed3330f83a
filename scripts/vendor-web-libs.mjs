// Copies the browser builds of the page's libraries from node_modules into
// static/vendor (committed, so running bor needs no npm). Run after changing their
// versions in package.json: `npm install && npm run vendor` (or `make vendor-web`).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vendor = join(root, "static", "vendor");

/** Per package: the files to copy, as [path in the package, name in static/vendor]. */
const LIBRARIES = {
  marked: [
    ["lib/marked.umd.js", "marked.umd.js"],
    ["LICENSE", "marked.LICENSE.txt"],
  ],
  dompurify: [
    ["dist/purify.min.js", "purify.min.js"],
    ["LICENSE", "dompurify.LICENSE.txt"],
  ],
  uplot: [
    ["dist/uPlot.iife.min.js", "uPlot.iife.min.js"],
    ["dist/uPlot.min.css", "uPlot.min.css"],
    ["LICENSE", "uplot.LICENSE.txt"],
  ],
};

mkdirSync(vendor, { recursive: true });
const versions = [];
for (const [name, files] of Object.entries(LIBRARIES)) {
  const packageDir = join(root, "node_modules", name);
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  for (const [from, to] of files) copyFileSync(join(packageDir, from), join(vendor, to));
  versions.push(`${name} ${version}`);
}
writeFileSync(
  join(vendor, "VERSIONS.txt"),
  `Copied from npm by scripts/vendor-web-libs.mjs; do not edit.\n${versions.join("\n")}\n`,
);
console.log(`vendored into static/vendor: ${versions.join(", ")}`);
