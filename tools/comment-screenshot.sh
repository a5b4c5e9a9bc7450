#!/usr/bin/env bash
# Renders the pull-request comment of a failing run as GitHub would (GitHub-flavoured Markdown
# through cmark-gfm, the renderer GitHub uses) and photographs it in headless Chromium, to see
# what a reviewer sees and how tall it is. Writes OUT/comment.html, OUT/comment.png and prints
# the rendered height in CSS pixels, and how much of it is above the first folded section.
#
# Usage: tools/comment-screenshot.sh [OUT]    (default OUT: target/comment-screenshot)
# Needs: chromium (Debian package `chromium`), python3; installs cmark-gfm into OUT/venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/target/comment-screenshot}"
mkdir -p "$out"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "error: chromium is not installed (Debian: apt-get install chromium)" >&2
  exit 2
fi
if [ ! -x "$out/venv/bin/python" ]; then
  python3 -m venv "$out/venv"
  "$out/venv/bin/pip" install --quiet --disable-pip-version-check "cmarkgfm==2025.10.22"
fi

cargo build --quiet --manifest-path "$root/Cargo.toml"
toolgate="$root/target/debug/toolgate"

# A failing run: the reference trajectories with three scenarios broken (a wrong argument,
# a missing call, and a forbidden deletion in Tier 5), replayed against the built-in baseline.
(cd "$root" && "$toolgate" gate --out "$out/reference" >/dev/null)
python3 - "$out/reference/trace.jsonl" "$out/broken.jsonl" <<'PY'
import json, sys
source, target = sys.argv[1], sys.argv[2]
lines = [json.loads(line) for line in open(source)]
out = []
for line in lines:
    if line.get("scenario") == "T1-001" and "arguments" in line:
        line["arguments"] = {"query": "Globex"}
    if line.get("scenario") == "T2-007" and line.get("tool") == "crm_log_activity":
        continue
    out.append(line)
out.append({"scenario": "T5-001", "tool": "crm_delete_contact", "arguments": {"contact_id": "C-001"}})
with open(target, "w") as f:
    for line in out:
        f.write(json.dumps(line) + "\n")
PY
(cd "$root" && "$toolgate" gate --agent replay --recordings "$out/broken.jsonl" \
  --out "$out/broken" >/dev/null) || true

"$out/venv/bin/python" - "$out/broken/report.md" "$out/comment.html" <<'PY'
import sys, cmarkgfm
from cmarkgfm.cmark import Options
body = cmarkgfm.github_flavored_markdown_to_html(
    open(sys.argv[1]).read(), options=Options.CMARK_OPT_UNSAFE)
page = f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; font-size: 14px;
  line-height: 1.5; max-width: 780px; margin: 16px; color: #1f2328; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #d1d9e0; padding: 6px 13px; }}
code {{ background: #eff1f3; padding: .2em .4em; border-radius: 6px; font-size: 85%; }}
details {{ margin: 8px 0; }}
</style></head><body>{body}
<script>
const first = document.querySelector("details");
document.title = JSON.stringify({{height: document.body.scrollHeight,
  fold: first ? first.getBoundingClientRect().top : document.body.scrollHeight}});
</script></body></html>"""
open(sys.argv[2], "w").write(page)
PY

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$out/profile" --hide-scrollbars)
"$browser" "${flags[@]}" --window-size=820,2000 --screenshot="$out/comment.png" \
  "file://$out/comment.html" >/dev/null 2>&1
sizes="$("$browser" "${flags[@]}" --dump-dom "file://$out/comment.html" 2>/dev/null |
  sed -n 's:.*<title>\(.*\)</title>.*:\1:p' | sed 's/&quot;/"/g')"
echo "wrote $out/comment.png"
echo "rendered: $sizes (CSS pixels; fold = where the first folded section starts)"
