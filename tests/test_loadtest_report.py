"""The load test's figures (bench.loadtest.report): pages, errors around the kill, upstream."""

from __future__ import annotations

from bench.loadtest.report import (
    Fault,
    RunFigures,
    Sample,
    UpstreamCheck,
    Window,
    check_upstream,
    cpu_rows,
    errors_by_kind,
    page_name,
    page_rows,
    render_costs,
    render_table,
    request_costs,
    table_rows,
)


def sandbox_report(*entries: tuple[int, int, dict[str, str] | None], refused: int = 0) -> dict:
    return {
        "assessments": [
            {
                "assessment_id": assessment_id,
                "user_id": f"u{assessment_id}",
                "accepted": accepted,
                "refused_as_already_submitted": refused,
                "answers": answers,
            }
            for assessment_id, accepted, answers in entries
        ],
        "submit_statuses": {"200": 2, "503": 1},
    }


def test_requests_are_named_by_page_without_ids() -> None:
    assert page_name("GET", "/me/assessments/1042/page/3/") == "question page"
    assert page_name("POST", "/me/assessments/1042/page/3/") == "save page"
    assert page_name("POST", "/me/assessments/7/submit/") == "send answers (upstream)"
    assert page_name("GET", "/learners/?page=2") == "staff: learner list"
    assert page_name("POST", "/accounts/login/") == "sign in (password check)"
    assert page_name("GET", "/nowhere/") == "other GET"


def test_percentiles_leave_errors_out_and_carry_each_page_target() -> None:
    samples = [Sample("results", 0, seconds / 100, 200) for seconds in range(1, 101)]
    samples.append(Sample("results", 0, 30.0, 502, "HTTP 502"))
    samples.append(Sample("start (upstream)", 0, 0.4, 302))

    rows = {row[0]: row for row in page_rows(samples)}

    assert rows["results"] == ("results", 100, 0.5, 0.95, 0.5)
    assert rows["start (upstream)"][4] == 1.0


def test_errors_are_split_by_whether_they_overlap_the_kill() -> None:
    window = Window(100.0, 110.0)
    cut = Sample("save page", 99.0, 1.5, 502, "HTTP 502")  # in flight when the kill came
    late = Sample("save page", 200.0, 0.1, 500, "HTTP 500")

    inside, outside = errors_by_kind([cut, late, Sample("results", 105, 0.1, 200)], window)

    assert inside == {"HTTP 502 (save page)": 1}
    assert outside == {"HTTP 500 (save page)": 1}


def test_an_attempt_passes_only_when_accepted_exactly_once_with_every_saved_answer() -> None:
    sent = {1: {"a-1", "a-2"}, 2: {"a-3", "a-4"}, 3: {"a-5"}}
    report = sandbox_report(
        (1, 1, {"q1": "a-1", "q2": "a-2"}),
        (2, 2, {"q3": "a-3", "q4": "a-9"}),  # accepted twice, and one answer not the saved one
        (3, 0, None),  # never arrived
        (4, 1, {"q5": "a-7"}),  # arrived, though no learner says it sent it
    )

    check = check_upstream(sent, report)

    assert check.attempts == 3
    assert check.exactly_once == 1
    assert check.not_once == {2: 2, 3: 0, 4: 1}
    assert check.answers_saved == 5
    assert check.answers_lost == 2  # a-4 of attempt 2 and a-5 of attempt 3


def test_the_table_fails_what_misses_its_target_and_passes_the_rest() -> None:
    samples = [Sample("question page", float(n), 0.05, 200) for n in range(20)]
    samples.append(Sample("save page", 50.0, 0.2, 502, "HTTP 502"))
    upstream = UpstreamCheck(attempts=2, exactly_once=2, answers_saved=44, answers_lost=0)
    figures = RunFigures(3, 2, 100.0, samples, Window(49.0, 60.0), upstream, "web-a")

    rows = {row[0]: row for row in table_rows(figures)}
    text = render_table(table_rows(figures))

    assert rows["learners completed (signed in, answered, sent, read results)"][3] == "FAIL"
    assert rows["errors outside the kill"][1:] == ("none", "0", "PASS")
    assert rows["errors during the kill (web-a)"][1] == "1 x HTTP 502 (save page)"
    assert rows["question page: p50 / p95 (20 requests)"][1:] == (
        "50 / 50 ms",
        "p95 < 500 ms",
        "PASS",
    )
    assert rows["lost answers (saved by a learner, missing upstream)"][1] == "0 of 44"
    assert "21; 0.2/s over 100 s" in text


