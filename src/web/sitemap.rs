//! Reading a sitemap (sitemaps.org): the page addresses of a `<urlset>`, or the sitemap
//! addresses of a `<sitemapindex>`, at most a given number, read with quick-xml. A body
//! cut at the size bound still gives the entries before the cut.

use quick_xml::Reader;
use quick_xml::events::Event;

/// What a sitemap lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// Page addresses.
    Pages(Vec<String>),
    /// Addresses of further sitemaps.
    Index(Vec<String>),
}

/// The first `max` entries of the sitemap `xml`; `None` when it is not a sitemap.
pub fn read_sitemap(xml: &[u8], max: usize) -> Option<Sitemap> {
    let mut reader = Reader::from_reader(xml);
    let mut buffer = Vec::new();
    let mut index = None;
    // The text of the `<loc>` being read.
    let mut loc: Option<String> = None;
    let mut entries = Vec::new();
    while entries.len() < max {
        match reader.read_event_into(&mut buffer) {
            Ok(Event::Start(element)) => match element.local_name().as_ref() {
                "urlset" if index.is_none() => index = Some(false),
                "sitemapindex" if index.is_none() => index = Some(true),
                "loc" if index.is_some() => loc = Some(String::new()),
                _ => {}
            },
            Ok(Event::End(element)) if element.local_name().as_ref() == "loc" => {
                if let Some(text) = loc.take().filter(|text| !text.trim().is_empty()) {
                    entries.push(text.trim().to_owned());
                }
            }
            Ok(Event::Text(text)) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&text.xml10_content());
                }
            }
            Ok(Event::CData(data)) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&data.xml10_content());
                }
            }
            Ok(Event::GeneralRef(reference)) => {
                if let Some(loc) = &mut loc {
                    match reference.resolve_char_ref() {
                        Ok(Some(character)) => loc.push(character),
                        _ => loc.push_str(
                            quick_xml::escape::resolve_xml_entity(&reference.xml10_content())
                                .unwrap_or_default(),
                        ),
                    }
                }
            }
            // A cut or broken end keeps what was read before it.
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
        buffer.clear();
    }
    match index? {
        true => Some(Sitemap::Index(entries)),
        false => Some(Sitemap::Pages(entries)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_indexes_are_read_up_to_the_bound() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <url><loc> https://example.com/a?x=1&amp;y=2 </loc><lastmod>2026-01-01</lastmod></url>
            <url><loc>https://example.com/b</loc></url>
            <url><loc>https://example.com/c</loc></url>
            </urlset>"#;
        assert_eq!(
            read_sitemap(xml, 10),
            Some(Sitemap::Pages(vec![
                "https://example.com/a?x=1&y=2".to_owned(),
                "https://example.com/b".to_owned(),
                "https://example.com/c".to_owned()
            ]))
        );
        assert_eq!(
            read_sitemap(xml, 1),
            Some(Sitemap::Pages(vec![
                "https://example.com/a?x=1&y=2".to_owned()
            ]))
        );
        let index = br#"<sitemapindex><sitemap><loc>https://example.com/s1.xml</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            read_sitemap(index, 10),
            Some(Sitemap::Index(vec![
                "https://example.com/s1.xml".to_owned()
            ]))
        );
        let cut = br#"<urlset><url><loc>https://example.com/a</loc></url><url><loc>https://exa"#;
        assert_eq!(
            read_sitemap(cut, 10),
            Some(Sitemap::Pages(vec!["https://example.com/a".to_owned()]))
        );
        assert_eq!(
            read_sitemap(b"<html><body>Not found</body></html>", 10),
            None
        );
    }
}
