#!/usr/bin/env python3
"""The reader of `aggregate serve` in a real browser (headless Chromium through Selenium),
run by Tests/EndToEndTests/ReaderTests.swift against the built binary and the fixture
server. Checks, at 390, 768 and 1280 px wide: no horizontal scrolling, the cards with their
title, price and an image with alt text where they have one; a card's page with its
gallery, specs or products; the filter form; reading (a card opened is read, a star keeps
it, the search box, a forged POST refused, the keys j k s ?), with scripts on and off;
page 2; the Tab order; and that the HTML parses as HTML5 without an error.
Screenshots go to ARTIFACTS (not committed).
With GROUPED, the base of a server of 60 feeds in three OPML folders: the source list in
three groups, and the first card's title on a 390 px first screen there too.
Usage: reader.py BASE ARTIFACTS [GROUPED]"""
import os, sys, urllib.error, urllib.request

import html5lib
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

base, artifacts = sys.argv[1], sys.argv[2]
grouped = sys.argv[3] if len(sys.argv) > 3 else None
os.makedirs(artifacts, exist_ok=True)
failures = []
# What a wait ignores while a form's answer replaces the page: an element of the old
# document is stale, missing, or (in Chromium's words) "does not belong to the document".
NAVIGATING = (StaleElementReferenceException, NoSuchElementException, WebDriverException)


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        failures.append(message)


def fetch(path):
    with urllib.request.urlopen(base + path, timeout=30) as response:
        return response.read()


