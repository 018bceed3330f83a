//! A crawl from one page, at most a given number of pages: the pages the site's sitemap
//! lists when it has one (named in `robots.txt`, else `/sitemap.xml`; an index is
//! followed to at most [`MAX_SITEMAPS`] sitemaps), else the same-site links of the
//! pages read, breadth-first. `robots.txt` is honoured for every page.

use std::collections::{HashSet, VecDeque};

use texting_robots::Robot;
use url::Url;

use super::fetch::{FetchError, Fetched, Fetcher, Overflow, without_fragment};
use super::sitemap::{Sitemap, read_sitemap};
use crate::knowledge::formats::PageLinks;

/// The most pages one crawl may be asked for.
pub const MAX_CRAWL_PAGES: u32 = 100_000;
/// Sitemaps read for one crawl (an index and those it names).
pub const MAX_SITEMAPS: usize = 10;
/// The agent `robots.txt` rules are read for.
pub const ROBOTS_AGENT: &str = "bor";

/// The pages still to fetch.
pub struct Crawl {
    start: Url,
    robot: Option<Robot>,
    queue: VecDeque<Url>,
    seen: HashSet<String>,
    /// Without a sitemap, the links of each page read are followed.
    follows_links: bool,
    /// Pages that may still be handed out.
    remaining: usize,
    /// What a person should know about the crawl (a sitemap or robots.txt unreadable).
    pub notes: Vec<String>,
}

/// A page the crawl reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Fetch(Url),
    /// `robots.txt` does not allow it.
    Disallowed(Url),
}

impl Crawl {
    /// Reads the site's `robots.txt` and sitemap.
    pub async fn begin(fetcher: &Fetcher, start: &Url, max: usize) -> Crawl {
        let mut crawl = Crawl {
            start: start.clone(),
            robot: None,
            queue: VecDeque::new(),
            seen: HashSet::new(),
            follows_links: false,
            remaining: max,
            notes: Vec::new(),
        };
        crawl.read_robots(fetcher).await;
        let pages = crawl.read_sitemaps(fetcher, max).await;
        if pages.is_empty() {
            crawl.follows_links = true;
            crawl.enqueue(start.clone());
        } else {
            for page in pages {
                crawl.enqueue(page);
            }
        }
        crawl
    }

    /// Whether the links of the pages read are followed (no sitemap).
    pub fn follows_links(&self) -> bool {
        self.follows_links
    }

    /// The next page, or `None` when the crawl is done.
    pub fn next_page(&mut self) -> Option<Next> {
        if self.remaining == 0 {
            return None;
        }
        let url = self.queue.pop_front()?;
        let allowed = self
            .robot
            .as_ref()
            .is_none_or(|robot| robot.allowed(url.as_str()));
        if !allowed {
            return Some(Next::Disallowed(url));
        }
        self.remaining -= 1;
        Some(Next::Fetch(url))
    }

    /// Queues the same-site links of the page read at `page_url`.
    pub fn add_links(&mut self, page_url: &Url, links: &PageLinks) {
        if !self.follows_links {
            return;
        }
        let base = links
            .base
            .as_deref()
            .and_then(|base| page_url.join(base).ok())
            .unwrap_or_else(|| page_url.clone());
        for href in &links.hrefs {
            if let Ok(url) = base.join(href) {
                self.enqueue(url);
            }
        }
    }

    fn enqueue(&mut self, mut url: Url) {
        url.set_fragment(None);
        if matches!(url.scheme(), "http" | "https")
            && same_site(&url, &self.start)
            && self.seen.insert(without_fragment(&url))
        {
            self.queue.push_back(url);
        }
    }

    async fn read_robots(&mut self, fetcher: &Fetcher) {
        let Ok(robots_url) = self.start.join("/robots.txt") else {
            return;
        };
        match fetcher.get(&robots_url, None, Overflow::Cut).await {
            Ok(Fetched::Page(page)) => match Robot::new(ROBOTS_AGENT, &page.bytes) {
                Ok(robot) => self.robot = Some(robot),
                Err(error) => self
                    .notes
                    .push(format!("{robots_url}: not readable ({error}); crawling on")),
            },
            // No robots.txt: every page may be read.
            Ok(Fetched::NotModified) | Err(FetchError::Status(400..=499)) => {}
            Err(error) => self
                .notes
                .push(format!("{robots_url}: {error}; crawling on")),
        }
    }

    /// The pages of the site's sitemaps, at most `max`.
    async fn read_sitemaps(&mut self, fetcher: &Fetcher, max: usize) -> Vec<Url> {
        let mut sitemaps: VecDeque<Url> = match &self.robot {
            Some(robot) if !robot.sitemaps.is_empty() => robot
                .sitemaps
                .iter()
                .filter_map(|sitemap| Url::parse(sitemap).ok())
                .collect(),
            _ => self.start.join("/sitemap.xml").into_iter().collect(),
        };
        let mut pages = Vec::new();
        let mut read = 0;
        while let Some(sitemap_url) = sitemaps.pop_front() {
            if read == MAX_SITEMAPS || pages.len() >= max {
                break;
            }
            read += 1;
            if !same_site(&sitemap_url, &self.start) {
                continue;
            }
            let page = match fetcher.get(&sitemap_url, None, Overflow::Cut).await {
                Ok(Fetched::Page(page)) => page,
                Ok(Fetched::NotModified) | Err(FetchError::Status(404)) => continue,
                Err(error) => {
                    self.notes.push(format!("{sitemap_url}: {error}"));
                    continue;
                }
            };
            match read_sitemap(&page.bytes, max - pages.len()) {
                Some(Sitemap::Pages(locs)) => pages.extend(
                    locs.iter()
                        .filter_map(|loc| Url::parse(loc).ok())
                        .filter(|url| same_site(url, &self.start)),
                ),
                Some(Sitemap::Index(locs)) => sitemaps.extend(
                    locs.iter()
                        .take(MAX_SITEMAPS)
                        .filter_map(|loc| Url::parse(loc).ok()),
                ),
                None => {}
            }
        }
        pages
    }
}

/// The same host and port (a change between http and https on the same host counts as
/// the same site).
fn same_site(url: &Url, start: &Url) -> bool {
    url.host_str() == start.host_str()
        && (url.port_or_known_default() == start.port_or_known_default()
            || url.scheme() != start.scheme())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_its_host_and_port() {
        let start = Url::parse("http://example.com/docs/").unwrap();
        for (url, same) in [
            ("http://example.com/other", true),
            ("https://example.com/secure", true),
            ("http://example.com:8080/", false),
            ("http://sub.example.com/", false),
            ("http://example.org/", false),
        ] {
            assert_eq!(same_site(&Url::parse(url).unwrap(), &start), same, "{url}");
        }
    }
}
