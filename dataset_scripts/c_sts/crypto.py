"""Decrypting the C-STS release in memory, byte-compatible with ``openssl enc``.

The authors encrypt with ``openssl aes-256-cbc -a -salt -pbkdf2 -pass pass:PW``: the output is
base64 text of ``b"Salted__" + salt(8) + ciphertext``; key (32 bytes) and IV (16 bytes) are the
first 48 bytes of PBKDF2-HMAC-SHA256(password, salt, 10,000 iterations); the plaintext is
PKCS#7-padded. Here the same steps run through the ``cryptography`` package (imported on use).
"""

from __future__ import annotations

import binascii
import hashlib
import io
import tarfile
from pathlib import PurePosixPath

from ..errors import DataValidationError

MAGIC = b"Salted__"
PBKDF2_ITERATIONS = 10_000


def _key_iv(armored: bytes, password: str, name: str) -> tuple[bytes, bytes]:
    """(key + IV, ciphertext) of ``openssl enc -a -salt -pbkdf2`` output ``armored``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    try:
        blob = binascii.a2b_base64(b"".join(armored.split()))
    except binascii.Error as exc:
        raise DataValidationError(name, None, "not base64 text as written by `openssl enc -a`",
                                  str(exc)) from None
    if len(blob) < 32 or not blob.startswith(MAGIC) or (len(blob) - 16) % 16:
        raise DataValidationError(name, None, "not an `openssl enc -salt` file: damaged or "
                                  "truncated", "no Salted__ header, or not whole AES blocks")
    salt, ciphertext = blob[8:16], blob[16:]
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=48, salt=salt, iterations=PBKDF2_ITERATIONS)
    return kdf.derive(password.encode("utf-8")), ciphertext


def key_fingerprint(armored: bytes, password: str, *, name: str = "input") -> str:
    """A fingerprint of the key ``password`` derives for ``armored``: it differs for a wrong
    password (a cache keyed on it never answers one) and reveals neither password nor key."""
    key_iv, _ = _key_iv(armored, password, name)
    return hashlib.sha256(b"c-sts key fingerprint\0" + key_iv).hexdigest()[:16]


def openssl_decrypt(armored: bytes, password: str, *, name: str = "input") -> bytes:
    """Plaintext of ``openssl aes-256-cbc -a -salt -pbkdf2`` output ``armored``.

    Raises ``DataValidationError`` naming ``name`` when the base64, the ``Salted__`` header or
    the PKCS#7 padding is wrong (a wrong password almost always shows as bad padding).
    """
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key_iv, ciphertext = _key_iv(armored, password, name)
    decryptor = Cipher(algorithms.AES(key_iv[:32]), modes.CBC(key_iv[32:])).decryptor()
    padded = decryptor.update(ciphertext) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError:
        raise DataValidationError(name, None, "wrong password, or the file is damaged",
                                  "bad PKCS#7 padding after decryption") from None


def read_tar_members(data: bytes, names: tuple[str, ...], *, name: str = "input") -> dict[str, bytes]:
    """The bytes of the members called ``names`` (optionally under ``./``) of a tar archive, read
    in memory: nothing is extracted to disk, and no other member is touched. A name held twice
    is an error (``tar`` would silently let the last one win)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            found = {}
            for member in archive.getmembers():
                base = PurePosixPath(member.name)
                if member.isfile() and base.name in names and len(base.parts) <= 2 \
                        and base.parts[0] in (base.name, "."):
                    if base.name in found:
                        raise DataValidationError(name, None, f"the archive holds {base.name} "
                                                  "twice", f"second copy: member {member.name!r}")
                    found[base.name] = archive.extractfile(member).read()
    except tarfile.TarError as exc:
        raise DataValidationError(name, None, "wrong password, or the file is damaged",
                                  f"decrypted bytes are not a tar archive: {exc}") from None
    missing = [n for n in names if n not in found]
    if missing:
        raise DataValidationError(name, None, "the archive lacks " + ", ".join(missing),
                                  f"it holds {sorted(found)}")
    return found
