"""A local S3-compatible endpoint (moto's server) on 127.0.0.1 for the object-store tests.

The server runs in a thread of the pytest process on a free port and is stopped after the session. Tests
reach it with explicit options (``s3_options``) or with the AWS environment variables (``s3_env``).
"""

from __future__ import annotations

import uuid

import pytest

ACCESS_KEY, SECRET_KEY, REGION = "hoodpy-test", "hoodpy-test-secret", "us-east-1"


@pytest.fixture(scope="session")
def s3_endpoint():
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_options(s3_endpoint) -> dict[str, str]:
    """hoodpy options naming the endpoint and credentials (Hadoop and Hudi key names)."""
    return {"spark.hadoop.fs.s3a.endpoint": s3_endpoint, "hoodie.aws.access.key": ACCESS_KEY,
            "hoodie.aws.secret.key": SECRET_KEY, "spark.hadoop.fs.s3a.path.style.access": "true"}


@pytest.fixture
def s3_env(s3_endpoint) -> dict[str, str]:
    """The AWS SDK's environment variables for the endpoint (for child processes)."""
    return {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION}


@pytest.fixture
def bucket(s3_endpoint) -> str:
    """A fresh bucket per test."""
    import boto3

    name = f"lake-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                 region_name=REGION).create_bucket(Bucket=name)
    return name


def hudi_rs_storage_options(endpoint: str) -> dict[str, str]:
    """hudi-rs (object_store) names for the same endpoint."""
    return {"aws_endpoint_url": endpoint, "aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION, "aws_allow_http": "true"}
