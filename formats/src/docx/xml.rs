//! The XML parts of a Word document as a stream of events, with the nesting depth
//! bounded and entity references resolved.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::ReadError;

/// One event of a part.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Item<'a> {
    /// An element opens (`empty`: it closes at once, `<w:br/>`).
    Open {
        element: BytesStart<'a>,
        empty: bool,
    },
    /// An element closes; its qualified name.
    Close(String),
    /// Character data, entities resolved.
    Text(String),
}

/// Reads the events of one XML part.
pub(super) struct Events<'a> {
    reader: Reader<&'a [u8]>,
    depth: usize,
    max_depth: usize,
}

impl<'a> Events<'a> {
    pub(super) fn new(xml: &'a str, max_depth: usize) -> Events<'a> {
        Events {
            reader: Reader::from_str(xml),
            depth: 0,
            max_depth,
        }
    }

    /// The next event, `None` at the end of the part.
    pub(super) fn next(&mut self) -> Result<Option<Item<'a>>, ReadError> {
        loop {
            let event = self.reader.read_event().map_err(|error| {
                ReadError::malformed("Word document", format!("broken XML ({error})"))
            })?;
            return Ok(Some(match event {
                Event::Start(element) => {
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return Err(ReadError::TooDeep(self.max_depth));
                    }
                    Item::Open {
                        element,
                        empty: false,
                    }
                }
                Event::Empty(element) => Item::Open {
                    element,
                    empty: true,
                },
                Event::End(end) => {
                    self.depth = self.depth.saturating_sub(1);
                    Item::Close(end.name().as_ref().to_owned())
                }
                Event::Text(text) => Item::Text(text.xml10_content().into_owned()),
                Event::CData(data) => Item::Text(data.xml10_content().into_owned()),
                Event::GeneralRef(reference) => {
                    let resolved = match reference.resolve_char_ref() {
                        Ok(Some(c)) => c.to_string(),
                        _ => quick_xml::escape::resolve_xml_entity(&reference.xml10_content())
                            .unwrap_or_default()
                            .to_owned(),
                    };
                    Item::Text(resolved)
                }
                Event::Eof if self.depth > 0 => {
                    return Err(ReadError::malformed(
                        "Word document",
                        "broken XML (a part ends inside an element)",
                    ));
                }
                Event::Eof => return Ok(None),
                _ => continue,
            }));
        }
    }
}

/// The value of the attribute `name` (a qualified name such as `w:val`).
pub(super) fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.as_ref() == name)
        .and_then(|attribute| {
            attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(|value| value.into_owned())
        })
}
