"""The README's first screen: what the portal is, the two commands and a five-step "Try it"."""

import io
import re
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command

from accounts.access import working_school
from classes.models import SchoolGroup
from demo.management.commands import demo_staff
from learners.models import Learner, Level
from schools.models import School

README = Path(settings.BASE_DIR) / "README.md"
FIRST_SCREEN = 40  # lines
USERNAME = re.compile(r"`([a-z][a-z0-9]*(?:[.-][a-z0-9]+)+)`")


def first_screen() -> list[str]:
    return README.read_text().splitlines()[:FIRST_SCREEN]


def try_it() -> str:
    """Return the "Try it" section, up to the next heading."""
    text = README.read_text()
    section = text.split("\n## Try it\n", 1)[1]
    return section.split("\n## ", 1)[0]


def test_the_first_screen_has_the_two_commands_and_five_steps_before_anything_else():
    lines = first_screen()

    headings = [line for line in lines if line.startswith("## ")]
    assert headings[0] == "## Try it"
    assert any(line.startswith("make run ") for line in lines)
    assert any(line.startswith("make test ") for line in lines)
    steps = [int(m.group(1)) for line in lines if (m := re.match(r"(\d)\. \*\*", line))]
    assert steps == [1, 2, 3, 4, 5]
    # What it is comes first: a few sentences under the title, before the commands.
    assert lines[0] == "# Partner portal"
    assert "Django site" in " ".join(lines[:8])


def test_every_account_the_steps_name_is_made_by_the_demo_as_they_describe_it(
    db, upstream, tmp_path, monkeypatch
):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")
    call_command("demo_staff", stdout=io.StringIO())
    call_command("seed_demo", learners=16, wait=5, stdout=io.StringIO(), stderr=io.StringIO())

    named = set(USERNAME.findall(try_it()))
    assert {"demo-staff", "demo-admin", "finn.ward"} <= named
    missing = [name for name in sorted(named) if not User.objects.filter(username=name).exists()]
    assert missing == []
    # Step 3's pupil: a primary pupil of Oak Primary's Year 5 Oak who has not started yet.
    finn = Learner.objects.get(username="finn.ward")
    assert (finn.first_name, finn.last_name, finn.level) == ("Finn", "Ward", Level.PRIMARY)
    assert finn.school.name == "Oak Primary"
    assert not finn.attempts.exists()
    year_5_oak = SchoolGroup.objects.get(name="Year 5 Oak")
    assert year_5_oak.school == finn.school
    assert year_5_oak.memberships.filter(learner=finn).exists()
    for words in ("Finn Ward", "Year 5 Oak", "Oak Primary"):
        assert words in try_it()


def step(number: int) -> str:
    """Return one numbered step of "Try it", joined onto one line."""
    text = try_it().split(f"\n{number}. ", 1)[1].split(f"\n{number + 1}. ", 1)[0]
    return " ".join(text.split())


def test_the_steps_say_where_demo_staff_starts_and_where_finns_alert_is(
    db, upstream, tmp_path, monkeypatch
):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")
    call_command("demo_staff", stdout=io.StringIO())
    call_command("seed_demo", learners=6, wait=5, stdout=io.StringIO(), stderr=io.StringIO())
    lead = User.objects.get(username="demo-staff")
    starts_in = School.objects.get(pk=working_school(lead)).name
    finns_school = Learner.objects.get(username="finn.ward").school.name

    # Signed in, demo-staff works in the first school by name until they pick another.
    assert (starts_in, finns_school) == ("Ash Academy", "Oak Primary")
    assert f"It opens in {starts_in}" in step(1)
    assert f"the school menu at the top switches to {finns_school}" in step(1)
    # Finn's alert is in Oak Primary: demo-staff finds it only after switching there.
    assert f"`demo-staff` and pick {finns_school} in the school menu" in step(4)
