//! HTML (`.html`, `.htm`, and text that opens like a web page): the text a reader of
//! the page sees.
//!
//! Parsed by html5ever (through `scraper`) as a browser parses it, so entities are
//! decoded and unclosed elements closed where the HTML standard closes them. Left out:
//! scripts, styles, templates, forms, buttons, navigation (`<nav>` and the ARIA roles
//! navigation, search, banner, menu and the like), `<aside>`, page headers and footers
//! (those outside `<main>` and `<article>`), hidden elements (`hidden`,
//! `aria-hidden="true"`, `display: none`) and heading anchors (`¶`, `§`). When the page
//! marks its main content (`<main>` or `role="main"`), only that is kept. `<h1>`–`<h6>`
//! become headings, list items and table rows become lines, `<pre>` a fenced block.
//! The title is the page's `<title>`, else its first heading.
//!
//! The tree builder spends time in proportion to the depth of open elements for each
//! new element, so a file nested deeper than [`Limits::max_depth`] is refused before
//! it is parsed (an estimate that counts only elements a page must close).

mod depth;

use ego_tree::iter::Edge;
use scraper::{Html, Node};

use crate::text::{MarkdownText, collapse_whitespace};
use crate::{ExtractedDocument, FormatReader, Limits, ReadError};

pub(crate) const CONTENT_TYPE: &str = "text/html";

pub(crate) struct HtmlReader;

impl FormatReader for HtmlReader {
    fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }

    fn read(&self, bytes: &[u8], limits: &Limits) -> Result<ExtractedDocument, ReadError> {
        let source = decode(bytes);
        if source.len() > limits.max_unpacked_bytes as usize {
            return Err(limits.unpacked_too_large());
        }
        depth::check(&source, limits.max_depth)?;
        let html = Html::parse_document(&source);
        let blocks = visible_blocks(&html);
        let main_only = blocks.iter().any(|block| block.in_main);
        let mut text = MarkdownText::new(limits.max_text_bytes);
        for block in blocks.iter().filter(|block| block.in_main || !main_only) {
            match block.kind {
                BlockKind::Heading(level) => text.heading(level, &block.text)?,
                BlockKind::Paragraph => text.paragraph(&block.text)?,
                BlockKind::Line => text.line(&block.text)?,
                BlockKind::Code => text.code(&block.text)?,
                BlockKind::EndLines => text.end_lines(),
            }
        }
        let title = html
            .tree
            .root()
            .descendants()
            .find(
                |node| matches!(node.value(), Node::Element(element) if element.name() == "title"),
            )
            .map(|title| {
                title
                    .descendants()
                    .filter_map(|node| node.value().as_text().map(|text| text.to_string()))
                    .collect::<String>()
            });
        text.finish(title, CONTENT_TYPE)
    }
}

/// The links of a web page, as written (`href` of `<a>` and `<area>`, in page order),
/// with the `<base href>` they are relative to when the page names one. Bounded as
/// reading the page is (size and nesting).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    pub base: Option<String>,
    pub hrefs: Vec<String>,
}

/// The links of the web page `bytes` (see [`PageLinks`]).
pub fn links(bytes: &[u8], limits: &Limits) -> Result<PageLinks, ReadError> {
    limits.check_input(bytes.len())?;
    let source = decode(bytes);
    depth::check(&source, limits.max_depth)?;
    let html = Html::parse_document(&source);
    let mut links = PageLinks::default();
    for node in html.tree.root().descendants() {
        let Node::Element(element) = node.value() else {
            continue;
        };
        let Some(href) = element.attr("href") else {
            continue;
        };
        match element.name() {
            "a" | "area" => links.hrefs.push(href.trim().to_owned()),
            "base" if links.base.is_none() => links.base = Some(href.trim().to_owned()),
            _ => {}
        }
    }
    Ok(links)
}

