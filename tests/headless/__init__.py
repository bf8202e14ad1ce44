"""Helpers for the API tests: JSON requests to the ``app`` and ``browser`` clients."""

import json

from django.test import Client

from tests.web import PASSWORD

API = "/_allauth/{client}/v1/"


class APIClient:
    """The Django test client speaking the API as ``client`` (``app``: the session token
    it was last given travels in ``X-Session-Token``; ``browser``: the cookies)."""

    def __init__(self, client="app", django_client=None):
        self.client = client
        self.http = django_client or Client()
        self.token = None

    def url(self, operation):
        return API.format(client=self.client) + operation

    def request(self, method, operation, data=None, headers=None):
        headers = dict(headers or {})
        if self.client == "app" and self.token:
            headers["X-Session-Token"] = self.token
        body = json.dumps(data) if data is not None else None
        kwargs = {"content_type": "application/json", "data": body} if body is not None else {}
        response = getattr(self.http, method.lower())(self.url(operation), headers=headers, **kwargs)
        token = (
            response.json().get("meta", {}).get("session_token")
            if response["Content-Type"].startswith("application/json")
            else None
        )
        if token:
            self.token = token
        return response

    def get(self, operation, **kwargs):
        return self.request("GET", operation, **kwargs)

    def post(self, operation, data=None, **kwargs):
        return self.request("POST", operation, data or {}, **kwargs)

    def delete(self, operation, data=None, **kwargs):
        return self.request("DELETE", operation, data, **kwargs)

    def signup(self, email="ada@example.com", username="ada", password=PASSWORD, **kwargs):
        return self.post("auth/signup", {"email": email, "username": username, "password": password}, **kwargs)

    def login(self, login="ada", password=PASSWORD):
        field = "email" if "@" in login else "username"
        return self.post("auth/login", {field: login, "password": password})
