#!/usr/bin/env python3
"""Drives the collector's dashboard (GET /dashboard) in headless Chromium, for
Tests/EndToEndTests/DashboardBrowserTests.swift and for measuring how long it takes to load.

  dashboard.py check URL TOKEN SHOTS_DIR EMPTY_APP
      A wrong token first (a clear message, nothing kept), then TOKEN: the page's first app must
      have data. Checks that every number shown (each element with data-key) is the value of the
      JSON the page read, fetched again here with the same URLs; that each chart has one mark per
      value; that there are no console errors; that at 390 px nothing overflows sideways; that
      EMPTY_APP (covered by TOKEN, without events) shows "no data" and no marks. Writes
      desktop.png (1280 wide), phone.png (390 wide) and empty.png into SHOTS_DIR.
  dashboard.py measure URL TOKEN FRAGMENT [RUNS [SCREENSHOT]]
      Opens URL/dashboard#FRAGMENT (such as app=shop&range=custom&from=…&to=…&bucket=hour) RUNS
      times (default 3) with the token already in the tab's session storage, and reports when
      every section was drawn (performance.now() at window.__done, from the navigation's start);
      saves the last view, whole, to SCREENSHOT if given.

Prints one JSON object on its last line; "failures" lists what did not hold (empty: all held).
"""
import base64
import json
import math
import os
import sys
import time
import traceback
import urllib.error
import urllib.request
from datetime import datetime, timezone

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

# Sections whose charts draw marks, and the ones that must say "no data" for an app without events.
CHART_SECTIONS = ["events", "names", "sources", "usecases", "funnel", "network", "split", "aggregates"]


def browser(width, height):
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=%d,%d" % (width, height), "--lang=en-US"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, script, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.execute_script("return " + script):
            return True
        time.sleep(0.05)
    return False


