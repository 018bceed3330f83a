//! Which paragraph styles of a Word document are headings, and of which level.
//!
//! A style is a heading when its name is "heading N" or "Title" (Word keeps the
//! English built-in names in `w:name` whatever the language: a German file's style id
//! is `berschrift1`, its name still "heading 1"), when it carries an outline level, or
//! when the style it is based on is one. A style named "List …" (List Bullet, List
//! Number) marks list items.

use std::collections::HashMap;

use super::xml::{Events, Item, attribute};
use crate::ReadError;

/// The heading and list styles of a document.
#[derive(Debug, Default)]
pub(super) struct HeadingStyles {
    /// Style id → heading level (1 to 6).
    levels: HashMap<String, usize>,
    /// Ids of list styles.
    lists: Vec<String>,
}

/// How far a chain of `w:basedOn` is followed.
const MAX_BASED_ON: usize = 16;

#[derive(Debug, Default)]
struct Style {
    name: String,
    outline_level: Option<usize>,
    based_on: Option<String>,
}

impl HeadingStyles {
    /// The heading styles declared in `styles.xml`.
    pub(super) fn parse(xml: &str, max_depth: usize) -> Result<HeadingStyles, ReadError> {
        let mut styles: HashMap<String, Style> = HashMap::new();
        let mut current: Option<(String, Style)> = None;
        let mut events = Events::new(xml, max_depth);
        while let Some(item) = events.next()? {
            match item {
                Item::Open { element, empty } => match element.name().as_ref() {
                    "w:style" if !empty => {
                        let paragraph =
                            attribute(&element, "w:type").is_none_or(|t| t == "paragraph");
                        current = attribute(&element, "w:styleId")
                            .filter(|_| paragraph)
                            .map(|id| (id, Style::default()));
                    }
                    "w:name" => {
                        if let (Some((_, style)), Some(name)) =
                            (&mut current, attribute(&element, "w:val"))
                        {
                            style.name = name;
                        }
                    }
                    "w:basedOn" => {
                        if let Some((_, style)) = &mut current {
                            style.based_on = attribute(&element, "w:val");
                        }
                    }
                    "w:outlineLvl" => {
                        if let Some((_, style)) = &mut current {
                            style.outline_level =
                                attribute(&element, "w:val").and_then(|v| v.parse().ok());
                        }
                    }
                    _ => {}
                },
                Item::Close(name) if name == "w:style" => {
                    if let Some((id, style)) = current.take() {
                        styles.insert(id, style);
                    }
                }
                _ => {}
            }
        }
        let levels = styles
            .keys()
            .filter_map(|id| level_of(&styles, id).map(|level| (id.clone(), level)))
            .collect();
        let lists = styles
            .iter()
            .filter(|(_, style)| style.name.to_ascii_lowercase().starts_with("list"))
            .map(|(id, _)| id.clone())
            .collect();
        Ok(HeadingStyles { levels, lists })
    }

    /// The heading level of a paragraph in style `style_id`; for a document without
    /// `styles.xml`, the built-in ids (`Heading1`, `Title`) are known.
    pub(super) fn level(&self, style_id: &str) -> Option<usize> {
        self.levels.get(style_id).copied().or_else(|| {
            if self.levels.is_empty() {
                level_from_name(style_id)
            } else {
                None
            }
        })
    }

    /// Whether paragraphs in style `style_id` are list items.
    pub(super) fn is_list(&self, style_id: &str) -> bool {
        self.lists.iter().any(|id| id == style_id)
    }
}

fn level_of(styles: &HashMap<String, Style>, id: &str) -> Option<usize> {
    let mut id = id;
    for _ in 0..MAX_BASED_ON {
        let style = styles.get(id)?;
        if let Some(level) = level_from_name(&style.name) {
            return Some(level);
        }
        if let Some(level) = style.outline_level.filter(|level| *level < 6) {
            return Some(level + 1);
        }
        id = style.based_on.as_deref()?;
    }
    None
}

/// "heading 2" (any case, with or without the space) → 2; "Title" → 1.
fn level_from_name(name: &str) -> Option<usize> {
    let name = name.trim().to_ascii_lowercase();
    if name == "title" {
        return Some(1);
    }
    let number = name.strip_prefix("heading")?.trim();
    number.parse().ok().filter(|level| (1..=6).contains(level))
}

#[cfg(test)]
mod tests {
    use super::HeadingStyles;

    #[test]
    fn headings_are_known_by_name_outline_level_or_descent() {
        let xml = r#"<w:styles xmlns:w="w">
            <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
            <w:style w:type="paragraph" w:styleId="Kapitel"><w:name w:val="Kapitel"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
            <w:style w:type="paragraph" w:styleId="MyHeading"><w:name w:val="Mine"/><w:basedOn w:val="berschrift1"/></w:style>
            <w:style w:type="paragraph" w:styleId="Loop"><w:name w:val="Loop"/><w:basedOn w:val="Loop"/></w:style>
            <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="heading 1 Char"/></w:style>
            <w:style w:type="paragraph" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
            <w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/></w:style>
        </w:styles>"#;
        let styles = HeadingStyles::parse(xml, 64).expect("parses");
        assert_eq!(styles.level("berschrift1"), Some(1));
        assert_eq!(styles.level("Kapitel"), Some(2));
        assert_eq!(styles.level("MyHeading"), Some(1));
        assert_eq!(styles.level("Loop"), None);
        assert_eq!(styles.level("Heading1Char"), None);
        assert_eq!(styles.level("Normal"), None);
        assert!(styles.is_list("ListBullet"));
        assert!(!styles.is_list("Normal"));
        assert_eq!(HeadingStyles::default().level("Heading3"), Some(3));
    }
}
