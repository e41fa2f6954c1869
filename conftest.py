"""Root conftest: pytest only honours ``pytest_plugins`` here (tests/dbt needs dbt-tests-adapter's project
fixtures; they are plain, non-autouse fixtures, so other tests are unaffected)."""

pytest_plugins = ["dbt.tests.fixtures.project"]
