"""The three servers the benchmark compares (ours, the official SDK's, a bare WSGI ceiling)."""
