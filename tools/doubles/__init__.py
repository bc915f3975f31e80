"""Test doubles shared by the tests and the speed scripts: a scripted OpenAI-compatible server, a tiny random
chat model for the `local` backend."""
