#!/usr/bin/env bash
# report_page_test.sh REDUCELAB: `reducelab report` on the SIMT backend, opened in headless
# chromium (Debian's package, see scripts/deps):
#   - bad --out and --bench are one line and exit 2, and write nothing;
#   - the page loads with no console message and no failed request;
#   - its DOM holds every section and the kernels asked for;
#   - the screenshot is a real picture (not one flat colour, with text-dark pixels).
# Skipped (exit 77) with the reason when no chromium is installed.
set -u
rl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Bad input first: nothing written.
"$rl" report --out "$tmp/no/such/dir" --kernels neighbored >"$tmp/err1" 2>&1 && fail "missing parent accepted"
grep -q -- "--out $tmp/no/such/dir: no folder" "$tmp/err1" || fail "missing parent: $(cat "$tmp/err1")"
echo '{"rows": 3}' >"$tmp/bad.json"
"$rl" report --out "$tmp/page" --bench "$tmp/bad.json" >"$tmp/err2" 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "bad bench JSON: exit $rc"
grep -q -- "--bench $tmp/bad.json: not a reducelab bench JSON" "$tmp/err2" || fail "bad bench: $(cat "$tmp/err2")"
[[ ! -e "$tmp/page" ]] || fail "a bad --bench left $tmp/page behind"

cat >"$tmp/bench.json" <<'JSON'
{"device": {"name": "Test GPU"}, "read_ceiling_gbs": 4000.0, "rows": [
 {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1024, "l2": "flushed", "gb_per_s": 0.8},
 {"impl": "reducelab", "dtype": "int32", "op": "sum", "n": 1048576, "l2": "flushed", "gb_per_s": 524.3},
 {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1024, "l2": "flushed", "gb_per_s": 0.7},
 {"impl": "cub", "dtype": "int32", "op": "sum", "n": 1048576, "l2": "flushed", "gb_per_s": 466.0}]}
JSON
"$rl" --backend simt report --out "$tmp/page" --kernels neighbored,bc-add,pmpp-simple --n 2^12 --repeats 1 \
  --bench "$tmp/bench.json" >"$tmp/out" 2>&1 || fail "report: $(cat "$tmp/out")"
[[ -s "$tmp/page/index.html" && -s "$tmp/page/run.json" ]] || fail "index.html or run.json missing"
grep -q '"predicted_gb_per_s": null' "$tmp/page/run.json" || fail "run.json: no null prediction on simt"
if grep -Eo '(src|href)="[a-z]*:?//[^"]*' "$tmp/page/index.html"; then fail "the page fetches something"; fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIP: no chromium here (scripts/deps installs Debian's chromium); the page was written but not opened"
  exit 77
fi
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars)
url="file://$tmp/page/index.html"
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" >"$tmp/dom.html" 2>"$tmp/log" \
  || fail "chromium --dump-dom failed: $(tail -5 "$tmp/log")"
# Console messages are logged as CONSOLE(...) lines; failed loads as net::ERR_.
if grep -E "CONSOLE|Uncaught|net::ERR_" "$tmp/log"; then fail "the page logged errors"; fi
for id in device progression littles-law kernels bench kernel-neighbored kernel-bc-add kernel-pmpp-simple; do
  grep -q "id=\"$id\"" "$tmp/dom.html" || fail "section $id missing from the DOM"
done
grep -q "4-way conflict" "$tmp/dom.html" || fail "bc-add's bank map missing"
timeout 120 "$browser" "${flags[@]}" --window-size=1280,2000 --screenshot="$tmp/page.png" "$url" >/dev/null 2>&1 \
  || fail "chromium --screenshot failed"
python3 - "$tmp/page.png" <<'PY' || exit 1
# Decodes the PNG with the standard library only and checks that it is a picture.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), f"unexpected PNG format {depth}/{ctype}"
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, dark, rows = bytearray(stride), set(), 0, 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0:
        for x in range(0, w, 2):
            px = tuple(line[x * bpp:x * bpp + 3]); colours.add(px)
            dark += sum(px) < 200
ok = len(colours) > 20 and dark > 500
print(f"screenshot {w}x{h}: {len(colours)} colours, {dark} dark samples")
sys.exit(0 if ok else 1)
PY
echo "report page: loads without console errors, all sections present, screenshot not blank"
