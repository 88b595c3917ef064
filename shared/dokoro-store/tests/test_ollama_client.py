"""The one Ollama client: model matching, one cached health check, timeouts — against a fake server."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from dokoro_store.index.embedders.ollama_client import OllamaCallError, OllamaClient, OllamaServers, model_matches


def test_a_model_matches_exactly_or_with_a_tag_never_a_longer_name():
    assert model_matches("llama3.2:latest", "llama3.2")
    assert model_matches("llama3.2:3b", "llama3.2")
    assert model_matches("llama3.2", "llama3.2:latest")
    assert model_matches("llama3.2:3b", "llama3.2:3b")
    assert not model_matches("llama3.2-vision:latest", "llama3.2")
    assert not model_matches("llama3.2:1b", "llama3.2:3b")


def test_embeddings_and_chat_go_through_the_same_client(fake_ollama):
    client = OllamaClient(fake_ollama.url, timeout_s=5.0)

    assert client.healthy("nomic-embed-text") == (True, "")
    assert client.embed("nomic-embed-text", ["ab", "abcd"]) == [[1.0, 2.0], [1.0, 4.0]]
    assert json.loads(client.chat("llama3.2", [{"role": "user", "content": "hi"}], json_format=True)) == {"echo": "hi"}
    client.close()


def test_the_health_check_is_made_once_for_every_caller_and_model(fake_ollama):
    client = OllamaClient(fake_ollama.url, timeout_s=5.0)

    for _ in range(5):
        assert client.healthy("llama3.2")[0]
        assert client.healthy("nomic-embed-text")[0]
    ok, why = client.healthy("llama3.2-vision")

    assert fake_ollama.count("/api/tags") == 1
    assert not ok and "does not have the model llama3.2-vision" in why and "ollama pull" in why


def test_an_absent_server_costs_one_quick_failure_not_one_per_call():
    """Counted, not timed: a real socket on 127.0.0.1 that hangs up on every connection (no Ollama
    behind it) is asked once for five health checks; the failure is cached for the others."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[object] = []

    def hang_up() -> None:
        while True:
            try:
                accepted, _address = listener.accept()
            except OSError:  # the listener was shut down: the test is over
                return
            connections.append(accepted)
            accepted.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        client = OllamaClient(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=30.0)
        results = [client.healthy("llama3.2") for _ in range(5)]
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        listener.close()
        thread.join(timeout=30)

    assert all(not ok and "not reachable" in why for ok, why in results), results
    assert len(connections) == 1


def test_a_call_that_outlives_its_timeout_fails_with_a_clear_message_and_marks_the_server_down(fake_ollama):
    client = OllamaClient(fake_ollama.url, timeout_s=0.3)
    assert client.healthy("llama3.2")[0]
    fake_ollama.delay_s = 1.0

    with pytest.raises(OllamaCallError, match=r"did not answer within 0\.3s"):
        client.chat("llama3.2", [{"role": "user", "content": "slow"}])

    ok, why = client.healthy("llama3.2")
    assert not ok and "did not answer within 0.3s" in why
    assert fake_ollama.count("/api/tags") == 1  # marked down by the failed call, not checked again


def test_every_client_of_one_address_shares_one_health_check(fake_ollama):
    servers = OllamaServers()  # a store's
    embeddings = OllamaClient(fake_ollama.url, timeout_s=5.0, health=servers.health(fake_ollama.url))
    chat = servers.client(fake_ollama.url, timeout_s=60.0, health_timeout_s=1.0)

    assert embeddings.healthy("nomic-embed-text")[0]
    assert chat.healthy("llama3.2")[0]
    assert servers.client(fake_ollama.url, timeout_s=60.0, health_timeout_s=1.0) is chat

    assert fake_ollama.count("/api/tags") == 1
    servers.close()


def test_two_stores_ask_for_themselves_and_forgotten_health_is_asked_again(fake_ollama):
    """The health of an address is one per store (its OllamaServers), never the process's: a
    server gone from a port another then takes is asked again by the next store (how the failure
    of this file's hang-up test once arose: a fake's port reused by the next test)."""
    first, second = OllamaServers(), OllamaServers()

    assert first.client(fake_ollama.url, timeout_s=5.0).healthy("llama3.2") == (True, "")
    assert first.client(fake_ollama.url, timeout_s=5.0).healthy("llama3.2") == (True, "")
    assert fake_ollama.count("/api/tags") == 1  # the second call used the cached answer
    assert second.client(fake_ollama.url, timeout_s=5.0).healthy("llama3.2") == (True, "")
    assert fake_ollama.count("/api/tags") == 2  # another store asks for itself

    first.forget_health()

    assert first.client(fake_ollama.url, timeout_s=5.0).healthy("llama3.2") == (True, "")
    assert fake_ollama.count("/api/tags") == 3  # asked again
    first.close()
    second.close()
