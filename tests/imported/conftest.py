"""The scripted backend and HELMET's planted answers serve the test that runs ``--protocol helmet`` on
the files HELMET's imported outputs read."""

from tests.helmet.conftest import helmet_planted  # noqa: F401
from tests.ruler.conftest import scripted  # noqa: F401
