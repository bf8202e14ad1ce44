"""Tests: engine."""
