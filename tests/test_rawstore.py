import hashlib
import json
import random

import pytest

from calls import rawstore
from calls.synthetic import synthetic_call


def test_a_chain_of_deltas_restores_every_body_byte_for_byte():
    bodies = synthetic_call(40, seed=3)
    chain = [(rawstore.WHOLE, rawstore.compress_whole(bodies[0]))]
    for previous, body in zip(bodies, bodies[1:]):
        chain.append((rawstore.DELTA, rawstore.compress_delta(body, previous)))
    for n, body in enumerate(bodies):
        assert rawstore.restore(chain[: n + 1], hashlib.sha256(body).hexdigest()) == body


def test_a_delta_is_small_when_little_is_new():
    bodies = synthetic_call(60, seed=1)
    delta = rawstore.compress_delta(bodies[-1], bodies[-2])
    assert len(delta) < len(bodies[-1]) / 20


def test_it_refuses_to_return_bytes_that_do_not_match_their_hash():
    blob = rawstore.compress_whole(b'{"messages":[]}')
    with pytest.raises(ValueError):
        rawstore.restore([(rawstore.WHOLE, blob)], hashlib.sha256(b"other").hexdigest())


@pytest.mark.parametrize("megabytes", [1, 3, 7])
def test_multi_megabyte_bodies_still_store_only_what_is_new(megabytes):
    rng = random.Random(megabytes)
    words = ["".join(rng.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(1000)) for _ in range(200)]
    messages = [{"role": "user", "content": rng.choice(words) + str(n)} for n in range(megabytes * 1000)]
    previous = json.dumps({"messages": messages}).encode()
    body = json.dumps({"messages": messages + [{"role": "user", "content": "and one more"}]}).encode()
    delta = rawstore.compress_delta(body, previous)
    assert len(delta) < 4096
    assert rawstore.decompress(rawstore.DELTA, delta, previous) == body