def severe(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def screenshot(driver, path):
    """The whole page, not only the window: Chromium's own capture beyond the viewport."""
    # Captured beyond the viewport, the page has no scrollbar: as wide as the window.
    width = driver.execute_script("return window.innerWidth")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    with open(path, "wb") as out:
        out.write(base64.b64decode(shot["data"]))


def fetch(url, token):
    """The JSON of a 200, else None (an endpoint this collector lacks: the page shows no data)."""
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError:
        return None


# ---- the page's formats (dashboard.js FORMATS), to compare what is shown with the JSON ----

def grouped(integer):
    return "{:,}".format(integer)


def formatted(value, form):
    if form == "text":
        return value if isinstance(value, str) else "—"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "—"
    if form == "count":
        return grouped(value)
    if form == "ms":
        return grouped(math.floor(value + 0.5)) + " ms" if value >= 100 else "%.1f ms" % value
    if form == "rate":
        return "%.1f%%" % (value * 100)
    if form == "time":
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M") + " UTC"
    if form == "number":
        m = abs(value)
        if m == 0:
            return "0"
        if 100 <= m < 1e9:
            return "%.0f" % value
        if 1 <= m < 100:
            return "%.2f" % value
        return "%.3g" % value
    raise ValueError(form)


def same(shown, value, form):
    """The text shown is the value in its format; for decimals, a tie may round either way
    (JavaScript's toFixed and Python's % differ on exact halves): within half a last digit."""
    expected = formatted(value, form)
    if shown == expected:
        return True
    if form not in ("ms", "rate", "number") or not isinstance(value, (int, float)):
        return False
    digits = shown.replace(",", "").replace(" ms", "").replace("%", "")
    try:
        number = float(digits)
    except ValueError:
        return False
    mantissa = digits.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(digits.split("e")[1]) if "e" in digits else 0
    tolerance = 0.5 * 10 ** (exponent - decimals) * 1.000001
    target = value * 100 if form == "rate" else value
    return abs(number - target) <= tolerance


def resolve(data, path):
    value = data
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def shown_values(driver):
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('[data-key]')).map(function (e) {
          return [e.getAttribute('data-key'), e.getAttribute('data-format'), e.textContent];
        });""")


def marks(driver, selector):
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def check_values(driver, data, failures):
    values = shown_values(driver)
    for key, form, text in values:
        path = json.loads(key)
        value = resolve(data, path)
        if not same(text, value, form):
            failures.append("shown %s as %r; the JSON says %r (%s)" % (key, text, value, form))
    return len(values)


def check_marks(driver, data, failures):
    report, series = data["report"] or {}, data["series"] or {}
    expected = {}
    points = series.get("points", [])
    expected["svg[data-chart=events] .mark"] = len(points)
    expected["svg[data-chart=names] .mark"] = min(15, len(report.get("events_by_name", {})))
    expected["svg[data-chart=sources] .mark"] = 2
    cases = report.get("use_cases", {})
    expected["svg[data-chart=abandonment] .mark"] = min(10, len(cases))
    expected["svg[data-chart=split] .mark"] = 3 * sum(1 for c in cases.values() if "server" in c)
    for key in ("p50_ms", "p95_ms"):
        expected["svg[data-chart=network] [data-series=%s] .mark" % key[:3]] = sum(
            1 for p in points if p.get("network", {}).get("count", 0) > 0 and p["network"].get(key) is not None)
    funnel = driver.execute_script("var s = document.querySelector('#funnel select'); return s ? s.value : null")
    if funnel is not None:
        expected["svg[data-chart=funnel] .mark"] = len(cases.get(funnel, {}).get("steps", []))
    measure = driver.execute_script("var s = document.querySelector('#aggregates select'); return s ? s.value : null")
    if measure is not None:
        name, measure_name = json.loads(measure)
        values = series.get("aggregates", {}).get(name, {}).get(measure_name, [])
        expected["svg[data-chart=aggregate-count] .mark"] = len(values)
        for key in ("mean", "p50", "p95", "p99"):
            expected["svg[data-chart=aggregate-values] [data-series=%s] .mark" % key] = sum(1 for v in values if v.get(key) is not None)
    counted = {}
    for selector, count in expected.items():
        drawn = marks(driver, selector)
        counted[selector] = drawn
        if drawn != count:
            failures.append("%s: %d marks drawn, %d expected" % (selector, drawn, count))
    return counted


def check_default_view(driver, url, token, data, result, failures):
    """The first view, with no range asked for, is the app's data: from its first to its last
    event (GET /v1/stats), every kept event in it, in more than one bar."""
    app = driver.execute_script("return document.getElementById('app').value")
    chosen = driver.execute_script("return [document.getElementById('range').value, document.getElementById('bucket').value]")
    stats = fetch(url + "/v1/stats?app=" + app, token) or {}
    series, report = data["series"] or {}, data["report"] or {}
    points = series.get("points", [])
    kept = stats.get("events_stored", 0) - stats.get("events_expired", 0)
    result["default_view"] = {"range": chosen[0], "bucket": chosen[1], "bars": len(points), "events_in_view": sum(p["events"] for p in points),
                              "events_kept": kept, "first_event_ms": stats.get("first_event_ms"), "last_event_ms": stats.get("last_event_ms")}
    if chosen[0] != "data":
        failures.append("the default range is %r, not the app's data" % chosen[0])
    if not isinstance(stats.get("first_event_ms"), int) or not isinstance(stats.get("last_event_ms"), int):
        failures.append("GET /v1/stats gives no first_event_ms and last_event_ms: %r" % stats)
    elif not (series.get("from", 0) <= stats["first_event_ms"] and stats["last_event_ms"] < series.get("to", 0)):
        failures.append("the default view %r..%r does not hold the data %r..%r" % (
            series.get("from"), series.get("to"), stats["first_event_ms"], stats["last_event_ms"]))
    if sum(p["events"] for p in points) != kept or report.get("events_stored") != kept:
        failures.append("the default view holds %d events (the report %r); the app keeps %d" % (
            sum(p["events"] for p in points), report.get("events_stored"), kept))
    if len(points) < 2:
        failures.append("the default view draws %d bar(s) for the app's events" % len(points))
    if series.get("to", 0) - series.get("from", 0) > 240 * series.get("bucket_ms", 1):
        failures.append("the default view has %d buckets: too many to read" % ((series["to"] - series["from"]) // series["bucket_ms"]))


def data_of(driver, url, token):
    requests = driver.execute_script("return window.__requests")
    return {name: fetch(url + path, token) for name, path in requests.items()}


def check(url, token, shots, empty_app):
    failures, result = [], {}
    os.makedirs(shots, exist_ok=True)
    driver = browser(1280, 900)
    try:
        driver.get(url + "/dashboard")
        if not wait(driver, "window.__state === 'login'"):
            failures.append("the page did not ask for a token")
        # A wrong token: a clear message, nothing kept, no board.
        driver.find_element(By.ID, "token").send_keys("nfr_not-a-token")
        driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
        wait(driver, "document.getElementById('login-error').textContent.length > 0", 20)
        message = driver.find_element(By.ID, "login-error").text
        result["wrong_token_message"] = message
        if "not accepted" not in message or "unknown read token" not in message:
            failures.append("a wrong token's message is %r" % message)
        if driver.execute_script("return sessionStorage.length") != 0:
            failures.append("a wrong token was kept in session storage")
        if driver.find_element(By.ID, "board").is_displayed():
            failures.append("the board shows with a wrong token")
        # The browser reports the refused request itself (a 401) as a console error: that one only.
        wrong = severe(driver)
        if len(wrong) != 1 or "401" not in wrong[0]:
            failures.append("console errors after a wrong token: %r" % wrong)

        driver.find_element(By.ID, "token").send_keys(token)
        driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
        if not wait(driver, "window.__done === true"):
            failures.append("the board was not drawn: state %r" % driver.execute_script("return window.__state"))
        result["timings"] = driver.execute_script("return window.__timings")
        data = data_of(driver, url, token)
        check_default_view(driver, url, token, data, result, failures)
        for section in CHART_SECTIONS + ["fleet", "policy"]:
            if driver.find_elements(By.CSS_SELECTOR, "#%s .no-data" % section):
                texts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#%s .no-data" % section)]
                failures.append("section %s of an app with data says %r" % (section, texts))
        result["values_checked"] = check_values(driver, data, failures)
        result["marks"] = check_marks(driver, data, failures)
        if result["values_checked"] < 50:
            failures.append("only %d values shown" % result["values_checked"])
        screenshot(driver, os.path.join(shots, "desktop.png"))

        # A phone: the same page, one column, nothing wider than the screen.
        driver.set_window_size(390, 844)
        time.sleep(0.6)  # the page redraws its charts 150 ms after a resize
        # Nothing reaches past the screen's right edge, but inside what scrolls on its own (wide
        # tables, the policy's JSON).
        wide = driver.execute_script("""
            var width = document.documentElement.clientWidth;
            return [width, Array.from(document.querySelectorAll('body *')).filter(function (e) {
              return !e.closest('.table-wrap, pre') && e.getClientRects().length && e.getBoundingClientRect().right > width + 0.5;
            }).slice(0, 5).map(function (e) { return e.tagName + '.' + e.className.baseVal !== undefined ? e.tagName : e.tagName + '.' + e.className; })];""")
        result["phone"] = {"width": wide[0], "overflowing": wide[1]}
        if wide[1]:
            failures.append("at %d px wide these reach past the right edge: %r" % (wide[0], wide[1]))
        result["phone_marks"] = check_marks(driver, data, failures)
        screenshot(driver, os.path.join(shots, "phone.png"))
        driver.set_window_size(1280, 900)
        time.sleep(0.3)

        # Per day, then one app version: the page asks for them, and still shows the JSON's values.
        Select(driver.find_element(By.ID, "bucket")).select_by_value("day")
        if not wait(driver, "window.__done === true && window.__requests.series.indexOf('bucket=day') > 0"):
            failures.append("the per-day board was not drawn")
        days = data_of(driver, url, token)
        result["day_values_checked"] = check_values(driver, days, failures)
        result["day_marks"] = check_marks(driver, days, failures)
        versions = [o.get_attribute("value") for o in Select(driver.find_element(By.ID, "version")).options]
        if len(versions) < 2:
            failures.append("no app version to choose: %r" % versions)
        else:
            Select(driver.find_element(By.ID, "version")).select_by_value(versions[1])
            if not wait(driver, "window.__done === true && window.__requests.report.indexOf('app_version=') > 0"):
                failures.append("the board of one app version was not drawn")
            one = data_of(driver, url, token)
            if (one["report"] or {}).get("filter", {}).get("app_version") != versions[1]:
                failures.append("the report of version %s says its filter is %r" % (versions[1], (one["report"] or {}).get("filter")))
            result["version"] = versions[1]
            result["version_values_checked"] = check_values(driver, one, failures)
            result["version_marks"] = check_marks(driver, one, failures)

        # The app without events: "no data" in every chart's place, no marks, no errors.
        Select(driver.find_element(By.ID, "app")).select_by_value(empty_app)
        if not wait(driver, "window.__done === true && window.__requests.report.indexOf('app=%s&') > 0" % empty_app):
            failures.append("the empty app's board was not drawn")
        for section in CHART_SECTIONS:
            if not driver.find_elements(By.CSS_SELECTOR, "#%s .no-data" % section):
                failures.append("section %s of an app without events does not say no data" % section)
        drawn = marks(driver, ".mark")
        if drawn:
            failures.append("an app without events has %d marks" % drawn)
        empty = data_of(driver, url, token)
        result["empty_values_checked"] = check_values(driver, empty, failures)
        screenshot(driver, os.path.join(shots, "empty.png"))
        result["console_errors"] = severe(driver)
        if result["console_errors"]:
            failures.append("console errors: %r" % result["console_errors"])
        result["screenshots"] = [os.path.join(shots, name) for name in ("desktop.png", "phone.png", "empty.png")]
    finally:
        driver.quit()
    result["failures"] = failures
    print(json.dumps(result))
    return 0


def measure(url, token, fragment, runs, shot):
    failures, loads = [], []
    driver = browser(1280, 900)
    try:
        driver.get(url + "/dashboard")
        wait(driver, "window.__state === 'login'")
        driver.execute_script("sessionStorage.setItem('nflog.dashboard.readToken', arguments[0])", token)
        for _ in range(runs):
            driver.get("about:blank")
            driver.get(url + "/dashboard#" + fragment)
            if not wait(driver, "window.__done === true", 900):
                failures.append("not drawn within 900 s: state %r" % driver.execute_script("return window.__state"))
                break
            loads.append({"done_ms": round(driver.execute_script("return window.__loadMs"), 1),
                          "timings": driver.execute_script("return window.__timings"),
                          "marks": marks(driver, ".mark"),
                          "no_data": [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".no-data")]})
        errors = severe(driver)
        if errors:
            failures.append("console errors: %r" % errors)
        if shot:
            screenshot(driver, shot)
    finally:
        driver.quit()
    print(json.dumps({"loads": loads, "failures": failures}))
    return 0


def main():
    try:
        if len(sys.argv) >= 6 and sys.argv[1] == "check":
            return check(sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4], sys.argv[5])
        if len(sys.argv) >= 5 and sys.argv[1] == "measure":
            return measure(sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 3,
                           sys.argv[6] if len(sys.argv) > 6 else None)
    except Exception:  # the caller reads the last line: say what broke there
        print(json.dumps({"failures": ["dashboard.py: " + traceback.format_exc()]}))
        return 1
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
