"""Steps of the keyboard-only tests: where focus is, whether it shows, moving it by key.

No clicks and no filling: every step is a key press. At every focus move the focused element
must show a visible focus indicator and be on screen; a page with errors must put focus on its
error summary, whose links take focus to the field.
"""

# What the focused element is and how its focus shows, read in the page.
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) { return null; }
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  return {
    tag: el.tagName.toLowerCase(),
    id: el.id,
    name: el.getAttribute("name") || "",
    type: el.getAttribute("type") || "",
    classes: el.className && typeof el.className === "string" ? el.className : "",
    text: ((el.labels && el.labels.length ? el.labels[0].innerText : el.innerText) || "")
      .trim().replace(/\\s+/g, " ").slice(0, 400),
    href: el.getAttribute("href") || "",
    checked: Boolean(el.checked),
    focusVisible: el.matches(":focus-visible"),
    outlineStyle: style.outlineStyle,
    outlineWidth: parseFloat(style.outlineWidth) || 0,
    boxShadow: style.boxShadow,
    inMain: Boolean(el.closest("main")),
    inDialog: Boolean(el.closest("dialog")),
    top: box.top, bottom: box.bottom, left: box.left, right: box.right,
    pageTop: box.top + window.scrollY,
    viewWidth: window.innerWidth, viewHeight: window.innerHeight,
  };
}"""


def describe(focus: dict | None) -> str:
    if focus is None:
        return "<nothing focused>"
    name = f" name={focus['name']}" if focus["name"] else ""
    ident = f"#{focus['id']}" if focus["id"] else ""
    return f"<{focus['tag']}{ident}{name}> {focus['text']!r}"


def focused(page) -> dict | None:
    return page.evaluate(FOCUSED)


def assert_focus_shows(page, where: str) -> dict:
    """The focused element matches :focus-visible, has a clear indicator and is on screen."""
    focus = focused(page)
    assert focus is not None, f"{where}: focus was lost (nothing is focused)"
    what = f"{where}: {describe(focus)}"
    assert focus["focusVisible"], f"{what} does not match :focus-visible"
    outlined = focus["outlineStyle"] != "none" and focus["outlineWidth"] >= 2
    shadowed = focus["boxShadow"] not in ("", "none")
    assert outlined or shadowed, (
        f"{what} has no visible focus indicator (outline {focus['outlineStyle']} "
        f"{focus['outlineWidth']}px, box-shadow {focus['boxShadow']})"
    )
    assert focus["bottom"] > 0 and focus["top"] < focus["viewHeight"], f"{what} is off screen"
    assert focus["right"] > 0 and focus["left"] < focus["viewWidth"], f"{what} is off screen"
    if focus["bottom"] - focus["top"] <= focus["viewHeight"]:
        assert focus["top"] >= -1 and focus["bottom"] <= focus["viewHeight"] + 1, (
            f"{what} is partly off screen ({focus['top']:.0f}–{focus['bottom']:.0f})"
        )
    return focus


def press(page, key: str, where: str) -> dict:
    page.keyboard.press(key)
    return assert_focus_shows(page, f"{where}, after {key}")


def tab_until(page, wanted: str, where: str, limit: int = 40) -> dict:
    """Press Tab until the focused element matches the CSS selector `wanted`."""
    seen = []
    for _ in range(limit):
        focus = press(page, "Tab", where)
        if page.evaluate("(selector) => document.activeElement.matches(selector)", wanted):
            return focus
        seen.append(describe(focus))
    raise AssertionError(f"{where}: Tab never reached {wanted}; went through {seen}")


def settled(page) -> None:
    """Let a new page run its autofocus: two animation frames."""
    page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def press_and_load(page, key: str = "Enter") -> None:
    """Press a key that leaves the page (following a link, sending a form); wait for the next."""
    with page.expect_navigation():
        page.keyboard.press(key)
    settled(page)


def focus_is(page, selector: str) -> bool:
    return page.evaluate(
        "(selector) => Boolean(document.activeElement && document.activeElement.matches(selector))",
        selector,
    )


def tab_to_next(page, selector: str, where: str) -> dict:
    """One Tab lands on `selector`: it is the next stop in the tab order."""
    focus = press(page, "Tab", where)
    assert focus_is(page, selector), (
        f"{where}: the next Tab stop is {describe(focus)}, not {selector}"
    )
    return focus


def reach(page, selector: str, where: str) -> dict:
    """Focus `selector` with Tab, unless the page has already put focus there."""
    if focus_is(page, selector):
        return assert_focus_shows(page, where)
    return tab_until(page, selector, where)


def assert_on_error_summary(page, where: str, *messages: str) -> dict:
    """A page with errors puts (visible) focus on its error summary."""
    focus = assert_focus_shows(page, where)
    assert focus_is(page, ".error-summary"), (
        f"{where}: focus is on {describe(focus)}, not on the error summary"
    )
    for message in messages:
        assert message in focus["text"], f"{where}: {message!r} not in {focus['text']!r}"
    return focus


def tab_round(page, where: str, limit: int = 80) -> list[dict]:
    """From the top of a freshly loaded page, Tab all the way round to the skip link again.

    The first Tab reaches the skip link; every stop shows its focus; focus leaves every widget
    (no keyboard trap) and comes back to the top, having left the page at most once (for the
    browser's own controls). Returns the stops after the skip link, in order.
    """
    first = press(page, "Tab", f"{where}, first Tab")
    assert focus_is(page, ".skip-link"), f"{where}: the first Tab reaches {describe(first)}"
    stops: list[dict] = []
    left_the_page = False
    for _ in range(limit):
        page.keyboard.press("Tab")
        focus = focused(page)
        if focus is None:  # past the last stop: out of the page, to the browser
            assert not left_the_page, f"{where}: focus was lost in the middle of the page"
            left_the_page = True
            continue
        focus = assert_focus_shows(page, f"{where}, after Tab")
        if focus_is(page, ".skip-link"):
            return stops
        assert not left_the_page, f"{where}: after leaving the page Tab went to {describe(focus)}"
        assert not stops or stops[-1] != focus, f"{where}: Tab stays on {describe(focus)} (trap)"
        stops.append(focus)
    raise AssertionError(
        f"{where}: {limit} presses of Tab never came back to the top (a keyboard trap?); "
        f"last stops: {[describe(stop) for stop in stops[-5:]]}"
    )


def assert_visual_order(stops: list[dict], where: str) -> None:
    """In the content, each Tab stop is below the one before, or beside it on the same row."""
    in_main = [stop for stop in stops if stop["inMain"]]
    for before, after in zip(in_main, in_main[1:], strict=False):
        height = after["bottom"] - after["top"]
        same_row = (
            after["pageTop"] < before["pageTop"] + before["bottom"] - before["top"]
            and after["pageTop"] + height > before["pageTop"]
        )
        if same_row:
            assert after["left"] >= before["left"], (
                f"{where}: Tab goes back left from {describe(before)} to {describe(after)}"
            )
        else:
            assert after["pageTop"] >= before["pageTop"], (
                f"{where}: Tab goes back up from {describe(before)} (y={before['pageTop']:.0f}) "
                f"to {describe(after)} (y={after['pageTop']:.0f})"
            )


def choose(page, position: int, choice: int, where: str) -> None:
    """From the focused first answer of question `position`, choose answer `choice` (from 0):
    Space for the first, the down arrow to move to (and choose) a later one."""
    if choice == 0:
        press(page, "Space", where)
    for _ in range(choice):
        press(page, "ArrowDown", where)
    chosen = f"#id_q{position}_{choice + 1}"
    focus = focused(page)
    assert focus_is(page, f"{chosen}:checked"), (
        f"{where}: {chosen} is not focused and chosen; focus is on {describe(focus)}"
    )


def choose_option(page, select: str, value: str, where: str, limit: int = 20) -> None:
    """From the focused menu `select`, press the down arrow until `value` is chosen."""
    for _ in range(limit):
        if page.evaluate("(s) => document.querySelector(s).value", select) == value:
            assert focus_is(page, select), f"{where}: focus left {select}"
            return
        press(page, "ArrowDown", where)
    raise AssertionError(f"{where}: the down arrow never chose {value} in {select}")


def sign_in_with_keyboard(page, username: str, password: str) -> None:
    """Type a username and password into the sign-in form and press Enter."""
    where = "sign-in page"
    # Tab to the username, unless it has focus already (see the skip link test below).
    reach(page, "#id_username", where)
    page.keyboard.type(username)
    tab_to_next(page, "#id_password", where)
    page.keyboard.type(password)
    press_and_load(page)  # Enter in a field sends the form
