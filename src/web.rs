//! Web pages as documents: fetching one page bounded and safe (`fetch.rs`, with the
//! address rules of `address.rs`), and crawling a site through its sitemap or its
//! links (`crawl.rs`, `sitemap.rs`). `import/pages.rs` stores what they bring.

mod address;
pub mod crawl;
pub mod fetch;
mod sitemap;

pub use address::{AddressPolicy, Refused};
pub use fetch::{FetchError, FetchSettings, Fetched, Fetcher, Overflow, Page};
