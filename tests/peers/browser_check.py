"""Opens a toolgate report.html in headless Chromium (Playwright, Debian's /usr/bin/chromium)
and prints, as one JSON object on stdout, what a reader of the page would see: the verdict, the
changes, a change opened side by side, the scenarios left visible by filters and a search, the
scenario a `#anchor` opens; and what the page did on its own: console errors and warnings, page
errors, dialogs, network requests. It reports facts; tests/it/report_browser.rs asserts them.

Usage: browser_check.py REPORT [--change ID] [--filter SELECT_ID=VALUE]... [--search TEXT]
                        [--hash ANCHOR]... [--find TEXT]... [--screenshot DIR]

One browser for everything; each check that needs a fresh page (a filter, the search, the
anchor) opens a new page in the same context, so console output and requests of every page are
recorded. --screenshot DIR also writes report-verdict.png, report-change.png and
report-filtered.png (the views docs/gate.md shows, from docs/images/) into DIR.
"""

import argparse
import json
import pathlib
import sys
import time

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1100, "height": 720}

VISIBLE_SCENARIOS = """() => [...document.querySelectorAll('#scenarios details.scenario')]
    .filter(d => d.checkVisibility())
    .map(d => d.dataset.scenario)"""

HIDDEN_SCENARIOS = """() => [...document.querySelectorAll('#scenarios details.scenario')]
    .filter(d => d.hasAttribute('hidden'))
    .map(d => d.dataset.scenario)"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report", type=pathlib.Path)
    parser.add_argument("--change", help="scenario id of a change to open side by side")
    parser.add_argument("--filter", action="append", default=[], metavar="SELECT_ID=VALUE")
    parser.add_argument("--search", help="text to type into #search")
    parser.add_argument(
        "--hash", action="append", default=[], help="anchor to load the report at (without #)"
    )
    parser.add_argument("--find", action="append", default=[], help="text to count in the page")
    parser.add_argument("--screenshot", type=pathlib.Path, metavar="DIR")
    args = parser.parse_args()

    url = args.report.resolve().as_uri()
    facts = {"console": [], "page_errors": [], "requests": [], "dialogs": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        context = browser.new_context(viewport=VIEWPORT)
        context.on("console", lambda m: record_console(facts, m))
        context.on("weberror", lambda e: facts["page_errors"].append(str(e.error)))
        context.on("request", lambda r: record_request(facts, url, r))
        context.on("dialog", lambda d: record_dialog(facts, d))

        page = context.new_page()
        started = time.monotonic()
        page.goto(url)
        facts["load_ms"] = round((time.monotonic() - started) * 1000)
        facts.update(static_facts(page, args.find))
        shoot(args, page, "report-verdict.png")
        if args.change:
            facts["change"] = open_change(page, args.change)
            shoot(args, page, "report-change.png", f'#changes details.change[data-scenario="{args.change}"]')
        page.close()

        facts["filters"] = []
        for spec in args.filter:
            select, _, value = spec.partition("=")
            page = context.new_page()
            page.goto(url)
            page.select_option(f"#{select}", value)
            facts["filters"].append({"select": select, "value": value, **shown(page)})
            shoot(args, page, "report-filtered.png", "#scenarios")
            page.close()

        if args.search is not None:
            page = context.new_page()
            page.goto(url)
            page.fill("#search", args.search)
            facts["search"] = {"text": args.search, **shown(page)}
            page.close()

        facts["hash"] = []
        for anchor in args.hash:
            page = context.new_page()
            page.goto(f"{url}#{anchor}")
            facts["hash"].append(opened_by_hash(page, anchor))
            page.close()

        context.close()
        browser.close()
    json.dump(facts, sys.stdout)
    sys.stdout.write("\n")


def record_console(facts, message):
    if message.type in ("error", "warning"):
        facts["console"].append({"type": message.type, "text": message.text})


def record_request(facts, url, request):
    if request.url.split("#")[0] != url:
        facts["requests"].append(request.url)


def record_dialog(facts, dialog):
    facts["dialogs"].append({"type": dialog.type, "message": dialog.message})
    dialog.dismiss()


def static_facts(page, needles):
    """What the page shows before anyone touches it."""
    return page.evaluate(
        """(needles) => {
        const verdict = document.querySelector('section#verdict');
        const csp = document.querySelector('meta[http-equiv="Content-Security-Policy" i]');
        const text = document.documentElement.textContent;
        const count = (needle) => text.split(needle).length - 1;
        return {
            verdict: verdict && {
                decision: verdict.dataset.decision,
                text: verdict.innerText,
            },
            csp: csp && csp.getAttribute('content'),
            event_attributes: [...document.querySelectorAll('*')]
                .flatMap(el => [...el.attributes].filter(a => /^on/i.test(a.name))
                    .map(a => `${el.localName}[${a.name}]`)),
            injected: [...document.querySelectorAll(
                    'img[src="x"], iframe, object, embed, svg[onload], a[href^="javascript:" i]')]
                .map(el => el.localName)
                .concat([...document.scripts].filter(s => s.text.includes('alert('))
                    .map(() => 'script')),
            changes_section: document.querySelector('section#changes') !== null,
            changes: [...document.querySelectorAll('#changes details.change')]
                .map(d => ({change: d.dataset.change, scenario: d.dataset.scenario})),
            scenarios: [...document.querySelectorAll('#scenarios details.scenario')]
                .map(d => ({
                    scenario: d.dataset.scenario, id: d.id, tier: d.dataset.tier,
                    type: d.dataset.type, outcome: d.dataset.outcome,
                    tools: d.dataset.tools, checks: d.dataset.checks, open: d.open,
                    runs: [...d.querySelectorAll('div.run')].map(r => r.id),
                })),
            shown_count: document.querySelector('#shown-count')?.textContent.trim() ?? null,
            filter_options: Object.fromEntries(
                ['filter-tier', 'filter-type', 'filter-outcome', 'filter-tool', 'filter-check']
                    .map(id => [id, document.getElementById(id)
                        ? [...document.getElementById(id).options].map(o => o.value)
                        : null])),
            found: Object.fromEntries(needles.map(n => [n, count(n)])),
        };
    }""",
        needles,
    )


def open_change(page, scenario):
    """Clicks the summary of the change of `scenario` and says what opened."""
    change = page.locator(f'#changes details.change[data-scenario="{scenario}"]')
    if change.count() != 1:
        return {"scenario": scenario, "found": change.count()}
    side = change.locator("div.side-by-side")
    before = side.first.is_visible() if side.count() else False
    change.locator("summary").first.click()
    return {
        "scenario": scenario,
        "found": 1,
        "visible_before_click": before,
        **change.evaluate(
            """(d) => {
            const side = d.querySelector('div.side-by-side');
            // A column may have no box of its own (`display: contents`, each call a grid
            // cell): its calls are measured.
            const column = (name) => {
                const el = side && side.querySelector(`:scope > div.${name}`);
                if (!el) return null;
                const calls = [...el.querySelectorAll('div.call')];
                const first = calls.find(c => c.classList.contains('first-diff'));
                const box = first && first.getBoundingClientRect();
                return {
                    calls: calls.length,
                    calls_visible: calls.filter(c => c.checkVisibility()).length,
                    first_diff: calls.flatMap((c, i) => c.classList.contains('first-diff') ? [i] : []),
                    first_diff_box: box && {left: box.left, top: box.top, width: box.width},
                };
            };
            return {
                open: d.open,
                side_by_side_visible: side !== null && side.checkVisibility(),
                base: column('base'),
                head: column('head'),
                first_diff_count: d.querySelectorAll('.first-diff').length,
            };
        }"""
        ),
    }


def shown(page):
    return {
        "visible": page.evaluate(VISIBLE_SCENARIOS),
        "hidden": page.evaluate(HIDDEN_SCENARIOS),
        "shown_count": page.locator("#shown-count").text_content().strip(),
    }


def opened_by_hash(page, anchor):
    return {
        "anchor": anchor,
        **page.evaluate(
            """(anchor) => {
            const target = document.getElementById(anchor);
            const box = target && target.getBoundingClientRect();
            return {
                target: target && target.localName,
                open: [...document.querySelectorAll('#scenarios details.scenario')]
                    .filter(d => d.open).map(d => d.dataset.scenario),
                in_view: box !== null && box.bottom > 0 && box.top < window.innerHeight,
            };
        }""",
            anchor,
        ),
    }


def shoot(args, page, name, top=None):
    """With --screenshot, writes the viewport to DIR/name, scrolled so that `top` (a selector)
    starts it."""
    if args.screenshot:
        args.screenshot.mkdir(parents=True, exist_ok=True)
        if top:
            page.locator(top).first.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        page.screenshot(path=args.screenshot / name)


if __name__ == "__main__":
    main()
