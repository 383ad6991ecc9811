"""Sign-in throttling under real concurrency: a class signing in at once, a burst of guesses.

Each request is a real HTTP POST to the live server (threaded, in this process), from threads
released together, every one from 127.0.0.1: one address, as a school behind NAT is.
"""

import re
import threading
from collections.abc import Callable

import pytest
import requests
from django.contrib.auth.base_user import AbstractBaseUser

from tests.factories import PASSWORD, make_learner

# Each of the live server's threads has its own connection: SQLite takes one writer at a time.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.backend]

LOGIN = "/accounts/login/"
WRONG = "not-the-password"
TOO_MANY = "Too many attempts. Try again in 15 minutes."
# Generous: the machine is shared and has two cores.
TIMEOUT = 60
# The default limit for one account from one address (LOGIN_FAILURE_LIMIT_PER_USERNAME).
ACCOUNT_FROM_ONE_ADDRESS = 5


class Browser:
    """A browser of its own (cookies and CSRF token) with the sign-in form open."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.session = requests.Session()
        page = self.session.get(base_url + LOGIN, timeout=TIMEOUT)
        self.csrf_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]

    def sign_in(self, username: str, password: str) -> requests.Response:
        return self.session.post(
            self.base_url + LOGIN,
            data={
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": self.csrf_token,
            },
            allow_redirects=False,
            timeout=TIMEOUT,
        )

    def is_signed_in(self) -> bool:
        """Return whether the learner's own page opens (not a redirect to sign in)."""
        page = self.session.get(self.base_url + "/me/", allow_redirects=False, timeout=TIMEOUT)
        return page.status_code == 200


class PasswordChecks:
    """Record each password the live server checks (True for the right one); can hold them."""

    def __init__(self):
        self.progress = threading.Condition()
        self.checked: list[bool] = []
        self.answered: list[requests.Response | Exception] = []
        self.released = threading.Event()
        self.released.set()

    def install(self, monkeypatch) -> None:
        original = AbstractBaseUser.check_password

        def counting(user, raw_password: str) -> bool:
            with self.progress:
                self.checked.append(raw_password == PASSWORD)
                self.progress.notify_all()
            self.released.wait(timeout=TIMEOUT)
            return original(user, raw_password)

        monkeypatch.setattr(AbstractBaseUser, "check_password", counting)

    def answer(self, outcome: requests.Response | Exception) -> None:
        with self.progress:
            self.answered.append(outcome)
            self.progress.notify_all()

    def wait_for(self, predicate: Callable[[], bool]) -> None:
        with self.progress:
            assert self.progress.wait_for(predicate, timeout=TIMEOUT), (
                f"{len(self.checked)} checked, {len(self.answered)} answered"
            )


@pytest.fixture
def password_checks(monkeypatch) -> PasswordChecks:
    checks = PasswordChecks()
    checks.install(monkeypatch)
    yield checks
    checks.released.set()  # never leave the live server's threads waiting


def all_at_once(actions: list[Callable], checks: PasswordChecks | None = None) -> list:
    """Run each action in a thread of its own, released together; return what each gave."""
    barrier = threading.Barrier(len(actions))
    outcomes: list = [None] * len(actions)

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=TIMEOUT)
            outcomes[index] = actions[index]()
        except Exception as error:  # collected for the assertions
            outcomes[index] = error
        if checks is not None:
            checks.answer(outcomes[index])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIMEOUT * 2)
    return outcomes


def signed_in(response) -> bool:
    return isinstance(response, requests.Response) and response.status_code == 302


def test_a_class_of_thirty_signs_in_at_once_after_a_morning_of_typos(live_server):
    pupils = [make_learner(f"class7b.{number:02d}", f"u-7b-{number}") for number in range(30)]
    # Earlier, from the school's address: 25 failed sign-ins, then six pupils mistype once.
    earlier = Browser(live_server.url)
    for number in range(25):
        assert not signed_in(earlier.sign_in(f"7b.guess{number}", WRONG))
    for pupil in pupils[:6]:
        assert not signed_in(earlier.sign_in(pupil.username, WRONG))
    browsers = [Browser(live_server.url) for _ in pupils]

    responses = all_at_once(
        [
            lambda browser=browser, pupil=pupil: browser.sign_in(pupil.username, PASSWORD)
            for browser, pupil in zip(browsers, pupils, strict=True)
        ]
    )

    assert [signed_in(response) for response in responses] == [True] * 30, responses
    assert all(browser.is_signed_in() for browser in browsers)


def test_forty_simultaneous_guesses_at_one_account_check_at_most_five_passwords(
    live_server, learner, password_checks
):
    browsers = [Browser(live_server.url) for _ in range(40)]

    responses = all_at_once(
        [lambda browser=browser: browser.sign_in(learner.username, WRONG) for browser in browsers]
    )

    assert not any(signed_in(response) for response in responses), responses
    assert 1 <= len(password_checks.checked) <= ACCOUNT_FROM_ONE_ADDRESS
    assert all(response.status_code == 200 for response in responses)


def test_the_right_password_in_a_burst_gets_in_only_if_it_was_one_of_the_few_checked(
    live_server, learner, password_checks
):
    browsers = [Browser(live_server.url) for _ in range(40)]
    right = 23  # where it stands in the burst matters not: what arrives first is checked

    responses = all_at_once(
        [
            lambda browser=browser, number=number: browser.sign_in(
                learner.username, PASSWORD if number == right else WRONG
            )
            for number, browser in enumerate(browsers)
        ]
    )

    checked = password_checks.checked
    assert signed_in(responses[right]) == (True in checked)
    if True in checked:
        # Among the first five checked; its success clears the account's count, as any does.
        assert checked.index(True) < ACCOUNT_FROM_ONE_ADDRESS
    else:
        assert len(checked) <= ACCOUNT_FROM_ONE_ADDRESS
    assert sum(signed_in(response) for response in responses) <= 1


def test_the_right_password_arriving_while_five_guesses_are_checked_is_refused_unchecked(
    live_server, learner, password_checks
):
    guessers = [Browser(live_server.url) for _ in range(39)]
    owner = Browser(live_server.url)
    password_checks.released.clear()  # the first checks wait while the burst goes on
    burst = threading.Thread(
        target=all_at_once,
        args=(
            [
                lambda browser=browser: browser.sign_in(learner.username, WRONG)
                for browser in guessers
            ],
            password_checks,
        ),
    )
    burst.start()
    # Five passwords are being checked, and every other guess has been answered unchecked.
    password_checks.wait_for(
        lambda: (
            len(password_checks.checked) == ACCOUNT_FROM_ONE_ADDRESS
            and len(password_checks.answered) == len(guessers) - ACCOUNT_FROM_ONE_ADDRESS
        )
    )

    response = owner.sign_in(learner.username, PASSWORD)
    password_checks.released.set()
    burst.join(timeout=TIMEOUT * 2)

    assert response.status_code == 200 and TOO_MANY in response.text
    assert password_checks.checked == [False] * ACCOUNT_FROM_ONE_ADDRESS
    assert len(password_checks.answered) == len(guessers)
    assert not any(signed_in(answer) for answer in password_checks.answered)
    assert not owner.is_signed_in()
