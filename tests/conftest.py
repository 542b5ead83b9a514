"""Suite-wide setup: every test runs behind the no-real-model, no-network guard."""

pytest_plugins = ["mindrian.testing.pytest_plugin"]
