"""Shared test data for the client's unit tests: a fake upstream's addresses and secrets."""

import json
from pathlib import Path
from typing import Any

import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

DATA = Path(__file__).parent / "data"
BASE = "https://partner.example/plapi/v1/partners"
API_KEY = "pk_live_S3cr3tPartnerKey0042"
LEARNER_ID = "6f1c2a9e-4b7d-4e21-9c3a-52d8e0b1a7f4"
PASSWORD = "Tr0ub4dor&3-horse"

CREATE_URL = f"{BASE}/users/create-learner"
NEXT_URL = f"{BASE}/assessments/next-assessment"
VIEW_URL = f"{BASE}/assessments/view-assessment/412"
SUBMIT_URL = f"{BASE}/assessments/submit-assessment"
RESULTS_URL = f"{BASE}/assessments/results/412"


def payload(name: str) -> Any:
    """Load a recorded upstream payload from tests/data."""
    return json.loads((DATA / name).read_text())


def connection_refused() -> requests.ConnectionError:
    """Build the exception requests raises when the upstream refuses the connection."""
    reason = NewConnectionError(None, "Failed to establish a new connection: Connection refused")
    return requests.ConnectionError(MaxRetryError(None, "/plapi/v1/partners", reason))


def connection_reset() -> requests.ConnectionError:
    """Build the exception requests raises when the upstream drops the connection."""
    cause = ProtocolError("Connection aborted.", ConnectionResetError(104, "reset by peer"))
    return requests.ConnectionError(cause)
