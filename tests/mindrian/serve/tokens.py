"""JWTs for test users: an RSA key pair for the server and PyJWT to sign tokens with it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = ["ADMIN_SCOPES", "USER_SCOPES", "Issuer"]

#: What an ordinary user needs: run agents, and read, write and delete their sessions.
USER_SCOPES = ("agents:read", "agents:run", "sessions:read", "sessions:write", "sessions:delete")
#: AgentOS's admin scope: every route, every user's sessions.
ADMIN_SCOPES = ("agent_os:admin",)


@dataclass(frozen=True)
class Issuer:
    """Signs RS256 tokens the server verifies with :attr:`public_pem`."""

    bits: int = 2048
    """RSA key size."""

    @cached_property
    def _key(self) -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=self.bits)

    @property
    def public_pem(self) -> str:
        """The public key, PEM: the server's ``JWT_VERIFICATION_KEY``."""
        return (
            self._key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def token(self, user: str, scopes: tuple[str, ...] = USER_SCOPES) -> str:
        """A token for ``user`` (its ``sub``) with ``scopes``, valid for a day.

        Modules mint their tokens when they are collected, and a loaded machine can reach their
        tests long after: ten minutes made them expire mid-suite."""
        claims = {"sub": user, "scopes": list(scopes), "exp": int(time.time()) + 86_400}
        return jwt.encode(claims, self._key, algorithm="RS256")

    def headers(self, user: str, scopes: tuple[str, ...] = USER_SCOPES) -> dict[str, str]:
        """The ``Authorization`` header of :meth:`token`."""
        return {"Authorization": f"Bearer {self.token(user, scopes)}"}