# Valid HTML5, and small.
for path in ["/", "/?per_page=50", "/?view=all&source=cabify&q=mug", "/?view=starred", "/search?q=coffee+mug",
             "/cards/dishwashers:3294410", "/cards/cabify:MUG"]:
    request = urllib.request.Request(base + path, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    parser = html5lib.HTMLParser(strict=True)
    try:
        parser.parse(body)
        check(True, f"{path}: valid HTML5")
    except Exception as error:
        check(False, f"{path}: not valid HTML5: {error} {parser.errors[:3]}")
fifty = fetch("/?per_page=50")
cards_on_page = fifty.count(b'<li class="card')
check(cards_on_page == 50, f"a page of 50 cards has 50 cards ({cards_on_page})")
check(len(fifty) < 100 * 1024, f"a page of 50 cards is under 100 KB ({len(fifty)} bytes)")

options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--hide-scrollbars"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
try:
    for width in [390, 768, 1280]:
        driver.set_window_size(width, 900)
        driver.get(base + "/?per_page=12")
        inner = driver.execute_script("return window.innerWidth")
        scroll = driver.execute_script("return document.documentElement.scrollWidth")
        check(scroll <= inner, f"{width} px: no horizontal scroll (content {scroll} px, window {inner} px)")
        cards = driver.find_elements(By.CSS_SELECTOR, "li.card")
        check(len(cards) == 12, f"{width} px: 12 cards ({len(cards)})")
        for card in cards:
            title = card.find_element(By.CSS_SELECTOR, "h2").text.strip()
            image = card.find_elements(By.CSS_SELECTOR, "img")
            source = card.find_element(By.CSS_SELECTOR, ".source").text
            # A picture only where the card has one (Cabify's products have none).
            pictured = len(image) == 0 if source == "cabify" else len(image) == 1 and bool(image[0].get_attribute("alt"))
            check(bool(title) and pictured, f"{width} px: card '{title[:40]}' has a title, and an image with alt where it has one")
            if source in ("target", "dishwashers", "cabify"):
                check(bool(card.find_elements(By.CSS_SELECTOR, ".price strong")), f"{width} px: {source} card '{title[:40]}' shows its price")
        columns = driver.execute_script("return getComputedStyle(document.querySelector('ol.cards')).gridTemplateColumns.split(' ').length")
        check(columns == 1 if width < 640 else columns > 1, f"{width} px: {columns} column(s)")
        driver.save_screenshot(os.path.join(artifacts, f"reader-{width}.png"))
    # A phone's first screen (390 x 844) shows the first card's title: the controls above
    # the cards are compact enough.
    driver.set_window_size(390, 844)
    driver.get(base + "/")
    first_title = driver.execute_script(
        "const h = document.querySelector('li.card h2'); return h ? h.getBoundingClientRect().bottom : 99999;")
    screen = driver.execute_script("return window.innerHeight")
    check(first_title <= screen, f"390 px: the first card's title is on the first screen (its bottom at {first_title:.0f} px of {screen})")
    driver.save_screenshot(os.path.join(artifacts, "reader-390-first-screen.png"))
    if grouped:
        # Sixty feeds in three folders: three groups with their counts, closed, above the cards.
        driver.get(grouped + "/")
        groups = driver.find_elements(By.CSS_SELECTOR, ".source-views details.group")
        names = [g.find_element(By.TAG_NAME, "summary").text for g in groups]
        check([n.split(" ")[0] for n in names] == ["News", "Tech", "Friends"] and all(n.split(" ")[-1].isdigit() for n in names),
              f"60 feeds in three folders show three groups with unread counts ({names})")
        first_title = driver.execute_script(
            "const h = document.querySelector('li.card h2'); return h ? h.getBoundingClientRect().bottom : 99999;")
        check(first_title <= driver.execute_script("return window.innerHeight"),
              f"390 px, 60 feeds: the first card's title is on the first screen (its bottom at {first_title:.0f} px)")
        groups[1].find_element(By.TAG_NAME, "summary").click()
        links = groups[1].find_elements(By.CSS_SELECTOR, "li a")
        check(len(links) == 21 and links[0].text == "All of Tech", f"opening a group lists its feeds ({len(links)} links)")
        driver.save_screenshot(os.path.join(artifacts, "reader-390-folders.png"))
    driver.set_window_size(1280, 900)
    # The front page (Unread, newest first): the shops' undated deals and products sort by
    # when they were first seen, so their prices are on page 1 beside the dated posts.
    driver.get(base + "/")
    priced = {card.find_element(By.CSS_SELECTOR, ".source").text for card in driver.find_elements(By.CSS_SELECTOR, "li.card")
              if card.find_elements(By.CSS_SELECTOR, ".price strong")}
    for source in ["target", "dishwashers", "cabify"]:
        check(source in priced, f"the front page shows a price from {source} (priced sources: {sorted(priced)})")

    driver.set_window_size(1280, 900)
    # A card's page: the dishwasher with its product page, then an LTK post.
    # (In every card's view: the HTML checks above opened this card, which read it.)
    driver.get(base + "/?view=all&source=dishwashers&per_page=50")
    driver.find_element(By.CSS_SELECTOR, "a[href^='/cards/dishwashers:3294410?']").click()
    WebDriverWait(driver, 10).until(lambda d: "/cards/" in d.current_url)
    check("/cards/dishwashers:3294410?" in driver.current_url, f"following a card opens its page ({driver.current_url})")
    check(len(driver.find_elements(By.CSS_SELECTOR, ".gallery img")) >= 2, "the dishwasher's page shows its gallery")
    check(len(driver.find_elements(By.CSS_SELECTOR, "table.specs tr")) >= 1, "the dishwasher's page shows its specifications")
    check("guarantee" in driver.page_source.lower(), "the dishwasher's page shows its guarantee")
    chart = driver.find_elements(By.CSS_SELECTOR, "figure.chart svg[role=img]")
    points = driver.find_elements(By.CSS_SELECTOR, "figure.chart circle.point")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.history tr[data-price]")
    check(len(chart) == 1 and len(points) == len(rows) + 1 and chart[0].size["width"] > 100,
          f"the dishwasher's page charts its price: a point for the first price and one per history row ({len(points)} points, {len(rows)} rows)")
    driver.save_screenshot(os.path.join(artifacts, "card-dishwasher.png"))
    driver.get(base + "/?source=ltk")
    driver.find_element(By.CSS_SELECTOR, "li.card a.card-link").click()
    WebDriverWait(driver, 10).until(lambda d: "/cards/" in d.current_url)
    check(len(driver.find_elements(By.CSS_SELECTOR, ".products img")) >= 1, "an LTK post's page shows its products with images")
    check(len(driver.find_elements(By.CSS_SELECTOR, ".author img")) == 1, "an LTK post's page shows its author's avatar")
    # Its images cannot load here (no network): a failed image covers nothing but its own
    # box, so the title and the text are what a click on them reaches.
    def uncovered(selector):
        return driver.execute_script("""
            const element = document.querySelector(arguments[0]);
            if (!element) return 'no ' + arguments[0];
            element.scrollIntoView({block: 'center'});
            const box = element.getBoundingClientRect();
            const hit = document.elementFromPoint(box.left + Math.min(box.width / 2, 40), box.top + box.height / 2);
            return element.contains(hit) ? '' : (hit ? hit.tagName.toLowerCase() + (hit.className ? '.' + hit.className : '') : 'nothing');
            """, selector)
    for selector in ["h1", "p.summary"]:
        covered = uncovered(selector)
        check(covered == "", f"a card page whose images fail to load shows its {selector} ({covered or 'uncovered'})")

    # The filter form narrows the list: exactly the three Cabify products.
    driver.get(base + "/?view=all")
    Select(driver.find_element(By.NAME, "source")).select_by_value("cabify")
    driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
    WebDriverWait(driver, 10).until(lambda d: "source=cabify" in d.current_url)
    hrefs = [a.get_attribute("href").split("/cards/")[1].split("?")[0] for a in driver.find_elements(By.CSS_SELECTOR, "a.card-link")]
    check(hrefs == ["cabify:VOUCHER", "cabify:TSHIRT", "cabify:MUG"], f"the form shows exactly the Cabify cards ({hrefs})")

    # Reading: opening a card reads it (the Unread count drops by one); a star keeps it in
    # Starred after a reload; the search box finds a phrase of a summary, highlighted.
    def unread_count():
        return int(driver.find_element(By.CSS_SELECTOR, "[data-unread]").text)
    driver.get(base + "/?source=cabify")
    before = unread_count()
    driver.find_element(By.CSS_SELECTOR, "a[href^='/cards/cabify:TSHIRT?']").click()
    WebDriverWait(driver, 10).until(lambda d: "/cards/" in d.current_url)
    driver.get(base + "/")
    check(unread_count() == before - 1, f"opening a card drops the unread count by one ({before} then {unread_count()})")
    driver.get(base + "/cards/cabify:TSHIRT")
    driver.find_element(By.CSS_SELECTOR, "button[data-mark=star]").click()
    # Back on the card's page, which now offers to unstar it.
    WebDriverWait(driver, 10, ignored_exceptions=NAVIGATING).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "button[data-mark=star]").text == "Unstar")
    driver.get(base + "/?view=starred")
    driver.refresh()
    starred = [a.get_attribute("href").split("/cards/")[1].split("?")[0] for a in driver.find_elements(By.CSS_SELECTOR, "a.card-link")]
    check(starred == ["cabify:TSHIRT"], f"a starred card is in Starred after a reload ({starred})")
    box = driver.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    box.send_keys('"blackout curtains"' + Keys.ENTER)
    WebDriverWait(driver, 10).until(lambda d: "/search" in d.current_url)
    marks = [m.text for m in driver.find_elements(By.CSS_SELECTOR, "li.card mark")]
    check(len(driver.find_elements(By.CSS_SELECTOR, "li.card")) >= 1 and "curtains" in [m.lower() for m in marks],
          f"the search box finds a phrase of a summary and marks it ({marks[:4]})")
    # A form sent from another origin is refused and changes nothing.
    token = driver.find_element(By.CSS_SELECTOR, "input[name=token]").get_attribute("value")
    forged = urllib.request.Request(base + "/cards/cabify:MUG/star", data=f"token={token}".encode(), method="POST",
                                    headers={"Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded",
                                             "Cookie": "aggregate_session=" + driver.get_cookie("aggregate_session")["value"]})
    try:
        urllib.request.urlopen(forged, timeout=30)
        check(False, "a POST from another origin is refused (it was taken)")
    except urllib.error.HTTPError as error:
        check(error.code == 403, f"a POST from another origin is refused ({error.code})")
    driver.get(base + "/?view=starred")
    starred = [a.get_attribute("href").split("/cards/")[1].split("?")[0] for a in driver.find_elements(By.CSS_SELECTOR, "a.card-link")]
    check(starred == ["cabify:TSHIRT"], f"the refused POST changed nothing ({starred})")

    # The keyboard (scripts on): j j s stars the second card, in place; ? lists the keys.
    driver.get(base + "/?view=all&source=ltk")
    second = driver.find_elements(By.CSS_SELECTOR, "li.card")[1].get_attribute("data-id")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    driver.switch_to.active_element.send_keys("j")
    driver.switch_to.active_element.send_keys("s")
    WebDriverWait(driver, 10).until(lambda d: "starred" in d.find_elements(By.CSS_SELECTOR, "li.card")[1].get_attribute("class"))
    driver.get(base + "/?view=starred")
    starred = [li.get_attribute("data-id") for li in driver.find_elements(By.CSS_SELECTOR, "li.card")]
    check(second in starred, f"j j s stars the second card ({second} in {starred})")
    driver.find_element(By.TAG_NAME, "body").send_keys("?")
    check(driver.execute_script("return !!document.querySelector('dialog#keys[open]')"), "? shows the keyboard shortcuts")
    check(len(fetch("/reader.js")) <= 5 * 1024, "the reader's script is at most 5 KB")
    # n: the next source with unread cards, then the one after it.
    driver.get(base + "/")
    driver.find_element(By.TAG_NAME, "body").send_keys("n")
    WebDriverWait(driver, 10).until(lambda d: "source=" in d.current_url)
    first_source = driver.current_url.split("source=")[1]
    driver.find_element(By.TAG_NAME, "body").send_keys("n")
    WebDriverWait(driver, 10).until(lambda d: "source=" in d.current_url and d.current_url.split("source=")[1] != first_source)
    check((first_source, driver.current_url.split("source=")[1]) == ("target", "ltk"),
          f"n goes to the next source with unread cards (target, then {driver.current_url.split('source=')[1]})")

    # A card's page offers the previous and next card of its list; j and k follow them.
    driver.get(base + "/?view=all&source=cabify")
    listed = [li.get_attribute("data-id") for li in driver.find_elements(By.CSS_SELECTOR, "li.card")]
    driver.find_elements(By.CSS_SELECTOR, "li.card a.card-link")[1].click()
    WebDriverWait(driver, 10).until(lambda d: "/cards/" in d.current_url)
    neighbours = [a.get_attribute("href").split("/cards/")[1].split("?")[0] for a in driver.find_elements(By.CSS_SELECTOR, "nav.neighbours a")]
    check(neighbours == [listed[0], listed[2]], f"a card's page links the cards before and after it in its list ({neighbours}, list {listed})")
    driver.find_element(By.TAG_NAME, "body").send_keys("j")
    WebDriverWait(driver, 10).until(lambda d: "/cards/" + listed[2] in d.current_url)
    driver.find_element(By.TAG_NAME, "body").send_keys("k")
    WebDriverWait(driver, 10).until(lambda d: "/cards/" + listed[1] in d.current_url)
    check("/cards/" + listed[1] in driver.current_url, f"j and k on a card's page go to the next and previous card ({driver.current_url})")

    # Page 2.
    driver.get(base + "/?per_page=12")
    driver.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    WebDriverWait(driver, 10).until(lambda d: "page=2" in d.current_url)
    current = driver.find_elements(By.CSS_SELECTOR, ".pages [aria-current=page]")
    check("page=2" in driver.current_url and current and current[0].text == "2", f"Next reaches page 2 ({driver.current_url})")
    check(len(driver.find_elements(By.CSS_SELECTOR, "li.card")) == 12, "page 2 has its cards")

    # Tab reaches every link and control, in document order.
    driver.get(base + "/?per_page=12")
    focusable = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href], select, input, button')).filter(e => e.offsetParent !== null || e.classList.contains('skip')).length")
    body = driver.find_element(By.TAG_NAME, "body")
    reached = []
    for _ in range(focusable + 3):
        body.send_keys(Keys.TAB) if not reached else driver.switch_to.active_element.send_keys(Keys.TAB)
        # By place in the page: the cards' "Mark read" buttons look alike.
        reached.append(driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href], select, input, button')).indexOf(document.activeElement)"))
    check(len(set(reached)) >= focusable, f"Tab reaches all {focusable} links and controls ({len(set(reached))} distinct)")
    focus = driver.execute_script("const e = document.querySelector('a.card-link'); e.focus(); return getComputedStyle(e).outlineStyle")
    check(focus != "none", f"focus is visible ({focus})")
