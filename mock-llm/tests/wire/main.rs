//! The mock on the wire: raw TCP exchanges and an awc client against a running server.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod awc_client;
mod chat;
mod embeddings;
mod failures;
mod records;
mod support;
