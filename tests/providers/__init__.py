"""Tests: providers."""
