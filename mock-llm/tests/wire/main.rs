//! The mock on the wire: raw TCP exchanges and an awc client against a running server.

// Helpers outside `#[test]` functions fail the test the same way on unexpected input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod awc_client;
mod chat;
mod embeddings;
mod failures;
mod records;
mod support;
