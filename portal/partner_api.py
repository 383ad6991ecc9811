"""The client's old address, kept as a contract: `from portal import partner_api` still works.

Checks and scripts import the client by this path (../shared/DESIGN.md, section 3); the code
lives in the top-level `partner_api` app.
"""

from partner_api import *  # noqa: F403
from partner_api import __all__  # noqa: F401
