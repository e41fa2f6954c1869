"""File-system scope: how hoodpy reaches the table's storage (object-store endpoint and credentials).

Hudi itself reads these from the Hadoop configuration (``fs.s3a.*``) and, for AWS services, from
``hoodie.aws.*``. hoodpy accepts the same names: as per-table options, as Spark conf (``spark.hadoop.fs.s3a.*``,
read from the session when a table on an object store is opened), and falls back to the AWS SDK's
environment variables. The resolved values travel with the table's base URI into executor tasks.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool

# Environment variables consulted (on the driver) when no option or Spark conf sets a value.
ENV_FALLBACKS: dict[str, tuple[str, ...]] = {
    "hoodie.aws.access.key": ("AWS_ACCESS_KEY_ID",),
    "hoodie.aws.secret.key": ("AWS_SECRET_ACCESS_KEY",),
    "hoodie.aws.session.token": ("AWS_SESSION_TOKEN",),
    "spark.hadoop.fs.s3a.endpoint": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "spark.hadoop.fs.s3a.endpoint.region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}


class FileSystemConfig:
    S3_ACCESS_KEY = ConfigKey(
        "hoodie.aws.access.key", None,
        aliases=("spark.hadoop.fs.s3a.access.key", "fs.s3a.access.key"),
        doc="S3 access key id (Hudi's HoodieAWSConfig key; Hadoop's fs.s3a.access.key; env AWS_ACCESS_KEY_ID).",
    )
    S3_SECRET_KEY = ConfigKey(
        "hoodie.aws.secret.key", None,
        aliases=("spark.hadoop.fs.s3a.secret.key", "fs.s3a.secret.key"),
        doc="S3 secret access key (fs.s3a.secret.key; env AWS_SECRET_ACCESS_KEY).",
    )
    S3_SESSION_TOKEN = ConfigKey(
        "hoodie.aws.session.token", None,
        aliases=("spark.hadoop.fs.s3a.session.token", "fs.s3a.session.token"),
        doc="S3 session token of temporary credentials (fs.s3a.session.token; env AWS_SESSION_TOKEN).",
    )
    S3_ENDPOINT = ConfigKey(
        "spark.hadoop.fs.s3a.endpoint", None, aliases=("fs.s3a.endpoint",),
        doc="S3-compatible endpoint, e.g. http://127.0.0.1:9000 (env AWS_ENDPOINT_URL); default AWS.",
    )
    S3_REGION = ConfigKey(
        "spark.hadoop.fs.s3a.endpoint.region", None, aliases=("fs.s3a.endpoint.region",),
        doc="S3 region (env AWS_REGION / AWS_DEFAULT_REGION); default us-east-1 with a custom endpoint.",
    )
    S3_PATH_STYLE_ACCESS = ConfigKey(
        "spark.hadoop.fs.s3a.path.style.access", None, parse_bool, aliases=("fs.s3a.path.style.access",),
        doc="Address buckets as endpoint/bucket/key; default true with a custom endpoint, else false.",
    )
    S3_SSL_ENABLED = ConfigKey(
        "spark.hadoop.fs.s3a.connection.ssl.enabled", None, parse_bool,
        aliases=("fs.s3a.connection.ssl.enabled",),
        doc="https to the endpoint; default from the endpoint's scheme (https when it has none).",
    )

    @staticmethod
    def keys() -> tuple[ConfigKey, ...]:
        c = FileSystemConfig
        return (c.S3_ACCESS_KEY, c.S3_SECRET_KEY, c.S3_SESSION_TOKEN, c.S3_ENDPOINT, c.S3_REGION,
                c.S3_PATH_STYLE_ACCESS, c.S3_SSL_ENABLED)
