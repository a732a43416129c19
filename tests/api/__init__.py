"""HTTP API tests (httpx against the ASGI app through TestClient)."""
