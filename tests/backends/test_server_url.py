"""``--base-url``: what is recorded has no credentials or query; what is malformed is refused without
being quoted; ``--api-key-env`` takes a variable's name, never a key."""

from __future__ import annotations

import pytest

from coca_eval.backends.options import EngineOptions
from coca_eval.backends.server_url import parse_server_url, public_url
from coca_eval.errors import CocaEvalError


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("https://bob:s3cret@api.example.org/v1?api_key=tok#x", "https://api.example.org/v1"),
        ("http://[::1]:8000/v1?code=abc&api-version=2", "http://[::1]:8000/v1"),
    ],
)
def test_the_public_url_has_no_credentials_and_no_query(url, public):
    assert public_url(url) == public


def test_the_secrets_stay_available_for_the_requests():
    url = parse_server_url("http://bob:p%40ss@host:1/v1?token=tok")
    assert url.request_url("/models") == "http://host:1/v1/models?token=tok"
    assert url.basic_auth() == "Basic Ym9iOnBAc3M="  # bob:p@ss
    assert {"p@ss", "tok"} <= set(url.secrets())
    assert "p@ss" not in repr(url) and "tok" not in repr(url)
    assert parse_server_url("http://host/v1").basic_auth() is None


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://host/v1", "http://", "http://u:pw@host:port/v1"])
def test_a_malformed_url_is_refused_without_quoting_it(url):
    with pytest.raises(CocaEvalError, match="--base-url must be an http") as caught:
        EngineOptions(base_urls=(url,))
    assert "pw" not in str(caught.value)  # the URL is not quoted: it may hold a password


def test_a_run_records_the_public_url_only():
    options = EngineOptions(base_urls=["http://u:pw@h:1/v1?key=k", "https://h2/v1"], api_key_env="MY_KEY")
    assert options.describe() == {
        "tensor_parallel_size": 1,
        "pipeline_parallel_size": 1,
        "data_parallel_size": 1,
        "base_urls": ["http://h:1/v1", "https://h2/v1"],
        "max_concurrent": 4,
        "request_timeout": 120.0,
        "api_key_env": "MY_KEY",
    }


def test_api_key_env_takes_a_name_not_a_key():
    with pytest.raises(CocaEvalError, match="not the key") as caught:
        EngineOptions(api_key_env="sk-live-abc123")
    assert "sk-live" not in str(caught.value)
