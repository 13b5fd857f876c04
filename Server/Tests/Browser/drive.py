#!/usr/bin/env python3
"""Drives headless Chromium through a page of the web bridge test (Tests/EndToEndTests/BrowserBridgeTests.swift).

Usage: drive.py URL SCREENSHOT
Loads URL, waits until the page sets window.__done, saves a screenshot, and prints the page's
window.__results (JSON) and its console errors as one JSON object on the last line.
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def main() -> int:
    url, screenshot = sys.argv[1], sys.argv[2]
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,700"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        deadline = time.time() + 30
        while time.time() < deadline and not driver.execute_script("return window.__done === true"):
            time.sleep(0.05)
        results = driver.execute_script("return JSON.stringify(window.__results || null)")
        driver.save_screenshot(screenshot)
        errors = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
        print(json.dumps({"done": driver.execute_script("return window.__done === true"),
                          "results": json.loads(results), "console_errors": errors}))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
