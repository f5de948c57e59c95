#!/usr/bin/env bash
# Regenerates the committed reference bundle (receipts/tests/reference-bundle/) exactly as
# receipts/tests/reference.rs describes it: both candidates packed by `scopebox pack` from the
# committed tree, a real two-platform `scopebox run` of the bundle's own 4-case matrix with one
# --candidate/--expect-sha256 pair per platform, signed with a fresh throw-away key whose public
# half replaces reference-key.pub.pem (the private half is deleted). Needs the Docker engine and
# linux/arm64 emulation (.ci/setup-emulation). Run it after any change to what goes into an
# image or a bundle, then review the diff.
set -euo pipefail
cd "$(dirname "$0")/../.."
reference=receipts/tests/reference-bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$reference/inputs/matrix.json" "$work/matrix.json"

cargo build --release --locked -p scopebox
scopebox=target/release/scopebox

"$scopebox" pack --out "$work/pack" --json >"$work/pack.json"
candidates=()
while IFS=$'\t' read -r file sha; do
  candidates+=(--candidate "$file" --expect-sha256 "$sha")
done < <(python3 - "$work/pack.json" <<'PY'
import json, sys
for archive in json.load(open(sys.argv[1]))["archives"]:
    print(archive["archive"] + "\t" + archive["sha256"])
PY
)

"$scopebox" run --matrix "$work/matrix.json" "${candidates[@]}" --out "$work/bundle"
"$scopebox" keygen --out "$work/key"
"$scopebox" sign "$work/bundle" --key "$work/key.pem"

rm -rf "$reference"
cp -r "$work/bundle" "$reference"
cp "$work/key.pub.pem" receipts/tests/reference-key.pub.pem
echo "regenerated $reference; review with git diff --stat"
