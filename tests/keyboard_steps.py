"""Key presses for keyboard-only browser tests: each focus move must show and be on screen.

The same steps as tests/test_keyboard.py's, kept here so that other test files can use them.
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