/// The page's text as Unicode: by its byte order mark, else by the charset its head
/// declares, else UTF-8 when it is valid UTF-8, else Windows-1252 (what browsers assume).
fn decode(bytes: &[u8]) -> String {
    let encoding = encoding_rs::Encoding::for_bom(bytes)
        .map(|(encoding, _)| encoding)
        .or_else(|| declared_charset(bytes))
        .unwrap_or(if std::str::from_utf8(bytes).is_ok() {
            encoding_rs::UTF_8
        } else {
            encoding_rs::WINDOWS_1252
        });
    encoding.decode_with_bom_removal(bytes).0.into_owned()
}

/// The `charset=` of a `<meta>` in the first kilobyte.
fn declared_charset(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let label: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    encoding_rs::Encoding::for_label(label.as_bytes())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Heading(usize),
    Paragraph,
    Line,
    Code,
    /// A list or table ended: the next line starts a block of its own.
    EndLines,
}

#[derive(Debug)]
struct Block {
    kind: BlockKind,
    text: String,
    in_main: bool,
}

/// Elements whose content is never shown as text.
const NEVER_SHOWN: &[&str] = &[
    "head", "script", "style", "template", "noscript", "form", "button", "select", "textarea",
    "nav", "aside", "dialog", "svg", "canvas", "iframe", "object", "menu",
];
/// ARIA roles of page furniture rather than content.
const FURNITURE_ROLES: &[&str] = &[
    "navigation",
    "search",
    "banner",
    "contentinfo",
    "complementary",
    "menu",
    "menubar",
    "toolbar",
    "dialog",
    "tablist",
];
/// Classes of the anchors documentation generators put into headings.
const ANCHOR_CLASSES: &[&str] = &["headerlink", "anchor", "doc-anchor"];
/// Elements that end the text before them and start a block of their own.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "blockquote",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "address",
    "details",
    "summary",
    "table",
    "caption",
    "ul",
    "ol",
    "hr",
    "body",
    "center",
    "fieldset",
    "legend",
];

/// What the walk over the tree is inside of.
#[derive(Default)]
struct Walk {
    blocks: Vec<Block>,
    inline: String,
    heading: Option<usize>,
    /// Open list items, table rows.
    in_item: bool,
    row: Option<Vec<String>>,
    pre: usize,
    main: usize,
    article: usize,
}

impl Walk {
    fn flush(&mut self) {
        let text = std::mem::take(&mut self.inline);
        if let Some(row) = &mut self.row {
            if !text.trim().is_empty() {
                if let Some(cell) = row.last_mut() {
                    cell.push_str(&text);
                } else {
                    row.push(text);
                }
            }
            return;
        }
        let kind = match (self.heading, self.in_item) {
            (Some(level), _) => BlockKind::Heading(level),
            (None, true) => BlockKind::Line,
            (None, false) => BlockKind::Paragraph,
        };
        let text = if kind == BlockKind::Line {
            format!("- {}", collapse_whitespace(&text))
        } else {
            text
        };
        self.push(kind, text);
    }

    fn push(&mut self, kind: BlockKind, text: String) {
        let text = match kind {
            BlockKind::Heading(_) => strip_anchor_marks(&collapse_whitespace(&text)),
            BlockKind::Code => text.trim_matches('\n').to_owned(),
            _ => collapse_whitespace(&text),
        };
        if kind != BlockKind::EndLines && (text.is_empty() || text == "-") {
            return;
        }
        self.blocks.push(Block {
            kind,
            text,
            in_main: self.main > 0,
        });
    }

    fn end_row(&mut self) {
        self.flush();
        if let Some(row) = self.row.take() {
            let cells: Vec<String> = row.iter().map(|cell| collapse_whitespace(cell)).collect();
            if cells.iter().any(|cell| !cell.is_empty()) {
                self.push(BlockKind::Line, cells.join(" | "));
            }
        }
    }
}

