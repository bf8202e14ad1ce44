"""Tests: protocol."""
