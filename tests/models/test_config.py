"""The model client's settings: what is refused before any call."""

import re

import pytest

from sortie.core.errors import ParameterError
from sortie.models.config import ModelConfig


@pytest.mark.parametrize(
    ("url", "timeout", "found"),
    [
        ("localhost:8000", "30", "base_url 'localhost:8000' is not http(s)://HOST"),
        ("http://localhost:8000/v1", "0", "timeout must be > 0 seconds"),
    ],
)
def test_a_base_url_without_a_scheme_or_a_zero_timeout_is_refused_before_any_call(
    url, timeout, found
):
    """Neither reaches the server as "unreachable (?:?)": each is named in one line."""
    with pytest.raises(ParameterError, match=re.escape(found)):
        ModelConfig.from_args({"model": "m", "base_url": url, "timeout": timeout}, environ={})
