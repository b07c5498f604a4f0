"""Exact raw bodies, compressed against the previous body of the same call.

Consecutive requests of a call share almost everything (the history is
re-sent), so each body is zstd-compressed with the previous body as a raw
dictionary: what is stored is roughly what is new. Every Nth turn stores a
whole copy, which bounds the chain walked to read one body back.
"""

import hashlib

import zstandard

WHOLE = "zstd"
DELTA = "zstd-prev"  # needs the previous turn's body as dictionary

_LEVEL = 3


def compress_whole(raw: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=_LEVEL).compress(raw)


_LARGE = 512 * 1024


def compress_delta(raw: bytes, previous: bytes) -> bytes:
    dictionary = zstandard.ZstdCompressionDict(previous, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    if len(previous) + len(raw) <= _LARGE:
        return zstandard.ZstdCompressor(level=_LEVEL, dict_data=dictionary).compress(raw)
    # Past about 1 MiB the level's default window and hash table no longer
    # cover the whole dictionary, and a delta grows to the size of the body:
    # size both to the bodies (the fast strategy keeps that cheap: a 7 MB
    # body compresses against its predecessor to under 1 KB in ~40 ms).
    parameters = zstandard.ZstdCompressionParameters.from_level(
        1,
        window_log=max(20, (len(previous) + len(raw)).bit_length()),
        hash_log=max(17, len(previous).bit_length() - 3),
    )
    return zstandard.ZstdCompressor(
        compression_params=parameters, dict_data=dictionary
    ).compress(raw)


def decompress(codec: str, blob: bytes, previous: bytes | None = None) -> bytes:
    if codec == WHOLE:
        return zstandard.ZstdDecompressor().decompress(bytes(blob))
    if codec == DELTA:
        if previous is None:
            raise ValueError("a delta-compressed body needs the previous body")
        dictionary = zstandard.ZstdCompressionDict(
            previous, dict_type=zstandard.DICT_TYPE_RAWCONTENT
        )
        return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(bytes(blob))
    raise ValueError(f"unknown raw codec {codec!r}")


def restore(chain: list[tuple[str, bytes]], expected_sha256: str) -> bytes:
    """The last body of `chain`: (codec, blob) pairs from a whole copy forward."""
    body = None
    for codec, blob in chain:
        body = decompress(codec, blob, body)
    if body is None or hashlib.sha256(body).hexdigest() != expected_sha256:
        # Never serve bytes that are not what the agent sent.
        raise ValueError("stored raw body does not match its SHA-256")
    return body
