//! A deterministic OpenAI-compatible server for bor's tests and demos.