finally:
    driver.quit()

# Scripts off: every control is a form that works as it is.
options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
try:
    driver.set_window_size(390, 900)
    driver.get(base + "/")
    driver.find_element(By.TAG_NAME, "body").send_keys("j")
    check(not driver.find_elements(By.CSS_SELECTOR, "li.card.current"), "scripts off: the keys do nothing (no script ran)")
    before = int(driver.find_element(By.CSS_SELECTOR, "[data-unread]").text)
    first = driver.find_element(By.CSS_SELECTOR, "li.card")
    first_id = first.get_attribute("data-id")
    first.find_element(By.CSS_SELECTOR, "button[data-mark=read]").click()
    WebDriverWait(driver, 10, ignored_exceptions=NAVIGATING).until(
        lambda d: int(d.find_element(By.CSS_SELECTOR, "[data-unread]").text) == before - 1)
    unread = [li.get_attribute("data-id") for li in driver.find_elements(By.CSS_SELECTOR, "li.card")]
    check(first_id not in unread, f"scripts off: Mark read takes the card out of Unread ({first_id})")
    driver.get(base + "/?view=all&source=cabify")
    mug = driver.find_element(By.CSS_SELECTOR, "li.card[data-id='cabify:MUG']")
    mug.find_element(By.CSS_SELECTOR, "button[data-mark=star]").click()
    WebDriverWait(driver, 10, ignored_exceptions=NAVIGATING).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "li.card[data-id='cabify:MUG'] button[data-mark=star]").text == "Unstar")
    driver.get(base + "/?view=starred")
    starred = [li.get_attribute("data-id") for li in driver.find_elements(By.CSS_SELECTOR, "li.card")]
    check("cabify:MUG" in starred, f"scripts off: Star keeps the card in Starred ({starred})")
finally:
    driver.quit()

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