fn visible_blocks(html: &Html) -> Vec<Block> {
    let mut walk = Walk::default();
    let mut hidden_until = None;
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(node) => {
                if hidden_until.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Text(text) => walk.inline.push_str(text),
                    Node::Element(element) => {
                        if is_hidden(element, &walk) {
                            hidden_until = Some(node.id());
                            continue;
                        }
                        open(&mut walk, element);
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if hidden_until == Some(node.id()) {
                    hidden_until = None;
                    continue;
                }
                if hidden_until.is_none()
                    && let Node::Element(element) = node.value()
                {
                    close(&mut walk, element);
                }
            }
        }
    }
    walk.flush();
    walk.blocks
}

fn is_main(element: &scraper::node::Element) -> bool {
    element.name() == "main" || element.attr("role") == Some("main")
}

fn open(walk: &mut Walk, element: &scraper::node::Element) {
    let name = element.name();
    if is_main(element) {
        walk.main += 1;
    }
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            walk.flush();
            walk.heading = name[1..].parse().ok();
        }
        "li" => {
            walk.flush();
            walk.in_item = true;
        }
        "tr" => {
            walk.end_row();
            walk.row = Some(Vec::new());
        }
        "td" | "th" => {
            walk.flush();
            if let Some(row) = &mut walk.row {
                row.push(String::new());
            }
        }
        "pre" => {
            walk.flush();
            walk.pre += 1;
        }
        "br" => walk.inline.push('\n'),
        "article" => {
            walk.flush();
            walk.article += 1;
        }
        _ if BLOCKS.contains(&name) && walk.pre == 0 => walk.flush(),
        _ => {}
    }
}

fn close(walk: &mut Walk, element: &scraper::node::Element) {
    let name = element.name();
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            walk.flush();
            walk.heading = None;
        }
        "li" => {
            walk.flush();
            walk.in_item = false;
        }
        "tr" => walk.end_row(),
        "table" | "ul" | "ol" | "dl" => {
            walk.end_row();
            walk.push(BlockKind::EndLines, String::new());
        }
        "td" | "th" => walk.flush(),
        "pre" => {
            let code = std::mem::take(&mut walk.inline);
            walk.pre = walk.pre.saturating_sub(1);
            walk.push(BlockKind::Code, code);
        }
        "article" => {
            walk.flush();
            walk.article = walk.article.saturating_sub(1);
        }
        _ if BLOCKS.contains(&name) && walk.pre == 0 => walk.flush(),
        _ => {}
    }
    if is_main(element) {
        walk.flush();
        walk.main = walk.main.saturating_sub(1);
    }
}

/// Whether an element and everything in it is left out.
fn is_hidden(element: &scraper::node::Element, walk: &Walk) -> bool {
    let name = element.name();
    if NEVER_SHOWN.contains(&name) {
        return true;
    }
    // A page's header and footer, not those of an article or of the main content.
    if (name == "header" || name == "footer") && walk.article == 0 && walk.main == 0 {
        return true;
    }
    if element.attr("hidden").is_some() || element.attr("aria-hidden") == Some("true") {
        return true;
    }
    if let Some(style) = element.attr("style") {
        let style: String = style.chars().filter(|c| !c.is_whitespace()).collect();
        let style = style.to_ascii_lowercase();
        if style.contains("display:none") || style.contains("visibility:hidden") {
            return true;
        }
    }
    if let Some(role) = element.attr("role")
        && FURNITURE_ROLES.contains(&role.trim().to_ascii_lowercase().as_str())
    {
        return true;
    }
    name == "a"
        && element
            .classes()
            .any(|class| ANCHOR_CLASSES.contains(&class))
}

/// A heading without the permalink mark a generator put after it.
fn strip_anchor_marks(heading: &str) -> String {
    let heading = heading.trim_end_matches(['¶', '§', '🔗']).trim_end();
    heading
        .strip_suffix(" #")
        .unwrap_or(heading)
        .trim_end()
        .to_owned()
}

#[cfg(test)]
mod tests;
