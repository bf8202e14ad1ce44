"""Tests: audit."""