def test_a_fault_run_allows_only_its_faults_errors_and_no_500_anywhere() -> None:
    samples = [Sample("question page", float(n), 0.05, 200) for n in range(0, 100, 5)]
    samples.append(Sample("save page", 31.0, 0.2, 503, "HTTP 503"))  # Redis down: not allowed
    samples.append(Sample("save page", 71.0, 0.2, 503, "HTTP 503"))  # database down: allowed
    samples.append(Sample("results", 72.0, 0.3, 500, "HTTP 500"))  # never allowed
    upstream = UpstreamCheck(attempts=1, exactly_once=1, answers_saved=10, answers_lost=0)
    faults = [
        Fault("the Redis outage", Window(30.0, 45.0)),
        Fault("the PostgreSQL restart", Window(70.0, 80.0), ("HTTP 503",)),
    ]
    figures = RunFigures(1, 1, 100.0, samples, None, upstream, "", faults, ["imports"])

    rows = {row[0]: row for row in table_rows(figures)}

    assert rows["errors outside the kill and the faults"][1:] == ("none", "0", "PASS")
    assert rows["errors during the Redis outage (30-45 s)"][1:] == (
        "1 x HTTP 503 (save page)",
        "none",
        "FAIL",
    )
    assert rows["errors during the PostgreSQL restart (70-80 s)"][1:] == (
        "1 x HTTP 503 (save page); 1 x HTTP 500 (results)",
        "HTTP 503 only",
        "FAIL",
    )
    assert rows["HTTP 500 at any time"][1:] == ("1", "0", "FAIL")
    assert rows["processes stopped by themselves at the end"][1:] == ("imports", "none", "FAIL")


def test_cpu_per_journey_counts_the_portals_processes_only() -> None:
    figures = RunFigures(
        learners=4,
        completed=4,
        seconds=100.0,
        samples=[],
        window=None,
        upstream=UpstreamCheck(),
        cpu={
            "web (gunicorn)": 6.0,
            "workers and sweep": 2.0,
            "PostgreSQL": 1.0,
            "sandbox": 50.0,
            "load generator": 25.0,
        },
        load_average=(1.0, 4.5, 2.0),
        connections=17,
    )

    rows = {row[0]: row[1] for row in cpu_rows(figures)}

    per_journey = "portal CPU per completed journey (web + workers, over 4)"
    assert rows[per_journey] == "2.000 s (PostgreSQL 0.250 s more)"  # 8 s / 4, not the sandbox
    assert "the generator used 25% of a core" in rows["CPU seconds over the run, by process"]
    assert rows["database connections open at once (highest)"] == "17"
    assert rows["load average (1 min): at the start / highest / at the end"] == "1.0 / 4.5 / 2.0"


def test_request_costs_are_summed_per_route_from_the_log_lines() -> None:
    lines = [
        "17:01:37,698 INFO portal.requests [f47c] POST /me/assessments/<int:assessment_id>"
        "/answers/ 200 55.6 ms (cpu 6.0 ms, 4 queries) role=learner",
        "17:01:37,699 INFO portal.requests [f47d] POST /me/assessments/<int:assessment_id>"
        "/answers/ 200 43.8 ms (cpu 4.0 ms, 2 queries) role=learner",
        "17:01:37,700 INFO portal.requests [f47e] GET / 302 3.0 ms (cpu 2.0 ms, 1 queries)"
        " role=learner",
        "17:01:37,701 INFO portal.partner_api [-] partner API create-learner POST -> 201",
    ]

    rows = request_costs(lines)

    assert rows == [
        ("POST /me/assessments/<int:assessment_id>/answers/", 2, 5.0, 3.0),
        ("GET /", 1, 2.0, 1.0),
    ]
    table = render_costs(rows)
    assert "10.0" not in table and "0.0" in table  # CPU s in all: 0.01 s for the two autosaves
    assert table.splitlines()[1].split()[-4:] == ["2", "5.0", "3.0", "0.0"]
