"""How to reach one S3-compatible store from resolved storage options: pyarrow's file system for data,
a boto3 client for the conditional requests pyarrow cannot make."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from hoodpy.config import HoodieConfig
from hoodpy.config.filesystem import FileSystemConfig


@dataclass(frozen=True)
class S3Settings:
    """How to reach one S3-compatible store, from resolved options."""

    access_key: str | None
    secret_key: str | None
    session_token: str | None
    endpoint_url: str | None  # with scheme
    region: str | None
    path_style: bool

    @classmethod
    def of(cls, options: Mapping[str, str]) -> S3Settings:
        config = HoodieConfig.of(options)
        endpoint = config.get(FileSystemConfig.S3_ENDPOINT)
        ssl = config.get(FileSystemConfig.S3_SSL_ENABLED)
        if endpoint and "://" not in endpoint:
            endpoint = ("http://" if ssl is False else "https://") + endpoint
        path_style = config.get(FileSystemConfig.S3_PATH_STYLE_ACCESS)
        region = config.get(FileSystemConfig.S3_REGION) or ("us-east-1" if endpoint else None)
        return cls(config.get(FileSystemConfig.S3_ACCESS_KEY), config.get(FileSystemConfig.S3_SECRET_KEY),
                   config.get(FileSystemConfig.S3_SESSION_TOKEN), endpoint, region,
                   bool(endpoint) if path_style is None else path_style)

    def arrow_file_system(self) -> pafs.S3FileSystem:
        kwargs: dict[str, object] = {"region": self.region, "force_virtual_addressing": not self.path_style}
        if self.access_key and self.secret_key:
            kwargs.update(access_key=self.access_key, secret_key=self.secret_key, session_token=self.session_token)
        if self.endpoint_url:
            parts = urlsplit(self.endpoint_url)
            kwargs.update(endpoint_override=parts.netloc + parts.path.rstrip("/"), scheme=parts.scheme)
        return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})

    def boto3_client(self):
        try:
            import boto3
            from botocore.config import Config
        except ImportError:  # the caller names what needs it
            return None
        return boto3.client(
            "s3", endpoint_url=self.endpoint_url, region_name=self.region, aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key, aws_session_token=self.session_token,
            config=Config(s3={"addressing_style": "path" if self.path_style else "auto"},
                          retries={"max_attempts": 5, "mode": "standard"}))
