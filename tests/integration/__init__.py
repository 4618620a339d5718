"""Integration tests against real external services (Phoenix); run by `make test-integration`."""
