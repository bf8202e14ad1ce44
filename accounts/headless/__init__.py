"""The JSON API for single-page and mobile apps: django-allauth's headless API, version 1.

Mount :mod:`accounts.headless.urls` (the demo mounts it at ``/_allauth/``): its paths are
``{browser|app}/v1/...``, with the request and response bodies, status codes and flow ids of
allauth's OpenAPI specification. Each view parses its input, calls one flow
(:mod:`accounts.internal.flows`, the stores) and renders the outcome; it never imports an
HTML view. See ``docs/headless-api.md``.
"""
