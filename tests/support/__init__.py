"""Test support code shared by K1412's test files (scripted model server, helpers)."""
