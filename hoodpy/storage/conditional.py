"""The conditional S3 requests pyarrow cannot make, and the probe that checks a store honours them.

Commits and the file-system lock need put-if-absent (``If-None-Match: *`` to create) and compare-and-swap
(``If-Match: <etag>`` to take over or release a lock); pyarrow has no conditional put, so these go through
boto3. Some S3-compatible stores (older MinIO and Ceph, some gateways) silently ignore the conditional
headers, which would make put-if-absent a plain overwrite without anyone noticing. So before relying on
them, a process probes each (endpoint, bucket) once (:func:`probe_conditional_requests`); a store that
fails the probe counts as having no put-if-absent: a single writer still works, the file-system lock is
refused.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass

from hoodpy.storage.s3 import S3Settings

_log = logging.getLogger(__name__)


class S3Conditional:
    """The few conditional S3 requests pyarrow cannot make (boto3; created lazily, never pickled)."""

    def __init__(self, settings: S3Settings, bucket: str):
        self.settings, self.bucket = settings, bucket
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = self.settings.boto3_client()
            if self._client is None:
                raise ImportError("boto3")
        return self._client

    @staticmethod
    def _precondition_failed(e: Exception) -> bool:
        response = getattr(e, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        # 409 ConditionalRequestConflict: a concurrent conditional write to the same key is in flight.
        return code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412)

    def put_if_absent(self, key: str, data: bytes) -> str | None:
        """The new object's ETag, or None when the key already exists."""
        try:
            return self.client.put_object(Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*")["ETag"]
        except Exception as e:  # noqa: BLE001 - botocore's ClientError; anything else propagates below
            if self._precondition_failed(e):
                return None
            raise

    def put_if_match(self, key: str, data: bytes, etag: str) -> str | None:
        try:
            return self.client.put_object(Bucket=self.bucket, Key=key, Body=data, IfMatch=etag)["ETag"]
        except Exception as e:  # noqa: BLE001
            if self._precondition_failed(e) or _not_found(e):
                return None
            raise

    def delete_if_match(self, key: str, etag: str) -> bool:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key, IfMatch=etag)
            return True
        except Exception as e:  # noqa: BLE001
            if self._precondition_failed(e) or _not_found(e):
                return False
            raise

    def get(self, key: str) -> tuple[bytes, str] | None:
        try:
            r = self.client.get_object(Bucket=self.bucket, Key=key)
        except Exception as e:  # noqa: BLE001
            if _not_found(e):
                return None
            raise
        return r["Body"].read(), r["ETag"]


@dataclass(frozen=True)
class ConditionalRequests:
    """What one S3-compatible store was seen to honour (measured by a probe, not assumed)."""

    endpoint: str
    bucket: str
    create: bool  # PUT with If-None-Match: * refuses an existing key (put-if-absent)
    replace: bool  # PUT and DELETE with If-Match refuse a stale ETag (lock take-over and release)
    problem: str = ""  # what failed, for error messages

    @property
    def where(self) -> str:
        return f"S3 endpoint {self.endpoint} (bucket {self.bucket!r})"


PROBE_PREFIX = ".hoodie/.aux/.conditional-requests-probe-"
_probed: dict[tuple[str, str], ConditionalRequests] = {}
_probe_guard = threading.Lock()


def probe_conditional_requests(conditional: S3Conditional, key_prefix: str) -> ConditionalRequests:
    """Whether the store honours conditional requests; probed once per (endpoint, bucket) per process.

    Under a fresh key below ``key_prefix``: a PUT with ``If-None-Match: *`` must succeed, a second one must
    be refused (412), a PUT and a DELETE with a stale ``If-Match`` must be refused too; the probe object is
    deleted afterwards. Errors other than a refusal or "not implemented" (credentials, network) propagate
    and leave nothing cached.
    """
    endpoint = conditional.settings.endpoint_url or "AWS default"
    cache_key = (endpoint, conditional.bucket)
    with _probe_guard:  # one probe per store even when several threads start writing at once
        known = _probed.get(cache_key)
        if known is None:
            known = _probe(conditional, f"{key_prefix}{uuid.uuid4().hex}", endpoint)
            _probed[cache_key] = known
            if known.problem:
                _log.warning("%s: %s", known.where, known.problem)
        return known


def _probe(conditional: S3Conditional, key: str, endpoint: str) -> ConditionalRequests:
    client, bucket = conditional.client, conditional.bucket
    stale = '"00000000000000000000000000000000"'

    def found(create: bool, replace: bool, problem: str = "") -> ConditionalRequests:
        return ConditionalRequests(endpoint, bucket, create, replace, problem)

    first = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"probe", IfNoneMatch="*"))
    if first != "accepted":
        # Nothing was created, so there is nothing to delete.
        return found(False, False, f"a PUT with If-None-Match: * of a new key was {first}, so hoodpy has "
                                   "no put-if-absent there")
    try:
        second = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"again", IfNoneMatch="*"))
        if second != "refused":
            return found(False, False, f"the store ignores If-None-Match: a second PUT with If-None-Match: * "
                                       f"of the same key was {second} instead of refused (412), so "
                                       "put-if-absent would silently overwrite")
        put = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"stale", IfMatch=stale))
        delete = _outcome(lambda: client.delete_object(Bucket=bucket, Key=key, IfMatch=stale))
        if put != "refused" or delete != "refused":
            verb, outcome = ("PUT", put) if put != "refused" else ("DELETE", delete)
            return found(True, False, f"the store ignores If-Match: a {verb} with a stale If-Match was "
                                      f"{outcome} instead of refused (412), so an expired lock cannot be "
                                      "taken over safely")
        return found(True, True)
    finally:
        conditional.client.delete_object(Bucket=bucket, Key=key)


def _outcome(request) -> str:
    """'accepted', 'refused' (412 / 409) or 'not implemented' (501); any other error propagates."""
    try:
        request()
        return "accepted"
    except Exception as e:  # noqa: BLE001 - botocore's ClientError, classified below
        if S3Conditional._precondition_failed(e):
            return "refused"
        response = getattr(e, "response", None) or {}
        if response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 501 or \
                str(response.get("Error", {}).get("Code", "")) == "NotImplemented":
            return "not implemented"
        raise


def _not_found(e: Exception) -> bool:
    response = getattr(e, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) in ("NoSuchKey", "404", "NotFound") or \
        response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404
