"""`manage.py demo_roster` writes records the demo trust's portal takes without a problem."""

import io

import pytest
from django.core.management import call_command

from demo.trust import demo_schools
from roster.planning import plan_sync
from roster.reading import read_roster

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_the_demo_roster_brings_both_schools_pupils_classes_and_teachers(tmp_path, version):
    demo_schools()
    target = tmp_path / "roster.zip"
    call_command("demo_roster", str(target), "--oneroster", version, stdout=io.StringIO())

    plan = plan_sync(read_roster(target))

    assert plan.problems == [] and plan.hold_reasons == []
    by_school = {school.name: school for school in plan.schools}
    assert sorted(by_school) == ["Ash Academy", "Oak Primary"]
    assert len(by_school["Ash Academy"].joiners) == 24
    assert len(by_school["Oak Primary"].joiners) == 12
    assert {c.name for c in by_school["Ash Academy"].new_classes} >= {"8A English", "8B English"}
    assert {m.email for m in by_school["Oak Primary"].staff} == {"amira.khan@oak.example"}


def test_leaving_pupils_out_writes_fewer_of_ash_academys(tmp_path):
    target = tmp_path / "fewer.zip"
    call_command("demo_roster", str(target), "--without", "6", stdout=io.StringIO())

    files = read_roster(target)

    ash = [p for p in files.people.values() if p.role == "student" and "org-ash" in p.org_ids]
    assert len(ash) == 18
